// Counters of the `tpcc` run and the JSON lines that report them: per-interval counts over
// all VUs, and per transaction type over the measured window (count, rollbacks, errors,
// latency histogram). NOPM and TPM are computed here and nowhere else.

use crate::emit::round_s;
use crate::stats::histogram::Histogram;
use crate::workloads::tpcc::mix::TxKind;
use serde::Serialize;

/// Completions in one interval: committed transactions per type, new-order rollbacks and
/// transactions abandoned after a retryable error.
#[derive(Default, Clone, Copy, Debug, PartialEq)]
pub struct Counts {
    pub tx: [u64; 5],
    pub rollbacks: u64,
    pub errors: u64,
}

impl Counts {
    pub fn merge(&mut self, o: &Counts) {
        for (a, b) in self.tx.iter_mut().zip(o.tx.iter()) {
            *a += b;
        }
        self.rollbacks += o.rollbacks;
        self.errors += o.errors;
    }

    /// Completed transactions, rollbacks included (TPM's numerator).
    pub fn completed(&self) -> u64 {
        self.tx.iter().sum::<u64>() + self.rollbacks
    }
}

/// One type over the measured window. The histogram holds every completed transaction of
/// the type (rollbacks included); abandoned ones are only counted in `errors`.
#[derive(Default)]
pub struct TypeStats {
    pub count: u64,
    pub rollbacks: u64,
    pub errors: u64,
    pub latency: Histogram,
}

impl TypeStats {
    /// Ok(rolled_back) for a completed transaction, Err for an abandoned one.
    pub fn record(&mut self, outcome: Result<bool, ()>, ns: u64) {
        match outcome {
            Ok(false) => self.count += 1,
            Ok(true) => self.rollbacks += 1,
            Err(()) => {
                self.errors += 1;
                return;
            }
        }
        self.latency.record(ns);
    }

    pub fn merge(&mut self, o: &TypeStats) {
        self.count += o.count;
        self.rollbacks += o.rollbacks;
        self.errors += o.errors;
        self.latency.merge(&o.latency);
    }
}

fn per_minute(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        (n as f64 * 60.0 / seconds * 100.0).round() / 100.0
    } else {
        0.0
    }
}

#[derive(Serialize)]
pub struct PhaseLine {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    t_sec: f64,
}

impl PhaseLine {
    pub fn new(phase: &'static str, t_sec: f64) -> Self {
        PhaseLine {
            kind: "phase",
            phase,
            t_sec: round_s(t_sec),
        }
    }
}

#[derive(Serialize, Debug, PartialEq)]
pub struct TxCounts {
    new_order: u64,
    payment: u64,
    order_status: u64,
    delivery: u64,
    stock_level: u64,
}

impl TxCounts {
    fn new(tx: &[u64; 5]) -> Self {
        let at = |k: TxKind| tx[k.index()];
        TxCounts {
            new_order: at(TxKind::NewOrder),
            payment: at(TxKind::Payment),
            order_status: at(TxKind::OrderStatus),
            delivery: at(TxKind::Delivery),
            stock_level: at(TxKind::StockLevel),
        }
    }
}

#[derive(Serialize)]
pub struct IntervalLine {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    t_sec: f64,
    i_sec: f64,
    tx: TxCounts,
    rollbacks: u64,
    errors: u64,
    nopm: f64,
    tpm: f64,
}

impl IntervalLine {
    pub fn new(phase: &'static str, t_sec: f64, i_sec: f64, c: &Counts) -> Self {
        IntervalLine {
            kind: "interval",
            phase,
            t_sec: round_s(t_sec),
            i_sec: round_s(i_sec),
            tx: TxCounts::new(&c.tx),
            rollbacks: c.rollbacks,
            errors: c.errors,
            nopm: per_minute(c.tx[TxKind::NewOrder.index()], i_sec),
            tpm: per_minute(c.completed(), i_sec),
        }
    }
}

#[derive(Serialize, Debug)]
pub struct TypeSummary {
    count: u64,
    rollbacks: u64,
    errors: u64,
    histogram: Vec<(usize, u64)>,
    p50_us: Option<f64>,
    p95_us: Option<f64>,
    p99_us: Option<f64>,
    max_us: Option<f64>,
}

impl TypeSummary {
    fn new(s: &TypeStats) -> Self {
        let h = &s.latency;
        let us = |ns: u128| ns as f64 / 1000.0;
        let sum = h.summary();
        TypeSummary {
            count: s.count,
            rollbacks: s.rollbacks,
            errors: s.errors,
            histogram: sum.buckets,
            p50_us: h.percentile_ns(50).map(us),
            p95_us: h.percentile_ns(95).map(us),
            p99_us: h.percentile_ns(99).map(us),
            max_us: (h.count > 0).then(|| us(h.max_ns as u128)),
        }
    }
}

#[derive(Serialize)]
pub struct ByType {
    new_order: TypeSummary,
    payment: TypeSummary,
    order_status: TypeSummary,
    delivery: TypeSummary,
    stock_level: TypeSummary,
}

#[derive(Serialize)]
pub struct RunSummary {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    elapsed_s: f64,
    new_orders: u64,
    transactions: u64,
    nopm: f64,
    tpm: f64,
    interrupted: bool,
    by_type: ByType,
    errors_sample: Vec<String>,
}

impl RunSummary {
    pub fn new(
        elapsed_s: f64,
        by_type: &[TypeStats; 5],
        interrupted: bool,
        errors_sample: Vec<String>,
    ) -> Self {
        let t = |k: TxKind| TypeSummary::new(&by_type[k.index()]);
        let new_orders = by_type[TxKind::NewOrder.index()].count;
        let transactions = by_type.iter().map(|s| s.count + s.rollbacks).sum();
        RunSummary {
            kind: "summary",
            phase: "run",
            elapsed_s: round_s(elapsed_s),
            new_orders,
            transactions,
            nopm: per_minute(new_orders, elapsed_s),
            tpm: per_minute(transactions, elapsed_s),
            interrupted,
            by_type: ByType {
                new_order: t(TxKind::NewOrder),
                payment: t(TxKind::Payment),
                order_status: t(TxKind::OrderStatus),
                delivery: t(TxKind::Delivery),
                stock_level: t(TxKind::StockLevel),
            },
            errors_sample,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nopm_counts_committed_new_orders_and_tpm_adds_rollbacks() {
        let c = Counts {
            tx: [9, 8, 1, 1, 1],
            rollbacks: 1,
            errors: 2,
        };
        let line = IntervalLine::new("measure", 12.0, 2.0, &c);
        assert_eq!((line.nopm, line.tpm), (270.0, 630.0));
        assert_eq!(line.tx.new_order, 9);
    }

    #[test]
    fn the_summary_counts_rollbacks_as_transactions_but_not_as_new_orders() {
        let mut by: [TypeStats; 5] = Default::default();
        by[0].record(Ok(false), 1_000);
        by[0].record(Ok(true), 2_000);
        by[0].record(Err(()), 3_000);
        by[1].record(Ok(false), 4_000);
        let s = RunSummary::new(60.0, &by, false, vec![]);
        assert_eq!((s.new_orders, s.transactions), (1, 3));
        assert_eq!((s.nopm, s.tpm), (1.0, 3.0));
        assert_eq!(s.by_type.new_order.errors, 1);
        assert_eq!(
            s.by_type
                .new_order
                .histogram
                .iter()
                .map(|b| b.1)
                .sum::<u64>(),
            2
        );
        assert_eq!(s.by_type.delivery.p50_us, None);
    }
}
