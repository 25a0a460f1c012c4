// What TPROC-C needs from a connection, on both backends: text SQL with result values,
// the retryable-error test (deadlock, serialization failure, lock wait timeout) and bulk
// load (PostgreSQL COPY, MySQL multi-row INSERTs in one transaction). Rows for bulk load are
// written through RowWriter, which knows the two text formats.

use crate::backend::mysql::MyConn;
use crate::backend::postgres::{CopyStep, PgConn};
use crate::backend::{DbError, QueryResult, Session};
use crate::error::DriverError;
use crate::spec::ConnectionSpec;
use crate::stats::Ignorable;
use crate::workload::digits::push_i64;

/// Rows per multi-row INSERT when loading MySQL.
const INSERT_ROWS: usize = 500;
/// Bytes per COPY data message.
const COPY_CHUNK: usize = 256 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dialect {
    Postgres,
    Mysql,
}

pub trait TpccConn: Sized + Send {
    const DIALECT: Dialect;
    fn open(c: &ConnectionSpec) -> Result<Self, DriverError>;
    fn server_version(&self) -> String;
    fn backend_pid(&self) -> u64;
    fn sql(&mut self, sql: &str) -> Result<QueryResult, DbError>;
    /// Whether `err`, just returned, rolls back the transaction instead of ending the run.
    fn retryable(&self, err: &DbError) -> bool;
    /// Loads every row `next` writes (it returns false when there are no more) into `table`.
    fn bulk(
        &mut self,
        table: &str,
        next: &mut dyn FnMut(&mut RowWriter) -> bool,
    ) -> Result<u64, DbError>;
}

fn retryable_kind(kind: Option<Ignorable>) -> bool {
    matches!(
        kind,
        Some(Ignorable::Deadlock | Ignorable::Serialization | Ignorable::Lock)
    )
}

impl TpccConn for PgConn {
    const DIALECT: Dialect = Dialect::Postgres;
    fn open(c: &ConnectionSpec) -> Result<Self, DriverError> {
        PgConn::connect(c)
    }
    fn server_version(&self) -> String {
        self.server_version.clone()
    }
    fn backend_pid(&self) -> u64 {
        self.pid as u64
    }
    fn sql(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        self.query(sql)
    }
    fn retryable(&self, err: &DbError) -> bool {
        retryable_kind(self.ignorable(err))
    }
    fn bulk(
        &mut self,
        table: &str,
        next: &mut dyn FnMut(&mut RowWriter) -> bool,
    ) -> Result<u64, DbError> {
        let mut rows = 0u64;
        let sql = format!("COPY {table} FROM STDIN");
        self.copy_in(&sql, |buf| {
            let mut w = RowWriter::copy(std::mem::take(buf));
            let mut more = true;
            while more && w.buf.len() < COPY_CHUNK {
                more = next(&mut w);
                rows += w.take_rows();
            }
            *buf = w.buf;
            if more {
                CopyStep::More
            } else {
                CopyStep::Done
            }
        })?;
        Ok(rows)
    }
}

impl TpccConn for MyConn {
    const DIALECT: Dialect = Dialect::Mysql;
    fn open(c: &ConnectionSpec) -> Result<Self, DriverError> {
        MyConn::connect(c)
    }
    fn server_version(&self) -> String {
        self.server_version.clone()
    }
    fn backend_pid(&self) -> u64 {
        self.connection_id as u64
    }
    fn sql(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        self.query(sql)
    }
    fn retryable(&self, err: &DbError) -> bool {
        retryable_kind(self.ignorable(err))
    }
    fn bulk(
        &mut self,
        table: &str,
        next: &mut dyn FnMut(&mut RowWriter) -> bool,
    ) -> Result<u64, DbError> {
        let head = format!("INSERT INTO {table} VALUES ");
        let mut total = 0u64;
        self.query("BEGIN")?;
        let mut more = true;
        while more {
            let mut w = RowWriter::values(head.as_bytes());
            let mut in_batch = 0usize;
            while more && in_batch < INSERT_ROWS {
                more = next(&mut w);
                in_batch += w.take_rows() as usize;
            }
            if in_batch > 0 {
                // Only letters, digits and ASCII punctuation go into the values.
                let sql = String::from_utf8(w.buf).expect("load rows are ASCII");
                self.query(&sql)?;
                total += in_batch as u64;
            }
        }
        self.query("COMMIT")?;
        Ok(total)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// PostgreSQL COPY text: tab-separated, `\N` for NULL, a newline per row.
    Copy,
    /// The VALUES list of a multi-row INSERT: `(1,'a',NULL),(2,'b',3)`.
    Values,
}

/// Appends rows in the format of the backend's bulk path. Values must not need escaping
/// (the generated data is letters, digits, spaces and `.`-`-`-`:`).
pub struct RowWriter {
    pub buf: Vec<u8>,
    format: Format,
    row_open: bool,
    first_field: bool,
    any_row: bool,
    rows: u64,
}

impl RowWriter {
    fn copy(buf: Vec<u8>) -> Self {
        Self::with(buf, Format::Copy)
    }

    #[cfg(test)]
    pub fn copy_for_tests() -> Self {
        Self::copy(Vec::new())
    }

    fn values(head: &[u8]) -> Self {
        Self::with(head.to_vec(), Format::Values)
    }

    fn with(buf: Vec<u8>, format: Format) -> Self {
        RowWriter {
            buf,
            format,
            row_open: false,
            first_field: true,
            any_row: false,
            rows: 0,
        }
    }

    fn take_rows(&mut self) -> u64 {
        std::mem::take(&mut self.rows)
    }

    fn sep(&mut self) {
        if !self.row_open {
            if self.format == Format::Values {
                if self.any_row {
                    self.buf.push(b',');
                }
                self.buf.push(b'(');
            }
            self.row_open = true;
            self.first_field = true;
        }
        if !self.first_field {
            self.buf.push(if self.format == Format::Copy {
                b'\t'
            } else {
                b','
            });
        }
        self.first_field = false;
    }

    pub fn int(&mut self, v: i64) -> &mut Self {
        self.sep();
        push_i64(&mut self.buf, v);
        self
    }

    /// A fixed-point number given in hundredths (`1234` → `12.34`) or ten-thousandths.
    pub fn fixed(&mut self, v: i64, decimals: u32) -> &mut Self {
        self.sep();
        let scale = 10i64.pow(decimals);
        if v < 0 {
            self.buf.push(b'-');
        }
        let a = v.unsigned_abs() as i64;
        push_i64(&mut self.buf, a / scale);
        self.buf.push(b'.');
        let frac = format!("{:0width$}", a % scale, width = decimals as usize);
        self.buf.extend_from_slice(frac.as_bytes());
        self
    }

    pub fn text(&mut self, s: &str) -> &mut Self {
        self.sep();
        if self.format == Format::Values {
            self.buf.push(b'\'');
            self.buf.extend_from_slice(s.as_bytes());
            self.buf.push(b'\'');
        } else {
            self.buf.extend_from_slice(s.as_bytes());
        }
        self
    }

    pub fn null(&mut self) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(if self.format == Format::Copy {
            b"\\N"
        } else {
            b"NULL"
        });
        self
    }

    pub fn end(&mut self) {
        self.buf.push(if self.format == Format::Copy {
            b'\n'
        } else {
            b')'
        });
        self.row_open = false;
        self.any_row = true;
        self.rows += 1;
    }
}

/// Quotes a string literal for either dialect (MySQL also treats `\` as an escape).
pub fn quote(s: &str, dialect: Dialect) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' if dialect == Dialect::Mysql => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_rows_are_tab_separated_with_null_as_backslash_n() {
        let mut w = RowWriter::copy(Vec::new());
        w.int(1).text("ab").null().fixed(-1000, 2).end();
        w.int(2).fixed(5, 4).end();
        assert_eq!(w.buf, b"1\tab\t\\N\t-10.00\n2\t0.0005\n");
        assert_eq!(w.take_rows(), 2);
    }

    #[test]
    fn values_rows_are_parenthesized_tuples() {
        let mut w = RowWriter::values(b"INSERT INTO t VALUES ");
        w.int(1).text("ab").null().end();
        w.int(2).fixed(30000000, 2).text("x").end();
        assert_eq!(
            String::from_utf8(w.buf).unwrap(),
            "INSERT INTO t VALUES (1,'ab',NULL),(2,300000.00,'x')"
        );
    }

    #[test]
    fn quote_doubles_quotes_and_escapes_backslashes_on_mysql() {
        assert_eq!(quote("a'b\\c", Dialect::Postgres), "'a''b\\c'");
        assert_eq!(quote("a'b\\c", Dialect::Mysql), "'a''b\\\\c'");
    }
}
