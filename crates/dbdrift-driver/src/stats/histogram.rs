// Log-linear latency histogram over nanoseconds, exactly as docs/protocol.md defines it:
// index math, bucket bounds, merge by adding counts, percentile = upper bound of the bucket
// holding rank ceil(q * count), capped at the exact max. Exact min and max ride along.

use serde::Serialize;

/// Highest index is for v near 2^64: 16 + (63 - 4) * 16 + 15 = 975.
pub const BUCKETS: usize = 976;

/// Bucket index of a latency of `v` ns; 0 is treated as 1 (the scheme starts at 1 ns).
#[inline]
pub fn index(v: u64) -> usize {
    let v = v.max(1);
    let e = 63 - v.leading_zeros() as u64;
    if e < 4 {
        v as usize
    } else {
        (16 + (e - 4) * 16 + ((v >> (e - 4)) & 15)) as usize
    }
}

/// Inclusive lower bound in ns of bucket `i` (for i up to BUCKETS, as u128 since lower(976) = 2^64).
pub fn lower(i: usize) -> u128 {
    if i < 16 {
        i as u128
    } else {
        let e = 4 + (i - 16) / 16;
        let m = ((i - 16) % 16) as u128;
        (16 + m) << (e - 4)
    }
}

pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
        }
    }

    /// The mean in ns of what was recorded; None when empty.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    #[inline]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.counts[index(ns)] += n;
        self.count += n;
        self.sum_ns += ns as u128 * n as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += *b;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn clear(&mut self) {
        if self.count > 0 {
            self.counts.fill(0);
        }
        self.count = 0;
        self.sum_ns = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
    }

    /// Upper bound in ns of the bucket holding rank ceil(pct/100 * count), or the exact max
    /// when that is smaller; None when empty. The rank is computed in integers so 0.95 * 20
    /// is 19, not 19.000000000000004.
    ///
    /// The rank's value lies in its bucket and is at most the max, so the smaller bound holds
    /// it; the bucket's own bound would put a p99 in the max's bucket up to 1/16 above the max
    /// (37.75 ms over 36.19 ms). A bucket's upper bound exceeds every value in it, so no
    /// percentile is below the min either.
    pub fn percentile_ns(&self, pct: u64) -> Option<u128> {
        if self.count == 0 {
            return None;
        }
        let rank = (pct as u128 * self.count as u128).div_ceil(100).max(1) as u64;
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(lower(i + 1).min(self.max_ns as u128));
            }
        }
        None
    }

    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u128| ns as f64 / 1000.0;
        let empty = self.count == 0;
        LatencySummary {
            count: self.count,
            min: (!empty).then(|| us(self.min_ns as u128)),
            max: (!empty).then(|| us(self.max_ns as u128)),
            p50: self.percentile_ns(50).map(us),
            p95: self.percentile_ns(95).map(us),
            p99: self.percentile_ns(99).map(us),
            buckets: self
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| (i, c))
                .collect(),
        }
    }
}

/// The `latency_us` object of interval and summary lines.
#[derive(Serialize, Debug, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub buckets: Vec<(usize, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_index_to_themselves() {
        for v in 1..16 {
            assert_eq!(index(v), v as usize);
        }
    }

    #[test]
    fn index_follows_the_documented_formula() {
        // v = 50,000: e = 15, (v >> 11) & 15 = 24 & 15 = 8 -> 16 + 11*16 + 8 = 200.
        assert_eq!(index(50_000), 200);
        assert_eq!(index(16), 16);
        assert_eq!(index(31), 31);
        assert_eq!(index(32), 32);
        assert_eq!(index(33), 32);
        assert_eq!(index(u64::MAX), 975);
    }

    #[test]
    fn every_value_lies_within_its_bucket_bounds() {
        let mut v = 1u64;
        while v < u64::MAX / 3 {
            for w in [v, v + 1, v * 2 - 1] {
                let i = index(w);
                assert!(
                    lower(i) <= w as u128 && (w as u128) < lower(i + 1),
                    "v={w} i={i}"
                );
            }
            v = v * 3 + 1;
        }
    }

    #[test]
    fn lower_bound_is_monotonic_and_relative_width_at_most_one_sixteenth() {
        for i in 16..BUCKETS {
            let (lo, hi) = (lower(i), lower(i + 1));
            assert!(hi > lo);
            assert!((hi - lo) * 16 <= lo, "bucket {i}");
        }
    }

    #[test]
    fn percentile_is_upper_bound_of_bucket_holding_ceil_rank() {
        let mut h = Histogram::new();
        // 19 values of 10 ns, one of 1000 and one of 5000 ns: p95 rank = ceil(0.95 * 21) = 20
        // -> the bucket of 1000 ns, which ends (1024 ns) below the max; p50 rank 11 -> 10 ns.
        h.record_n(10, 19);
        h.record(1000);
        h.record(5000);
        assert_eq!(h.percentile_ns(95), Some(lower(index(1000) + 1)));
        assert_eq!(h.percentile_ns(50), Some(11));
    }

    #[test]
    fn a_percentile_in_the_bucket_of_the_max_is_the_max() {
        let mut h = Histogram::new();
        // 36.19 ms lies in [35.65, 37.75) ms: p99 is the max, not the bucket's 37.75 ms.
        h.record_n(1_000_000, 50);
        h.record(36_190_000);
        assert_eq!(lower(index(36_190_000) + 1), 37_748_736);
        assert_eq!(h.percentile_ns(99), Some(36_190_000));
        let s = h.summary();
        assert!(s.p50 <= s.p95 && s.p95 <= s.p99 && s.p99 <= s.max);
    }

    #[test]
    fn empty_histogram_has_null_percentiles_min_and_max() {
        let s = Histogram::new().summary();
        assert_eq!(s.count, 0);
        assert_eq!(
            (s.min, s.max, s.p50, s.p95, s.p99),
            (None, None, None, None, None)
        );
        assert!(s.buckets.is_empty());
    }

    #[test]
    fn merge_adds_counts_and_keeps_exact_extremes() {
        let (mut a, mut b) = (Histogram::new(), Histogram::new());
        a.record(50_000);
        b.record(50_001);
        b.record(7);
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.count, 3);
        assert_eq!(s.min, Some(0.007));
        assert_eq!(s.max, Some(50.001));
        assert_eq!(s.buckets, vec![(7, 1), (200, 2)]);
        assert_eq!(s.p50, Some(50.001)); // the bucket ends at 51.2 µs, past the max
    }
}
