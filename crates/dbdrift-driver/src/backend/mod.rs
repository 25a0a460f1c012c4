// Backends: the one connection trait every workload drives (Session), the capabilities each
// backend reports (Caps), the errors it returns and the types the server backends share
// (ServerInfo, Statement). Backends never touch clocks; timing lives in `exec` and the
// workloads.

pub mod bulk;
pub mod mysql;
pub mod mysqlwire;
pub mod null;
pub mod pgwire;
pub mod postgres;
pub mod stream;
pub mod wire;

pub use bulk::RowWriter;
pub use postgres::QueryResult;

use crate::error::{DriverError, ErrorClass};
use crate::spec::ConnectionSpec;
use crate::stats::Ignorable;
use crate::workload::params::ParamValues;
use crate::workload::Segment;

#[derive(Debug, Clone)]
pub enum DbError {
    /// An ErrorResponse: SQLSTATE and message.
    Sql {
        sqlstate: String,
        message: String,
    },
    Io(String),
    Protocol(String),
}

impl DbError {
    /// The driver error for this failure while running `sql`.
    pub fn into_driver(self, sql: &str) -> DriverError {
        match self {
            DbError::Sql { sqlstate, message } => DriverError::sql(&sqlstate, message, sql),
            DbError::Io(m) => DriverError::new(ErrorClass::Io, m),
            DbError::Protocol(m) => DriverError::new(ErrorClass::Protocol, m),
        }
    }

    /// The failure in one line, as a connection error tells it: a server's error with its
    /// SQLSTATE.
    pub fn describe(self) -> String {
        match self {
            DbError::Sql { sqlstate, message } => format!("{message} (SQLSTATE {sqlstate})"),
            DbError::Io(m) | DbError::Protocol(m) => m,
        }
    }
}

impl From<std::io::Error> for DbError {
    fn from(e: std::io::Error) -> Self {
        DbError::Io(format!("connection I/O failed: {e}"))
    }
}

/// Transaction control statements, sent as simple queries (as sysbench does).
#[derive(Clone, Copy)]
pub enum Control {
    Begin,
    Commit,
    Rollback,
}

impl Control {
    /// The statement, as both servers spell it.
    pub fn sql(self) -> &'static str {
        match self {
            Control::Begin => "BEGIN",
            Control::Commit => "COMMIT",
            Control::Rollback => "ROLLBACK",
        }
    }
}

/// Who serves a session, as the server said when it connected.
#[derive(Default, Debug)]
pub struct ServerInfo {
    /// The version string, as the server reports it.
    pub version: String,
    /// The server process (PostgreSQL) or connection id (MySQL) serving the session.
    pub pid: u64,
}

/// How a run statement is sent: prepared on the server (`P` is what the backend keeps of
/// it), or as text with its parameters inlined at each execution.
pub enum Statement<P> {
    Prepared(P),
    Text(Vec<Segment>),
}

impl<P> Statement<P> {
    /// What `Session::prepare` returns: a text statement unless `server_side`, else what
    /// `on_server` prepared.
    pub fn prepare(
        sql: &str,
        server_side: bool,
        on_server: impl FnOnce() -> Result<P, DbError>,
    ) -> Result<Self, DbError> {
        if server_side {
            on_server().map(Statement::Prepared)
        } else {
            Ok(Statement::Text(crate::workload::split_placeholders(sql)))
        }
    }
}

/// The SQL a backend speaks: DDL, literals, stored routines and how they are called.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dialect {
    Postgres,
    Mysql,
}

impl Dialect {
    /// Quotes a string literal (MySQL also treats `\` as an escape).
    pub fn quote(self, s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('\'');
        for ch in s.chars() {
            match ch {
                '\'' => out.push_str("''"),
                '\\' if self == Dialect::Mysql => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    }
}

/// What a backend offers beyond prepared statements and SQL text. Workloads ask for these,
/// never for a backend by name.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub dialect: Dialect,
    /// `prepare(.., server_side: true)` prepares on the server; without it every statement
    /// is sent as text with its parameters inlined.
    pub server_prepare: bool,
    /// `copy_in` streams rows with COPY FROM STDIN; without it `bulk` sends multi-row INSERTs.
    pub copy_in: bool,
}

/// What a COPY producer says after filling one CopyData message.
pub enum CopyStep {
    More,
    Done,
    Abort,
}

/// One connection, as every workload uses it. `Stmt` is whatever the backend keeps per
/// prepared statement; `execute` returns the number of rows the statement returned.
pub trait Session: Send + Sized {
    type Stmt: Send;
    const CAPS: Caps;

    /// Connects and authenticates.
    fn connect(c: &ConnectionSpec) -> Result<Self, DriverError>;
    /// Who serves this session.
    fn server(&self) -> &ServerInfo;

    /// The server's version string, as it reports it.
    fn server_version(&self) -> &str {
        &self.server().version
    }

    /// The server process (PostgreSQL) or connection id (MySQL) serving this session.
    fn backend_pid(&self) -> u64 {
        self.server().pid
    }

    fn prepare(&mut self, name: &str, sql: &str, server_side: bool) -> Result<Self::Stmt, DbError>;
    fn execute(&mut self, stmt: &Self::Stmt, params: &ParamValues) -> Result<u64, DbError>;
    fn control(&mut self, c: Control) -> Result<(), DbError>;
    /// SQL text, keeping the last command tag and result set.
    fn query(&mut self, sql: &str) -> Result<QueryResult, DbError>;

    /// COPY ... FROM STDIN (`Caps::copy_in`): `produce` appends row data to the buffer it
    /// is given, one CopyData message per call. Returns the command tag ("COPY n").
    fn copy_in(
        &mut self,
        sql: &str,
        produce: &mut dyn FnMut(&mut Vec<u8>) -> CopyStep,
    ) -> Result<String, DbError> {
        let _ = produce;
        Err(DbError::Protocol(format!(
            "this backend has no COPY FROM STDIN for {sql:?}"
        )))
    }

    /// Loads every row `next` writes (it returns false when there are no more) into
    /// `table`, by the backend's bulk path (see `Caps::copy_in`). Returns the rows loaded.
    fn bulk(
        &mut self,
        table: &str,
        next: &mut dyn FnMut(&mut RowWriter) -> bool,
    ) -> Result<u64, DbError> {
        if Self::CAPS.copy_in {
            bulk::copy(self, table, next)
        } else {
            bulk::insert(self, table, next)
        }
    }

    /// Whether `err`, just returned by this session, abandons the event instead of the run.
    /// By SQLSTATE by default; a backend whose errors need more (MySQL's error codes) says so.
    fn ignorable(&self, err: &DbError) -> Option<Ignorable> {
        match err {
            DbError::Sql { sqlstate, .. } => Ignorable::from_sqlstate(sqlstate.as_bytes()),
            _ => None,
        }
    }

    /// Whether `err` is transient (deadlock, serialization failure, lock wait timeout): the
    /// transaction is retried or rolled back instead of ending the run. A duplicate key is
    /// not: retrying it would fail the same way.
    fn retryable(&self, err: &DbError) -> bool {
        matches!(
            self.ignorable(err),
            Some(Ignorable::Deadlock | Ignorable::Lock | Ignorable::Serialization)
        )
    }
}

/// Appends a statement's SQL with its parameters inlined (`prepared: false`): text values in
/// single quotes, numbers as they are.
pub(crate) fn inline_sql(w: &mut Vec<u8>, segments: &[Segment], params: &ParamValues) {
    for s in segments {
        match s {
            Segment::Text(t) => w.extend_from_slice(t.as_bytes()),
            Segment::Param(i) if params.is_text(*i) => {
                w.push(b'\'');
                w.extend_from_slice(params.get(*i));
                w.push(b'\'');
            }
            Segment::Param(i) => w.extend_from_slice(params.get(*i)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::null::NullSession;

    #[test]
    fn quote_doubles_quotes_and_escapes_backslashes_on_mysql() {
        assert_eq!(Dialect::Postgres.quote("a'b\\c"), "'a''b\\c'");
        assert_eq!(Dialect::Mysql.quote("a'b\\c"), "'a''b\\\\c'");
    }

    fn sql_error(sqlstate: &str) -> DbError {
        DbError::Sql {
            sqlstate: sqlstate.into(),
            message: String::new(),
        }
    }

    #[test]
    fn only_transient_errors_are_retryable() {
        let s = NullSession {
            rows_per_statement: 0,
        };
        assert!(s.retryable(&sql_error("40P01")));
        assert!(s.retryable(&sql_error("40001")));
        assert!(s.retryable(&sql_error("55P03")));
        assert!(!s.retryable(&sql_error("23505")));
        assert!(!s.retryable(&sql_error("42P01")));
        assert!(!s.retryable(&DbError::Io("closed".into())));
    }
}
