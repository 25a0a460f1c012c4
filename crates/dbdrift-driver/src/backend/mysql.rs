// A minimal synchronous MySQL/MariaDB client: connect and authenticate (mysql_native_password,
// caching_sha2_password), binary prepared statements and inlined text for the run loop,
// COM_QUERY for exec. Framing and decoding live in `mysqlwire`.

use super::mysqlwire::{self as wire, Cursor, Wire};
use super::stream::{Address, Stream};
use super::wire::Frame;
use super::{Caps, Control, DbError, Dialect, QueryResult, ServerInfo, Session, Statement};
use crate::error::DriverError;
use crate::spec::ConnectionSpec;
use crate::stats::Ignorable;
use crate::workload::params::ParamValues;
use crate::workload::{split_placeholders, Segment};

pub const DEFAULT_PORT: u16 = 3306;

/// Capabilities the driver asks for; the session uses their intersection with the server's.
const WANTED: u32 = wire::CLIENT_LONG_PASSWORD
    | wire::CLIENT_LONG_FLAG
    | wire::CLIENT_PROTOCOL_41
    | wire::CLIENT_TRANSACTIONS
    | wire::CLIENT_SECURE_CONNECTION
    | wire::CLIENT_MULTI_STATEMENTS
    | wire::CLIENT_MULTI_RESULTS
    | wire::CLIENT_PS_MULTI_RESULTS
    | wire::CLIENT_PLUGIN_AUTH
    | wire::CLIENT_PLUGIN_AUTH_LENENC_DATA
    | wire::CLIENT_DEPRECATE_EOF;

/// Without these the handshake and statement formats the driver speaks do not exist.
const REQUIRED: u32 =
    wire::CLIENT_PROTOCOL_41 | wire::CLIENT_SECURE_CONNECTION | wire::CLIENT_PLUGIN_AUTH;

const NATIVE: &str = "mysql_native_password";
const CACHING_SHA2: &str = "caching_sha2_password";

pub struct MyConn {
    wire: Wire<Stream>,
    deprecate_eof: bool,
    /// Code of the last ERR packet: the ignorable classes are by code, not SQLSTATE.
    last_error_code: u16,
    server: ServerInfo,
}

/// The first packet of a result, once an ERR packet is taken out.
enum ReplyHead {
    /// No result set: the OK packet.
    Ok(wire::OkPacket),
    /// A result set of this many columns follows.
    Columns(u64),
}

/// A packet inside a result set, once an ERR packet is taken out.
enum RowPacket {
    Row(Frame),
    /// The end of the rows, with the status flags.
    End(u16),
}

/// What a statement prepared on the server keeps.
pub struct Execute {
    /// COM_STMT_EXECUTE up to the parameters: command, statement id, flags, iterations.
    head: [u8; 10],
    /// Spec parameter index (0-based) of each `?`, in order of appearance.
    order: Vec<usize>,
}

fn address(c: &ConnectionSpec) -> Address {
    if !c.socket.is_empty() {
        return Address::Unix(c.socket.clone());
    }
    let port = if c.port == 0 { DEFAULT_PORT } else { c.port };
    Address::Tcp {
        host: c.host.clone(),
        port,
    }
}

fn connect_error(c: &ConnectionSpec, what: String) -> DriverError {
    address(c).error(what)
}

/// MariaDB prefixes its version with "5.5.5-" for old replication clients; drop it.
fn clean_version(v: &str) -> String {
    match v.strip_prefix("5.5.5-") {
        Some(rest) if rest.contains("MariaDB") => rest.to_string(),
        _ => v.to_string(),
    }
}

/// The auth response for `plugin`, or None if the driver does not speak it.
fn scramble(plugin: &str, password: &str, nonce: &[u8]) -> Option<Vec<u8>> {
    match plugin {
        NATIVE => Some(wire::native_password(password, nonce)),
        CACHING_SHA2 => Some(wire::caching_sha2_password(password, nonce)),
        _ => None,
    }
}

fn unsupported_plugin(c: &ConnectionSpec, plugin: &str) -> DriverError {
    connect_error(
        c,
        format!(
            "user {:?} authenticates with {plugin}; the driver supports {NATIVE} and {CACHING_SHA2}",
            c.user
        ),
    )
}

/// `$n` placeholders (the spec's form after validation) become `?`; MySQL binds by position
/// of appearance, so `order` records which parameter each `?` takes.
pub fn question_marks(sql: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(sql.len());
    let mut order = Vec::new();
    for s in split_placeholders(sql) {
        match s {
            Segment::Text(t) => out.push_str(&t),
            Segment::Param(i) => {
                out.push('?');
                order.push(i);
            }
        }
    }
    (out, order)
}

impl MyConn {
    fn handshake(&mut self, c: &ConnectionSpec) -> Result<(), DriverError> {
        let fail = |e: DbError| connect_error(c, e.describe());
        let p = self.wire.recv().map_err(fail)?;
        let payload = self.wire.body(p);
        if payload.first() == Some(&0xff) {
            let e = wire::err_packet(payload).map_err(fail)?;
            return Err(connect_error(
                c,
                format!("{} (error {})", e.message, e.code),
            ));
        }
        let h = wire::handshake(payload).map_err(fail)?;
        if h.capabilities & REQUIRED != REQUIRED {
            return Err(connect_error(
                c,
                format!(
                    "server {} lacks protocol 4.1 with plugin authentication",
                    h.server_version
                ),
            ));
        }
        let mut caps = WANTED & h.capabilities;
        if !c.dbname.is_empty() {
            caps |= wire::CLIENT_CONNECT_WITH_DB & h.capabilities;
        }
        self.deprecate_eof = caps & wire::CLIENT_DEPRECATE_EOF != 0;
        self.server.version = clean_version(&h.server_version);
        self.server.pid = h.connection_id as u64;
        // An unknown default plugin: answer as native and let the server switch if the
        // account really uses another one.
        let (plugin, auth) = match scramble(&h.auth_plugin, &c.password, &h.scramble) {
            Some(a) => (h.auth_plugin.as_str(), a),
            None => (NATIVE, wire::native_password(&c.password, &h.scramble)),
        };
        self.wire.start();
        wire::handshake_response(&mut self.wire.wbuf, caps, &c.user, &auth, &c.dbname, plugin);
        self.wire.send_packet(p.id.wrapping_add(1)).map_err(fail)?;
        self.authenticate(c, plugin.to_string())
    }

    /// Reads auth replies until OK: plugin switches, caching_sha2 fast/full auth, or ERR.
    fn authenticate(&mut self, c: &ConnectionSpec, mut plugin: String) -> Result<(), DriverError> {
        let fail = |e: DbError| connect_error(c, e.describe());
        loop {
            let p = self.wire.recv().map_err(fail)?;
            let payload = self.wire.body(p);
            let reply: Vec<u8> = match payload.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => {
                    let e = wire::err_packet(payload).map_err(fail)?;
                    return Err(connect_error(
                        c,
                        format!("{} (error {}, SQLSTATE {})", e.message, e.code, e.sqlstate),
                    ));
                }
                Some(0xfe) => {
                    let mut r = Cursor::new(&payload[1..]);
                    plugin = String::from_utf8_lossy(r.nul_str()).into_owned();
                    let nonce = r.rest().to_vec();
                    scramble(&plugin, &c.password, &nonce)
                        .ok_or_else(|| unsupported_plugin(c, &plugin))?
                }
                // AuthMoreData of caching_sha2_password: 3 = fast auth passed (OK follows),
                // 4 = full auth wanted, which needs TLS or RSA except on a Unix socket.
                Some(0x01) if plugin == CACHING_SHA2 && payload.get(1) == Some(&3) => continue,
                Some(0x01) if plugin == CACHING_SHA2 && payload.get(1) == Some(&4) => {
                    if c.socket.is_empty() {
                        return Err(connect_error(
                            c,
                            format!("{CACHING_SHA2} full authentication over TCP needs TLS or RSA key exchange, which the driver lacks: connect once through the Unix socket (\"socket\") so the server caches the password, or use {NATIVE}"),
                        ));
                    }
                    let mut pw = c.password.as_bytes().to_vec();
                    pw.push(0);
                    pw
                }
                _ => {
                    return Err(connect_error(
                        c,
                        format!("unexpected packet during {plugin} authentication"),
                    ))
                }
            };
            self.wire.start();
            self.wire.wbuf.extend_from_slice(&reply);
            self.wire.send_packet(p.id.wrapping_add(1)).map_err(fail)?;
        }
    }

    #[cold]
    fn sql_error(&mut self, payload_err: Result<wire::ErrPacket, DbError>) -> DbError {
        match payload_err {
            Ok(e) => {
                self.last_error_code = e.code;
                DbError::Sql {
                    sqlstate: e.sqlstate,
                    message: format!("{} (MySQL error {})", e.message, e.code),
                }
            }
            Err(e) => e,
        }
    }

    fn command(&mut self, cmd: u8, body: &[u8]) -> Result<(), DbError> {
        self.wire.start();
        self.wire.wbuf.push(cmd);
        self.wire.wbuf.extend_from_slice(body);
        self.wire.send_packet(0)
    }

    /// Skips `n` column definitions and, without CLIENT_DEPRECATE_EOF, the EOF after them.
    fn skip_columns(&mut self, n: u64) -> Result<(), DbError> {
        let extra = u64::from(!self.deprecate_eof && n > 0);
        for _ in 0..n + extra {
            self.wire.recv()?;
        }
        Ok(())
    }

    /// Reads a whole reply (every result set while the server says more follow), counting
    /// rows without decoding them. Returns the first error, after which the server sends
    /// nothing more.
    #[inline]
    fn drain_result(&mut self) -> Result<u64, DbError> {
        let mut rows = 0;
        self.each_result(|conn, head| match head {
            ReplyHead::Ok(ok) => Ok(ok.status),
            ReplyHead::Columns(n) => {
                conn.skip_columns(n)?;
                conn.count_rows(&mut rows)
            }
        })?;
        Ok(rows)
    }

    /// Hands `read` the head of each result of a reply while the server says more follow;
    /// `read` consumes the result and returns its status flags.
    #[inline]
    fn each_result(
        &mut self,
        mut read: impl FnMut(&mut Self, ReplyHead) -> Result<u16, DbError>,
    ) -> Result<(), DbError> {
        loop {
            let head = self.reply_head()?;
            if read(self, head)? & wire::SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(());
            }
        }
    }

    /// The first packet of a result; an ERR packet or a LOCAL INFILE request is the error.
    #[inline]
    fn reply_head(&mut self) -> Result<ReplyHead, DbError> {
        let p = self.wire.recv()?;
        let payload = self.wire.body(p);
        match payload.first() {
            Some(0x00) => Ok(ReplyHead::Ok(wire::ok_packet(payload)?)),
            Some(0xff) => {
                let e = wire::err_packet(payload);
                Err(self.sql_error(e))
            }
            Some(0xfb) => Err(self.refuse_local_infile()),
            _ => Ok(ReplyHead::Columns(
                Cursor::new(payload).lenenc()?.unwrap_or(0),
            )),
        }
    }

    /// The next packet of a result set: a row, or its end with the status flags.
    #[inline]
    fn next_row(&mut self) -> Result<RowPacket, DbError> {
        let p = self.wire.recv()?;
        let payload = self.wire.body(p);
        if wire::is_end_of_rows(payload) {
            return wire::end_of_rows_status(payload, self.deprecate_eof).map(RowPacket::End);
        }
        if payload.first() == Some(&0xff) {
            let e = wire::err_packet(payload);
            return Err(self.sql_error(e));
        }
        Ok(RowPacket::Row(p))
    }

    /// Counts row packets up to the end of the result set; returns its status flags.
    #[inline]
    fn count_rows(&mut self, rows: &mut u64) -> Result<u16, DbError> {
        loop {
            match self.next_row()? {
                RowPacket::Row(_) => *rows += 1,
                RowPacket::End(status) => return Ok(status),
            }
        }
    }

    #[cold]
    fn refuse_local_infile(&mut self) -> DbError {
        // An empty packet declines the file; the server then answers with OK or ERR.
        self.wire.start();
        if let Err(e) = self.wire.send_packet(2) {
            return e;
        }
        match self.drain_result() {
            Err(e) => e,
            Ok(_) => DbError::Protocol("LOAD DATA LOCAL INFILE is not supported".into()),
        }
    }

    /// Reads column names and text rows of one result set into `res`; returns its status.
    fn text_result(&mut self, ncols: u64, res: &mut QueryResult) -> Result<u16, DbError> {
        res.columns.clear();
        res.rows.clear();
        for _ in 0..ncols {
            let p = self.wire.recv()?;
            let mut c = Cursor::new(self.wire.body(p));
            for _ in 0..4 {
                c.lenenc_bytes()?; // catalog, schema, table, org_table
            }
            let name = c.lenenc_bytes()?.unwrap_or_default();
            res.columns.push(String::from_utf8_lossy(name).into_owned());
        }
        if !self.deprecate_eof {
            self.wire.recv()?;
        }
        loop {
            let p = match self.next_row()? {
                RowPacket::Row(p) => p,
                RowPacket::End(status) => {
                    res.command = format!("SELECT {}", res.rows.len());
                    return Ok(status);
                }
            };
            let mut c = Cursor::new(self.wire.body(p));
            let mut row = Vec::with_capacity(ncols as usize);
            for _ in 0..ncols {
                row.push(
                    c.lenenc_bytes()?
                        .map(|v| String::from_utf8_lossy(v).into_owned()),
                );
            }
            res.rows.push(row);
        }
    }

    /// COM_STMT_PREPARE of `sql` (with `$n` placeholders, the spec's form).
    fn prepare_server(&mut self, sql: &str) -> Result<Execute, DbError> {
        let (text, order) = question_marks(sql);
        self.command(wire::COM_STMT_PREPARE, text.as_bytes())?;
        let p = self.wire.recv()?;
        let payload = self.wire.body(p);
        if payload.first() == Some(&0xff) {
            let e = wire::err_packet(payload);
            return Err(self.sql_error(e));
        }
        let mut c = Cursor::new(payload);
        c.u8()?;
        let id = c.u32()?;
        let ncols = c.u16()?;
        let nparams = c.u16()?;
        self.skip_columns(nparams as u64)?;
        self.skip_columns(ncols as u64)?;
        if nparams as usize != order.len() {
            return Err(DbError::Protocol(format!(
                "the server counts {nparams} parameters in {text:?}, the spec gives {}",
                order.len()
            )));
        }
        let mut head = [wire::COM_STMT_EXECUTE, 0, 0, 0, 0, 0, 1, 0, 0, 0];
        head[1..5].copy_from_slice(&id.to_le_bytes());
        Ok(Execute { head, order })
    }

    /// COM_STMT_EXECUTE payload: every parameter bound anew, integers as LONGLONG and
    /// digit strings as VAR_STRING, none NULL.
    #[inline]
    fn build_execute(&mut self, stmt: &Execute, params: &ParamValues) {
        let order = &stmt.order;
        let w = &mut self.wire.wbuf;
        w.clear();
        w.extend_from_slice(&[0; 4]);
        w.extend_from_slice(&stmt.head);
        if order.is_empty() {
            return;
        }
        w.resize(w.len() + order.len().div_ceil(8), 0);
        w.push(1);
        for &i in order {
            let t = if params.is_text(i) {
                wire::TYPE_VAR_STRING
            } else {
                wire::TYPE_LONGLONG
            };
            w.extend_from_slice(&[t, 0]);
        }
        for &i in order {
            let v = params.get(i);
            if params.is_text(i) {
                wire::put_lenenc(w, v.len() as u64);
                w.extend_from_slice(v);
            } else {
                w.extend_from_slice(&parse_i64(v).to_le_bytes());
            }
        }
    }

    /// The inlined SQL of a `prepared: false` statement as a COM_QUERY.
    fn build_text(&mut self, segments: &[Segment], params: &ParamValues) {
        let w = &mut self.wire.wbuf;
        w.clear();
        w.extend_from_slice(&[0, 0, 0, 0, wire::COM_QUERY]);
        super::inline_sql(w, segments, params);
    }
}

/// The generators write integers as ASCII decimal; the binary protocol wants them back.
#[inline]
fn parse_i64(v: &[u8]) -> i64 {
    let (neg, digits) = match v.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, v),
    };
    let n = digits.iter().fold(0i64, |n, d| {
        n.wrapping_mul(10).wrapping_add((d - b'0') as i64)
    });
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

/// The event-abandoning MySQL errors (sysbench's drv_mysql list plus duplicate key).
pub fn ignorable_code(code: u16) -> Option<Ignorable> {
    match code {
        1213 => Some(Ignorable::Deadlock),      // ER_LOCK_DEADLOCK
        1020 => Some(Ignorable::Serialization), // ER_CHECKREAD (snapshot isolation)
        1205 => Some(Ignorable::Lock),          // ER_LOCK_WAIT_TIMEOUT
        1062 => Some(Ignorable::Duplicate),     // ER_DUP_ENTRY
        _ => None,
    }
}

impl Session for MyConn {
    type Stmt = Statement<Execute>;
    const CAPS: Caps = Caps {
        dialect: Dialect::Mysql,
        server_prepare: true,
        copy_in: false,
    };

    fn ignorable(&self, err: &DbError) -> Option<Ignorable> {
        match err {
            DbError::Sql { .. } => ignorable_code(self.last_error_code),
            _ => None,
        }
    }

    fn connect(c: &ConnectionSpec) -> Result<Self, DriverError> {
        let mut conn = MyConn {
            wire: Wire::new(address(c).open()?),
            server: ServerInfo::default(),
            deprecate_eof: false,
            last_error_code: 0,
        };
        conn.handshake(c)?;
        Ok(conn)
    }

    fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// COM_QUERY: every statement in `sql`, keeping the last result set. `command` is
    /// "SELECT n" for a result set of n rows, "OK n" for n affected rows.
    fn query(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        self.command(wire::COM_QUERY, sql.as_bytes())?;
        let mut res = QueryResult::default();
        self.each_result(|conn, head| match head {
            ReplyHead::Ok(ok) => {
                res.command = format!("OK {}", ok.affected_rows);
                Ok(ok.status)
            }
            ReplyHead::Columns(n) => conn.text_result(n, &mut res),
        })?;
        Ok(res)
    }

    fn prepare(
        &mut self,
        _name: &str,
        sql: &str,
        server_side: bool,
    ) -> Result<Self::Stmt, DbError> {
        Statement::prepare(sql, server_side, || self.prepare_server(sql))
    }

    #[inline]
    fn execute(&mut self, stmt: &Self::Stmt, params: &ParamValues) -> Result<u64, DbError> {
        match stmt {
            Statement::Prepared(exec) => self.build_execute(exec, params),
            Statement::Text(segments) => self.build_text(segments, params),
        }
        self.wire.send_packet(0)?;
        self.drain_result()
    }

    fn control(&mut self, c: Control) -> Result<(), DbError> {
        self.command(wire::COM_QUERY, c.sql().as_bytes())?;
        self.drain_result().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollar_placeholders_become_question_marks_in_order_of_appearance() {
        let (sql, order) = question_marks("SELECT c FROM t WHERE id BETWEEN $2 AND $1 AND x='$3'");
        assert_eq!(sql, "SELECT c FROM t WHERE id BETWEEN ? AND ? AND x='$3'");
        assert_eq!(order, vec![1, 0]);
    }

    #[test]
    fn mariadb_version_loses_its_replication_prefix() {
        assert_eq!(
            clean_version("5.5.5-10.11.6-MariaDB-0+deb12u1"),
            "10.11.6-MariaDB-0+deb12u1"
        );
        assert_eq!(clean_version("8.0.36"), "8.0.36");
    }

    #[test]
    fn decimal_text_parses_back_to_i64() {
        for v in [0i64, 7, -42, 1_000_000, i64::MAX, i64::MIN] {
            assert_eq!(parse_i64(v.to_string().as_bytes()), v);
        }
    }

    #[test]
    fn deadlock_lock_wait_checkread_and_duplicate_are_ignorable_others_fatal() {
        assert_eq!(ignorable_code(1213), Some(Ignorable::Deadlock));
        assert_eq!(ignorable_code(1205), Some(Ignorable::Lock));
        assert_eq!(ignorable_code(1062), Some(Ignorable::Duplicate));
        assert_eq!(ignorable_code(1020), Some(Ignorable::Serialization));
        assert_eq!(ignorable_code(1146), None);
    }

    #[test]
    fn unknown_auth_plugins_have_no_scramble() {
        assert!(scramble("client_ed25519", "x", &[0; 20]).is_none());
        assert!(scramble(NATIVE, "", &[0; 20]).unwrap().is_empty());
    }
}
