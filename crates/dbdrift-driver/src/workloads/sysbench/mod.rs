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

workload!(
    /// The `run` subcommand: any list of statements, by threads or in turns.
    Sysbench: spec::RunSpec = spec::parse_run, run::run
);
