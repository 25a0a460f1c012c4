// Insert Benchmark rows (protocol.md "## `ibench`", methodology §2.3): one literal multi-row
// INSERT drawn from the client's own Rng. The caller passes the statement's timestamp, so
// this module never reads a clock.

use crate::workload::digits::push_u64;
use crate::workload::rng::Rng;

/// Random bytes behind the base64 text that `data` slices come from (iibench uses 4 MiB;
/// a slice is at most 3/8 of the data length, so 64 KiB leaves plenty of start positions).
const RANDOM_BYTES: usize = 64 * 1024;

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub struct IbRows {
    rng: Rng,
    text: Vec<u8>,
    len_lo: u32,
    len_hi: u32,
}

/// Length of the base64 prefix of a data value of `len` chars: floor(len · 0.75 · 0.5).
pub fn base64_part(len: u32) -> usize {
    len as usize * 3 / 8
}

impl IbRows {
    pub fn new(seed: u64, data_length: [u32; 2]) -> Self {
        let mut rng = Rng::new(seed);
        let bytes = RANDOM_BYTES.max(base64_part(data_length[1]));
        let text = base64_of_random_bytes(&mut rng, bytes);
        IbRows {
            rng,
            text,
            len_lo: data_length[0],
            len_hi: data_length[1],
        }
    }

    /// Appends `{prefix} (row),(row),...` with `rows` tuples, every one stamped `ts`.
    pub fn push_statement(&mut self, out: &mut Vec<u8>, prefix: &str, rows: u64, ts: &[u8]) {
        out.extend_from_slice(prefix.as_bytes());
        out.push(b' ');
        for i in 0..rows {
            if i > 0 {
                out.push(b',');
            }
            self.push_row(out, ts);
        }
    }

    /// `('<ts>',<cashregisterid>,<customerid>,<productid>,<price>,'<data>')`
    fn push_row(&mut self, out: &mut Vec<u8>, ts: &[u8]) {
        out.extend_from_slice(b"('");
        out.extend_from_slice(ts);
        out.extend_from_slice(b"',");
        for domain in [1000, 100_000, 10_000, 500] {
            push_u64(out, self.rng.below(domain));
            out.push(b',');
        }
        out.push(b'\'');
        self.push_data(out);
        out.extend_from_slice(b"')");
    }

    /// A random slice of the base64 text, then `a` up to the drawn length. Base64 has no
    /// quote or backslash, so the literal needs no escaping.
    fn push_data(&mut self, out: &mut Vec<u8>) {
        let len = self.rng.range(self.len_lo as i64, self.len_hi as i64) as u32;
        let k = base64_part(len);
        let start = self.rng.below((self.text.len() - k + 1) as u64) as usize;
        out.extend_from_slice(&self.text[start..start + k]);
        out.resize(out.len() + (len as usize - k), b'a');
    }
}

/// Base64 (no padding) of at least `bytes` random bytes, rounded up to whole 3-byte groups.
fn base64_of_random_bytes(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let groups = bytes.div_ceil(3);
    let mut out = Vec::with_capacity(groups * 4);
    for _ in 0..groups {
        let v = rng.next_u64() >> 40; // 24 random bits
        for shift in [18, 12, 6, 0] {
            out.push(BASE64[((v >> shift) & 63) as usize]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: &[u8] = b"2026-11-22 12:54:07";
    const PREFIX: &str =
        "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) VALUES";

    /// The tuples of a statement as their six fields (no field holds `,`, `(` or `)`).
    fn rows(stmt: &str) -> Vec<Vec<String>> {
        let values = stmt
            .strip_prefix(PREFIX)
            .unwrap()
            .strip_prefix(" (")
            .unwrap();
        let values = values.strip_suffix(')').unwrap();
        values
            .split("),(")
            .map(|r| r.split(',').map(str::to_string).collect())
            .collect()
    }

    fn statement(g: &mut IbRows, n: u64, ts: &[u8]) -> String {
        let mut out = Vec::new();
        g.push_statement(&mut out, PREFIX, n, ts);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_statement_holds_the_asked_rows_all_with_its_one_timestamp() {
        let mut g = IbRows::new(1, [10, 20]);
        let r = rows(&statement(&mut g, 50, TS));
        assert_eq!(r.len(), 50);
        assert!(r
            .iter()
            .all(|f| f.len() == 6 && f[0] == "'2026-11-22 12:54:07'"));
        let other = rows(&statement(&mut g, 3, b"2026-11-22 12:54:08"));
        assert!(other.iter().all(|f| f[0] == "'2026-11-22 12:54:08'"));
    }

    #[test]
    fn integer_columns_stay_in_their_domains_and_span_them() {
        let mut g = IbRows::new(2, [10, 20]);
        let r = rows(&statement(&mut g, 50_000, TS));
        for (col, domain) in [(1, 1000), (2, 100_000), (3, 10_000), (4, 500)] {
            let v: Vec<u64> = r.iter().map(|f| f[col].parse().unwrap()).collect();
            assert!(v.iter().all(|&x| x < domain), "column {col}");
            assert!(*v.iter().min().unwrap() < domain / 100, "column {col}");
            assert!(*v.iter().max().unwrap() >= domain * 9 / 10, "column {col}");
        }
    }

    #[test]
    fn data_is_a_base64_slice_then_a_padding_in_the_length_range() {
        let mut g = IbRows::new(3, [10, 20]);
        let mut lengths = std::collections::BTreeSet::new();
        for f in rows(&statement(&mut g, 2000, TS)) {
            let d = f[5].strip_prefix('\'').unwrap().strip_suffix('\'').unwrap();
            let len = d.len() as u32;
            assert!((10..=20).contains(&len), "{d}");
            lengths.insert(len);
            let k = base64_part(len);
            assert!(d[..k].bytes().all(|b| BASE64.contains(&b)), "{d}");
            assert!(d[k..].bytes().all(|b| b == b'a'), "{d}");
            assert!(g.text.windows(k).any(|w| w == &d.as_bytes()[..k]));
        }
        assert_eq!(lengths.len(), 11, "every length in [10, 20] is drawn");
        assert_eq!(
            (base64_part(10), base64_part(20), base64_part(16)),
            (3, 7, 6)
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_rows() {
        let (mut a, mut b) = (IbRows::new(9, [10, 20]), IbRows::new(9, [10, 20]));
        assert_eq!(statement(&mut a, 20, TS), statement(&mut b, 20, TS));
        let mut c = IbRows::new(10, [10, 20]);
        assert_ne!(statement(&mut a, 20, TS), statement(&mut c, 20, TS));
    }
}
