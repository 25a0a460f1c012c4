// TPROC-C (the `tpcc` subcommand), HammerDB's derivative of TPC-C, with the driver's own
// client-side SQL. `load` builds and fills the schema; `run` drives virtual users through
// the transaction mix, optionally beside analytical streams (`analytics`), and reports per
// interval and per transaction type. Its spec, mix, rows, schema, stored routines and
// counters live beside them.

pub mod analytics;
pub mod load;
pub mod mix;
pub mod procs;
pub mod rows;
pub mod run;
pub mod schema;
pub mod spec;
pub mod stats;
pub mod tx;

use crate::emit;
use crate::error::DriverError;
use serde::Serialize;
use spec::{TpccPhase, TpccSpec};

workload!(
    /// The `tpcc` subcommand: a TPROC-C load or run.
    Tpcc: TpccSpec = spec::parse_tpcc, execute
);

/// Loads or runs, with the session type of the spec's server.
fn execute(spec: &TpccSpec) -> Result<i32, DriverError> {
    on_server!(spec.backend, "tpcc", C => match spec.phase {
        TpccPhase::Load => load::load::<C>(spec),
        TpccPhase::Run => run::run::<C>(spec),
    })
}

#[derive(Serialize)]
pub struct StartLine {
    #[serde(rename = "type")]
    kind: &'static str,
    protocol: u32,
    driver: &'static str,
    backend: &'static str,
    phase: &'static str,
    warehouses: u32,
    clients: u32,
    server_version: String,
    backend_pids: Vec<u64>,
    /// The analytical streams' connections; only in a run with analytics.
    #[serde(skip_serializing_if = "Option::is_none")]
    analytics_pids: Option<Vec<u64>>,
}

impl StartLine {
    pub fn new(spec: &TpccSpec, server_version: &str, backend_pids: Vec<u64>) -> Self {
        StartLine {
            kind: "start",
            protocol: crate::spec::PROTOCOL,
            driver: env!("CARGO_PKG_VERSION"),
            backend: spec.backend.as_str(),
            phase: match spec.phase {
                TpccPhase::Load => "load",
                TpccPhase::Run => "run",
            },
            warehouses: spec.warehouses,
            clients: spec.clients,
            server_version: server_version.to_string(),
            backend_pids,
            analytics_pids: None,
        }
    }

    pub fn with_analytics_pids(mut self, pids: Vec<u64>) -> Self {
        self.analytics_pids = Some(pids);
        self
    }

    pub fn emit(&self) {
        emit::line(self);
    }
}
