// The `null` backend: connects to nothing and answers every statement at once with a fixed
// number of rows. Rates and simulated latency are applied by the run loop, not here.

use super::{Caps, Control, DbError, Dialect, QueryResult, ServerInfo, Session};
use crate::error::DriverError;
use crate::spec::ConnectionSpec;
use crate::workload::params::ParamValues;

/// The null backend's server: no version, no process.
static NO_SERVER: ServerInfo = ServerInfo {
    version: String::new(),
    pid: 0,
};

pub struct NullSession {
    pub rows_per_statement: u64,
}

impl Session for NullSession {
    type Stmt = ();
    /// Statements are never parsed, so any dialect reads; PostgreSQL's is the reference.
    const CAPS: Caps = Caps {
        dialect: Dialect::Postgres,
        server_prepare: true,
        copy_in: false,
    };

    fn connect(_c: &ConnectionSpec) -> Result<Self, DriverError> {
        Err(DriverError::spec(
            "backend \"null\" has no server to connect to",
        ))
    }

    fn server(&self) -> &ServerInfo {
        &NO_SERVER
    }

    fn prepare(&mut self, _name: &str, _sql: &str, _server_side: bool) -> Result<(), DbError> {
        Ok(())
    }

    #[inline]
    fn execute(&mut self, _stmt: &(), _params: &ParamValues) -> Result<u64, DbError> {
        Ok(self.rows_per_statement)
    }

    fn control(&mut self, _c: Control) -> Result<(), DbError> {
        Ok(())
    }

    fn query(&mut self, _sql: &str) -> Result<QueryResult, DbError> {
        Ok(QueryResult {
            command: "NULL".into(),
            ..QueryResult::default()
        })
    }
}
