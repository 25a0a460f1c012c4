// Counters of a stretch of measured time (an interval, the warmup, the whole run) and the
// JSON lines that report them. Workers add to their own Tally; the reporter merges.

pub mod histogram;

use histogram::{Histogram, LatencySummary};
use serde::Serialize;

/// An ignorable SQLSTATE class (protocol.md): the event is abandoned and counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignorable {
    Deadlock,
    Serialization,
    Lock,
    Duplicate,
}

impl Ignorable {
    pub fn from_sqlstate(state: &[u8]) -> Option<Ignorable> {
        match state {
            b"40P01" => Some(Ignorable::Deadlock),
            b"40001" => Some(Ignorable::Serialization),
            b"55P03" => Some(Ignorable::Lock),
            b"23505" => Some(Ignorable::Duplicate),
            _ => None,
        }
    }
}

#[derive(Serialize, Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCounts {
    pub deadlock: u64,
    pub serialization: u64,
    pub lock: u64,
    pub duplicate: u64,
}

impl ErrorCounts {
    pub fn add(&mut self, kind: Ignorable) {
        match kind {
            Ignorable::Deadlock => self.deadlock += 1,
            Ignorable::Serialization => self.serialization += 1,
            Ignorable::Lock => self.lock += 1,
            Ignorable::Duplicate => self.duplicate += 1,
        }
    }

    pub fn merge(&mut self, o: &ErrorCounts) {
        self.deadlock += o.deadlock;
        self.serialization += o.serialization;
        self.lock += o.lock;
        self.duplicate += o.duplicate;
    }
}

#[derive(Default)]
pub struct Tally {
    pub events: u64,
    pub statements: u64,
    pub rows: u64,
    pub errors: ErrorCounts,
    pub latency: Histogram,
}

impl Tally {
    pub fn merge(&mut self, o: &Tally) {
        self.events += o.events;
        self.statements += o.statements;
        self.rows += o.rows;
        self.errors.merge(&o.errors);
        self.latency.merge(&o.latency);
    }

    pub fn clear(&mut self) {
        self.events = 0;
        self.statements = 0;
        self.rows = 0;
        self.errors = ErrorCounts::default();
        self.latency.clear();
    }

    /// Moves the counts into `into` and leaves self empty (the reporter's snapshot).
    pub fn drain_into(&mut self, into: &mut Tally) {
        into.merge(self);
        self.clear();
    }
}

#[derive(Serialize)]
pub struct StartLine<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol: u32,
    pub driver: &'static str,
    pub backend: &'a str,
    pub threads: u32,
    pub server_version: Option<&'a str>,
    pub backend_pids: &'a [i32],
}

#[derive(Serialize)]
pub struct WarmupLine {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub duration_s: f64,
    pub events: u64,
}

#[derive(Serialize)]
pub struct IntervalLine {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub index: u64,
    pub start_s: f64,
    pub end_s: f64,
    pub events: u64,
    pub statements: u64,
    pub rows: u64,
    pub errors: ErrorCounts,
    pub latency_us: LatencySummary,
}

impl IntervalLine {
    pub fn new(index: u64, start_s: f64, end_s: f64, t: &Tally) -> Self {
        IntervalLine {
            kind: "interval",
            index,
            start_s,
            end_s,
            events: t.events,
            statements: t.statements,
            rows: t.rows,
            errors: t.errors,
            latency_us: t.latency.summary(),
        }
    }
}

#[derive(Serialize)]
pub struct SummaryLine {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub duration_s: f64,
    pub events: u64,
    pub statements: u64,
    pub rows: u64,
    pub errors: ErrorCounts,
    pub latency_us: LatencySummary,
    pub client_cpu_user_s: f64,
    pub client_cpu_sys_s: f64,
    pub interrupted: bool,
}

/// User and system CPU seconds of this process so far, from getrusage(RUSAGE_SELF).
pub fn client_cpu_s() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we own; no other invariants.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}
