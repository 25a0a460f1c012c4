// Execution: the run loop (workers, reporter, deterministic null mode) and the exec
// subcommand (phased admin SQL and bulk load), the ibench subcommand (one Insert
// Benchmark step) and the tpcc subcommand (TPROC-C load and run).

pub mod copy;
pub mod deterministic;
pub mod event;
pub mod failure;
pub mod ibench;
pub mod jobs;
pub mod run;
pub mod tpcc;
pub mod turns;
pub mod worker;
