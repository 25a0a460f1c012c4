// The mysql backend against a live MySQL/MariaDB, only with DBDRIFT_TEST_MYSQL=socket_path
// (user root, no password, allowed to create databases and users); otherwise each live test
// says it was skipped on stderr.

mod common;

use common::{fatal, live_mysql, mysql_conn as conn, ok, run_verb};
use serde_json::{json, Value};

/// Runs `exec` with one job per phase; asserts success and returns the job lines.
fn exec(connection: &Value, phases: &[&str]) -> Vec<Value> {
    common::exec("mysql", connection, phases)
}

/// A fresh database `name` holding `t` with ids 1..=1000, loaded with multi-row INSERTs.
fn setup(socket: &str, name: &str) -> Value {
    let values: Vec<String> = (1..=1000)
        .map(|i| format!("({i},{},'c{i}','p')", i % 10))
        .collect();
    exec(
        &conn(socket, "root", "", ""),
        &[
            &format!("DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"),
            &format!("CREATE TABLE {name}.t(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))"),
            &format!("INSERT INTO {name}.t VALUES {}", values.join(",")),
        ],
    );
    conn(socket, "root", "", name)
}

/// A run spec with every field (the driver has no defaults); statements get the fields they
/// leave out as dbdrift writes them: repeat 1, a random table, rows counted, no params.
fn run_spec(connection: &Value, prepared: bool, mut statements: Value) -> String {
    for st in statements.as_array_mut().unwrap() {
        let st = st.as_object_mut().unwrap();
        for (key, value) in [
            ("repeat", json!(1)),
            ("table", json!("random")),
            ("rows", json!("count")),
            ("params", json!([])),
        ] {
            st.entry(key).or_insert(value);
        }
    }
    json!({"protocol": 3, "backend": "mysql", "connection": connection, "seed": 1, "threads": 2,
           "warmup_s": 0, "duration_s": 0.5, "interval_s": 0.25, "tables": 1, "table_size": 1000,
           "rand": {"type": "uniform"}, "prepared": prepared,
           "workload": {"transaction": true, "id_max": 1000, "statements": statements}})
    .to_string()
}

#[test]
fn live_mysql_exec_returns_the_last_result_set_as_text() {
    let Some(sock) = live_mysql("tests") else {
        return;
    };
    let c = setup(&sock, "dbdrift_rs_exec");
    let l = exec(
        &c,
        &["SELECT 1; SELECT count(*) AS n, NULL AS z, MAX(c) AS m FROM t"],
    );
    assert_eq!(l[0]["command"], "SELECT 1");
    assert_eq!(l[0]["columns"], json!(["n", "z", "m"]));
    assert_eq!(l[0]["rows"], json!([["1000", null, "c999"]]));
}

#[test]
fn live_mysql_run_counts_rows_prepared_and_inlined() {
    let Some(sock) = live_mysql("tests") else {
        return;
    };
    let c = setup(&sock, "dbdrift_rs_run");
    for prepared in [true, false] {
        let statements = json!([
            {"sql": "SELECT c FROM t WHERE id=?", "repeat": 3, "params": [{"gen": "id"}]},
            {"sql": "SELECT c FROM t WHERE id BETWEEN ? AND ?",
             "params": [{"gen": "uniform", "lo": 1, "hi": 900, "as": "a"}, {"gen": "ref", "var": "a", "plus": 9}]},
            {"sql": "UPDATE t SET c=? WHERE id=?", "rows": "ignore",
             "params": [{"gen": "digits", "groups": 10}, {"gen": "id"}]}]);
        let out = run_verb("run", &run_spec(&c, prepared, statements));
        let l = ok(&out);
        assert!(l[0]["server_version"].as_str().unwrap().len() > 3);
        assert_eq!(l[0]["backend_pids"].as_array().unwrap().len(), 2);
        let s = l.last().unwrap();
        let events = s["events"].as_u64().unwrap();
        assert!(events > 0);
        assert_eq!(s["statements"].as_u64().unwrap(), events * 7);
        assert_eq!(s["rows"].as_u64().unwrap(), events * 13);
    }
}

#[test]
fn live_mysql_duplicate_key_abandons_the_event_and_is_counted() {
    let Some(sock) = live_mysql("tests") else {
        return;
    };
    let c = setup(&sock, "dbdrift_rs_dup");
    let statements = json!([{"sql": "INSERT INTO t (id, k, c, pad) VALUES (?, 1, 'x', 'y')",
                             "params": [{"gen": "uniform", "lo": 1, "hi": 1000}]}]);
    let out = run_verb("run", &run_spec(&c, true, statements));
    let s = ok(&out).pop().unwrap();
    assert_eq!(s["events"], 0);
    assert!(s["errors"]["duplicate"].as_u64().unwrap() > 0);
}

#[test]
fn live_mysql_missing_table_is_a_sql_fatal_with_sqlstate_and_code() {
    let Some(sock) = live_mysql("tests") else {
        return;
    };
    let c = setup(&sock, "dbdrift_rs_fatal");
    let statements =
        json!([{"sql": "SELECT c FROM no_such_table WHERE id=?", "params": [{"gen": "id"}]}]);
    let out = run_verb("run", &run_spec(&c, true, statements));
    let f = &fatal(&out, 1);
    assert_eq!(
        (f["class"].as_str(), f["sqlstate"].as_str()),
        (Some("sql"), Some("42S02"))
    );
    assert!(
        f["message"].as_str().unwrap().contains("MySQL error 1146"),
        "{f}"
    );
}

#[test]
fn live_mysql_native_password_user_connects_and_a_wrong_password_is_a_connect_fatal() {
    let Some(sock) = live_mysql("tests") else {
        return;
    };
    exec(
        &conn(&sock, "root", "", ""),
        &[
            "DROP USER IF EXISTS 'dbdrift_pw'@'localhost'",
            "CREATE USER 'dbdrift_pw'@'localhost' IDENTIFIED BY 's3cret!'",
        ],
    );
    let l = exec(
        &conn(&sock, "dbdrift_pw", "s3cret!", ""),
        &["SELECT CURRENT_USER()"],
    );
    assert_eq!(l[0]["rows"], json!([["dbdrift_pw@localhost"]]));
    let spec = json!({"protocol": 3, "backend": "mysql", "seed": 1, "threads": 1,
                      "connection": conn(&sock, "dbdrift_pw", "wrong", ""), "phases": [[{"sql": "SELECT 1"}]]});
    let out = run_verb("exec", &spec.to_string());
    let f = &fatal(&out, 1);
    assert_eq!(f["class"], "connect");
    assert!(f["message"].as_str().unwrap().contains("1045"), "{f}");
}

#[test]
fn mysql_socket_that_does_not_exist_is_a_connect_fatal_naming_it() {
    let spec = run_spec(
        &conn("/nonexistent-dbdrift/mysqld.sock", "root", "", ""),
        true,
        json!([{"sql": "SELECT 1"}]),
    );
    let out = run_verb("run", &spec);
    let f = &fatal(&out, 1);
    assert_eq!(f["class"], "connect");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .starts_with("/nonexistent-dbdrift/mysqld.sock"),
        "{f}"
    );
}
