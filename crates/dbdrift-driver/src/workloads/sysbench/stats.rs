// The counters of a stretch of measured time (an interval, the warmup, the whole run) and
// the JSON lines that report them. Workers add to their own Tally; the reporter merges.

use crate::stats::histogram::{Histogram, LatencySummary};
use crate::stats::ErrorCounts;
use serde::Serialize;

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
