// PostgreSQL v3 messages: their header (for the shared buffered connection in `wire`), the
// hot reply loop, builders that append messages to a reusable Vec, and ErrorResponse/row
// decoding.
// No connection policy (auth, statements) here; that is `postgres.rs`.

use super::wire::{self, Framing};
use super::DbError;
use std::io::{Read, Write};

/// PostgreSQL's framing: a tag byte, then a big-endian length that counts itself.
pub struct Pg;

/// A message body larger than this is treated as a protocol error, not an allocation.
const MAX_MESSAGE: usize = 1 << 30;

impl Framing for Pg {
    const HEADER: usize = 5;
    const UNIT: &'static str = "message";

    #[inline]
    fn header(h: &[u8]) -> Result<(u8, usize), DbError> {
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if !(4..=MAX_MESSAGE).contains(&len) {
            return Err(DbError::Protocol(format!(
                "bad message length {len} for tag {:?}",
                h[0] as char
            )));
        }
        Ok((h[0], 1 + len))
    }
}

/// A connection speaking PostgreSQL; a received message's `id` is its tag.
pub type Wire<S> = wire::Wire<S, Pg>;
/// Reads big-endian fields and C strings from a message body.
pub type Reader<'a> = wire::Cursor<'a, Pg>;

impl<S: Read + Write> Wire<S> {
    /// The hot reply loop: consumes messages up to ReadyForQuery, counting DataRows without
    /// decoding them. Stops early at CopyInResponse (the caller must answer it) and
    /// remembers the first ErrorResponse.
    #[inline]
    pub fn drain_reply(&mut self, reply: &mut Reply) -> Result<Stop, DbError> {
        loop {
            let m = self.recv()?;
            match m.id {
                b'D' => reply.rows += 1,
                b'Z' => return Ok(Stop::Ready),
                b'E' => reply.note_error(self.body(m)),
                b'G' => return Ok(Stop::CopyIn),
                _ => {}
            }
        }
    }
}

/// What `drain_reply` has seen of one reply so far.
#[derive(Default)]
pub struct Reply {
    pub rows: u64,
    pub error: Option<DbError>,
}

impl Reply {
    #[cold]
    fn note_error(&mut self, body: &[u8]) {
        if self.error.is_none() {
            self.error = Some(error_response(body));
        }
    }
}

/// Why `drain_reply` returned.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    Ready,
    CopyIn,
}

/// Starts a message with `tag` and a length placeholder; returns where the length goes.
#[inline]
pub fn begin(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

/// Patches the length of the message whose length field starts at `at`.
#[inline]
pub fn finish(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

pub fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

/// StartupMessage for protocol 3.0.
pub fn startup(out: &mut Vec<u8>, user: &str, dbname: &str) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&196608u32.to_be_bytes());
    for (k, v) in [
        ("user", user),
        ("database", dbname),
        ("application_name", "dbdrift-driver"),
    ] {
        if !v.is_empty() {
            put_cstr(out, k.as_bytes());
            put_cstr(out, v.as_bytes());
        }
    }
    out.push(0);
    finish(out, at);
}

/// Simple Query message.
pub fn query(out: &mut Vec<u8>, sql: &[u8]) {
    let at = begin(out, b'Q');
    put_cstr(out, sql);
    finish(out, at);
}

/// Parse of a named statement with all parameter types left to the server.
pub fn parse(out: &mut Vec<u8>, name: &str, sql: &str) {
    let at = begin(out, b'P');
    put_cstr(out, name.as_bytes());
    put_cstr(out, sql.as_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    finish(out, at);
}

pub const SYNC: &[u8] = b"S\0\0\0\x04";
/// Execute of the unnamed portal with no row limit, then Sync.
pub const EXECUTE_SYNC: &[u8] = b"E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04";

/// The fixed start of a Bind for statement `name`: unnamed portal, text parameters.
/// The caller appends the parameters, then `bind_tail`, and patches the length at 1.
pub fn bind_head(name: &str, nparams: u16) -> Vec<u8> {
    let mut out = Vec::new();
    begin(&mut out, b'B');
    out.push(0);
    put_cstr(&mut out, name.as_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&nparams.to_be_bytes());
    out
}

/// One text parameter of a Bind.
#[inline]
pub fn bind_param(out: &mut Vec<u8>, v: &[u8]) {
    out.extend_from_slice(&(v.len() as u32).to_be_bytes());
    out.extend_from_slice(v);
}

/// Result format count 0: all columns in text.
pub const BIND_TAIL: &[u8] = &[0, 0];

/// ErrorResponse body -> SQLSTATE and a message ("M" plus "D"etail when present).
pub fn error_response(body: &[u8]) -> DbError {
    let (mut state, mut msg, mut detail) = (String::new(), String::new(), String::new());
    let mut rest = body;
    while let Some((&code, tail)) = rest.split_first() {
        if code == 0 {
            break;
        }
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        let text = String::from_utf8_lossy(&tail[..end]).into_owned();
        match code {
            b'C' => state = text,
            b'M' => msg = text,
            b'D' => detail = text,
            _ => {}
        }
        rest = tail.get(end + 1..).unwrap_or(&[]);
    }
    if !detail.is_empty() {
        msg = format!("{msg} ({detail})");
    }
    DbError::Sql {
        sqlstate: state,
        message: msg,
    }
}

impl Reader<'_> {
    pub fn i16(&mut self) -> Result<i16, DbError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    pub fn i32(&mut self) -> Result<i32, DbError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub fn cstr(&mut self) -> Result<String, DbError> {
        let rest = self.unread();
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| DbError::Protocol("unterminated string".into()))?;
        self.skip(end + 1);
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }
}

/// Column names of a RowDescription.
pub fn row_description(body: &[u8]) -> Result<Vec<String>, DbError> {
    let mut r = Reader::new(body);
    let n = r.i16()?.max(0) as usize;
    let mut cols = Vec::with_capacity(n);
    for _ in 0..n {
        cols.push(r.cstr()?);
        r.bytes(18)?;
    }
    Ok(cols)
}

/// Text values of a DataRow (NULL -> None).
pub fn data_row(body: &[u8]) -> Result<Vec<Option<String>>, DbError> {
    let mut r = Reader::new(body);
    let n = r.i16()?.max(0) as usize;
    let mut vals = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.i32()?;
        vals.push(if len < 0 {
            None
        } else {
            Some(String::from_utf8_lossy(r.bytes(len as usize)?).into_owned())
        });
    }
    Ok(vals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::wire::testing::{self, Trickle};

    fn wire(input: &[u8], step: usize) -> Wire<Trickle> {
        testing::wire(input, step)
    }

    const REPLY: &[u8] =
        b"2\0\0\0\x04D\0\0\0\x0b\0\x01\0\0\0\x01xC\0\0\0\x0dSELECT 1\0Z\0\0\0\x05I";

    #[test]
    fn messages_are_framed_whatever_the_read_sizes() {
        for step in [1, 2, 3, 7, 64] {
            let mut w = wire(REPLY, step);
            let tags: Vec<u8> = (0..4).map(|_| w.recv().unwrap().id).collect();
            assert_eq!(tags, b"2DCZ");
        }
    }

    #[test]
    fn drain_counts_data_rows_up_to_ready_whatever_the_read_sizes() {
        for step in [1, 4, 9, 64] {
            let mut w = wire(REPLY, step);
            let mut r = Reply::default();
            assert_eq!(w.drain_reply(&mut r).unwrap(), Stop::Ready);
            assert_eq!((r.rows, r.error.is_none()), (1, true));
        }
    }

    #[test]
    fn drain_keeps_the_error_and_reads_on_to_ready() {
        let mut input = b"E\0\0\0\x0fC40P01\0Mx\0\0".to_vec();
        input.extend_from_slice(b"Z\0\0\0\x05E");
        let mut w = wire(&input, 3);
        let mut r = Reply::default();
        assert_eq!(w.drain_reply(&mut r).unwrap(), Stop::Ready);
        assert!(matches!(r.error, Some(DbError::Sql { ref sqlstate, .. }) if sqlstate == "40P01"));
    }

    #[test]
    fn message_body_excludes_tag_and_length() {
        let mut w = wire(REPLY, 100);
        w.recv().unwrap();
        let d = w.recv().unwrap();
        assert_eq!(data_row(w.body(d)).unwrap(), vec![Some("x".to_string())]);
        let c = w.recv().unwrap();
        assert_eq!(w.body(c), b"SELECT 1\0");
    }

    #[test]
    fn message_larger_than_the_buffer_is_reassembled() {
        let payload = vec![b'a'; 200_000];
        let mut input = vec![b'd'];
        input.extend_from_slice(&(4 + payload.len() as u32).to_be_bytes());
        input.extend_from_slice(&payload);
        let mut w = wire(&input, 5000);
        let m = w.recv().unwrap();
        assert_eq!(w.body(m).len(), 200_000);
    }

    #[test]
    fn bad_length_is_a_protocol_error_naming_the_tag() {
        let e = Pg::header(b"D\0\0\0\x02").unwrap_err();
        assert!(matches!(e, DbError::Protocol(m) if m == "bad message length 2 for tag 'D'"));
    }

    #[test]
    fn error_response_yields_sqlstate_and_message() {
        let body = b"SERROR\0VERROR\0C42P01\0Mrelation \"x\" does not exist\0P15\0\0";
        match error_response(body) {
            DbError::Sql { sqlstate, message } => {
                assert_eq!(sqlstate, "42P01");
                assert_eq!(message, "relation \"x\" does not exist");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bind_execute_sync_bytes_are_exact() {
        let mut out = bind_head("s1", 1);
        bind_param(&mut out, b"42");
        out.extend_from_slice(BIND_TAIL);
        finish(&mut out, 1);
        out.extend_from_slice(EXECUTE_SYNC);
        let expect: &[u8] =
            b"B\0\0\0\x14\0s1\0\0\0\0\x01\0\0\0\x0242\0\0E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04";
        assert_eq!(out, expect);
    }

    #[test]
    fn startup_message_bytes_are_exact() {
        let mut out = Vec::new();
        startup(&mut out, "u", "");
        let mut expect = vec![0, 0, 0, 0, 0, 3, 0, 0];
        expect.extend_from_slice(b"user\0u\0application_name\0dbdrift-driver\0\0");
        let len = expect.len() as u32;
        expect[..4].copy_from_slice(&len.to_be_bytes());
        assert_eq!(out, expect);
    }

    #[test]
    fn query_message_is_nul_terminated_and_length_prefixed() {
        let mut out = Vec::new();
        query(&mut out, b"BEGIN");
        assert_eq!(out, b"Q\0\0\0\x0aBEGIN\0");
    }

    #[test]
    fn row_description_gives_column_names() {
        let mut body = vec![0, 2];
        for name in [&b"a"[..], b"version"] {
            body.extend_from_slice(name);
            body.push(0);
            body.extend_from_slice(&[0; 18]);
        }
        assert_eq!(row_description(&body).unwrap(), vec!["a", "version"]);
    }

    #[test]
    fn data_row_null_is_none() {
        assert_eq!(data_row(b"\0\x01\xff\xff\xff\xff").unwrap(), vec![None]);
    }
}
