// Counters of the `tpcc` run and the JSON lines that report them: per-interval counts over
// all VUs, and per transaction type over the measured window (count, rollbacks, errors,
// latency histogram); with analytics, the same for the analytical queries. NOPM, TPM and
// QPH are computed here and nowhere else.

use crate::emit::round_s;
use crate::stats::histogram::Histogram;
use crate::workloads::tpcc::mix::TxKind;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

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

/// One analytical query over the measured window: the latency of each completed execution,
/// and the executions cut by the cancel at the end of the run.
#[derive(Default)]
pub struct QueryStats {
    pub latency: Histogram,
    pub cancelled: u64,
}

impl QueryStats {
    pub fn merge(&mut self, o: &QueryStats) {
        self.latency.merge(&o.latency);
        self.cancelled += o.cancelled;
    }
}

/// `n` per `per` seconds over `seconds`, to two decimals; 0 for an empty span.
fn rate(n: u64, seconds: f64, per: f64) -> f64 {
    if seconds > 0.0 {
        (n as f64 * per / seconds * 100.0).round() / 100.0
    } else {
        0.0
    }
}

fn per_minute(n: u64, seconds: f64) -> f64 {
    rate(n, seconds, 60.0)
}

/// Nanoseconds as milliseconds, rounded to the microsecond.
fn ms(ns: f64) -> f64 {
    (ns / 1e3).round() / 1e3
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
    /// Analytical queries completed in the interval; only with analytics.
    #[serde(skip_serializing_if = "Option::is_none")]
    queries: Option<u64>,
}

impl IntervalLine {
    pub fn new(
        phase: &'static str,
        t_sec: f64,
        i_sec: f64,
        c: &Counts,
        queries: Option<u64>,
    ) -> Self {
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
            queries,
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

#[derive(Serialize, Debug, PartialEq)]
pub struct QuerySummary {
    count: u64,
    mean_ms: Option<f64>,
    p50_ms: Option<f64>,
    p95_ms: Option<f64>,
    max_ms: Option<f64>,
    cancelled: u64,
}

impl QuerySummary {
    fn new(s: &QueryStats) -> Self {
        let h = &s.latency;
        QuerySummary {
            count: h.count,
            mean_ms: h.mean_ns().map(ms),
            p50_ms: h.percentile_ns(50).map(|ns| ms(ns as f64)),
            p95_ms: h.percentile_ns(95).map(|ns| ms(ns as f64)),
            max_ms: (h.count > 0).then(|| ms(h.max_ns as f64)),
            cancelled: s.cancelled,
        }
    }
}

/// `by_query`: an object keyed by query name, in the order of the spec.
#[derive(Debug)]
pub struct ByQuery(Vec<(String, QuerySummary)>);

impl Serialize for ByQuery {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, q) in &self.0 {
            map.serialize_entry(name, q)?;
        }
        map.end()
    }
}

/// The summary's `analytics` object: queries completed in the measured window, per hour
/// and per query, and those cancelled at its end.
#[derive(Serialize, Debug)]
pub struct AnalyticsSummary {
    streams: u32,
    completed: u64,
    qph: f64,
    cancelled: u64,
    by_query: ByQuery,
}

impl AnalyticsSummary {
    /// `names[q]` is the name of the query whose counters are `by_query[q]`.
    pub fn new(streams: u32, names: &[&str], by_query: &[QueryStats], elapsed_s: f64) -> Self {
        let completed = by_query.iter().map(|q| q.latency.count).sum();
        AnalyticsSummary {
            streams,
            completed,
            qph: rate(completed, elapsed_s, 3600.0),
            cancelled: by_query.iter().map(|q| q.cancelled).sum(),
            by_query: ByQuery(
                names
                    .iter()
                    .zip(by_query)
                    .map(|(n, q)| (n.to_string(), QuerySummary::new(q)))
                    .collect(),
            ),
        }
    }
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
    #[serde(skip_serializing_if = "Option::is_none")]
    analytics: Option<AnalyticsSummary>,
}

impl RunSummary {
    pub fn new(
        elapsed_s: f64,
        by_type: &[TypeStats; 5],
        interrupted: bool,
        errors_sample: Vec<String>,
        analytics: Option<AnalyticsSummary>,
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
            analytics,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn nopm_counts_committed_new_orders_and_tpm_adds_rollbacks() {
        let c = Counts {
            tx: [9, 8, 1, 1, 1],
            rollbacks: 1,
            errors: 2,
        };
        let line = IntervalLine::new("measure", 12.0, 2.0, &c, None);
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
        let s = RunSummary::new(60.0, &by, false, vec![], None);
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

    #[test]
    fn without_analytics_the_lines_have_no_analytics_keys() {
        let line = serde_json::to_value(IntervalLine::new(
            "measure",
            1.0,
            1.0,
            &Counts::default(),
            None,
        ))
        .unwrap();
        assert!(line.get("queries").is_none());
        let by: [TypeStats; 5] = Default::default();
        let s = serde_json::to_value(RunSummary::new(1.0, &by, false, vec![], None)).unwrap();
        assert!(s.get("analytics").is_none());
        let line = serde_json::to_value(IntervalLine::new(
            "measure",
            1.0,
            1.0,
            &Counts::default(),
            Some(3),
        ))
        .unwrap();
        assert_eq!(line["queries"], 3);
    }

    #[test]
    fn the_analytics_summary_lists_every_query_in_spec_order() {
        let mut q: Vec<QueryStats> = (0..3).map(|_| QueryStats::default()).collect();
        q[0].latency.record(1_500_000);
        q[0].latency.record(2_500_000);
        q[0].cancelled = 1;
        q[2].cancelled = 2;
        let a = AnalyticsSummary::new(2, &["Q9", "Q1", "Q5"], &q, 60.0);
        let by: [TypeStats; 5] = Default::default();
        let text =
            serde_json::to_string(&RunSummary::new(60.0, &by, false, vec![], Some(a))).unwrap();
        // by_query keeps the spec's order (serde_json's Value would sort the keys).
        let (q9, q1, q5) = (
            text.find("\"Q9\""),
            text.find("\"Q1\""),
            text.find("\"Q5\""),
        );
        assert!(q9 < q1 && q1 < q5, "{text}");
        let s: Value = serde_json::from_str(&text).unwrap();
        let a = &s["analytics"];
        assert_eq!(
            [&a["streams"], &a["completed"], &a["qph"], &a["cancelled"]],
            [&json!(2), &json!(2), &json!(120.0), &json!(3)]
        );
        assert_eq!(a["by_query"].as_object().unwrap().len(), 3);
        assert_eq!(
            a["by_query"]["Q9"],
            json!({"count": 2, "mean_ms": 2.0, "p50_ms": 1.507, "p95_ms": 2.5, "max_ms": 2.5, "cancelled": 1})
        );
        assert_eq!(
            a["by_query"]["Q1"],
            json!({"count": 0, "mean_ms": null, "p50_ms": null, "p95_ms": null, "max_ms": null, "cancelled": 0})
        );
        assert_eq!(a["by_query"]["Q5"]["cancelled"], 2);
    }

    #[test]
    fn qph_is_zero_over_an_empty_window() {
        let mut q = vec![QueryStats::default()];
        q[0].latency.record(1_000);
        let a = AnalyticsSummary::new(1, &["Q1"], &q, 0.0);
        assert_eq!((a.completed, a.qph), (1, 0.0));
    }
}
