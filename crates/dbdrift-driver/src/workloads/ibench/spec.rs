// The `ibench` spec (docs/protocol.md "## `ibench`"): serde types and validation. Like the
// rest of `spec`, every problem is a DriverError of class "spec"; nothing here runs SQL.

use crate::error::DriverError;
use crate::spec::{
    check, check_positive, check_protocol, check_server_backend, number_marks, parse_json,
    BackendKind, ConnectionSpec,
};
use crate::workload::max_placeholder;
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    Range,
    Point,
}

#[derive(Deserialize, Debug, Clone)]
pub struct RangeQuerySpec {
    pub sql: String,
    /// The parameter is uniform in [0, domain).
    pub domain: i64,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct IbenchSql {
    pub insert: String,
    pub delete: Option<String>,
    pub min: Option<String>,
    pub max: Option<String>,
    pub range: Vec<RangeQuerySpec>,
    pub point: Option<String>,
    pub after: Vec<String>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct IbenchSpec {
    pub protocol: u32,
    pub backend: BackendKind,
    #[serde(default)]
    pub connection: ConnectionSpec,
    pub seed: u64,
    pub step: String,
    pub clients: u32,
    pub tables: Vec<String>,
    pub interval_s: f64,
    pub rows_per_client: u64,
    pub rows_per_statement: u64,
    /// Per client; 0 means not rate limited.
    pub inserts_per_second: u64,
    pub deletes: bool,
    pub query: Option<QueryKind>,
    pub query_threads: u32,
    pub data_length: [u32; 2],
    pub sql: IbenchSql,
}

impl IbenchSpec {
    /// Query threads per client (0 when the step has no queries).
    pub fn query_threads_per_client(&self) -> u32 {
        if self.query.is_some() {
            self.query_threads
        } else {
            0
        }
    }

    /// Whether a client needs the shared minimum-transactionid estimate.
    pub fn needs_min(&self) -> bool {
        self.deletes || self.query == Some(QueryKind::Point)
    }
}

pub fn parse_ibench(text: &str) -> Result<IbenchSpec, DriverError> {
    let mut spec: IbenchSpec = parse_json(text)?;
    check_protocol(spec.protocol)?;
    check_server_backend(spec.backend, "ibench")?;
    check(spec.clients >= 1, "clients must be at least 1")?;
    check(
        spec.tables.len() == spec.clients as usize,
        &format!(
            "tables names {} tables for {} clients: give one table per client",
            spec.tables.len(),
            spec.clients
        ),
    )?;
    check(
        spec.tables.iter().all(|t| !t.is_empty()),
        "a table name is empty",
    )?;
    check(
        spec.rows_per_statement >= 1,
        "rows_per_statement must be at least 1",
    )?;
    check_positive(spec.interval_s, "interval_s")?;
    let [lo, hi] = spec.data_length;
    check(lo <= hi, "data_length must be [min, max] with min <= max")?;
    check(!spec.sql.insert.is_empty(), "sql.insert is empty")?;
    if spec.deletes {
        check(spec.sql.delete.is_some(), "deletes need sql.delete")?;
    }
    if spec.needs_min() {
        check(
            spec.sql.min.is_some(),
            "deletes and point queries need sql.min",
        )?;
    }
    if spec.backend == BackendKind::Mysql {
        number_query_marks(&mut spec.sql)?;
    }
    match spec.query {
        None => Ok(()),
        Some(kind) => {
            check(
                spec.query_threads >= 1,
                "query_threads must be at least 1 when query is set",
            )?;
            check_queries(kind, &spec.sql)
        }
    }?;
    Ok(spec)
}

fn check_queries(kind: QueryKind, sql: &IbenchSql) -> Result<(), DriverError> {
    match kind {
        QueryKind::Range => {
            check(!sql.range.is_empty(), "query \"range\" needs sql.range")?;
            for (i, r) in sql.range.iter().enumerate() {
                check(
                    max_placeholder(&r.sql) == 1,
                    &format!("sql.range[{i}] must have exactly one placeholder"),
                )?;
                check(
                    r.domain >= 1,
                    &format!("sql.range[{i}].domain must be >= 1"),
                )?;
            }
            Ok(())
        }
        QueryKind::Point => {
            let point = sql
                .point
                .as_deref()
                .ok_or_else(|| DriverError::spec("query \"point\" needs sql.point"))?;
            check(
                max_placeholder(point) >= 1,
                "sql.point needs at least one placeholder",
            )?;
            check(sql.max.is_some(), "query \"point\" needs sql.max")
        }
    }
}

/// MySQL range/point SQL comes with `?`; numbered to `$n` as `run` does.
fn number_query_marks(sql: &mut IbenchSql) -> Result<(), DriverError> {
    let fix = |what: &str, text: &mut String| -> Result<(), DriverError> {
        let (numbered, n) = number_marks(text);
        if n > 0 && max_placeholder(text) > 0 {
            return Err(DriverError::spec(format!(
                "{what}: the SQL mixes ? and $n placeholders"
            )));
        }
        *text = numbered;
        Ok(())
    };
    for (i, r) in sql.range.iter_mut().enumerate() {
        fix(&format!("sql.range[{i}]"), &mut r.sql)?;
    }
    if let Some(p) = sql.point.as_mut() {
        fix("sql.point", p)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::testing;
    use serde_json::{json, Value};

    fn base() -> Value {
        json!({"protocol": 3, "backend": "postgres", "seed": 1, "step": "qr100",
            "clients": 2, "tables": ["pi1", "pi2"], "interval_s": 1, "rows_per_client": 1000,
            "rows_per_statement": 50, "inserts_per_second": 100, "deletes": true,
            "query": "range", "query_threads": 1, "data_length": [10, 20],
            "sql": {"insert": "INSERT INTO {table} (a) VALUES",
                    "delete": "DELETE FROM {table} WHERE id >= {min} LIMIT {rows}",
                    "min": "SELECT min(id) FROM {table}", "max": "SELECT max(id) FROM {table}",
                    "range": [{"sql": "SELECT 1 FROM {table} WHERE p >= $1", "domain": 10}],
                    "point": "SELECT 1 FROM {table} WHERE id IN ($1, $2)"}})
    }

    fn parse(v: &Value) -> Result<IbenchSpec, DriverError> {
        parse_ibench(&v.to_string())
    }

    fn spec_error(v: &Value) -> String {
        testing::spec_error(parse(v))
    }

    /// The spec error of the valid spec with `key` set to `value`.
    fn refused(key: &str, value: Value) -> String {
        testing::refused(parse_ibench, base(), key, value)
    }

    #[test]
    fn a_valid_spec_parses() {
        let s = parse(&base()).unwrap();
        assert_eq!(s.interval_s, 1.0);
        assert_eq!(s.data_length, [10, 20]);
        assert_eq!(s.query, Some(QueryKind::Range));
        assert_eq!(s.query_threads_per_client(), 1);
        assert!(s.sql.after.is_empty());
    }

    #[test]
    fn a_missing_field_is_a_spec_error_the_driver_has_no_defaults() {
        testing::missing_fields_are_refused(
            parse_ibench,
            base(),
            &["interval_s", "data_length", "query_threads", "step"],
        );
    }

    #[test]
    fn clients_must_be_at_least_one() {
        let mut v = base();
        v["clients"] = json!(0);
        v["tables"] = json!([]);
        assert!(spec_error(&v).contains("clients"));
    }

    #[test]
    fn tables_must_name_one_table_per_client() {
        let mut v = base();
        v["tables"] = json!(["pi1"]);
        assert!(spec_error(&v).contains("one table per client"));
        v["tables"] = json!(["pi1", "pi1"]);
        assert!(parse(&v).is_ok(), "clients may share a table");
    }

    #[test]
    fn a_range_step_needs_range_sql_with_one_placeholder() {
        let mut v = base();
        v["sql"]["range"] = json!([]);
        assert!(spec_error(&v).contains("sql.range"));
        v["sql"]["range"] = json!([{"sql": "SELECT 1 WHERE a > $1 AND b > $2", "domain": 5}]);
        assert!(spec_error(&v).contains("exactly one placeholder"));
    }

    #[test]
    fn a_point_step_needs_point_and_max_sql() {
        let mut v = base();
        v["query"] = json!("point");
        assert!(parse(&v).is_ok());
        v["sql"]["max"] = Value::Null;
        assert!(spec_error(&v).contains("sql.max"));
        v["sql"].as_object_mut().unwrap().remove("point");
        assert!(spec_error(&v).contains("sql.point"));
    }

    #[test]
    fn no_query_needs_no_query_sql() {
        let mut v = base();
        v["query"] = Value::Null;
        v["deletes"] = json!(false);
        v["sql"] = json!({"insert": "INSERT INTO {table} (a) VALUES"});
        let s = parse(&v).unwrap();
        assert_eq!(s.query_threads_per_client(), 0);
    }

    #[test]
    fn deletes_need_delete_and_min_sql() {
        let mut v = base();
        v["sql"].as_object_mut().unwrap().remove("delete");
        assert!(spec_error(&v).contains("sql.delete"));
        let mut v = base();
        v["sql"].as_object_mut().unwrap().remove("min");
        assert!(spec_error(&v).contains("sql.min"));
    }

    #[test]
    fn mysql_question_marks_are_numbered() {
        let mut v = base();
        v["backend"] = json!("mysql");
        v["query"] = json!("point");
        v["sql"]["range"] =
            json!([{"sql": "SELECT 1 FROM t WHERE p >= ? AND q <> '?'", "domain": 10}]);
        v["sql"]["point"] = json!("SELECT 1 FROM t WHERE id IN (?, ?, ?)");
        let s = parse(&v).unwrap();
        assert_eq!(
            s.sql.range[0].sql,
            "SELECT 1 FROM t WHERE p >= $1 AND q <> '?'"
        );
        assert_eq!(
            s.sql.point.unwrap(),
            "SELECT 1 FROM t WHERE id IN ($1, $2, $3)"
        );
        v["sql"]["point"] = json!("SELECT 1 FROM t WHERE id IN (?, $2)");
        assert!(spec_error(&v).contains("mixes"));
    }

    refusal_tests! {
        the_null_backend_is_refused: "backend" = "null" => "null";
        rows_per_statement_must_be_at_least_one: "rows_per_statement" = 0 => "rows_per_statement";
        data_length_must_be_ordered: "data_length" = [20, 10] => "data_length";
    }
}
