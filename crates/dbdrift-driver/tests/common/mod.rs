// The harness every integration test shares: run the built binary on a spec, read its NDJSON,
// find the live servers (DBDRIFT_TEST_PG=socket_dir:port, DBDRIFT_TEST_MYSQL=socket_path) and
// say on stderr when a live test is skipped. It asserts only what every caller needs.

// Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs the driver with `args`, `stdin` written to its standard input.
pub fn driver(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbdrift-driver"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the driver binary starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `verb --spec -` with `spec` on standard input.
pub fn run_verb(verb: &str, spec: &str) -> Output {
    driver(&[verb, "--spec", "-"], spec)
}

/// Every stdout line, parsed; a line that is not JSON fails the test.
pub fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// The lines of a run that must have exited 0; otherwise fails with its stdout and stderr.
pub fn ok(out: &Output) -> Vec<Value> {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    lines(out)
}

/// The first line of a run that must have exited with `code`: its fatal line.
pub fn fatal(out: &Output, code: i32) -> Value {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let first = lines(out).into_iter().next().expect("a fatal line");
    assert_eq!(first["type"], "fatal");
    first
}

/// Runs one SQL statement per phase through `exec`; returns every output line.
pub fn exec(backend: &str, connection: &Value, sqls: &[&str]) -> Vec<Value> {
    let phases: Vec<Value> = sqls.iter().map(|s| json!([{"sql": s}])).collect();
    let spec = json!({"protocol": 3, "backend": backend, "connection": connection, "seed": 1,
                      "threads": 1, "phases": phases});
    ok(&run_verb("exec", &spec.to_string()))
}

/// The rows of the last job of an `exec` like the one above.
pub fn exec_rows(backend: &str, connection: &Value, sqls: &[&str]) -> Vec<Vec<Value>> {
    let out = exec(backend, connection, sqls);
    let last = out.iter().rfind(|l| l["type"] == "job").unwrap();
    serde_json::from_value(last["rows"].clone()).unwrap()
}

/// Where the golden specs and outputs live (shared with the Python contract tests).
pub fn protocol_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/protocol")
}

/// `socket_dir:port` of a live PostgreSQL (trust auth, user postgres), or None after saying
/// on stderr that `what` was skipped.
pub fn live_postgres(what: &str) -> Option<(String, u16)> {
    let Ok(v) = std::env::var("DBDRIFT_TEST_PG") else {
        eprintln!("skipped: set DBDRIFT_TEST_PG=socket_dir:port to run the live PostgreSQL {what}");
        return None;
    };
    let (dir, port) = v.rsplit_once(':')?;
    Some((dir.to_string(), port.parse().ok()?))
}

/// The socket of a live MySQL/MariaDB (user root, no password), or None after saying on
/// stderr that `what` was skipped.
pub fn live_mysql(what: &str) -> Option<String> {
    let s = std::env::var("DBDRIFT_TEST_MYSQL").ok();
    if s.is_none() {
        eprintln!(
            "skipped: set DBDRIFT_TEST_MYSQL=/path/to/mysqld.sock to run the live MySQL {what}"
        );
    }
    s
}

/// A PostgreSQL connection object as user postgres.
pub fn pg_conn(dir: &str, port: u16, dbname: &str) -> Value {
    json!({"socket_dir": dir, "port": port, "user": "postgres", "dbname": dbname})
}

/// A MySQL connection object through `socket`.
pub fn mysql_conn(socket: &str, user: &str, password: &str, dbname: &str) -> Value {
    json!({"socket": socket, "user": user, "password": password, "dbname": dbname})
}
