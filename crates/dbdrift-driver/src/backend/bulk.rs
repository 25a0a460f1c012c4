// Bulk load, the path each backend reports through `Caps::copy_in`: rows in PostgreSQL's
// COPY text format streamed with COPY FROM STDIN, or multi-row INSERTs in one transaction.
// RowWriter writes either format; what the rows are is the workload's business.

use super::{CopyStep, DbError, Session};
use crate::workload::digits::push_i64;

/// Rows per multi-row INSERT.
const INSERT_ROWS: usize = 500;
/// Bytes per COPY data message.
const COPY_CHUNK: usize = 256 * 1024;

/// `COPY table FROM STDIN` of every row `next` writes.
pub(super) fn copy<S: Session>(
    conn: &mut S,
    table: &str,
    next: &mut dyn FnMut(&mut RowWriter) -> bool,
) -> Result<u64, DbError> {
    let mut rows = 0u64;
    let sql = format!("COPY {table} FROM STDIN");
    conn.copy_in(&sql, &mut |buf| {
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

/// Multi-row INSERTs of INSERT_ROWS rows each, in one transaction.
pub(super) fn insert<S: Session>(
    conn: &mut S,
    table: &str,
    next: &mut dyn FnMut(&mut RowWriter) -> bool,
) -> Result<u64, DbError> {
    let head = format!("INSERT INTO {table} VALUES ");
    let mut total = 0u64;
    conn.query("BEGIN")?;
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
            conn.query(&sql)?;
            total += in_batch as u64;
        }
    }
    conn.query("COMMIT")?;
    Ok(total)
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

    /// A value written as given, unquoted in either format: an expression in a VALUES list
    /// (`VEC_FromText('[1,2]')`), or the field's text in COPY. The caller keeps it free of
    /// tabs, newlines and backslashes.
    pub fn raw(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(s.as_bytes());
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
        w.int(2).fixed(30000000, 2).text("x").raw("f('[1]')").end();
        assert_eq!(
            String::from_utf8(w.buf).unwrap(),
            "INSERT INTO t VALUES (1,'ab',NULL),(2,300000.00,'x',f('[1]'))"
        );
    }
}
