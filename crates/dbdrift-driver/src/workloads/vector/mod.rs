// Vector search (the `vector` subcommand): `load` puts dbdrift's vectors into a table by the
// bulk path; `search` runs k-nearest-neighbour queries from clients for a window and reports
// QPS, latency and recall@k against the exact neighbours dbdrift computed. The SQL of each
// engine's vector type and index is dbdrift's; the driver only measures.

pub mod data;
pub mod load;
pub mod search;
pub mod spec;

use crate::emit::{self, round_s};
use crate::error::DriverError;
use crate::stats::histogram::{Histogram, LatencySummary};
use serde::Serialize;
use spec::{VectorPhase, VectorSpec};

workload!(
    /// The `vector` subcommand: a vector load or search.
    Vector: VectorSpec = spec::parse_vector, execute
);

fn execute(spec: &VectorSpec) -> Result<i32, DriverError> {
    on_server!(spec.backend, "vector", C => match spec.phase {
        VectorPhase::Load => load::load::<C>(spec),
        VectorPhase::Search => search::search::<C>(spec),
    })
}

fn phase_name(phase: VectorPhase) -> &'static str {
    match phase {
        VectorPhase::Load => "load",
        VectorPhase::Search => "search",
    }
}

#[derive(Serialize)]
pub struct StartLine {
    #[serde(rename = "type")]
    kind: &'static str,
    protocol: u32,
    driver: &'static str,
    backend: &'static str,
    phase: &'static str,
    dim: u32,
    clients: u32,
    server_version: String,
}

impl StartLine {
    pub fn new(spec: &VectorSpec, server_version: &str) -> Self {
        StartLine {
            kind: "start",
            protocol: crate::spec::PROTOCOL,
            driver: env!("CARGO_PKG_VERSION"),
            backend: spec.backend.as_str(),
            phase: phase_name(spec.phase),
            dim: spec.dim,
            clients: spec.clients,
            server_version: server_version.to_string(),
        }
    }

    pub fn emit(&self) {
        emit::line(self);
    }
}

/// An edge of the measured window: "measure" at its start, "end" at its end (`t`: seconds from
/// the start of the search, warm-up included).
#[derive(Serialize)]
pub struct PhaseLine {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    t: f64,
}

impl PhaseLine {
    pub fn new(phase: &'static str, t: f64) -> Self {
        PhaseLine { kind: "phase", phase, t: round_s(t) }
    }
}

/// Queries answered in one interval of the measured window (`t`: its end, from the window's start).
#[derive(Serialize)]
pub struct IntervalLine {
    #[serde(rename = "type")]
    kind: &'static str,
    t: f64,
    interval_s: f64,
    queries: u64,
    qps: f64,
}

impl IntervalLine {
    pub fn new(t: f64, interval_s: f64, queries: u64) -> Self {
        IntervalLine {
            kind: "interval",
            t: round_s(t),
            interval_s: round_s(interval_s),
            queries,
            qps: if interval_s > 0.0 { queries as f64 / interval_s } else { 0.0 },
        }
    }
}

/// The last line: a load's rows, or a search's queries, QPS, recall and latency.
#[derive(Serialize)]
pub struct Summary {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    elapsed_s: f64,
    interrupted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queries: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    qps: Option<f64>,
    /// Mean recall@k over the distinct queries answered in the window (each at its first answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    recall: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queries_seen: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_us: Option<LatencySummary>,
}

impl Summary {
    pub fn load(rows: u64, elapsed_s: f64, interrupted: bool) -> Self {
        Summary {
            kind: "summary",
            phase: "load",
            elapsed_s: round_s(elapsed_s),
            interrupted,
            rows: Some(rows),
            queries: None,
            qps: None,
            recall: None,
            queries_seen: None,
            latency_us: None,
        }
    }

    pub fn search(
        elapsed_s: f64,
        latency: &Histogram,
        recall: Option<f64>,
        seen: u64,
        interrupted: bool,
    ) -> Self {
        Summary {
            kind: "summary",
            phase: "search",
            elapsed_s: round_s(elapsed_s),
            interrupted,
            rows: None,
            queries: Some(latency.count),
            qps: Some(if elapsed_s > 0.0 { latency.count as f64 / elapsed_s } else { 0.0 }),
            recall,
            queries_seen: Some(seen),
            latency_us: Some(latency.summary()),
        }
    }
}
