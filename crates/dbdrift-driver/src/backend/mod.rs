// Backends: what the run loop needs from a database connection (the Session trait) and the
// errors a backend reports. Backends never touch clocks; timing lives in `exec`.

pub mod mysql;
pub mod mysqlwire;
pub mod null;
pub mod pgwire;
pub mod postgres;

pub use postgres::QueryResult;

use crate::error::{DriverError, ErrorClass};
use crate::stats::Ignorable;
use crate::workload::params::ParamValues;
use crate::workload::Segment;
use std::io::{ErrorKind, Read};

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

/// One connection as the run loop uses it. `Stmt` is whatever the backend keeps per
/// prepared statement; `execute` returns the number of rows the statement returned.
pub trait Session: Send {
    type Stmt: Send;
    fn prepare(&mut self, name: &str, sql: &str, server_side: bool) -> Result<Self::Stmt, DbError>;
    fn execute(&mut self, stmt: &Self::Stmt, params: &ParamValues) -> Result<u64, DbError>;
    fn control(&mut self, c: Control) -> Result<(), DbError>;

    /// Whether `err`, just returned by this session, abandons the event instead of the run.
    /// By SQLSTATE by default; a backend whose errors need more (MySQL's error codes) says so.
    fn ignorable(&self, err: &DbError) -> Option<Ignorable> {
        match err {
            DbError::Sql { sqlstate, .. } => Ignorable::from_sqlstate(sqlstate.as_bytes()),
            _ => None,
        }
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

/// Reads from `stream` until `buf[*pos..*end]` holds at least `need` bytes, moving or growing
/// the buffer as needed: how both wire protocols buffer what they read.
#[cold]
pub(crate) fn fill_read_buffer<S: Read>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    pos: &mut usize,
    end: &mut usize,
    need: usize,
) -> Result<(), DbError> {
    if *pos == *end {
        *pos = 0;
        *end = 0;
    }
    if *pos + need > buf.len() {
        buf.copy_within(*pos..*end, 0);
        *end -= *pos;
        *pos = 0;
        if need > buf.len() {
            buf.resize(need.next_power_of_two(), 0);
        }
    }
    while *end - *pos < need {
        match stream.read(&mut buf[*end..]) {
            Ok(0) => return Err(DbError::Io("server closed the connection".into())),
            Ok(n) => *end += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
