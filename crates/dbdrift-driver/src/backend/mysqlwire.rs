// MySQL client/server packets: their 4-byte header (for the shared buffered connection in
// `wire`) and the splitting of long payloads, length-encoded values, OK/ERR/EOF and
// handshake decoding, and the auth scrambles.
// No connection policy (which plugin, which statement) here; that is `mysql.rs`.

use super::wire::{self, Framing};
use super::DbError;
use std::io::{Read, Write};

pub const CLIENT_LONG_PASSWORD: u32 = 0x1;
pub const CLIENT_LONG_FLAG: u32 = 0x4;
pub const CLIENT_CONNECT_WITH_DB: u32 = 0x8;
pub const CLIENT_PROTOCOL_41: u32 = 0x200;
pub const CLIENT_TRANSACTIONS: u32 = 0x2000;
pub const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
pub const CLIENT_MULTI_STATEMENTS: u32 = 0x1_0000;
pub const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
pub const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
pub const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
pub const CLIENT_PLUGIN_AUTH_LENENC_DATA: u32 = 0x20_0000;
pub const CLIENT_DEPRECATE_EOF: u32 = 0x100_0000;

pub const SERVER_MORE_RESULTS_EXISTS: u16 = 0x8;

pub const COM_QUERY: u8 = 0x03;
pub const COM_STMT_PREPARE: u8 = 0x16;
pub const COM_STMT_EXECUTE: u8 = 0x17;

pub const TYPE_LONGLONG: u8 = 0x08;
pub const TYPE_VAR_STRING: u8 = 0xfd;

/// utf8mb4_general_ci: known to every server since MySQL 5.5.3 / MariaDB 5.5.
pub const CHARSET_UTF8MB4: u8 = 45;

/// The largest payload of one packet; a payload this long continues in the next packet.
pub const MAX_PAYLOAD: usize = 0xff_ffff;

/// MySQL's framing: a 3-byte little-endian payload length, then the sequence id.
pub struct My;

impl Framing for My {
    const HEADER: usize = 4;
    const UNIT: &'static str = "packet";

    /// Payloads of 16 MiB or more (split over packets) are refused, not reassembled.
    #[inline]
    fn header(h: &[u8]) -> Result<(u8, usize), DbError> {
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        if len == MAX_PAYLOAD {
            return Err(DbError::Protocol(
                "the server sent a packet of 16 MiB or more, which the driver does not read".into(),
            ));
        }
        Ok((h[3], 4 + len))
    }
}

/// A connection speaking MySQL; a received packet's `id` is its sequence id, and its body
/// the payload. `wbuf` holds a header placeholder (4 bytes) then the payload being built;
/// see `start` and `send_packet`.
pub type Wire<S> = wire::Wire<S, My>;
/// Reads little-endian fields, length-encoded values and strings from a payload.
pub type Cursor<'a> = wire::Cursor<'a, My>;

impl<S: Read + Write> Wire<S> {
    /// Starts a new outgoing packet: the caller appends the payload to `wbuf`.
    #[inline]
    pub fn start(&mut self) {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0; 4]);
    }

    /// Frames the payload in `wbuf` with sequence id `seq` and writes it.
    #[inline]
    pub fn send_packet(&mut self, seq: u8) -> Result<(), DbError> {
        frame(&mut self.wbuf, seq, MAX_PAYLOAD);
        self.send()
    }
}

/// Writes packet headers into `buf` (4 placeholder bytes, then the payload), splitting a
/// payload of `max` bytes or more into several packets with consecutive sequence ids.
pub fn frame(buf: &mut Vec<u8>, seq: u8, max: usize) {
    let len = buf.len() - 4;
    if len < max {
        let l = (len as u32).to_le_bytes();
        buf[..4].copy_from_slice(&[l[0], l[1], l[2], seq]);
        return;
    }
    let payload = buf.split_off(4);
    buf.clear();
    let mut seq = seq;
    let mut chunks = payload.chunks(max).peekable();
    loop {
        let chunk = chunks.next().unwrap_or(&[]);
        let l = (chunk.len() as u32).to_le_bytes();
        buf.extend_from_slice(&[l[0], l[1], l[2], seq]);
        buf.extend_from_slice(chunk);
        seq = seq.wrapping_add(1);
        // A final chunk of exactly `max` bytes is followed by an empty packet.
        if chunks.peek().is_none() && chunk.len() < max {
            break;
        }
    }
}

impl<'a> Cursor<'a> {
    pub fn u8(&mut self) -> Result<u8, DbError> {
        Ok(self.bytes(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16, DbError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> Result<u32, DbError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn uint(&mut self, n: usize) -> Result<u64, DbError> {
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(self.bytes(n)?);
        Ok(u64::from_le_bytes(v))
    }

    /// A length-encoded integer; None is the NULL marker (0xfb) of a text row.
    pub fn lenenc(&mut self) -> Result<Option<u64>, DbError> {
        match self.u8()? {
            0xfb => Ok(None),
            0xfc => self.uint(2).map(Some),
            0xfd => self.uint(3).map(Some),
            0xfe => self.uint(8).map(Some),
            0xff => Err(DbError::Protocol(
                "0xff is not a length-encoded integer".into(),
            )),
            b => Ok(Some(b as u64)),
        }
    }

    /// A length-encoded string; None for NULL.
    pub fn lenenc_bytes(&mut self) -> Result<Option<&'a [u8]>, DbError> {
        match self.lenenc()? {
            None => Ok(None),
            Some(n) => self.bytes(n as usize).map(Some),
        }
    }

    /// A NUL-terminated string, or the rest of the payload if no NUL follows.
    pub fn nul_str(&mut self) -> &'a [u8] {
        let rest = self.unread();
        match rest.iter().position(|&b| b == 0) {
            Some(end) => {
                self.skip(end + 1);
                &rest[..end]
            }
            None => self.rest(),
        }
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.unread();
        self.skip(rest.len());
        rest
    }
}

pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An ERR packet (first byte 0xff): error code, SQLSTATE (HY000 when the packet has none,
/// as before the handshake completes) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    pub code: u16,
    pub sqlstate: String,
    pub message: String,
}

pub fn err_packet(payload: &[u8]) -> Result<ErrPacket, DbError> {
    let mut c = Cursor::new(payload);
    c.u8()?;
    let code = c.u16()?;
    let sqlstate = if c.peek() == Some(b'#') {
        c.u8()?;
        text(c.bytes(5)?)
    } else {
        "HY000".to_string()
    };
    Ok(ErrPacket {
        code,
        sqlstate,
        message: text(c.rest()),
    })
}

/// The fields of an OK packet (first byte 0x00, or 0xfe when it ends a result set under
/// CLIENT_DEPRECATE_EOF) that the driver uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OkPacket {
    pub affected_rows: u64,
    pub status: u16,
}

pub fn ok_packet(payload: &[u8]) -> Result<OkPacket, DbError> {
    let mut c = Cursor::new(payload);
    c.u8()?;
    let affected_rows = c.lenenc()?.unwrap_or(0);
    c.lenenc()?;
    let status = if c.peek().is_some() { c.u16()? } else { 0 };
    Ok(OkPacket {
        affected_rows,
        status,
    })
}

/// Whether a packet inside a result set ends it: an EOF packet, or an OK packet with the
/// 0xfe header under CLIENT_DEPRECATE_EOF (a row starting with 0xfe would be >= 16 MiB).
#[inline]
pub fn is_end_of_rows(payload: &[u8]) -> bool {
    payload.first() == Some(&0xfe) && payload.len() < MAX_PAYLOAD
}

/// Server status flags of the packet that ends a result set (EOF or OK-as-EOF).
pub fn end_of_rows_status(payload: &[u8], deprecate_eof: bool) -> Result<u16, DbError> {
    if deprecate_eof {
        return Ok(ok_packet(payload)?.status);
    }
    let mut c = Cursor::new(payload);
    c.u8()?;
    c.u16()?;
    c.u16()
}

/// The initial handshake (protocol 10) fields the driver uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    pub server_version: String,
    pub connection_id: u32,
    pub capabilities: u32,
    /// The 20-byte nonce for the auth scramble (parts 1 and 2, trailing NUL dropped).
    pub scramble: Vec<u8>,
    pub auth_plugin: String,
}

pub fn handshake(payload: &[u8]) -> Result<Handshake, DbError> {
    let mut c = Cursor::new(payload);
    let version = c.u8()?;
    if version != 10 {
        return Err(DbError::Protocol(format!(
            "handshake protocol version {version} is not supported (expected 10)"
        )));
    }
    let server_version = text(c.nul_str());
    let connection_id = c.u32()?;
    let mut scramble = c.bytes(8)?.to_vec();
    c.u8()?;
    let mut capabilities = c.u16()? as u32;
    let mut auth_plugin = String::new();
    if c.peek().is_some() {
        c.u8()?; // character set
        c.u16()?; // status flags
        capabilities |= (c.u16()? as u32) << 16;
        let data_len = c.u8()? as usize;
        c.bytes(10)?; // reserved (MariaDB keeps its extended capabilities in the last 4)
        if capabilities & CLIENT_SECURE_CONNECTION != 0 {
            let n = data_len.saturating_sub(8).max(13);
            let part2 = c.bytes(n.min(c.unread().len()))?;
            scramble.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
        }
        if capabilities & CLIENT_PLUGIN_AUTH != 0 {
            auth_plugin = text(c.nul_str());
        }
    }
    Ok(Handshake {
        server_version,
        connection_id,
        capabilities,
        scramble,
        auth_plugin,
    })
}

/// HandshakeResponse41 payload (appended to `out`). `caps` are the negotiated capabilities.
pub fn handshake_response(
    out: &mut Vec<u8>,
    caps: u32,
    user: &str,
    auth: &[u8],
    dbname: &str,
    plugin: &str,
) {
    out.extend_from_slice(&caps.to_le_bytes());
    out.extend_from_slice(&(1u32 << 30).to_le_bytes());
    out.push(CHARSET_UTF8MB4);
    out.extend_from_slice(&[0; 23]);
    out.extend_from_slice(user.as_bytes());
    out.push(0);
    if caps & CLIENT_PLUGIN_AUTH_LENENC_DATA != 0 {
        put_lenenc(out, auth.len() as u64);
    } else {
        out.push(auth.len() as u8);
    }
    out.extend_from_slice(auth);
    if caps & CLIENT_CONNECT_WITH_DB != 0 {
        out.extend_from_slice(dbname.as_bytes());
        out.push(0);
    }
    if caps & CLIENT_PLUGIN_AUTH != 0 {
        out.extend_from_slice(plugin.as_bytes());
        out.push(0);
    }
}

/// The scramble both plugins build from a hash H: H(pw) XOR H(a + b), where a + b is the
/// 20-byte nonce and H(H(pw)) in the order the plugin fixes; empty for no password.
fn hash_scramble<H: sha2::Digest>(password: &str, nonce: &[u8], nonce_first: bool) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = H::digest(password.as_bytes());
    let stage2 = H::digest(&stage1);
    let nonce = &nonce[..nonce.len().min(20)];
    let mut h = H::new();
    if nonce_first {
        h.update(nonce);
        h.update(stage2);
    } else {
        h.update(stage2);
        h.update(nonce);
    }
    stage1
        .iter()
        .zip(h.finalize())
        .map(|(x, y)| x ^ y)
        .collect()
}

/// mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))).
pub fn native_password(password: &str, nonce: &[u8]) -> Vec<u8> {
    hash_scramble::<sha1::Sha1>(password, nonce, true)
}

/// caching_sha2_password fast path: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
pub fn caching_sha2_password(password: &str, nonce: &[u8]) -> Vec<u8> {
    hash_scramble::<sha2::Sha256>(password, nonce, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::wire::testing::{self, Trickle};

    fn wire(input: &[u8], step: usize) -> Wire<Trickle> {
        testing::wire(input, step)
    }

    fn lenenc_of(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_lenenc(&mut out, v);
        out
    }

    #[test]
    fn length_encoded_integers_round_trip_at_every_width() {
        for (v, width) in [
            (0u64, 1),
            (250, 1),
            (251, 3),
            (0xffff, 3),
            (0x1_0000, 4),
            (0xff_ffff, 4),
            (0x100_0000, 9),
            (u64::MAX, 9),
        ] {
            let b = lenenc_of(v);
            assert_eq!(b.len(), width, "{v}");
            assert_eq!(Cursor::new(&b).lenenc().unwrap(), Some(v));
        }
    }

    #[test]
    fn lenenc_null_marker_is_none_and_0xff_is_an_error() {
        assert_eq!(Cursor::new(&[0xfb]).lenenc().unwrap(), None);
        assert!(matches!(
            Cursor::new(&[0xff]).lenenc(),
            Err(DbError::Protocol(_))
        ));
        assert_eq!(
            Cursor::new(b"\x03abc").lenenc_bytes().unwrap(),
            Some(&b"abc"[..])
        );
    }

    #[test]
    fn packets_are_framed_whatever_the_read_sizes() {
        let input = b"\x01\0\0\x01\x01\x02\0\0\x02ab\0\0\0\x03";
        for step in [1, 2, 3, 5, 64] {
            let mut w = wire(input, step);
            let a = w.recv().unwrap();
            assert_eq!((a.id, w.body(a)), (1, &b"\x01"[..]));
            let b = w.recv().unwrap();
            assert_eq!((b.id, w.body(b)), (2, &b"ab"[..]));
            let c = w.recv().unwrap();
            assert_eq!((c.id, c.len()), (3, 0));
        }
    }

    #[test]
    fn a_16_mib_packet_is_refused_as_a_protocol_error() {
        assert!(matches!(
            My::header(b"\xff\xff\xff\x01"),
            Err(DbError::Protocol(_))
        ));
        assert_eq!(My::header(b"\xfe\xff\xff\x01").unwrap(), (1, 4 + 0xff_fffe));
    }

    #[test]
    fn frame_writes_length_and_sequence_id() {
        let mut b = vec![0, 0, 0, 0, COM_QUERY, b'x'];
        frame(&mut b, 0, MAX_PAYLOAD);
        assert_eq!(b, b"\x02\0\0\0\x03x");
    }

    #[test]
    fn frame_splits_long_payloads_and_ends_an_exact_multiple_with_an_empty_packet() {
        let mut b = vec![0, 0, 0, 0, 1, 2, 3, 4, 5];
        frame(&mut b, 7, 2);
        assert_eq!(b, [2, 0, 0, 7, 1, 2, 2, 0, 0, 8, 3, 4, 1, 0, 0, 9, 5]);
        let mut b = vec![0, 0, 0, 0, 1, 2, 3, 4];
        frame(&mut b, 0, 2);
        assert_eq!(b, [2, 0, 0, 0, 1, 2, 2, 0, 0, 1, 3, 4, 0, 0, 0, 2]);
    }

    #[test]
    fn err_packet_yields_code_sqlstate_and_message() {
        let e = err_packet(b"\xff\xbd\x04#40001Deadlock found").unwrap();
        assert_eq!(
            e,
            ErrPacket {
                code: 1213,
                sqlstate: "40001".into(),
                message: "Deadlock found".into()
            }
        );
        // Before protocol 4.1 is agreed an ERR has no SQLSTATE marker.
        let e = err_packet(b"\xff\x10\x04Too many connections").unwrap();
        assert_eq!((e.code, e.sqlstate.as_str()), (1040, "HY000"));
    }

    #[test]
    fn ok_packet_yields_affected_rows_and_status() {
        let ok = ok_packet(b"\x00\xfc\x00\x01\x05\x0a\x00\x00\x00").unwrap();
        assert_eq!(
            ok,
            OkPacket {
                affected_rows: 256,
                status: SERVER_MORE_RESULTS_EXISTS | 0x2
            }
        );
    }

    #[test]
    fn eof_and_ok_as_eof_give_the_status_flags() {
        let eof = b"\xfe\x00\x00\x08\x00";
        assert!(is_end_of_rows(eof));
        assert_eq!(end_of_rows_status(eof, false).unwrap(), 8);
        let ok_eof = b"\xfe\x00\x00\x02\x00\x00\x00";
        assert_eq!(end_of_rows_status(ok_eof, true).unwrap(), 2);
        assert!(!is_end_of_rows(b"\x00\x01"));
    }

    /// A MariaDB 10.11 handshake as captured from the wire (scramble bytes replaced).
    fn mariadb_handshake() -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(b"5.5.5-10.11.6-MariaDB-0+deb12u1\0");
        p.extend_from_slice(&42u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        p.extend_from_slice(&0xf7feu16.to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&0x81bfu16.to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&[0x1d, 0, 0, 0]);
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        p
    }

    #[test]
    fn handshake_gives_version_id_capabilities_scramble_and_plugin() {
        let h = handshake(&mariadb_handshake()).unwrap();
        assert_eq!(h.server_version, "5.5.5-10.11.6-MariaDB-0+deb12u1");
        assert_eq!(h.connection_id, 42);
        assert_eq!(h.scramble, b"abcdefghijklmnopqrst");
        assert_eq!(h.auth_plugin, "mysql_native_password");
        assert_eq!(h.capabilities, 0x81bf_f7fe);
        assert!(h.capabilities & CLIENT_PLUGIN_AUTH != 0);
    }

    #[test]
    fn handshake_of_another_protocol_version_is_a_protocol_error() {
        assert!(matches!(handshake(b"\x09x\0"), Err(DbError::Protocol(_))));
    }

    #[test]
    fn handshake_response_bytes_are_exact() {
        let caps = CLIENT_PROTOCOL_41
            | CLIENT_SECURE_CONNECTION
            | CLIENT_PLUGIN_AUTH
            | CLIENT_CONNECT_WITH_DB;
        let mut out = Vec::new();
        handshake_response(&mut out, caps, "u", &[9, 9], "db", "p");
        let mut expect = caps.to_le_bytes().to_vec();
        expect.extend_from_slice(&[0, 0, 0, 0x40, 45]);
        expect.extend_from_slice(&[0; 23]);
        expect.extend_from_slice(b"u\0\x02\x09\x09db\0p\0");
        assert_eq!(out, expect);
    }

    // Vectors from go-sql-driver/mysql auth_test.go (TestAuthFastNativePassword,
    // TestScrambleSHA256Pass): outputs known to authenticate against real servers.
    const GO_NATIVE_NONCE: [u8; 20] = [
        70, 114, 92, 94, 1, 38, 11, 116, 63, 114, 23, 101, 126, 103, 26, 95, 81, 17, 24, 21,
    ];
    const GO_SHA256_NONCE: [u8; 20] = [
        10, 47, 74, 111, 75, 73, 34, 48, 88, 76, 114, 74, 37, 13, 3, 80, 82, 2, 23, 21,
    ];

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn native_password_scramble_matches_the_go_driver_vector() {
        let expect = [
            53, 177, 140, 159, 251, 189, 127, 53, 109, 252, 172, 50, 211, 192, 240, 164, 26, 48,
            207, 45,
        ];
        assert_eq!(native_password("secret", &GO_NATIVE_NONCE), expect);
        // A handshake nonce carries a trailing NUL; only the first 20 bytes count.
        let mut with_nul = GO_NATIVE_NONCE.to_vec();
        with_nul.push(0);
        assert_eq!(native_password("secret", &with_nul), expect);
    }

    #[test]
    fn caching_sha2_scramble_matches_the_go_driver_vectors() {
        assert_eq!(
            hex(&caching_sha2_password("secret", &GO_SHA256_NONCE)),
            "f490e76f66d9d86665ce54d98c78d0acfe2fb0b08b423da807144873d30b312c"
        );
        assert_eq!(
            hex(&caching_sha2_password("secret2", &GO_SHA256_NONCE)),
            "abc3934a012cf342e876071c8ee202de51785b430258a7a0138bc79c4d800bc6"
        );
    }

    #[test]
    fn empty_password_sends_an_empty_auth_response() {
        assert!(native_password("", &GO_NATIVE_NONCE).is_empty());
        assert!(caching_sha2_password("", &GO_SHA256_NONCE).is_empty());
    }
}
