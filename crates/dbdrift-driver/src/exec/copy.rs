// sysbench-shaped rows: k uniform in [1, k_max], c = 10 digit groups, pad = 5, from a
// generator seeded by seed + first_id; as COPY text ("id\tk\tc\tpad\n", `copy_sbtest`) or as
// the VALUES list of a multi-row INSERT ("(id,k,'c','pad'),...", `insert_sbtest`).

use crate::spec::SbtestRowsSpec;
use crate::workload::digits::{push_digit_groups, push_u64};
use crate::workload::rng::Rng;

pub struct SbtestRows {
    rng: Rng,
    next_id: u64,
    last_id: u64,
    k_max: u64,
}

impl SbtestRows {
    pub fn new(seed: u64, spec: &SbtestRowsSpec) -> Self {
        SbtestRows {
            rng: Rng::new(seed.wrapping_add(spec.first_id)),
            next_id: spec.first_id,
            last_id: spec.last_id,
            k_max: spec.k_max,
        }
    }

    /// Appends whole rows until `out` holds at least `limit` bytes or the rows run out;
    /// returns true if rows remain.
    pub fn fill(&mut self, out: &mut Vec<u8>, limit: usize) -> bool {
        while out.len() < limit && self.next_id <= self.last_id {
            self.push_row(out, COPY_TEXT);
        }
        self.next_id <= self.last_id
    }

    /// How many rows of `spec` have been produced so far.
    pub fn inserted(&self, spec: &SbtestRowsSpec) -> u64 {
        self.next_id - spec.first_id
    }

    /// Appends `(id,k,'c','pad')` tuples, comma-separated, until `out` holds at least `limit`
    /// bytes or the rows run out (at least one row per call); returns true if rows remain.
    /// c and pad are digits and '-', so they need no escaping.
    pub fn fill_values(&mut self, out: &mut Vec<u8>, limit: usize) -> bool {
        let mut first = true;
        while (first || out.len() < limit) && self.next_id <= self.last_id {
            if !first {
                out.push(b',');
            }
            first = false;
            self.push_row(out, VALUES_TUPLE);
        }
        self.next_id <= self.last_id
    }

    /// Appends the next row: its four fields with the text `around` them (before id, between
    /// each two fields, after pad).
    #[inline]
    fn push_row(&mut self, out: &mut Vec<u8>, around: [&[u8]; 5]) {
        out.extend_from_slice(around[0]);
        push_u64(out, self.next_id);
        out.extend_from_slice(around[1]);
        push_u64(out, 1 + self.rng.below(self.k_max));
        out.extend_from_slice(around[2]);
        push_digit_groups(out, &mut self.rng, 10);
        out.extend_from_slice(around[3]);
        push_digit_groups(out, &mut self.rng, 5);
        out.extend_from_slice(around[4]);
        self.next_id += 1;
    }
}

/// A COPY text line: tab-separated fields.
const COPY_TEXT: [&[u8]; 5] = [b"", b"\t", b"\t", b"\t", b"\n"];
/// A VALUES tuple: c and pad quoted.
const VALUES_TUPLE: [&[u8]; 5] = [b"(", b",", b",'", b"','", b"')"];

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(first: u64, last: u64) -> SbtestRowsSpec {
        SbtestRowsSpec {
            sql: String::new(),
            first_id: first,
            last_id: last,
            k_max: 100,
        }
    }

    #[test]
    fn rows_have_four_tab_separated_fields_of_sysbench_shape() {
        let mut rows = SbtestRows::new(7, &spec(5, 7));
        let mut out = Vec::new();
        assert!(!rows.fill(&mut out, usize::MAX));
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        for (i, line) in lines.iter().enumerate() {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 4);
            assert_eq!(f[0], (5 + i).to_string());
            let k: u64 = f[1].parse().unwrap();
            assert!((1..=100).contains(&k));
            assert_eq!((f[2].len(), f[3].len()), (119, 59));
        }
    }

    #[test]
    fn same_seed_and_range_give_the_same_rows() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        SbtestRows::new(1, &spec(1, 50)).fill(&mut a, usize::MAX);
        SbtestRows::new(1, &spec(1, 50)).fill(&mut b, usize::MAX);
        assert_eq!(a, b);
    }

    #[test]
    fn values_hold_the_same_rows_as_copy_text() {
        let (mut copy, mut values) = (Vec::new(), Vec::new());
        SbtestRows::new(3, &spec(10, 12)).fill(&mut copy, usize::MAX);
        assert!(!SbtestRows::new(3, &spec(10, 12)).fill_values(&mut values, usize::MAX));
        let as_values: Vec<String> = String::from_utf8(copy)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                format!("({},{},'{}','{}')", f[0], f[1], f[2], f[3])
            })
            .collect();
        assert_eq!(String::from_utf8(values).unwrap(), as_values.join(","));
    }

    #[test]
    fn values_batches_end_on_a_row_and_continue_where_they_stopped() {
        let mut rows = SbtestRows::new(1, &spec(1, 100));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(rows.fill_values(&mut a, 1000));
        assert!(a.len() >= 1000 && a.ends_with(b"')"));
        while rows.fill_values(&mut b, 1000) {}
        let n = |v: &[u8]| v.iter().filter(|&&c| c == b'(').count();
        assert_eq!(n(&a) + n(&b), 100);
    }

    #[test]
    fn fill_stops_at_the_byte_limit_on_a_row_boundary() {
        let mut rows = SbtestRows::new(1, &spec(1, 1000));
        let mut out = Vec::new();
        assert!(rows.fill(&mut out, 1000));
        assert!(out.len() >= 1000 && out.ends_with(b"\n"));
    }
}
