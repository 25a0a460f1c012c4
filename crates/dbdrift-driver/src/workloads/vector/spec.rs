// The `vector` spec (docs/protocol.md "## `vector`"): serde types and validation of a vector
// load or search. The SQL comes from dbdrift (the dialect of each engine's vector type lives
// there); the driver substitutes each vector's text for `$VECTOR`, reads the vectors and the
// exact neighbours from the files dbdrift made, and measures. Unknown keys are refused.

use crate::error::DriverError;
use crate::spec::{
    check, check_count, check_non_negative, check_positive, check_protocol, check_server_backend,
    parse_json, BackendKind, ConnectionSpec,
};
use serde::Deserialize;

/// What `load_value` and `query_sql` hold where a vector's text goes.
pub const PLACEHOLDER: &str = "$VECTOR";
/// pgvector's `vector` type takes at most 16,000 dimensions, MariaDB's VECTOR 16,383.
const MAX_DIM: u32 = 16_383;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum VectorPhase {
    Load,
    Search,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct VectorSpec {
    pub protocol: u32,
    pub backend: BackendKind,
    #[serde(default)]
    pub connection: ConnectionSpec,
    pub seed: u64,
    pub phase: VectorPhase,
    pub dim: u32,
    /// Load: the table rows go into, as `(id, vector)`; ids are row numbers + 1.
    pub table: String,
    pub rows: u64,
    /// float32, little-endian, row after row: `rows` x `dim`.
    pub base_path: String,
    /// A row's vector as the bulk path writes it, `$VECTOR` standing for `[x,y,...]`.
    pub load_value: String,
    /// Search: `queries` x `dim` float32, and `queries` x `truth_k` int32 row numbers.
    pub queries_path: String,
    pub queries: u32,
    pub truth_path: String,
    pub truth_k: u32,
    /// Neighbours asked for and compared (recall@k).
    pub k: u32,
    /// The search statement, returning ids in its first column, `$VECTOR` for the query.
    pub query_sql: String,
    /// Statements each connection runs first (the search setting: `SET hnsw.ef_search = 40`).
    pub session_sql: Vec<String>,
    /// Load: loader connections; search: clients.
    pub clients: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub interval_s: f64,
}

pub fn parse_vector(text: &str) -> Result<VectorSpec, DriverError> {
    let spec: VectorSpec = parse_json(text)?;
    check_protocol(spec.protocol)?;
    check_server_backend(spec.backend, "vector")?;
    check_count(spec.dim, MAX_DIM, "dim")?;
    check(spec.clients >= 1, "clients must be at least 1")?;
    check(spec.rows >= 1, "rows must be at least 1")?;
    check(!spec.table.is_empty(), "table must not be empty")?;
    check_positive(spec.interval_s, "interval_s")?;
    check_non_negative(spec.warmup_s, "warmup_s")?;
    check_non_negative(spec.duration_s, "duration_s")?;
    match spec.phase {
        VectorPhase::Load => check(
            spec.load_value.contains(PLACEHOLDER),
            "load_value must hold $VECTOR where the vector goes",
        )?,
        VectorPhase::Search => {
            check(
                spec.query_sql.contains(PLACEHOLDER),
                "query_sql must hold $VECTOR where the query vector goes",
            )?;
            check(spec.queries >= 1, "queries must be at least 1")?;
            check(
                spec.k >= 1 && spec.k <= spec.truth_k,
                "k must be in 1..=truth_k (the exact neighbours kept per query)",
            )?;
            check(
                spec.duration_s > 0.0,
                "duration_s must be > 0 for phase \"search\"",
            )?;
        }
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::testing;
    use serde_json::{json, Value};

    fn base() -> Value {
        json!({"protocol": 3, "backend": "postgres", "connection": {"socket_dir": "/tmp", "port": 5432},
            "seed": 1, "phase": "search", "dim": 4, "table": "items", "rows": 10,
            "base_path": "/x/base.f32", "load_value": "$VECTOR", "queries_path": "/x/q.f32", "queries": 2,
            "truth_path": "/x/t.i32", "truth_k": 100, "k": 10,
            "query_sql": "SELECT id FROM items ORDER BY v <=> '$VECTOR' LIMIT 10",
            "session_sql": ["SET hnsw.ef_search = 40"], "clients": 1, "warmup_s": 1, "duration_s": 5,
            "interval_s": 1})
    }

    fn refused(key: &str, value: Value) -> String {
        testing::refused(parse_vector, base(), key, value)
    }

    #[test]
    fn a_valid_search_spec_parses() {
        let s = parse_vector(&base().to_string()).unwrap();
        assert_eq!((s.phase, s.dim, s.k, s.truth_k), (VectorPhase::Search, 4, 10, 100));
        assert_eq!(s.session_sql, vec!["SET hnsw.ef_search = 40".to_string()]);
    }

    #[test]
    fn a_missing_field_is_a_spec_error_the_driver_has_no_defaults() {
        testing::missing_fields_are_refused(
            parse_vector,
            base(),
            &["seed", "dim", "k", "query_sql", "session_sql", "warmup_s", "load_value"],
        );
    }

    #[test]
    fn a_load_spec_needs_the_placeholder_in_its_value_only() {
        let mut v = base();
        v["phase"] = json!("load");
        v["query_sql"] = json!("");
        v["duration_s"] = json!(0);
        assert!(parse_vector(&v.to_string()).is_ok());
        v["load_value"] = json!("VEC_FromText('x')");
        assert!(testing::spec_error(parse_vector(&v.to_string())).contains("load_value"));
    }

    refusal_tests! {
        null_backend: "backend" = "null" => "cannot run vector";
        zero_dim: "dim" = 0 => "dim must be";
        huge_dim: "dim" = 20000 => "dim must be";
        no_placeholder: "query_sql" = "SELECT 1" => "$VECTOR";
        k_above_truth: "k" = 101 => "k must be";
        zero_k: "k" = 0 => "k must be";
        no_queries: "queries" = 0 => "queries must be";
        zero_duration: "duration_s" = 0 => "duration_s must be > 0";
        no_clients: "clients" = 0 => "clients must be";
        unknown_key: "ef_search" = 40 => "unknown field";
    }
}
