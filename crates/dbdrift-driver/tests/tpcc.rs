// The `tpcc` subcommand: spec errors without a server, and (only with DBDRIFT_TEST_PG=
// socket_dir:port or DBDRIFT_TEST_MYSQL=socket_path) a load whose row counts follow TPC-C
// clause 4.3.3.1, a short run, and the consistency conditions of clause 3.3.2.1-3.3.2.4
// afterwards; then the same with `procedures: true` in a database of its own. A live test
// without its variable says it was skipped on stderr.

mod common;

use common::{
    exec_rows as exec, lines, live_mysql, live_postgres, mysql_conn, ok, pg_conn, run_verb,
};
use serde_json::{json, Value};
use std::process::Output;

const WAREHOUSES: u64 = 2;

fn tpcc(spec: &Value) -> Output {
    run_verb("tpcc", &spec.to_string())
}

fn spec_error(spec: Value) -> String {
    let out = tpcc(&spec);
    assert_eq!(out.status.code(), Some(2));
    let l = lines(&out);
    assert_eq!(l[0]["type"], "fatal");
    assert_eq!(l[0]["class"], "spec");
    l[0]["message"].as_str().unwrap().to_string()
}

fn base_spec() -> Value {
    json!({"protocol": 3, "backend": "postgres", "connection": {"socket_dir": "/nonexistent", "port": 1},
           "seed": 1, "phase": "run", "warehouses": 1, "clients": 1, "rampup_s": 0, "duration_s": 1,
           "interval_s": 1, "procedures": false})
}

#[test]
fn an_unknown_key_is_a_spec_error_before_connecting() {
    let mut s = base_spec();
    s["vus"] = json!(2);
    assert!(spec_error(s).contains("unknown field `vus`"));
}

#[test]
fn zero_warehouses_is_a_spec_error() {
    let mut s = base_spec();
    s["warehouses"] = json!(0);
    assert!(spec_error(s).contains("warehouses"));
}

#[test]
fn a_connection_failure_is_a_connect_error() {
    let out = tpcc(&base_spec());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(lines(&out)[0]["class"], "connect");
}

/// The row counts of clause 4.3.3.1 for W warehouses (order_line is checked separately).
fn expected_rows(w: u64) -> [(&'static str, u64); 8] {
    [
        ("warehouse", w),
        ("district", 10 * w),
        ("customer", 30_000 * w),
        ("history", 30_000 * w),
        ("new_order", 9_000 * w),
        ("orders", 30_000 * w),
        ("item", 100_000),
        ("stock", 100_000 * w),
    ]
}

fn int(v: &Value) -> i64 {
    v.as_str().unwrap().parse::<f64>().unwrap() as i64
}

/// Clause 3.3.2.1-3.3.2.4, each as the number of warehouses or districts violating it.
const CONSISTENCY: &str = "SELECT \
 (SELECT count(*) FROM warehouse WHERE w_ytd <> (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id)), \
 (SELECT count(*) FROM district WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) \
    OR d_next_o_id - 1 <> (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)), \
 (SELECT count(*) FROM (SELECT no_w_id FROM new_order GROUP BY no_w_id, no_d_id \
    HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) x), \
 (SELECT count(*) FROM district WHERE (SELECT sum(o_ol_cnt) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) \
    <> (SELECT count(*) FROM order_line WHERE ol_w_id = d_w_id AND ol_d_id = d_id))";

fn check_consistency(backend: &str, connection: &Value) {
    let rows = exec(backend, connection, &[CONSISTENCY]);
    let violations: Vec<i64> = rows[0].iter().map(int).collect();
    assert_eq!(violations, vec![0, 0, 0, 0], "clause 3.3.2.1-4 violations");
}

fn load_and_check_rows(backend: &str, connection: &Value) {
    let spec = json!({"protocol": 3, "backend": backend, "connection": connection, "seed": 7,
                      "phase": "load", "warehouses": WAREHOUSES, "clients": 2, "rampup_s": 0,
                      "duration_s": 0, "interval_s": 1, "procedures": false});
    let out = ok(&tpcc(&spec));
    assert_eq!(out[0]["type"], "start");
    let summary = out.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["interrupted"], false);
    eprintln!(
        "observed: {backend} load of {WAREHOUSES} warehouses took {} s",
        summary["elapsed_s"]
    );
    let pieces = out.iter().filter(|l| l["type"] == "load").count();
    assert_eq!(
        pieces,
        1 + 8 * WAREHOUSES as usize,
        "one line per table piece"
    );
    for (table, n) in expected_rows(WAREHOUSES) {
        assert_eq!(summary["rows"][table], n, "summary rows of {table}");
        let counted = exec(
            backend,
            connection,
            &[&format!("SELECT count(*) FROM {table}")],
        );
        assert_eq!(int(&counted[0][0]) as u64, n, "rows in {table}");
    }
    let lines = exec(
        backend,
        connection,
        &["SELECT count(*), (SELECT sum(o_ol_cnt) FROM orders), \
           (SELECT count(*) FROM orders WHERE o_carrier_id IS NULL), \
           (SELECT count(DISTINCT c_last) FROM customer) FROM order_line"],
    );
    let (ol, sum, undelivered, names) = (
        int(&lines[0][0]) as u64,
        int(&lines[0][1]) as u64,
        int(&lines[0][2]) as u64,
        int(&lines[0][3]),
    );
    assert_eq!(ol, sum, "an order line per o_ol_cnt");
    assert!((5 * 30_000 * WAREHOUSES..=15 * 30_000 * WAREHOUSES).contains(&ol));
    assert_eq!(summary["rows"]["order_line"], ol);
    assert_eq!(
        undelivered,
        900 * 10 * WAREHOUSES,
        "o_carrier_id null for o_id > 2100"
    );
    assert_eq!(names, 1000, "every last name of the syllable table");
    check_consistency(backend, connection);
}

fn run_spec(backend: &str, connection: &Value, procedures: bool) -> Value {
    json!({"protocol": 3, "backend": backend, "connection": connection, "seed": 7,
           "phase": "run", "warehouses": WAREHOUSES, "clients": 2, "rampup_s": 1,
           "duration_s": 4, "interval_s": 1, "procedures": procedures})
}

/// Runs 1 s of ramp-up and a 4 s window with 2 VUs, checks the lines and the consistency
/// conditions; returns the output lines.
fn run_and_check(backend: &str, connection: &Value, procedures: bool) -> Vec<Value> {
    let out = ok(&tpcc(&run_spec(backend, connection, procedures)));
    let phases: Vec<&str> = out
        .iter()
        .filter(|l| l["type"] == "phase")
        .map(|l| l["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["rampup", "measure", "end"]);
    let intervals: Vec<&Value> = out.iter().filter(|l| l["type"] == "interval").collect();
    assert_eq!(intervals.len(), 5);
    assert_eq!(intervals[0]["phase"], "rampup");
    assert!(intervals[1..].iter().all(|l| l["phase"] == "measure"));
    let s = out.last().unwrap();
    assert_eq!(s["type"], "summary");
    assert_eq!(s["elapsed_s"], 4.0);
    let nopm = s["nopm"].as_f64().unwrap();
    let mode = if procedures { " procedures" } else { "" };
    eprintln!(
        "observed: {backend}{mode} NOPM {nopm} TPM {} with 2 VUs",
        s["tpm"]
    );
    assert!(nopm > 0.0);
    let measured: u64 = intervals[1..]
        .iter()
        .map(|l| l["tx"]["new_order"].as_u64().unwrap())
        .sum();
    assert_eq!(s["new_orders"], measured, "intervals add up to the summary");
    for t in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        let b = &s["by_type"][t];
        assert!(b["count"].as_u64().unwrap() > 0, "{t} ran");
        let in_hist: u64 = b["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[1].as_u64().unwrap())
            .sum();
        let done = b["count"].as_u64().unwrap() + b["rollbacks"].as_u64().unwrap();
        assert_eq!(in_hist, done, "{t} histogram");
    }
    check_consistency(backend, connection);
    out
}

/// Runs `check` with the connection to `name`, dropped and created anew on the live
/// `backend` server; without that server, says on stderr that `what` was skipped.
fn in_fresh_database(backend: &str, name: &str, what: &str, check: impl FnOnce(&str, &Value)) {
    let (admin, conn) = if backend == "postgres" {
        let Some((dir, port)) = live_postgres(what) else {
            return;
        };
        (pg_conn(&dir, port, "postgres"), pg_conn(&dir, port, name))
    } else {
        let Some(socket) = live_mysql(what) else {
            return;
        };
        let conn = |dbname| mysql_conn(&socket, "root", "", dbname);
        (conn(""), conn(name))
    };
    let (drop, create) = (
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    );
    exec(backend, &admin, &[&drop, &create]);
    check(backend, &conn);
}

fn load_run_and_check(backend: &str, connection: &Value) {
    load_and_check_rows(backend, connection);
    run_and_check(backend, connection, false);
}

#[test]
fn live_postgres_tpcc_load_run_and_consistency() {
    in_fresh_database("postgres", "dbdrift_tpcc", "tpcc test", load_run_and_check);
}

#[test]
fn live_mysql_tpcc_load_run_and_consistency() {
    in_fresh_database("mysql", "dbdrift_tpcc", "tpcc test", load_run_and_check);
}

/// New orders committed over every interval, ramp-up included.
fn committed_new_orders(out: &[Value]) -> u64 {
    out.iter()
        .filter(|l| l["type"] == "interval")
        .map(|l| l["tx"]["new_order"].as_u64().unwrap())
        .sum()
}

fn rollbacks(out: &[Value]) -> u64 {
    out.iter()
        .filter(|l| l["type"] == "interval")
        .map(|l| l["rollbacks"].as_u64().unwrap())
        .sum()
}

/// In a freshly created database: a run with procedures before they exist is refused; a
/// load with them creates all five; a run calls them, with every transaction type
/// committing, new-order rollbacks counted as rollbacks and undone, the orders in the
/// database matching the committed new orders, and the consistency conditions holding.
fn procedures_load_run_and_check(backend: &str, connection: &Value) {
    let load = |procedures: bool| {
        json!({"protocol": 3, "backend": backend, "connection": connection, "seed": 7,
               "phase": "load", "warehouses": WAREHOUSES, "clients": 2, "rampup_s": 0,
               "duration_s": 0, "interval_s": 1, "procedures": procedures})
    };
    ok(&tpcc(&load(false)));
    let refused = tpcc(&run_spec(backend, connection, true));
    assert_eq!(refused.status.code(), Some(1));
    let l = lines(&refused);
    assert_eq!(l.len(), 1, "only the fatal line: {l:?}");
    assert_eq!(l[0]["type"], "fatal");
    assert!(
        l[0]["message"]
            .as_str()
            .unwrap()
            .contains("load with procedures: true first"),
        "{}",
        l[0]["message"]
    );

    let summary = ok(&tpcc(&load(true))).pop().unwrap();
    assert_eq!(summary["procedures"], 5);
    assert_eq!(summary["rows"]["orders"], 30_000 * WAREHOUSES);
    check_consistency(backend, connection);

    let out = run_and_check(backend, connection, true);
    let s = out.last().unwrap();
    let measured: Vec<Value> = out
        .iter()
        .filter(|l| l["type"] == "interval" && l["phase"] == "measure")
        .cloned()
        .collect();
    assert_eq!(
        s["by_type"]["new_order"]["rollbacks"].as_u64().unwrap(),
        rollbacks(&measured),
        "new-order rollbacks add up to the summary"
    );
    for t in ["payment", "order_status", "delivery", "stock_level"] {
        assert_eq!(s["by_type"][t]["rollbacks"], 0, "{t} never rolls back");
    }
    // Every committed new order is in the database; each VU may commit one more after the
    // window closes, which is not counted. Rolled-back ones left nothing (and condition 4
    // of the consistency check would catch an order with a line missing).
    let committed = committed_new_orders(&out);
    let rows = exec(
        backend,
        connection,
        &["SELECT count(*) FROM orders WHERE o_id > 3000"],
    );
    let added = int(&rows[0][0]) as u64;
    assert!(
        (committed..=committed + 2).contains(&added),
        "{added} orders added, {committed} new orders counted as committed"
    );
    // 1% of new orders roll back: with this many, none at all has odds below 1e-6.
    let attempts = committed + rollbacks(&out);
    eprintln!(
        "observed: {backend} procedures {} rollbacks of {attempts} new orders",
        rollbacks(&out)
    );
    if attempts >= 1_400 {
        assert!(rollbacks(&out) > 0, "no rollback in {attempts} new orders");
    }
}

#[test]
fn live_postgres_tpcc_procedures() {
    in_fresh_database(
        "postgres",
        "dbdrift_tpcc_sp",
        "tpcc test",
        procedures_load_run_and_check,
    );
}

#[test]
fn live_mysql_tpcc_procedures() {
    in_fresh_database(
        "mysql",
        "dbdrift_tpcc_sp",
        "tpcc procedures test",
        procedures_load_run_and_check,
    );
}
