// Command line: `run`, `exec`, `ibench`, `tpcc` and `vector` (each `--spec FILE|-`), `--version`. Reads the
// spec, dispatches, and turns any DriverError into the one `fatal` line and exit status.

use crate::emit;
use crate::error::DriverError;
use crate::exec::jobs;
use crate::workloads;
use crate::workloads::ibench::Ibench;
use crate::workloads::sysbench::Sysbench;
use crate::workloads::tpcc::Tpcc;
use crate::workloads::vector::Vector;
use crate::{signal, spec};
use std::io::Read;

// concat! takes literals only: the test below holds the number to spec::PROTOCOL.
pub const VERSION_LINE: &str = concat!("dbdrift-driver ", env!("CARGO_PKG_VERSION"), " protocol 3");

const USAGE: &str = "usage: dbdrift-driver run --spec FILE|- | exec --spec FILE|- | ibench --spec FILE|- | tpcc --spec FILE|- | vector --spec FILE|- | --version";

enum Command {
    Version,
    Help,
    Run(String),
    Exec(String),
    Ibench(String),
    Tpcc(String),
    Vector(String),
}

pub fn main(args: Vec<String>) -> i32 {
    match dispatch(&args) {
        Ok(code) => code,
        Err(e) => {
            emit::fatal(&e);
            e.exit_code()
        }
    }
}

fn dispatch(args: &[String]) -> Result<i32, DriverError> {
    match parse_args(args)? {
        Command::Version => {
            println!("{VERSION_LINE}");
            Ok(0)
        }
        Command::Help => {
            println!("{USAGE}");
            Ok(0)
        }
        Command::Run(path) => workloads::run::<Sysbench>(&read_spec(&path)?),
        Command::Exec(path) => {
            let spec = spec::parse_exec(&read_spec(&path)?)?;
            signal::install();
            jobs::exec(&spec)
        }
        Command::Ibench(path) => workloads::run::<Ibench>(&read_spec(&path)?),
        Command::Tpcc(path) => workloads::run::<Tpcc>(&read_spec(&path)?),
        Command::Vector(path) => workloads::run::<Vector>(&read_spec(&path)?),
    }
}

fn parse_args(args: &[String]) -> Result<Command, DriverError> {
    let usage = |m: &str| DriverError::spec(format!("{m}; {USAGE}"));
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["--version"] | ["-V"] => Ok(Command::Version),
        ["--help"] | ["-h"] => Ok(Command::Help),
        [verb @ ("run" | "exec" | "ibench" | "tpcc" | "vector"), rest @ ..] => {
            let path = match rest {
                ["--spec", p] => p.to_string(),
                [one] if one.starts_with("--spec=") => one["--spec=".len()..].to_string(),
                _ => return Err(usage(&format!("{verb} needs exactly --spec FILE|-"))),
            };
            Ok(match *verb {
                "run" => Command::Run(path),
                "exec" => Command::Exec(path),
                "ibench" => Command::Ibench(path),
                "tpcc" => Command::Tpcc(path),
                _ => Command::Vector(path),
            })
        }
        [] => Err(usage("no command given")),
        [other, ..] => Err(usage(&format!("unknown command {other:?}"))),
    }
}

fn read_spec(path: &str) -> Result<String, DriverError> {
    let mut text = String::new();
    let res = if path == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text).map(|_| ()))
    };
    res.map_err(|e| DriverError::spec(format!("cannot read spec {path}: {e}")))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_line_names_the_protocol_the_spec_parser_speaks() {
        assert!(super::VERSION_LINE.ends_with(&format!(" protocol {}", crate::spec::PROTOCOL)));
    }
}
