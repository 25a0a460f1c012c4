// sysbench-shaped rows for `copy_sbtest`: "id\tk\tc\tpad\n" with k uniform in [1, k_max],
// c = 10 digit groups, pad = 5, from a generator seeded by seed + first_id.

use crate::spec::CopySbtestSpec;
use crate::workload::digits::{push_digit_groups, push_u64};
use crate::workload::rng::Rng;

pub struct SbtestRows {
    rng: Rng,
    next_id: u64,
    last_id: u64,
    k_max: u64,
}

impl SbtestRows {
    pub fn new(seed: u64, spec: &CopySbtestSpec) -> Self {
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
            push_u64(out, self.next_id);
            out.push(b'\t');
            push_u64(out, 1 + self.rng.below(self.k_max));
            out.push(b'\t');
            push_digit_groups(out, &mut self.rng, 10);
            out.push(b'\t');
            push_digit_groups(out, &mut self.rng, 5);
            out.push(b'\n');
            self.next_id += 1;
        }
        self.next_id <= self.last_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(first: u64, last: u64) -> CopySbtestSpec {
        CopySbtestSpec {
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
    fn fill_stops_at_the_byte_limit_on_a_row_boundary() {
        let mut rows = SbtestRows::new(1, &spec(1, 1000));
        let mut out = Vec::new();
        assert!(rows.fill(&mut out, 1000));
        assert!(out.len() >= 1000 && out.ends_with(b"\n"));
    }
}
