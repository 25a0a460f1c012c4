// The inserter's pacing as pure arithmetic (methodology §2.6 as protocol.md states it): batch
// size, statement count and the intended start of statement k. No clock is read here.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertPlan {
    pub rows_per_client: u64,
    /// Rows per INSERT, lowered to the rate when the rate is smaller.
    pub rows_per_statement: u64,
    /// INSERT statements the client sends: the last one holds the remaining rows.
    pub statements: u64,
    /// Statements per second, None when not rate limited.
    pub per_second: Option<u64>,
}

impl InsertPlan {
    /// `inserts_per_second` 0 means unlimited; `rows_per_statement` must be at least 1.
    pub fn new(rows_per_client: u64, rows_per_statement: u64, inserts_per_second: u64) -> Self {
        let (rows, per_second) = if inserts_per_second == 0 {
            (rows_per_statement, None)
        } else {
            let rows = rows_per_statement.min(inserts_per_second);
            (rows, Some(inserts_per_second.div_ceil(rows).max(1)))
        };
        InsertPlan {
            rows_per_client,
            rows_per_statement: rows,
            statements: rows_per_client.div_ceil(rows),
            per_second,
        }
    }

    /// Rows in statement k (from 0).
    pub fn rows_in(&self, k: u64) -> u64 {
        let before = k * self.rows_per_statement;
        self.rows_per_statement
            .min(self.rows_per_client.saturating_sub(before))
    }

    /// When statement k is intended to start, after the step's t0: k/s seconds. A late
    /// statement starts at once; the schedule is never shifted, so it catches up.
    pub fn intended_offset(&self, k: u64) -> Option<Duration> {
        self.per_second
            .map(|s| Duration::from_nanos((k as u128 * 1_000_000_000 / s as u128) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_sets_statements_per_second() {
        // methodology §2.6: 100/s -> 2, 500/s -> 10, 1000/s -> 20 statements/s of 50 rows.
        for (ips, s) in [(100, 2), (500, 10), (1000, 20), (70, 2), (1, 1)] {
            let p = InsertPlan::new(1000, 50, ips);
            assert_eq!(p.per_second, Some(s), "ips {ips}");
        }
        assert_eq!(InsertPlan::new(1000, 50, 0).per_second, None);
    }

    #[test]
    fn a_batch_larger_than_the_rate_is_lowered_to_it() {
        let p = InsertPlan::new(100, 50, 20);
        assert_eq!(
            (p.rows_per_statement, p.per_second, p.statements),
            (20, Some(1), 5)
        );
        let unlimited = InsertPlan::new(100, 50, 0);
        assert_eq!(unlimited.rows_per_statement, 50);
    }

    #[test]
    fn the_last_statement_holds_the_remaining_rows() {
        let p = InsertPlan::new(120, 50, 0);
        assert_eq!(p.statements, 3);
        assert_eq!((p.rows_in(0), p.rows_in(1), p.rows_in(2)), (50, 50, 20));
        assert_eq!(InsertPlan::new(0, 50, 0).statements, 0);
    }

    #[test]
    fn statement_k_is_intended_at_k_over_s() {
        let p = InsertPlan::new(20_000, 50, 100);
        assert_eq!(p.intended_offset(0), Some(Duration::ZERO));
        assert_eq!(p.intended_offset(1), Some(Duration::from_millis(500)));
        assert_eq!(p.intended_offset(7), Some(Duration::from_millis(3500)));
        let p = InsertPlan::new(20_000, 50, 1000);
        assert_eq!(p.intended_offset(3), Some(Duration::from_millis(150)));
        let p = InsertPlan::new(20_000, 50, 150); // s = 3: thirds of a second
        assert_eq!(
            p.intended_offset(1),
            Some(Duration::from_nanos(333_333_333))
        );
        assert_eq!(p.intended_offset(3), Some(Duration::from_secs(1)));
        assert_eq!(InsertPlan::new(10, 5, 0).intended_offset(4), None);
    }
}
