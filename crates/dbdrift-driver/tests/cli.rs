// Command-line behaviour of the built binary: version, usage and spec errors, null runs,
// and (only with DBDRIFT_TEST_PG=socket_dir:port) one live PostgreSQL round trip.

mod common;

use common::{driver, fatal, lines, live_postgres, ok, run_verb};

#[test]
fn version_prints_driver_and_protocol() {
    let out = driver(&["--version"], "");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("dbdrift-driver {} protocol 3\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn max_events_ends_the_run_after_exactly_that_many_events() {
    // 3 threads share 1000 events (334 + 333 + 333); the 60 s duration is never reached.
    let spec = r#"{"protocol":3,"backend":"null","seed":1,"threads":3,"warmup_s":0,"duration_s":60,"interval_s":10,
      "tables":1,"table_size":10,"rand":{"type":"uniform"},"prepared":true,"max_events":1000,
      "workload":{"transaction":false,"id_max":10,"statements":[{"sql":"SELECT $1","repeat":1,"table":"random","rows":"count","params":[{"gen":"id"}]}]},
      "null":{"ops_per_s":0,"latency_us":40,"rows_per_statement":1}}"#;
    let started = std::time::Instant::now();
    let out = run_verb("run", spec);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        started.elapsed().as_secs() < 30,
        "the run did not end at max_events"
    );
    let l = lines(&out);
    let summary = l.last().unwrap();
    assert_eq!(summary["type"], "summary");
    // Events done before the reporter's first count are warmup events; max_events counts both.
    let warm = l
        .iter()
        .find(|v| v["type"] == "warmup")
        .map_or(0, |v| v["events"].as_u64().unwrap());
    assert_eq!(warm + summary["events"].as_u64().unwrap(), 1000);
    assert!(summary["duration_s"].as_f64().unwrap() < 60.0);
}

#[test]
fn unparsable_spec_prints_a_spec_fatal_line_and_exits_2() {
    let out = run_verb("run", "{not json");
    assert_eq!(out.status.code(), Some(2));
    let l = lines(&out);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["type"], "fatal");
    assert_eq!(l[0]["class"], "spec");
}

/// A timed run of the null backend: 0.2 s of warm-up, 0.5 s measured in 0.25 s intervals.
fn null_run_spec(threads: u32) -> String {
    let spec = r#"{"protocol":3,"backend":"null","seed":1,"threads":THREADS,"warmup_s":0.2,"duration_s":0.5,"interval_s":0.25,
      "tables":1,"table_size":10,"rand":{"type":"uniform"},"prepared":true,
      "workload":{"transaction":false,"id_max":10,"statements":[{"sql":"SELECT $1","repeat":1,"table":"random","rows":"count","params":[{"gen":"id"}]}]},
      "null":{"ops_per_s":2000,"latency_us":40,"rows_per_statement":1}}"#;
    spec.replace("THREADS", &threads.to_string())
}

#[test]
fn timed_null_run_reports_intervals_and_a_summary() {
    let out = run_verb("run", &null_run_spec(2));
    let l = ok(&out);
    let kinds: Vec<&str> = l.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["start", "warmup", "interval", "interval", "summary"]
    );
    let summary = &l[4];
    assert_eq!(summary["latency_us"]["min"], 40.0);
    assert_eq!(summary["events"], summary["statements"]);
    assert!(summary["events"].as_u64().unwrap() > 0);
    assert_eq!(l[3]["end_s"], 0.5);
}

#[test]
fn a_timed_run_stamps_its_window_edges_with_the_monotonic_clock_they_were_measured_on() {
    let spec = null_run_spec(1);
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: now is a valid timespec for the call to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let before = now.tv_sec as f64 + now.tv_nsec as f64 / 1e9;
    let l = ok(&run_verb("run", &spec));
    let mono = |i: usize| l[i]["mono_s"].as_f64().unwrap();
    assert!(l.iter().all(|v| v["mono_s"].is_f64()));
    assert!(mono(0) >= before && mono(0) < before + 30.0);
    // The warmup line is stamped at the origin of start_s/end_s, each interval at its end.
    for i in [2, 3] {
        let end_s = l[i]["end_s"].as_f64().unwrap();
        assert!((mono(i) - mono(1) - end_s).abs() < 2e-6, "{:?}", l[i]);
    }
}

#[test]
fn unreachable_server_is_a_connect_fatal_with_exit_1() {
    let spec = r#"{"protocol":3,"backend":"postgres","connection":{"socket_dir":"/nonexistent-dbdrift","port":1,"user":"u","dbname":"d"},
      "seed":1,"threads":1,"warmup_s":0,"duration_s":1,"interval_s":1,"tables":1,"table_size":1,"rand":{"type":"uniform"},
      "prepared":true,"workload":{"transaction":false,"id_max":1,"statements":[{"sql":"SELECT 1","repeat":1,"table":"random","rows":"count","params":[]}]}}"#;
    let out = run_verb("run", spec);
    assert_eq!(out.status.code(), Some(1));
    let l = lines(&out);
    assert_eq!(l[0]["class"], "connect");
    assert!(l[0].get("sqlstate").is_none());
}

const IBENCH: &str = r#"{"protocol":3,"backend":"postgres","connection":{"socket_dir":"/nonexistent-dbdrift","port":1,"user":"u","dbname":"d"},
  "seed":1,"step":"l.i0","clients":1,"tables":["pi1"],"interval_s":1,"rows_per_client":100,"rows_per_statement":10,
  "inserts_per_second":0,"deletes":false,"query":null,"query_threads":0,"data_length":[10,20],
  "sql":{"insert":"INSERT INTO {table} (dateandtime, cashregisterid, customerid, productid, price, data) VALUES"}}"#;

#[test]
fn ibench_on_the_null_backend_is_a_spec_fatal_with_exit_2() {
    let spec = IBENCH.replace(r#""backend":"postgres""#, r#""backend":"null""#);
    let out = run_verb("ibench", &spec);
    assert_eq!(out.status.code(), Some(2));
    let l = lines(&out);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["class"], "spec");
    assert!(l[0]["message"].as_str().unwrap().contains("null"));
}

#[test]
fn ibench_against_an_unreachable_server_is_a_connect_fatal_before_any_start_line() {
    let out = run_verb("ibench", IBENCH);
    assert_eq!(out.status.code(), Some(1));
    let l = lines(&out);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["class"], "connect");
}

#[test]
fn ibench_without_a_spec_is_a_usage_error_naming_it() {
    let out = driver(&["ibench"], "");
    assert_eq!(out.status.code(), Some(2));
    let l = lines(&out);
    assert!(l[0]["message"].as_str().unwrap().contains("ibench --spec"));
}

#[test]
fn live_postgres_exec_and_run_round_trip() {
    let Some((dir, port)) = live_postgres("test") else {
        return;
    };
    let conn =
        format!(r#"{{"socket_dir":"{dir}","port":{port},"user":"postgres","dbname":"postgres"}}"#);
    let exec = format!(
        r#"{{"protocol":3,"backend":"postgres","connection":{conn},"seed":3,"threads":2,"phases":[
        [{{"sql":"DROP TABLE IF EXISTS dbdrift_rs_t"}}],
        [{{"sql":"CREATE TABLE dbdrift_rs_t(id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60))"}}],
        [{{"copy_sbtest":{{"sql":"COPY dbdrift_rs_t (id, k, c, pad) FROM STDIN","first_id":1,"last_id":500,"k_max":10}}}},
         {{"copy_sbtest":{{"sql":"COPY dbdrift_rs_t (id, k, c, pad) FROM STDIN","first_id":501,"last_id":1000,"k_max":10}}}}],
        [{{"sql":"SELECT count(*) AS n, NULL AS z FROM dbdrift_rs_t"}}]]}}"#
    );
    let out = run_verb("exec", &exec);
    let l = ok(&out);
    let last_job = &l[l.len() - 2];
    assert_eq!(last_job["columns"], serde_json::json!(["n", "z"]));
    assert_eq!(last_job["rows"], serde_json::json!([["1000", null]]));
    let run = format!(
        r#"{{"protocol":3,"backend":"postgres","connection":{conn},"seed":1,"threads":1,"warmup_s":0,"duration_s":0.5,"interval_s":0.25,
        "tables":1,"table_size":1000,"rand":{{"type":"uniform"}},"prepared":true,
        "workload":{{"transaction":true,"id_max":1000,"statements":[
          {{"sql":"SELECT c FROM dbdrift_rs_t WHERE id=$1","repeat":3,"table":"random","rows":"count","params":[{{"gen":"id"}}]}},
          {{"sql":"INSERT INTO dbdrift_rs_t (id, k, c, pad) VALUES ($1, 1, 'x', 'y')","repeat":1,"table":"random","rows":"count","params":[{{"gen":"uniform","lo":1,"hi":1000}}]}}]}}}}"#
    );
    let out = run_verb("run", &run);
    let l = ok(&out);
    let summary = l.last().unwrap();
    // Every insert hits an existing id: each event is abandoned as a duplicate and rolled back.
    assert_eq!(summary["events"], 0);
    assert!(summary["errors"]["duplicate"].as_u64().unwrap() > 0);
    let sql_err = run_verb(
        "run",
        &run.replace("dbdrift_rs_t WHERE", "no_such_table WHERE"),
    );
    let f = &fatal(&sql_err, 1);
    assert_eq!(
        (f["class"].as_str(), f["sqlstate"].as_str()),
        (Some("sql"), Some("42P01"))
    );
}
