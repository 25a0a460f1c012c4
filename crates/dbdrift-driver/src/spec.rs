// The parts of the JSON spec (docs/protocol.md) every verb shares (protocol, backend,
// connection, random distribution), the `exec` spec, and the checks the workloads' specs
// reuse. Parsing never panics: every problem becomes a DriverError of class "spec".

use crate::error::DriverError;
use serde::Deserialize;

// 3: every value the driver uses arrives in the spec (dbdrift sends them all, from its one table
// of campaign keys); the driver keeps no defaults of its own, so a missing field is a spec error.
pub const PROTOCOL: u32 = 3;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Postgres,
    /// MySQL and MariaDB (one wire protocol).
    Mysql,
    Null,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Postgres => "postgres",
            BackendKind::Mysql => "mysql",
            BackendKind::Null => "null",
        }
    }
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct ConnectionSpec {
    /// PostgreSQL: the directory holding `.s.PGSQL.{port}`.
    pub socket_dir: String,
    /// MySQL: the Unix socket file; empty means TCP `host:port`.
    pub socket: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub dbname: String,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RandSpec {
    Uniform,
    Zipfian { exp: f64 },
}

/// sysbench-shaped rows for ids first_id..=last_id (`copy_sbtest` and `insert_sbtest` jobs).
#[derive(Deserialize, Debug, Clone)]
pub struct SbtestRowsSpec {
    pub sql: String,
    pub first_id: u64,
    pub last_id: u64,
    pub k_max: u64,
}

#[derive(Deserialize, Debug, Clone)]
pub struct JobSpec {
    #[serde(default)]
    pub sql: Option<String>,
    #[serde(default)]
    pub copy_sbtest: Option<SbtestRowsSpec>,
    #[serde(default)]
    pub insert_sbtest: Option<SbtestRowsSpec>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct ExecSpec {
    pub protocol: u32,
    pub backend: BackendKind,
    #[serde(default)]
    pub connection: ConnectionSpec,
    pub seed: u64,
    pub threads: u32,
    pub phases: Vec<Vec<JobSpec>>,
}

/// What a job does, once validated.
pub enum Job<'a> {
    Sql(&'a str),
    CopySbtest(&'a SbtestRowsSpec),
    InsertSbtest(&'a SbtestRowsSpec),
}

impl JobSpec {
    pub fn job(&self) -> Job<'_> {
        match (&self.sql, &self.copy_sbtest, &self.insert_sbtest) {
            (_, Some(c), _) => Job::CopySbtest(c),
            (_, None, Some(i)) => Job::InsertSbtest(i),
            (Some(s), None, None) => Job::Sql(s),
            (None, None, None) => Job::Sql(""),
        }
    }
}

pub(crate) fn parse_json<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, DriverError> {
    serde_json::from_str(text).map_err(|e| DriverError::spec(format!("spec does not parse: {e}")))
}

pub(crate) fn check(ok: bool, message: &str) -> Result<(), DriverError> {
    if ok {
        Ok(())
    } else {
        Err(DriverError::spec(message))
    }
}

pub(crate) fn check_protocol(protocol: u32) -> Result<(), DriverError> {
    check(
        protocol == PROTOCOL,
        &format!(
            "spec protocol {protocol} is not supported: this driver speaks protocol {PROTOCOL}"
        ),
    )
}

pub(crate) fn check_common(protocol: u32, threads: u32) -> Result<(), DriverError> {
    check_protocol(protocol)?;
    check(threads >= 1, "threads must be at least 1")
}

/// The workloads that need SQL run on a real server only; `verb` names the refused one.
pub(crate) fn check_server_backend(backend: BackendKind, verb: &str) -> Result<(), DriverError> {
    check(
        backend != BackendKind::Null,
        &format!("backend \"null\" cannot run {verb}: it needs a postgres or mysql server"),
    )
}

/// A count that must be at least 1 and at most `max`, the most the driver or the schema takes.
pub(crate) fn check_count(value: u32, max: u32, name: &str) -> Result<(), DriverError> {
    check(
        (1..=max).contains(&value),
        &format!("{name} must be in 1..={max}"),
    )
}

/// A duration or rate that must be a finite number above zero (NaN and infinity included in
/// the refusal, since serde accepts neither but arithmetic on the spec could produce them).
pub(crate) fn check_positive(value: f64, name: &str) -> Result<(), DriverError> {
    check(
        value.is_finite() && value > 0.0,
        &format!("{name} must be > 0"),
    )
}

/// A duration or rate that may be zero but must be finite and not negative.
pub(crate) fn check_non_negative(value: f64, name: &str) -> Result<(), DriverError> {
    check(
        value.is_finite() && value >= 0.0,
        &format!("{name} must be >= 0"),
    )
}

/// Replaces each `?` outside '...', "..." and `...` by `$k` (k counting from 1).
pub(crate) fn number_marks(sql: &str) -> (String, usize) {
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut n, mut quote, mut escaped) = (0, None, false);
    for ch in sql.chars() {
        match (quote, ch) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(ch),
            (None, '?') => {
                n += 1;
                out.push_str(&format!("${n}"));
                continue;
            }
            (None, _) => {}
        }
        out.push(ch);
    }
    (out, n)
}

pub fn parse_exec(text: &str) -> Result<ExecSpec, DriverError> {
    let spec: ExecSpec = parse_json(text)?;
    check_common(spec.protocol, spec.threads)?;
    for (p, phase) in spec.phases.iter().enumerate() {
        for (j, job) in phase.iter().enumerate() {
            check_job(job, spec.backend)
                .map_err(|e| DriverError::spec(format!("phase {p} job {j}: {}", e.message)))?;
        }
    }
    Ok(spec)
}

fn check_job(job: &JobSpec, backend: BackendKind) -> Result<(), DriverError> {
    let kinds = [
        job.sql.is_some(),
        job.copy_sbtest.is_some(),
        job.insert_sbtest.is_some(),
    ];
    match kinds.iter().filter(|k| **k).count() {
        0 => {
            return Err(DriverError::spec(
                "a job needs \"sql\", \"copy_sbtest\" or \"insert_sbtest\"",
            ))
        }
        1 => {}
        _ => {
            return Err(DriverError::spec(
                "a job has one of \"sql\", \"copy_sbtest\" or \"insert_sbtest\", not several",
            ))
        }
    }
    if job.copy_sbtest.is_some() && backend == BackendKind::Mysql {
        return Err(DriverError::spec(
            "copy_sbtest is PostgreSQL COPY; for backend \"mysql\" load rows with an insert_sbtest job",
        ));
    }
    match job.copy_sbtest.as_ref().or(job.insert_sbtest.as_ref()) {
        Some(r) => {
            check(
                r.first_id >= 1 && r.first_id <= r.last_id,
                "copy_sbtest/insert_sbtest needs 1 <= first_id <= last_id",
            )?;
            check(
                r.k_max >= 1,
                "copy_sbtest/insert_sbtest k_max must be at least 1",
            )
        }
        None => Ok(()),
    }
}

/// What the workloads' spec tests share: a refusal is of class "spec" (exit code 2) and says
/// why; each test changes one field of a valid spec and reads the message.
#[cfg(test)]
pub(crate) mod testing {
    use crate::error::{DriverError, ErrorClass};
    use serde_json::Value;
    use std::fmt::Debug;

    /// The message of a spec error, after checking its class and exit code.
    pub fn spec_error<T: Debug>(parsed: Result<T, DriverError>) -> String {
        let e = parsed.unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert_eq!(e.exit_code(), 2);
        e.message
    }

    /// The spec error of `base` with its top-level `key` set to `value`.
    pub fn refused<T: Debug>(
        parse: fn(&str) -> Result<T, DriverError>,
        mut base: Value,
        key: &str,
        value: Value,
    ) -> String {
        base[key] = value;
        spec_error(parse(&base.to_string()))
    }

    /// The driver keeps no defaults: leaving out any of `fields` is a spec error.
    pub fn missing_fields_are_refused<T: Debug>(
        parse: fn(&str) -> Result<T, DriverError>,
        base: Value,
        fields: &[&str],
    ) {
        for field in fields {
            let mut v = base.clone();
            v.as_object_mut().unwrap().remove(*field);
            assert!(
                spec_error(parse(&v.to_string())).contains("missing field"),
                "{field}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorClass;

    #[test]
    fn copy_sbtest_on_mysql_is_a_spec_error() {
        let e = parse_exec(
            r#"{"protocol":3,"backend":"mysql","seed":1,"threads":1,"phases":[[{"copy_sbtest":{"sql":"x","first_id":1,"last_id":2,"k_max":3}}]]}"#,
        )
        .unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert!(e.message.contains("insert_sbtest job"), "{}", e.message);
    }

    #[test]
    fn a_job_with_two_kinds_is_a_spec_error() {
        let e = parse_exec(
            r#"{"protocol":3,"backend":"mysql","seed":1,"threads":1,"phases":[[{"sql":"x","insert_sbtest":{"sql":"x","first_id":1,"last_id":2,"k_max":3}}]]}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("not several"), "{}", e.message);
        let e = parse_exec(
            r#"{"protocol":3,"backend":"mysql","seed":1,"threads":1,"phases":[[{"insert_sbtest":{"sql":"x","first_id":3,"last_id":2,"k_max":3}}]]}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("first_id <= last_id"), "{}", e.message);
    }

    #[test]
    fn exec_job_with_neither_sql_nor_copy_is_a_spec_error() {
        let e = parse_exec(r#"{"protocol":3,"backend":"null","seed":1,"threads":1,"phases":[[{"parallel":true}]]}"#)
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::Spec);
        assert!(e.message.contains("phase 0 job 0"));
    }
}
