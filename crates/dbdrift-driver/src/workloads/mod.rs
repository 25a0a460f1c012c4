// The workloads, one module each with its spec, execution and statistics, behind the one
// `Workload` trait the command line dispatches to. The modules above them (backend, exec,
// stats, workload) know no workload by name; a new one is a module here and a verb in `cli`.

pub mod ibench;
pub mod sysbench;
pub mod tpcc;

use crate::error::DriverError;
use crate::signal;

/// One benchmark the driver runs: how its spec is read and how it is executed.
pub trait Workload {
    /// The validated spec, checked whole before anything connects.
    type Spec;

    /// Parses and validates the spec text; every problem is a `spec` error.
    fn parse(text: &str) -> Result<Self::Spec, DriverError>;

    /// Runs the spec, printing NDJSON lines; returns the exit status (0, or 130 when
    /// interrupted).
    fn execute(spec: &Self::Spec) -> Result<i32, DriverError>;
}

/// Parses `text` as W's spec and runs it, with signals taken by the driver's own waiter
/// from then on (installed after parsing, so a bad spec never starts a thread).
pub fn run<W: Workload>(text: &str) -> Result<i32, DriverError> {
    let spec = W::parse(text)?;
    signal::install();
    W::execute(&spec)
}
