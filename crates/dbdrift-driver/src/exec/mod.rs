// Execution shared by every verb: the failure and wait helpers the multi-threaded
// subcommands use, and the `exec` subcommand (phased admin SQL and bulk load of sbtest
// tables), which runs no workload. Workloads live in `workloads`.

pub mod copy;
pub mod failure;
pub mod jobs;
