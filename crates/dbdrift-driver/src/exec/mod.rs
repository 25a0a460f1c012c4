// Execution: the run loop (workers, reporter, deterministic null mode) and the exec
// subcommand (phased admin SQL and bulk load).

pub mod copy;
pub mod deterministic;
pub mod event;
pub mod jobs;
pub mod run;
pub mod worker;
