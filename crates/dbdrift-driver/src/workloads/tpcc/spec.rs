// The `tpcc` spec (docs/protocol.md "## `tpcc`"): serde types and validation of a TPROC-C
// load or run. Unknown keys are refused here (unlike `run`), so a typo cannot silently keep a
// default; nothing here runs SQL.

use crate::error::DriverError;
use crate::spec::{
    check, check_count, check_non_negative, check_positive, check_protocol, check_server_backend,
    parse_json, BackendKind, ConnectionSpec,
};
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TpccPhase {
    Load,
    Run,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TpccSpec {
    pub protocol: u32,
    pub backend: BackendKind,
    #[serde(default)]
    pub connection: ConnectionSpec,
    pub seed: u64,
    pub phase: TpccPhase,
    pub warehouses: u32,
    /// Load: loader threads; run: virtual users.
    pub clients: u32,
    /// Run only (load takes them too, and ignores them).
    pub rampup_s: f64,
    pub duration_s: f64,
    pub interval_s: f64,
    pub procedures: bool,
    /// Run only: analytical streams beside the VUs (CH-benCHmark style); absent, none.
    #[serde(default)]
    pub analytics: Option<AnalyticsSpec>,
}

/// `streams` connections, each running `queries` over and over (see `analytics`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AnalyticsSpec {
    pub streams: u32,
    pub queries: Vec<AnalyticQuery>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AnalyticQuery {
    /// Reported under this name (`by_query`); unique in the spec.
    pub name: String,
    pub sql: String,
}

/// Warehouse ids are written into SQL as integers and multiplied by 100,000 stock rows;
/// beyond this a load would not finish anyway.
const MAX_WAREHOUSES: u32 = 100_000;
/// Each stream holds a connection and a histogram per query.
const MAX_STREAMS: u32 = 64;

pub fn parse_tpcc(text: &str) -> Result<TpccSpec, DriverError> {
    let spec: TpccSpec = parse_json(text)?;
    check_protocol(spec.protocol)?;
    check_server_backend(spec.backend, "tpcc")?;
    check_count(spec.warehouses, MAX_WAREHOUSES, "warehouses")?;
    if let Some(a) = &spec.analytics {
        check_analytics(a)?;
    }
    // Analytical streams alone are a run without VUs; a load always needs loaders.
    let analytics_run = spec.phase == TpccPhase::Run && spec.analytics.is_some();
    check(
        spec.clients >= 1 || analytics_run,
        "clients must be at least 1 (0 only in phase \"run\" with analytics)",
    )?;
    check_non_negative(spec.rampup_s, "rampup_s")?;
    check_positive(spec.interval_s, "interval_s")?;
    check_non_negative(spec.duration_s, "duration_s")?;
    if spec.phase == TpccPhase::Run {
        check(
            spec.duration_s > 0.0,
            "duration_s must be > 0 for phase \"run\"",
        )?;
    }
    Ok(spec)
}

/// Checked in both phases, though only `run` uses it: a malformed spec is refused either way.
fn check_analytics(a: &AnalyticsSpec) -> Result<(), DriverError> {
    check_count(a.streams, MAX_STREAMS, "analytics.streams")?;
    check(!a.queries.is_empty(), "analytics.queries must not be empty")?;
    for (i, q) in a.queries.iter().enumerate() {
        check(
            !q.name.trim().is_empty(),
            &format!("analytics.queries[{i}].name must not be empty"),
        )?;
        check(
            !q.sql.trim().is_empty(),
            &format!("analytics.queries[{i}].sql must not be empty"),
        )?;
        check(
            !a.queries[..i].iter().any(|p| p.name == q.name),
            &format!("analytics query name {:?} appears more than once", q.name),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::testing;
    use serde_json::{json, Value};

    fn base() -> Value {
        json!({"protocol": 3, "backend": "postgres", "connection": {"socket_dir": "/tmp", "port": 5432},
            "seed": 1, "phase": "run", "warehouses": 4, "clients": 2, "rampup_s": 10,
            "duration_s": 60, "interval_s": 1, "procedures": false})
    }

    fn spec_error(v: &Value) -> String {
        testing::spec_error(parse_tpcc(&v.to_string()))
    }

    /// The spec error of the valid spec with `key` set to `value`.
    fn refused(key: &str, value: Value) -> String {
        testing::refused(parse_tpcc, base(), key, value)
    }

    #[test]
    fn a_valid_run_spec_parses() {
        let s = parse_tpcc(&base().to_string()).unwrap();
        assert_eq!(s.phase, TpccPhase::Run);
        assert_eq!((s.warehouses, s.clients), (4, 2));
        assert_eq!((s.rampup_s, s.duration_s, s.interval_s), (10.0, 60.0, 1.0));
    }

    #[test]
    fn a_load_spec_takes_the_timing_fields_and_ignores_them() {
        let mut v = base();
        v["phase"] = json!("load");
        v["duration_s"] = json!(0);
        let s = parse_tpcc(&v.to_string()).unwrap();
        assert_eq!(
            (s.phase, s.clients, s.procedures),
            (TpccPhase::Load, 2, false)
        );
    }

    #[test]
    fn a_missing_field_is_a_spec_error_the_driver_has_no_defaults() {
        testing::missing_fields_are_refused(
            parse_tpcc,
            base(),
            &["seed", "clients", "rampup_s", "interval_s", "procedures"],
        );
    }

    #[test]
    fn procedures_are_accepted_in_either_phase() {
        let mut v = base();
        v["procedures"] = json!(true);
        assert!(parse_tpcc(&v.to_string()).unwrap().procedures);
        v["phase"] = json!("load");
        assert!(parse_tpcc(&v.to_string()).unwrap().procedures);
    }

    #[test]
    fn a_run_needs_a_positive_duration() {
        let mut v = base();
        v["duration_s"] = json!(0);
        assert!(spec_error(&v).contains("duration_s"));
        v["phase"] = json!("load");
        assert!(parse_tpcc(&v.to_string()).is_ok());
    }

    fn with_analytics() -> Value {
        let mut v = base();
        v["analytics"] = json!({"streams": 2, "queries": [
            {"name": "Q1", "sql": "SELECT count(*) FROM order_line"},
            {"name": "Q6", "sql": "SELECT sum(ol_amount) FROM order_line"}]});
        v
    }

    /// The spec error of the analytics spec with `analytics.key` set to `value`.
    fn analytics_refused(key: &str, value: Value) -> String {
        let mut v = with_analytics();
        v["analytics"][key] = value;
        spec_error(&v)
    }

    #[test]
    fn without_analytics_there_are_none() {
        assert!(parse_tpcc(&base().to_string()).unwrap().analytics.is_none());
    }

    #[test]
    fn analytics_parse_in_spec_order() {
        let s = parse_tpcc(&with_analytics().to_string()).unwrap();
        let a = s.analytics.unwrap();
        assert_eq!(a.streams, 2);
        let names: Vec<&str> = a.queries.iter().map(|q| q.name.as_str()).collect();
        assert_eq!(names, ["Q1", "Q6"]);
        assert_eq!(a.queries[1].sql, "SELECT sum(ol_amount) FROM order_line");
    }

    #[test]
    fn analytics_streams_are_in_1_to_64() {
        assert!(analytics_refused("streams", json!(0)).contains("analytics.streams"));
        assert!(analytics_refused("streams", json!(65)).contains("1..=64"));
        let mut v = with_analytics();
        v["analytics"]["streams"] = json!(64);
        assert!(parse_tpcc(&v.to_string()).is_ok());
    }

    #[test]
    fn analytics_need_queries_with_a_name_and_sql() {
        assert!(analytics_refused("queries", json!([])).contains("must not be empty"));
        let m = analytics_refused("queries", json!([{"name": "", "sql": "SELECT 1"}]));
        assert!(m.contains("queries[0].name"), "{m}");
        let m = analytics_refused(
            "queries",
            json!([{"name": "Q1", "sql": "SELECT 1"}, {"name": "Q2", "sql": "  "}]),
        );
        assert!(m.contains("queries[1].sql"), "{m}");
        let m = analytics_refused("queries", json!([{"name": "Q1"}]));
        assert!(m.contains("missing field `sql`"), "{m}");
    }

    #[test]
    fn analytics_query_names_are_unique() {
        let m = analytics_refused(
            "queries",
            json!([{"name": "Q1", "sql": "SELECT 1"}, {"name": "Q1", "sql": "SELECT 2"}]),
        );
        assert!(m.contains("\"Q1\" appears more than once"), "{m}");
    }

    #[test]
    fn unknown_analytics_keys_are_refused() {
        assert!(analytics_refused("stream", json!(1)).contains("unknown field `stream`"));
        let m = analytics_refused("queries", json!([{"name": "Q1", "sql": "x", "weight": 2}]));
        assert!(m.contains("unknown field `weight`"), "{m}");
    }

    #[test]
    fn zero_clients_run_analytics_alone_only_in_a_run() {
        let mut v = with_analytics();
        v["clients"] = json!(0);
        let s = parse_tpcc(&v.to_string()).unwrap();
        assert_eq!((s.clients, s.analytics.unwrap().streams), (0, 2));
        v["phase"] = json!("load");
        assert!(spec_error(&v).contains("clients must be at least 1"));
        let mut v = base();
        v["clients"] = json!(0);
        assert!(spec_error(&v).contains("with analytics"));
    }

    #[test]
    fn a_load_takes_analytics_and_ignores_them() {
        let mut v = with_analytics();
        v["phase"] = json!("load");
        assert!(parse_tpcc(&v.to_string()).unwrap().analytics.is_some());
    }

    refusal_tests! {
        unknown_keys_are_refused: "warehouse" = 3 => "unknown field `warehouse`";
        an_unknown_phase_is_refused: "phase" = "bench" => "bench";
        warehouses_must_be_at_least_one: "warehouses" = 0 => "warehouses";
        clients_must_be_at_least_one: "clients" = 0 => "clients";
        a_negative_rampup_is_refused: "rampup_s" = (-1) => "rampup_s";
        a_zero_interval_is_refused: "interval_s" = 0 => "interval_s";
        the_null_backend_is_refused: "backend" = "null" => "null";
        a_wrong_protocol_is_refused: "protocol" = 1 => "protocol";
    }
}
