// NDJSON output: every line the driver prints on stdout goes through `line`, and the
// serializable structs here fix the key order of the non-statistics lines.

use crate::error::DriverError;
use serde::Serialize;
use std::io::Write;

/// Prints one JSON object as a line and flushes, so a reader sees each line as it happens.
pub fn line<T: Serialize>(value: &T) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A closed stdout is not worth a panic: the exit status still tells the outcome.
    if serde_json::to_writer(&mut out, value).is_ok() {
        let _ = out.write_all(b"\n");
    }
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
