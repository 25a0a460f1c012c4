// sysbench-style workloads: any list of statements (the `run` subcommand), executed by
// threads that each drive their own connection through events, or in turns against several
// servers. The statement plan is compiled in `workload`; the counters live in `stats`.

pub mod deterministic;
pub mod event;
pub mod plan;
pub mod run;
pub mod spec;
pub mod stats;
pub mod turns;
pub mod worker;

use super::Workload;
use crate::error::DriverError;
use spec::RunSpec;

pub struct Sysbench;

impl Workload for Sysbench {
    type Spec = RunSpec;

    fn parse(text: &str) -> Result<RunSpec, DriverError> {
        spec::parse_run(text)
    }

    fn execute(spec: &RunSpec) -> Result<i32, DriverError> {
        run::run(spec)
    }
}
