// What both wire protocols share: a connection that buffers what it reads and cuts it into
// length-prefixed frames, a write buffer sent in one write, and a cursor over a frame's body.
// The header formats and field encodings are each protocol's own (`pgwire`, `mysqlwire`).

use super::DbError;
use std::io::{ErrorKind, Read, Write};
use std::marker::PhantomData;

/// How a protocol frames what the server sends: a fixed-size header that gives the frame's
/// length and carries one identifying byte (PostgreSQL's tag, MySQL's sequence id).
pub trait Framing {
    /// Bytes of header before the body.
    const HEADER: usize;
    /// What one frame is called in error texts ("message", "packet").
    const UNIT: &'static str;
    /// The identifying byte and the whole frame's length (header included) read from a
    /// header; an error for a length the protocol refuses.
    fn header(h: &[u8]) -> Result<(u8, usize), DbError>;
}

/// A received frame: its identifying byte and the byte range of its body in the read buffer.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub id: u8,
    start: usize,
    end: usize,
}

impl Frame {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.end - self.start
    }
}

const READ_CHUNK: usize = 64 * 1024;

/// Framed, buffered connection; generic over the stream so tests can feed literal bytes.
pub struct Wire<S, F> {
    stream: S,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    /// What the next `send` writes; each protocol builds its messages here.
    pub wbuf: Vec<u8>,
    framing: PhantomData<F>,
}

impl<S: Read + Write, F: Framing> Wire<S, F> {
    pub fn new(stream: S) -> Self {
        Wire {
            stream,
            rbuf: vec![0; READ_CHUNK],
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(READ_CHUNK),
            framing: PhantomData,
        }
    }

    /// Writes the whole write buffer (one write() in the common case).
    #[inline]
    pub fn send(&mut self) -> Result<(), DbError> {
        self.stream.write_all(&self.wbuf)?;
        Ok(())
    }

    #[inline]
    pub fn body(&self, f: Frame) -> &[u8] {
        &self.rbuf[f.start..f.end]
    }

    /// Next complete frame; reads from the socket only when the buffer holds none.
    #[inline]
    pub fn recv(&mut self) -> Result<Frame, DbError> {
        loop {
            let avail = self.rend - self.rpos;
            if avail >= F::HEADER {
                let p = self.rpos;
                let (id, len) = F::header(&self.rbuf[p..p + F::HEADER])?;
                if avail >= len {
                    self.rpos = p + len;
                    return Ok(Frame {
                        id,
                        start: p + F::HEADER,
                        end: p + len,
                    });
                }
                self.fill(len)?;
            } else {
                self.fill(F::HEADER)?;
            }
        }
    }

    /// Reads until the buffer holds at least `need` unread bytes, moving or growing it as
    /// needed.
    #[cold]
    fn fill(&mut self, need: usize) -> Result<(), DbError> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        }
        if self.rpos + need > self.rbuf.len() {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
            if need > self.rbuf.len() {
                self.rbuf.resize(need.next_power_of_two(), 0);
            }
        }
        while self.rend - self.rpos < need {
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err(DbError::Io("server closed the connection".into())),
                Ok(n) => self.rend += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// Reads a frame's body front to back, failing softly at its end. Each protocol adds its
/// own field readers (byte order, string forms) in an `impl Cursor<'_, Itself>`.
pub struct Cursor<'a, F> {
    buf: &'a [u8],
    pos: usize,
    framing: PhantomData<F>,
}

impl<'a, F: Framing> Cursor<'a, F> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor {
            buf,
            pos: 0,
            framing: PhantomData,
        }
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DbError> {
        let s = self
            .buf
            .get(self.pos..self.pos + n)
            .ok_or_else(|| DbError::Protocol(format!("{} ended early", F::UNIT)))?;
        self.pos += n;
        Ok(s)
    }

    /// The next `N` bytes, for a fixed-width number.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DbError> {
        let mut a = [0; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// What is left unread, without consuming it.
    pub fn unread(&self) -> &'a [u8] {
        &self.buf[self.pos.min(self.buf.len())..]
    }

    /// Consumes `n` more bytes of what `unread` showed.
    pub fn skip(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::{Framing, Wire};
    use std::io::{self, Read, Write};

    /// Serves its input a few bytes per read(), to exercise reassembly; discards writes.
    pub struct Trickle {
        input: Vec<u8>,
        pos: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.input.len() - self.pos);
            buf[..n].copy_from_slice(&self.input[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A connection that reads `input` `step` bytes at a time.
    pub fn wire<F: Framing>(input: &[u8], step: usize) -> Wire<Trickle, F> {
        Wire::new(Trickle {
            input: input.to_vec(),
            pos: 0,
            step,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::testing::wire;
    use super::*;

    /// One tag byte and one length byte that counts itself and the tag.
    struct Tiny;

    impl Framing for Tiny {
        const HEADER: usize = 2;
        const UNIT: &'static str = "tiny frame";
        fn header(h: &[u8]) -> Result<(u8, usize), DbError> {
            match h[1] as usize {
                n if n >= 2 => Ok((h[0], n)),
                n => Err(DbError::Protocol(format!("length {n}"))),
            }
        }
    }

    #[test]
    fn frames_are_cut_by_their_header_whatever_the_read_sizes() {
        for step in [1, 2, 3, 64] {
            let mut w = wire::<Tiny>(b"a\x04xyb\x02c\x03z", step);
            let frames: Vec<(u8, Vec<u8>)> = (0..3)
                .map(|_| {
                    let f = w.recv().unwrap();
                    (f.id, w.body(f).to_vec())
                })
                .collect();
            assert_eq!(
                frames,
                [
                    (b'a', b"xy".to_vec()),
                    (b'b', vec![]),
                    (b'c', b"z".to_vec())
                ]
            );
        }
    }

    #[test]
    fn frames_that_cross_the_end_of_the_buffer_are_reassembled() {
        let mut input = vec![b'a', 0];
        input.extend_from_slice(&vec![b'x'; 250]);
        input[1] = 252;
        let mut w = wire::<Tiny>(&input.repeat(400), 1000);
        for _ in 0..400 {
            let f = w.recv().unwrap();
            assert_eq!(w.body(f).len(), 250);
        }
    }

    #[test]
    fn a_connection_closed_mid_frame_is_an_io_error() {
        let mut w = wire::<Tiny>(b"a\x05xy", 100);
        assert!(matches!(w.recv(), Err(DbError::Io(_))));
    }

    #[test]
    fn a_refused_length_is_the_framings_error() {
        let mut w = wire::<Tiny>(b"a\x01", 100);
        assert!(matches!(w.recv(), Err(DbError::Protocol(m)) if m == "length 1"));
    }

    #[test]
    fn the_cursor_reads_fixed_widths_and_names_the_unit_at_the_end() {
        let mut c = Cursor::<Tiny>::new(b"\x01\x02\x03");
        assert_eq!(c.array::<2>().unwrap(), [1, 2]);
        assert_eq!((c.peek(), c.unread()), (Some(3), &b"\x03"[..]));
        c.skip(5);
        assert_eq!(c.unread(), b"");
        assert!(matches!(c.bytes(1), Err(DbError::Protocol(m)) if m == "tiny frame ended early"));
    }
}
