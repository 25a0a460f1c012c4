// NDJSON output: every line the driver prints on stdout goes through `line` (or `line_at`),
// and the serializable structs here fix the key order of the non-statistics lines.
//
// The timed verbs stamp each line with `mono_s`, the CLOCK_MONOTONIC reading (in seconds) of
// the instant the line reports: dbdrift's samplers read the same clock (Python's
// time.monotonic on Linux), so they place a measured window's edges where the driver measured
// them, not where dbdrift got round to reading the line (docs/protocol.md, "Clock stamps").

use crate::error::DriverError;
use serde::Serialize;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

static STAMP: AtomicBool = AtomicBool::new(false);

/// Turns `mono_s` stamps on (the timed verbs) or off (the default; a deterministic null run,
/// whose output must not depend on when it ran).
pub fn stamp_lines(on: bool) {
    STAMP.store(on, Ordering::SeqCst);
}

/// CLOCK_MONOTONIC in seconds at `at`. std's Instant reads the same clock on Linux but does
/// not expose it, so one pair of readings taken together anchors the conversion.
pub fn mono_s(at: Instant) -> f64 {
    static ANCHOR: OnceLock<(Instant, f64)> = OnceLock::new();
    let (base, base_s) = *ANCHOR.get_or_init(|| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let now = Instant::now();
        // SAFETY: ts is a valid timespec for the call to write into.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        (now, ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
    });
    let offset = if at >= base {
        at.duration_since(base).as_secs_f64()
    } else {
        -base.duration_since(at).as_secs_f64()
    };
    ((base_s + offset) * 1e6).round() / 1e6
}

/// Prints one JSON object as a line and flushes, so a reader sees each line as it happens;
/// stamped (when stamps are on) with the moment it is printed.
pub fn line<T: Serialize>(value: &T) {
    line_at(value, Instant::now());
}

/// `line` for a line that reports an earlier instant (the end of warmup, an interval's end):
/// its stamp is `at`, not the moment it is printed.
pub fn line_at<T: Serialize>(value: &T, at: Instant) {
    let Ok(mut text) = serde_json::to_vec(value) else {
        return;
    };
    if STAMP.load(Ordering::SeqCst) && text.last() == Some(&b'}') {
        text.pop();
        let sep = if text.len() > 1 { "," } else { "" };
        text.extend_from_slice(format!("{sep}\"mono_s\":{}}}", mono_s(at)).as_bytes());
    }
    text.push(b'\n');
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A closed stdout is not worth a panic: the exit status still tells the outcome.
    let _ = out.write_all(&text);
    let _ = out.flush();
}

#[derive(Serialize)]
pub struct FatalLine<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub class: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<usize>,
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlstate: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<&'a str>,
}

pub fn fatal(err: &DriverError) {
    line(&FatalLine {
        kind: "fatal",
        class: err.class.as_str(),
        phase: err.phase,
        job: err.job,
        message: &err.message,
        sqlstate: err.sqlstate.as_deref(),
        sql: err.sql.as_deref(),
    });
}

/// Rounds seconds to microseconds so measured times print compactly.
pub fn round_s(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}
