// Golden-file contract tests: the built binary on each spec in tests/data/protocol/ must
// print exactly the stored NDJSON. UPDATE_GOLDEN=1 rewrites the files instead.

mod common;

use common::{driver, protocol_dir};

fn check_golden(verb: &str, name: &str) {
    let dir = protocol_dir();
    let spec = dir.join(format!("{name}.spec.json"));
    let golden = dir.join(format!("{name}.ndjson"));
    let out = driver(&[verb, "--spec", spec.to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&golden, &out.stdout).expect("golden file is writable");
        return;
    }
    let expected =
        std::fs::read(&golden).unwrap_or_else(|e| panic!("cannot read {}: {e}", golden.display()));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&expected),
        "stdout differs from {} (UPDATE_GOLDEN=1 regenerates)",
        golden.display()
    );
}

#[test]
fn deterministic_null_run_prints_the_golden_ndjson() {
    check_golden("run", "run_null");
}

#[test]
fn null_exec_prints_the_golden_ndjson() {
    check_golden("exec", "exec_null");
}
