// A minimal synchronous PostgreSQL client: connect and authenticate (trust, cleartext, md5),
// prepared and inlined statements for the run loop, simple queries and COPY FROM STDIN for exec.

use super::pgwire::{self, Reader, Reply, Wire};
use super::stream::{Address, Stream};
use super::{Caps, Control, CopyStep, DbError, Dialect, ServerInfo, Session, Statement};
use crate::error::DriverError;
use crate::spec::ConnectionSpec;
use crate::workload::params::ParamValues;
use crate::workload::Segment;

pub struct PgConn {
    wire: Wire<Stream>,
    server: ServerInfo,
}

/// What a statement prepared on the server keeps: the start of its Bind and how many
/// parameters follow.
pub struct Bind {
    head: Vec<u8>,
    nparams: usize,
}

/// What a simple query returned: the last command tag and the last result set.
#[derive(Default, Debug)]
pub struct QueryResult {
    pub command: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

fn address(c: &ConnectionSpec) -> Address {
    if c.socket_dir.is_empty() {
        let (host, port) = (c.host.clone(), c.port);
        Address::Tcp { host, port }
    } else {
        Address::Unix(format!("{}/.s.PGSQL.{}", c.socket_dir, c.port))
    }
}

fn connect_error(c: &ConnectionSpec, what: String) -> DriverError {
    address(c).error(what)
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
    /// The startup message, authentication and the messages up to the first ReadyForQuery.
    fn handshake(&mut self, c: &ConnectionSpec) -> Result<(), DriverError> {
        let fail = |e: DbError| connect_error(c, e.describe());
        self.wire.wbuf.clear();
        pgwire::startup(&mut self.wire.wbuf, &c.user, &c.dbname);
        self.wire.send().map_err(fail)?;
        loop {
            let m = self.wire.recv().map_err(fail)?;
            let body = self.wire.body(m);
            match m.id {
                b'R' => self.authenticate(c, body.to_vec())?,
                b'S' => {
                    let mut r = Reader::new(body);
                    if r.cstr().map_err(fail)? == "server_version" {
                        self.server.version = r.cstr().map_err(fail)?;
                    }
                }
                b'K' => self.server.pid = Reader::new(body).i32().map_err(fail)? as u64,
                b'E' => return Err(fail(pgwire::error_response(body))),
                b'Z' => return Ok(()),
                _ => {}
            }
        }
    }

    fn authenticate(&mut self, c: &ConnectionSpec, body: Vec<u8>) -> Result<(), DriverError> {
        let code = Reader::new(&body)
            .i32()
            .map_err(|e| connect_error(c, e.describe()))?;
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
        self.wire.send().map_err(|e| connect_error(c, e.describe()))
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

    /// Sends `sql` as one Query message.
    fn send_query(&mut self, sql: &str) -> Result<(), DbError> {
        self.wire.wbuf.clear();
        pgwire::query(&mut self.wire.wbuf, sql.as_bytes());
        self.wire.send()
    }

    /// COPY ... FROM STDIN: `produce` appends row data to the buffer it is given, one
    /// CopyData message per call. Returns the command tag ("COPY n").
    fn copy_stream(
        &mut self,
        sql: &str,
        produce: &mut dyn FnMut(&mut Vec<u8>) -> CopyStep,
    ) -> Result<String, DbError> {
        self.send_query(sql)?;
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

    /// Parse of `sql` as statement `name`, then Sync.
    fn prepare_server(&mut self, name: &str, sql: &str) -> Result<Bind, DbError> {
        self.wire.wbuf.clear();
        pgwire::parse(&mut self.wire.wbuf, name, sql);
        self.wire.wbuf.extend_from_slice(pgwire::SYNC);
        self.wire.send()?;
        self.finish_statement()?;
        let nparams = crate::workload::max_placeholder(sql);
        Ok(Bind {
            head: pgwire::bind_head(name, nparams as u16),
            nparams,
        })
    }

    /// Bind (text parameters), Execute and Sync of a prepared statement.
    #[inline]
    fn build_bind(&mut self, bind: &Bind, params: &ParamValues) {
        let w = &mut self.wire.wbuf;
        w.clear();
        w.extend_from_slice(&bind.head);
        for i in 0..bind.nparams {
            pgwire::bind_param(w, params.get(i));
        }
        w.extend_from_slice(pgwire::BIND_TAIL);
        pgwire::finish(w, 1);
        w.extend_from_slice(pgwire::EXECUTE_SYNC);
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

impl Session for PgConn {
    type Stmt = Statement<Bind>;
    const CAPS: Caps = Caps {
        dialect: Dialect::Postgres,
        server_prepare: true,
        copy_in: true,
    };

    fn copy_in(
        &mut self,
        sql: &str,
        produce: &mut dyn FnMut(&mut Vec<u8>) -> CopyStep,
    ) -> Result<String, DbError> {
        self.copy_stream(sql, produce)
    }

    fn connect(c: &ConnectionSpec) -> Result<Self, DriverError> {
        let mut conn = PgConn {
            wire: Wire::new(address(c).open()?),
            server: ServerInfo::default(),
        };
        conn.handshake(c)?;
        Ok(conn)
    }

    fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// Simple query: every statement in `sql`, keeping the last command tag and result set.
    fn query(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        self.send_query(sql)?;
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

    fn prepare(&mut self, name: &str, sql: &str, server_side: bool) -> Result<Self::Stmt, DbError> {
        Statement::prepare(sql, server_side, || self.prepare_server(name, sql))
    }

    /// One write (Bind+Execute+Sync or Query), then reads until ReadyForQuery.
    #[inline]
    fn execute(&mut self, stmt: &Self::Stmt, params: &ParamValues) -> Result<u64, DbError> {
        match stmt {
            Statement::Prepared(bind) => self.build_bind(bind, params),
            Statement::Text(segments) => self.build_text(segments, params),
        }
        self.wire.send()?;
        self.finish_statement()
    }

    fn control(&mut self, c: Control) -> Result<(), DbError> {
        self.send_query(c.sql())?;
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
        for (c, msg) in [
            (Control::Begin, &b"Q\0\0\0\x0aBEGIN\0"[..]),
            (Control::Commit, b"Q\0\0\0\x0bCOMMIT\0"),
            (Control::Rollback, b"Q\0\0\0\x0dROLLBACK\0"),
        ] {
            let mut out = Vec::new();
            pgwire::query(&mut out, c.sql().as_bytes());
            assert_eq!(out, msg);
        }
    }

    #[test]
    fn sasl_request_names_its_mechanisms() {
        let body = b"\0\0\0\x0aSCRAM-SHA-256\0\0";
        assert_eq!(auth_method_name(10, body), "SASL (SCRAM-SHA-256)");
    }
}
