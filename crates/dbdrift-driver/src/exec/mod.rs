// Execution: the run loop (workers, reporter, deterministic null mode) and the exec
// subcommand (phased admin SQL and bulk load), and the ibench subcommand (one Insert
// Benchmark step).

pub mod turns;
pub mod copy;
pub mod deterministic;
pub mod event;
pub mod ibench;
pub mod jobs;
pub mod run;
pub mod worker;
