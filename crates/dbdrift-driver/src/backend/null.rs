// The `null` backend: connects to nothing and answers every statement at once with a fixed
// number of rows. Rates and simulated latency are applied by the run loop, not here.

use super::{Control, DbError, Session};
use crate::workload::params::ParamValues;

pub struct NullSession {
    pub rows_per_statement: u64,
}

impl Session for NullSession {
    type Stmt = ();

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
}
