// Entry point of dbdrift-driver: hands the arguments to `cli` and exits with its status.
// Everything else lives in the modules below; see docs/protocol.md for the contract.

mod backend;
mod cli;
mod emit;
mod error;
mod exec;
mod signal;
mod spec;
mod stats;
mod workload;
mod workloads;

fn main() {
    let code = cli::main(std::env::args().skip(1).collect());
    std::process::exit(code);
}
