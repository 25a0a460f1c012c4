// The workloads, one module each with its spec, execution and statistics, behind the one
// `Workload` trait the command line dispatches to. The modules above them (backend, exec,
// stats, workload) know no workload by name; a new one is a module here, declared with
// `workload!`, and a verb in `cli`.

/// Declares the unit struct `$name` as the workload whose spec `$spec` is read and checked
/// by `$parse` and run by `$execute`: a workload module names its two entry points and
/// nothing else, so every workload meets the driver the same way.
macro_rules! workload {
    ($(#[$doc:meta])* $name:ident: $spec:ty = $parse:path, $execute:path) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::workloads::Workload for $name {
            type Spec = $spec;

            fn parse(text: &str) -> Result<$spec, $crate::error::DriverError> {
                $parse(text)
            }

            fn execute(spec: &$spec) -> Result<i32, $crate::error::DriverError> {
                $execute(spec)
            }
        }
    };
}

/// Evaluates `$body` with the type `$conn` standing for the session type of the server
/// `$backend` names, for the workloads that need a real server: the null backend is refused
/// with `check_server_backend`'s words for `$verb` (a spec that passed that check never gets
/// here).
macro_rules! on_server {
    ($backend:expr, $verb:literal, $conn:ident => $body:expr) => {
        match $backend {
            $crate::spec::BackendKind::Postgres => {
                type $conn = $crate::backend::postgres::PgConn;
                $body
            }
            $crate::spec::BackendKind::Mysql => {
                type $conn = $crate::backend::mysql::MyConn;
                $body
            }
            $crate::spec::BackendKind::Null => Err($crate::error::DriverError::spec(concat!(
                "backend \"null\" cannot run ",
                $verb,
                ": it needs a postgres or mysql server"
            ))),
        }
    };
}

/// In a spec module's tests: one test per case `name: key = value => words`, which sets the
/// top-level `key` of the module's valid spec to the JSON `value` and expects a spec error
/// whose message contains `words` (through the module's own `refused`).
#[cfg(test)]
macro_rules! refusal_tests {
    ($($name:ident: $key:literal = $value:tt => $words:expr;)+) => {$(
        #[test]
        fn $name() {
            let message = refused($key, serde_json::json!($value));
            assert!(message.contains($words), "{message}");
        }
    )+};
}

pub mod ibench;
pub mod sysbench;
pub mod tpcc;
pub mod vector;

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
    crate::emit::stamp_lines(true); // a deterministic null run turns them off again
    W::execute(&spec)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_shared_modules_name_no_workload() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![
            src.join("spec.rs"),
            src.join("emit.rs"),
            src.join("error.rs"),
        ];
        for dir in ["backend", "exec", "stats", "workload"] {
            rust_files(&src.join(dir), &mut files);
        }
        let naming: Vec<String> = files
            .iter()
            .filter(|f| std::fs::read_to_string(f).unwrap().contains("workloads::"))
            .map(|f| f.display().to_string())
            .collect();
        assert!(
            naming.is_empty(),
            "shared modules import a workload: {naming:?}"
        );
    }
}
