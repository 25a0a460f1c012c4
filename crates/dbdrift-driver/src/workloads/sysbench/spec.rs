// The `run` spec (docs/protocol.md): the statements of a sysbench-style workload, the
// threads and durations that drive them, the null backend's rates and the turns between
// servers. Parsing never panics: every problem becomes a DriverError of class "spec".

use super::plan::Plan;
use crate::error::DriverError;
use crate::spec::{
    check, check_common, check_non_negative, check_positive, number_marks, parse_json, BackendKind,
    ConnectionSpec, RandSpec,
};
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone)]
pub struct NullSpec {
    #[serde(default)]
    pub ops_per_s: f64,
    #[serde(default)]
    pub latency_us: f64,
    #[serde(default)]
    pub rows_per_statement: u64,
    #[serde(default)]
    pub deterministic: bool,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TablePick {
    Random,
    Previous,
    Thread,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RowsMode {
    Count,
    Ignore,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "gen", rename_all = "lowercase")]
pub enum GenKind {
    Id,
    Uniform {
        lo: i64,
        hi: i64,
    },
    Ref {
        var: String,
        #[serde(default)]
        plus: i64,
    },
    Int {
        value: i64,
    },
    Digits {
        groups: u32,
    },
}

#[derive(Deserialize, Debug, Clone)]
pub struct ParamSpec {
    #[serde(flatten)]
    pub gen: GenKind,
    #[serde(rename = "as", default)]
    pub save_as: Option<String>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct StatementSpec {
    pub sql: String,
    pub repeat: u32,
    pub table: TablePick,
    pub rows: RowsMode,
    pub params: Vec<ParamSpec>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct WorkloadSpec {
    pub transaction: bool,
    pub id_max: i64,
    pub statements: Vec<StatementSpec>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct RunSpec {
    pub protocol: u32,
    pub backend: BackendKind,
    #[serde(default)]
    pub connection: ConnectionSpec,
    pub seed: u64,
    pub threads: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// Stop after this many events in all (split over the threads), or at `duration_s`,
    /// whichever comes first: fixed-work runs, as instruction counting needs.
    #[serde(default)]
    pub max_events: Option<u64>,
    pub interval_s: f64,
    pub tables: u32,
    /// Part of the documented spec; the driver itself never needs it.
    #[allow(dead_code)]
    pub table_size: u64,
    pub rand: RandSpec,
    pub prepared: bool,
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub null: Option<NullSpec>,
    /// Several servers in one run, taking short turns (protocol.md "Turns").
    #[serde(default)]
    pub turns: Option<TurnsSpec>,
}

/// Turns: every thread holds one connection per target, and all threads switch target
/// together at turn boundaries, in rounds of one turn per target whose order flips from
/// round to round (A B, B A, ...). `connection` is not used then.
#[derive(Deserialize, Debug, Clone)]
pub struct TurnsSpec {
    pub connections: Vec<ConnectionSpec>,
    pub turn_s: f64,
    /// Events each thread should finish in a measured turn: after the warm-up the turn grows
    /// to this many mean event times (never below turn_s). None: turns stay turn_s.
    #[serde(default)]
    pub turn_events: Option<f64>,
    /// The cycle of rounds: each a permutation of the connections' indexes, the order of one
    /// round's turns (plan/rounds.py balances it). Measured round k runs `rounds[k % len]`.
    /// Empty: listed order and reversed, alternating (A B, B A).
    #[serde(default)]
    pub rounds: Vec<Vec<usize>>,
}

pub fn parse_run(text: &str) -> Result<RunSpec, DriverError> {
    let mut spec: RunSpec = parse_json(text)?;
    if spec.backend == BackendKind::Mysql {
        number_question_marks(&mut spec)?;
    }
    check_common(spec.protocol, spec.threads)?;
    check_positive(spec.duration_s, "duration_s")?;
    check_non_negative(spec.warmup_s, "warmup_s")?;
    check_positive(spec.interval_s, "interval_s")?;
    check(spec.tables >= 1, "tables must be at least 1")?;
    if let RandSpec::Zipfian { exp } = spec.rand {
        check(exp.is_finite() && exp > 0.0, "rand.exp must be > 0")?;
    }
    if let Some(a) = &spec.turns {
        check(
            a.connections.len() >= 2,
            "turns.connections needs at least two servers",
        )?;
        check(
            a.turn_s.is_finite() && a.turn_s >= 0.001,
            "turns.turn_s must be >= 0.001",
        )?;
        check(
            a.turn_events.is_none_or(|k| k.is_finite() && k > 0.0),
            "turns.turn_events must be > 0",
        )?;
        let n = a.connections.len();
        check(
            a.rounds.iter().all(|r| {
                let mut sorted = r.clone();
                sorted.sort_unstable();
                sorted.into_iter().eq(0..n)
            }),
            "turns.rounds: every round must hold each connection's index once",
        )?;
        check(
            spec.max_events.is_none(),
            "turns and max_events cannot be combined",
        )?;
        check(
            !spec.null.as_ref().is_some_and(|n| n.deterministic),
            "turns need a timed run: null.deterministic cannot take turns",
        )?;
    }
    if spec.backend == BackendKind::Null {
        let n = spec
            .null
            .as_ref()
            .ok_or_else(|| DriverError::spec("backend \"null\" needs a \"null\" section"))?;
        check_non_negative(n.ops_per_s, "null.ops_per_s")?;
        check_non_negative(n.latency_us, "null.latency_us")?;
    }
    // Statement-level checks (placeholders, refs, tables) happen when the workload is compiled.
    Plan::compile(&spec)?;
    Ok(spec)
}

/// MySQL SQL arrives with `?` placeholders; the workload compiler knows one syntax, `$n`,
/// so each `?` becomes `$1..$n` in order (the mysql backend turns them back into `?`).
fn number_question_marks(spec: &mut RunSpec) -> Result<(), DriverError> {
    for (i, st) in spec.workload.statements.iter_mut().enumerate() {
        let (sql, n) = number_marks(&st.sql);
        if n == 0 {
            continue;
        }
        let ctx = |m: String| DriverError::spec(format!("workload.statements[{i}]: {m}"));
        if crate::workload::max_placeholder(&st.sql) > 0 {
            return Err(ctx("the SQL mixes ? and $n placeholders".into()));
        }
        if n != st.params.len() {
            return Err(ctx(format!(
                "the SQL has {n} ? placeholders but {} params are given",
                st.params.len()
            )));
        }
        st.sql = sql;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorClass;

    const RUN: &str = r#"{"protocol":3,"backend":"null","seed":1,"threads":2,"warmup_s":0,"duration_s":3,
        "interval_s":1,"tables":1,"table_size":100,"rand":{"type":"uniform"},"prepared":true,
        "workload":{"transaction":false,"id_max":100,"statements":[{"sql":"SELECT c FROM sbtest{table} WHERE id=$1",
          "repeat":1,"table":"random","rows":"count","params":[{"gen":"id"}]}]},
        "null":{"ops_per_s":10,"latency_us":5,"rows_per_statement":1}}"#;

    #[test]
    fn a_valid_run_spec_parses() {
        let s = parse_run(RUN).unwrap();
        assert_eq!(s.interval_s, 1.0);
        assert_eq!(s.workload.statements[0].repeat, 1);
        assert_eq!(s.workload.statements[0].table, TablePick::Random);
        assert!(s.prepared);
    }

    #[test]
    fn a_missing_field_is_a_spec_error_the_driver_has_no_defaults() {
        for field in [
            "\"seed\":1,",
            "\"interval_s\":1,",
            "\"prepared\":true,",
            "\"repeat\":1,",
        ] {
            let e = parse_run(&RUN.replacen(field, "", 1)).unwrap_err();
            assert_eq!(e.class, ErrorClass::Spec, "{field}");
            assert!(
                e.message.contains("missing field"),
                "{field}: {}",
                e.message
            );
        }
    }

    #[test]
    fn malformed_json_is_a_spec_error() {
        let e = parse_run("{\"protocol\":1,").unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn wrong_protocol_is_a_spec_error() {
        let e = parse_run(&RUN.replace("\"protocol\":3", "\"protocol\":1")).unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert!(e.message.contains("protocol 1"));
    }

    #[test]
    fn unknown_generator_is_a_spec_error() {
        let e = parse_run(&RUN.replace("\"gen\":\"id\"", "\"gen\":\"gauss\"")).unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
    }

    #[test]
    fn missing_parameter_for_placeholder_is_a_spec_error() {
        let e = parse_run(&RUN.replace("[{\"gen\":\"id\"}]", "[]")).unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert!(e.message.contains("$1"), "{}", e.message);
    }

    #[test]
    fn null_backend_without_null_section_is_a_spec_error() {
        let text = RUN.replace(
            ",\n        \"null\":{\"ops_per_s\":10,\"latency_us\":5,\"rows_per_statement\":1}",
            "",
        );
        let e = parse_run(&text).unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
    }

    const MYSQL_RUN: &str = r#"{"protocol":3,"backend":"mysql","seed":1,"threads":1,"warmup_s":0,"duration_s":1,
        "interval_s":1,"tables":1,"table_size":100,"rand":{"type":"uniform"},"prepared":true,
        "workload":{"transaction":false,"id_max":100,"statements":[{"sql":"SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ? AND c <> '?'",
          "repeat":1,"table":"random","rows":"count","params":[{"gen":"id","as":"a"},{"gen":"ref","var":"a","plus":9}]}]}}"#;

    #[test]
    fn mysql_question_marks_are_numbered_outside_quotes() {
        let s = parse_run(MYSQL_RUN).unwrap();
        assert_eq!(
            s.workload.statements[0].sql,
            "SELECT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2 AND c <> '?'"
        );
        assert_eq!(
            number_marks(r#"x="a\"?" AND y=?"#),
            (r#"x="a\"?" AND y=$1"#.into(), 1)
        );
    }

    #[test]
    fn mysql_placeholder_count_must_match_params() {
        let e = parse_run(&MYSQL_RUN.replace(",{\"gen\":\"ref\",\"var\":\"a\",\"plus\":9}", ""))
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert!(e.message.contains("2 ? placeholders"), "{}", e.message);
    }
}
