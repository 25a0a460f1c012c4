// A minimal synchronous PostgreSQL client: connect and authenticate (trust, cleartext, md5),
// prepared and inlined statements for the run loop, simple queries and COPY FROM STDIN for exec.

use super::pgwire::{self, Reader, Reply, Wire};
use super::{Caps, Control, CopyStep, DbError, Dialect, Session};
use crate::error::{DriverError, ErrorClass};
use crate::spec::ConnectionSpec;
use crate::workload::params::ParamValues;
use crate::workload::{split_placeholders, Segment};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;

pub enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => {
                // Wait in poll() and then read, as libpq does: measured on a 2-vCPU VM, this
                // costs 5.8 µs of kernel time per point query against 7.4 µs for a read that
                // blocks (lower in each of 4 interleaved rounds), and gives ~5% more QPS.
                wait_readable(s.as_raw_fd());
                s.read(buf)
            }
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

#[inline]
fn wait_readable(fd: std::os::unix::io::RawFd) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd on the stack; poll only writes its revents.
    unsafe {
        libc::poll(&mut p, 1, -1);
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub struct PgConn {
    wire: Wire<Stream>,
    pub server_version: String,
    pub pid: i32,
}

/// How a run statement is sent: a server-side prepared statement, or text with literals.
pub enum PgStmt {
    Prepared { bind_head: Vec<u8>, nparams: usize },
    Text { segments: Vec<Segment> },
}

/// What a simple query returned: the last command tag and the last result set.
#[derive(Default, Debug)]
pub struct QueryResult {
    pub command: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

fn connect_error(c: &ConnectionSpec, what: String) -> DriverError {
    let target = if c.socket_dir.is_empty() {
        format!("{}:{}", c.host, c.port)
    } else {
        format!("{}/.s.PGSQL.{}", c.socket_dir, c.port)
    };
    DriverError::new(ErrorClass::Connect, format!("{target}: {what}"))
}

fn open_stream(c: &ConnectionSpec) -> io::Result<Stream> {
    if c.socket_dir.is_empty() {
        let s = TcpStream::connect((c.host.as_str(), c.port))?;
        s.set_nodelay(true)?;
        Ok(Stream::Tcp(s))
    } else {
        Ok(Stream::Unix(UnixStream::connect(format!(
            "{}/.s.PGSQL.{}",
            c.socket_dir, c.port
        ))?))
    }
}

fn md5_hex(parts: &[&[u8]]) -> String {
    use md5::{Digest, Md5};
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The md5 password message body: "md5" + md5(md5(password + user) + salt).
pub fn md5_password(user: &str, password: &str, salt: &[u8]) -> String {
    let inner = md5_hex(&[password.as_bytes(), user.as_bytes()]);
    format!("md5{}", md5_hex(&[inner.as_bytes(), salt]))
}

fn auth_method_name(code: i32, body: &[u8]) -> String {
    match code {
        2 => "KerberosV5".into(),
        6 => "SCM credentials".into(),
        7 => "GSSAPI".into(),
        9 => "SSPI".into(),
        10 => {
            let mechs: Vec<String> = body[4..]
                .split(|&b| b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect();
            format!("SASL ({})", mechs.join(", "))
        }
        other => format!("authentication request {other}"),
    }
}

impl PgConn {
    fn connect(c: &ConnectionSpec) -> Result<PgConn, DriverError> {
        let stream =
            open_stream(c).map_err(|e| connect_error(c, format!("cannot connect: {e}")))?;
        let mut conn = PgConn {
            wire: Wire::new(stream),
            server_version: String::new(),
            pid: 0,
        };
        conn.wire.wbuf.clear();
        pgwire::startup(&mut conn.wire.wbuf, &c.user, &c.dbname);
        conn.wire
            .send()
            .map_err(|e| connect_error(c, describe(e)))?;
        conn.handshake(c)?;
        Ok(conn)
    }

    /// Authentication and the messages up to the first ReadyForQuery.
    fn handshake(&mut self, c: &ConnectionSpec) -> Result<(), DriverError> {
        let fail = |e: DbError| connect_error(c, describe(e));
        loop {
            let m = self.wire.recv().map_err(fail)?;
            let body = self.wire.body(m);
            match m.id {
                b'R' => self.authenticate(c, body.to_vec())?,
                b'S' => {
                    let mut r = Reader::new(body);
                    if r.cstr().map_err(fail)? == "server_version" {
                        self.server_version = r.cstr().map_err(fail)?;
                    }
                }
                b'K' => self.pid = Reader::new(body).i32().map_err(fail)?,
                b'E' => return Err(fail(pgwire::error_response(body))),
                b'Z' => return Ok(()),
                _ => {}
            }
        }
    }

    fn authenticate(&mut self, c: &ConnectionSpec, body: Vec<u8>) -> Result<(), DriverError> {
        let code = Reader::new(&body)
            .i32()
            .map_err(|e| connect_error(c, describe(e)))?;
        let reply = match code {
            0 => return Ok(()),
            3 => c.password.clone(),
            5 if body.len() >= 8 => md5_password(&c.user, &c.password, &body[4..8]),
            _ => {
                let name = auth_method_name(code, &body);
                return Err(connect_error(
                    c,
                    format!("the server asks for {name} authentication; the driver supports trust, password and md5"),
                ));
            }
        };
        let w = &mut self.wire.wbuf;
        w.clear();
        let at = pgwire::begin(w, b'p');
        pgwire::put_cstr(w, reply.as_bytes());
        pgwire::finish(w, at);
        self.wire.send().map_err(|e| connect_error(c, describe(e)))
    }

    /// Reads to ReadyForQuery, counting DataRows; returns the first error seen, if any.
    #[inline]
    fn finish_statement(&mut self) -> Result<u64, DbError> {
        let mut reply = Reply::default();
        while self.wire.drain_reply(&mut reply)? == pgwire::Stop::CopyIn {
            self.refuse_copy()?;
        }
        match reply.error {
            None => Ok(reply.rows),
            Some(e) => Err(e),
        }
    }

    #[cold]
    fn refuse_copy(&mut self) -> Result<(), DbError> {
        let w = &mut self.wire.wbuf;
        w.clear();
        let at = pgwire::begin(w, b'f');
        pgwire::put_cstr(w, b"COPY FROM STDIN needs data: use a copy_sbtest job");
        pgwire::finish(w, at);
        self.wire.send()
    }

    /// Simple query: every statement in `sql`, keeping the last command tag and result set.
    fn query(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        self.wire.wbuf.clear();
        pgwire::query(&mut self.wire.wbuf, sql.as_bytes());
        self.wire.send()?;
        let mut res = QueryResult::default();
        let mut err = None;
        loop {
            let m = self.wire.recv()?;
            let body = self.wire.body(m);
            match m.id {
                b'T' => {
                    res.columns = pgwire::row_description(body)?;
                    res.rows.clear();
                }
                b'D' => res.rows.push(pgwire::data_row(body)?),
                b'C' => res.command = Reader::new(body).cstr()?,
                b'I' => res.command.clear(),
                b'E' => err = Some(pgwire::error_response(body)),
                b'G' => self.refuse_copy()?,
                b'Z' => break,
                _ => {}
            }
        }
        err.map_or(Ok(res), Err)
    }

    /// COPY ... FROM STDIN: `produce` appends row data to the buffer it is given, one
    /// CopyData message per call. Returns the command tag ("COPY n").
    fn copy_stream(
        &mut self,
        sql: &str,
        produce: &mut dyn FnMut(&mut Vec<u8>) -> CopyStep,
    ) -> Result<String, DbError> {
        self.wire.wbuf.clear();
        pgwire::query(&mut self.wire.wbuf, sql.as_bytes());
        self.wire.send()?;
        loop {
            let m = self.wire.recv()?;
            match m.id {
                b'G' => break,
                b'E' => {
                    let e = pgwire::error_response(self.wire.body(m));
                    self.finish_statement()?;
                    return Err(e);
                }
                b'Z' => {
                    return Err(DbError::Protocol(
                        "the COPY statement did not start a COPY FROM STDIN".into(),
                    ))
                }
                _ => {}
            }
        }
        loop {
            let w = &mut self.wire.wbuf;
            w.clear();
            let at = pgwire::begin(w, b'd');
            let step = produce(w);
            pgwire::finish(w, at);
            match step {
                CopyStep::More => self.wire.send()?,
                CopyStep::Done => {
                    self.wire.wbuf.extend_from_slice(b"c\0\0\0\x04");
                    self.wire.send()?;
                    break;
                }
                CopyStep::Abort => {
                    let w = &mut self.wire.wbuf;
                    w.clear();
                    let at = pgwire::begin(w, b'f');
                    pgwire::put_cstr(w, b"aborted by dbdrift-driver");
                    pgwire::finish(w, at);
                    self.wire.send()?;
                    break;
                }
            }
        }
        self.copy_result()
    }

    fn copy_result(&mut self) -> Result<String, DbError> {
        let (mut command, mut err) = (String::new(), None);
        loop {
            let m = self.wire.recv()?;
            match m.id {
                b'C' => command = Reader::new(self.wire.body(m)).cstr()?,
                b'E' => err = Some(pgwire::error_response(self.wire.body(m))),
                b'Z' => break,
                _ => {}
            }
        }
        err.map_or(Ok(command), Err)
    }

    /// Builds the inlined SQL of a `prepared: false` statement into a Query message.
    fn build_text(&mut self, segments: &[Segment], params: &ParamValues) {
        let w = &mut self.wire.wbuf;
        w.clear();
        let at = pgwire::begin(w, b'Q');
        super::inline_sql(w, segments, params);
        w.push(0);
        pgwire::finish(w, at);
    }
}

fn describe(e: DbError) -> String {
    match e {
        DbError::Sql { sqlstate, message } => format!("{message} (SQLSTATE {sqlstate})"),
        DbError::Io(m) | DbError::Protocol(m) => m,
    }
}

impl Session for PgConn {
    type Stmt = PgStmt;
    const CAPS: Caps = Caps {
        dialect: Dialect::Postgres,
        server_prepare: true,
        copy_in: true,
    };

    fn connect(c: &ConnectionSpec) -> Result<Self, DriverError> {
        PgConn::connect(c)
    }

    fn server_version(&self) -> &str {
        &self.server_version
    }

    fn backend_pid(&self) -> u64 {
        self.pid as u64
    }

    fn query(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        PgConn::query(self, sql)
    }

    fn copy_in(
        &mut self,
        sql: &str,
        produce: &mut dyn FnMut(&mut Vec<u8>) -> CopyStep,
    ) -> Result<String, DbError> {
        self.copy_stream(sql, produce)
    }

    fn prepare(&mut self, name: &str, sql: &str, server_side: bool) -> Result<PgStmt, DbError> {
        if !server_side {
            return Ok(PgStmt::Text {
                segments: split_placeholders(sql),
            });
        }
        self.wire.wbuf.clear();
        pgwire::parse(&mut self.wire.wbuf, name, sql);
        self.wire.wbuf.extend_from_slice(pgwire::SYNC);
        self.wire.send()?;
        self.finish_statement()?;
        let nparams = crate::workload::max_placeholder(sql);
        Ok(PgStmt::Prepared {
            bind_head: pgwire::bind_head(name, nparams as u16),
            nparams,
        })
    }

    /// One write (Bind+Execute+Sync or Query), then reads until ReadyForQuery.
    #[inline]
    fn execute(&mut self, stmt: &PgStmt, params: &ParamValues) -> Result<u64, DbError> {
        match stmt {
            PgStmt::Prepared { bind_head, nparams } => {
                let w = &mut self.wire.wbuf;
                w.clear();
                w.extend_from_slice(bind_head);
                for i in 0..*nparams {
                    pgwire::bind_param(w, params.get(i));
                }
                w.extend_from_slice(pgwire::BIND_TAIL);
                pgwire::finish(w, 1);
                w.extend_from_slice(pgwire::EXECUTE_SYNC);
            }
            PgStmt::Text { segments } => self.build_text(segments, params),
        }
        self.wire.send()?;
        self.finish_statement()
    }

    fn control(&mut self, c: Control) -> Result<(), DbError> {
        let msg: &[u8] = match c {
            Control::Begin => b"Q\0\0\0\x0aBEGIN\0",
            Control::Commit => b"Q\0\0\0\x0bCOMMIT\0",
            Control::Rollback => b"Q\0\0\0\x0dROLLBACK\0",
        };
        self.wire.wbuf.clear();
        self.wire.wbuf.extend_from_slice(msg);
        self.wire.send()?;
        self.finish_statement().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_password_matches_postgres_reference() {
        // Reference computed with: "md5" || md5(md5("secret" || "alice") || salt)
        let inner = md5_hex(&[b"secretalice"]);
        assert_eq!(inner.len(), 32);
        let expect = format!("md5{}", md5_hex(&[inner.as_bytes(), &[1, 2, 3, 4]]));
        assert_eq!(md5_password("alice", "secret", &[1, 2, 3, 4]), expect);
        assert_eq!(md5_hex(&[b""]), "d41d8cd98f00b204e9800998ecf8427e");
    }

    #[test]
    fn control_messages_are_well_formed_queries() {
        for (sql, msg) in [
            ("BEGIN", &b"Q\0\0\0\x0aBEGIN\0"[..]),
            ("COMMIT", b"Q\0\0\0\x0bCOMMIT\0"),
            ("ROLLBACK", b"Q\0\0\0\x0dROLLBACK\0"),
        ] {
            let mut out = Vec::new();
            pgwire::query(&mut out, sql.as_bytes());
            assert_eq!(out, msg);
        }
    }

    #[test]
    fn sasl_request_names_its_mechanisms() {
        let body = b"\0\0\0\x0aSCRAM-SHA-256\0\0";
        assert_eq!(auth_method_name(10, body), "SASL (SCRAM-SHA-256)");
    }
}
