// Counters of an `ibench` step and the lines that report them: per-client totals, interval
// maxima and the 10-bucket response-time histograms of methodology §2.8. Threads add to their
// client's ClientStats; the reporter turns snapshots into `interval` and `summary` lines.

use serde::Serialize;

/// Inclusive upper bounds (ns) of the first nine buckets: ≤256µs, ≤1ms, ≤4ms, ≤16ms, ≤64ms,
/// ≤256ms, ≤1s, ≤4s, ≤16s; the tenth holds everything above 16 s.
pub const BUCKET_UPPER_NS: [u64; 9] = [
    256_000,
    1_000_000,
    4_000_000,
    16_000_000,
    64_000_000,
    256_000_000,
    1_000_000_000,
    4_000_000_000,
    16_000_000_000,
];

/// Rounds nanoseconds to whole microseconds.
pub fn ns_to_us(ns: u64) -> u64 {
    ns.saturating_add(500) / 1000
}

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtHistogram {
    pub counts: [u64; 10],
    pub max_ns: u64,
}

impl RtHistogram {
    pub fn bucket(ns: u64) -> usize {
        BUCKET_UPPER_NS
            .iter()
            .position(|&upper| ns <= upper)
            .unwrap_or(BUCKET_UPPER_NS.len())
    }

    pub fn record(&mut self, ns: u64) {
        self.counts[Self::bucket(ns)] += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn merge(&mut self, o: &RtHistogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts) {
            *a += b;
        }
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    pub fn line(&self) -> HistogramLine {
        HistogramLine {
            counts: self.counts,
            max_us: ns_to_us(self.max_ns),
        }
    }
}

/// One operation kind (insert, delete or query) of one client.
#[derive(Default, Clone, Copy, Debug)]
pub struct OpCounts {
    /// Rows for inserts and deletes, statements for queries; since the step started.
    pub done: u64,
    pub retries: u64,
    /// Largest response time completed in the open interval.
    pub interval_max_ns: u64,
    /// Of `done`, what completed after the open interval ended (the reporter wakes a little
    /// after each boundary) and its largest response time: they belong to the next interval.
    pub ahead: u64,
    pub ahead_max_ns: u64,
    pub hist: RtHistogram,
}

impl OpCounts {
    fn record(&mut self, units: u64, ns: u64, ahead: bool) {
        self.done += units;
        if ahead {
            self.ahead += units;
            self.ahead_max_ns = self.ahead_max_ns.max(ns);
        } else {
            self.interval_max_ns = self.interval_max_ns.max(ns);
        }
        self.hist.record(ns);
    }

    /// The counts as of the end of the open interval; self moves on to the next one.
    fn close_interval(&mut self) -> OpCounts {
        let mut snap = *self;
        snap.done -= self.ahead;
        (snap.ahead, snap.ahead_max_ns) = (0, 0);
        self.interval_max_ns = self.ahead_max_ns;
        (self.ahead, self.ahead_max_ns) = (0, 0);
        snap
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Insert,
    Delete,
    Query,
}

#[derive(Default, Clone, Copy, Debug)]
pub struct ClientStats {
    pub insert: OpCounts,
    pub delete: OpCounts,
    pub query: OpCounts,
    /// Index of the interval the reporter has not closed yet (interval i covers
    /// [i, i + 1) × interval_s after the step start).
    pub open: u64,
    /// Seconds from the step start to when the client's last thread ended.
    pub end_s: Option<f64>,
}

impl ClientStats {
    /// Counts one completed statement in the interval `interval` it completed in.
    pub fn record(&mut self, op: Op, units: u64, ns: u64, retries: u64, interval: u64) {
        let ahead = interval > self.open;
        let counts = match op {
            Op::Insert => &mut self.insert,
            Op::Delete => &mut self.delete,
            Op::Query => &mut self.query,
        };
        counts.record(units, ns, ahead);
        counts.retries += retries;
    }

    /// The counters as of the end of the open interval, for its `interval` lines; the
    /// completions already past it start the next interval.
    pub fn close_interval(&mut self) -> ClientStats {
        let snap = ClientStats {
            insert: self.insert.close_interval(),
            delete: self.delete.close_interval(),
            query: self.query.close_interval(),
            open: self.open,
            end_s: self.end_s,
        };
        self.open += 1;
        snap
    }
}

/// Every line a step prints: the variant's name, lowercased, goes first as the line's `type`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum IbLine<'a> {
    Start(&'a IbStartLine<'a>),
    Interval(&'a IbIntervalLine),
    Summary(&'a IbSummaryLine<'a>),
}

impl IbLine<'_> {
    pub fn emit(&self) {
        crate::emit::line(self);
    }
}

#[derive(Serialize)]
pub struct IbStartLine<'a> {
    pub step: &'a str,
    pub clients: u32,
    pub server_version: &'a str,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct IbIntervalLine {
    pub client: u32,
    pub i_sec: f64,
    pub t_sec: f64,
    pub i_ips: f64,
    pub t_ips: f64,
    pub i_dps: f64,
    pub t_dps: f64,
    pub i_qps: f64,
    pub t_qps: f64,
    pub max_i_us: u64,
    pub max_d_us: u64,
    pub max_q_us: u64,
    pub t_ins: u64,
    pub t_del: u64,
    pub t_query: u64,
    pub retry_i: u64,
    pub retry_d: u64,
    pub retry_q: u64,
}

/// A rate per second rounded to 0.1, 0 for an empty stretch of time.
fn rate(units: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        (units as f64 / secs * 10.0).round() / 10.0
    } else {
        0.0
    }
}

impl IbIntervalLine {
    /// The §2.8 columns of `client` for the interval from the snapshot `prev` (taken at
    /// `t_sec - i_sec`) to `cur` (taken at `t_sec`); retries are totals like `t_*`.
    pub fn new(client: u32, i_sec: f64, t_sec: f64, prev: &ClientStats, cur: &ClientStats) -> Self {
        let (i, d, q) = (&cur.insert, &cur.delete, &cur.query);
        IbIntervalLine {
            client,
            i_sec: crate::emit::round_s(i_sec),
            t_sec: crate::emit::round_s(t_sec),
            i_ips: rate(i.done - prev.insert.done, i_sec),
            t_ips: rate(i.done, t_sec),
            i_dps: rate(d.done - prev.delete.done, i_sec),
            t_dps: rate(d.done, t_sec),
            i_qps: rate(q.done - prev.query.done, i_sec),
            t_qps: rate(q.done, t_sec),
            max_i_us: ns_to_us(i.interval_max_ns),
            max_d_us: ns_to_us(d.interval_max_ns),
            max_q_us: ns_to_us(q.interval_max_ns),
            t_ins: i.done,
            t_del: d.done,
            t_query: q.done,
            retry_i: i.retries,
            retry_d: d.retries,
            retry_q: q.retries,
        }
    }
}

#[derive(Serialize, Debug, PartialEq)]
pub struct HistogramLine {
    pub counts: [u64; 10],
    pub max_us: u64,
}

#[derive(Serialize)]
pub struct Retries {
    pub insert: u64,
    pub delete: u64,
    pub query: u64,
}

#[derive(Serialize)]
pub struct Histograms {
    pub insert: HistogramLine,
    pub delete: HistogramLine,
    pub query: HistogramLine,
}

#[derive(Serialize)]
pub struct ClientTotals {
    pub client: u32,
    pub inserted: u64,
    pub deleted: u64,
    pub queries: u64,
    pub elapsed_s: f64,
}

#[derive(Serialize)]
pub struct IbSummaryLine<'a> {
    pub step: &'a str,
    pub elapsed_s: f64,
    pub inserted: u64,
    pub deleted: u64,
    pub queries: u64,
    pub retries: Retries,
    pub histograms: Histograms,
    pub clients: Vec<ClientTotals>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl<'a> IbSummaryLine<'a> {
    /// Totals of every client; a client still running (interrupted) counts until `elapsed_s`.
    pub fn new(step: &'a str, elapsed_s: f64, clients: &[ClientStats], interrupted: bool) -> Self {
        let mut all = ClientStats::default();
        let mut totals = Vec::with_capacity(clients.len());
        for (n, c) in clients.iter().enumerate() {
            for (a, b) in [
                (&mut all.insert, &c.insert),
                (&mut all.delete, &c.delete),
                (&mut all.query, &c.query),
            ] {
                a.done += b.done;
                a.retries += b.retries;
                a.hist.merge(&b.hist);
            }
            totals.push(ClientTotals {
                client: n as u32 + 1,
                inserted: c.insert.done,
                deleted: c.delete.done,
                queries: c.query.done,
                elapsed_s: crate::emit::round_s(c.end_s.unwrap_or(elapsed_s)),
            });
        }
        IbSummaryLine {
            step,
            elapsed_s: crate::emit::round_s(elapsed_s),
            inserted: all.insert.done,
            deleted: all.delete.done,
            queries: all.query.done,
            retries: Retries {
                insert: all.insert.retries,
                delete: all.delete.retries,
                query: all.query.retries,
            },
            histograms: Histograms {
                insert: all.insert.hist.line(),
                delete: all.delete.hist.line(),
                query: all.query.hist.line(),
            },
            clients: totals,
            interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_bounds_are_inclusive() {
        assert_eq!(RtHistogram::bucket(0), 0);
        assert_eq!(
            RtHistogram::bucket(256_000),
            0,
            "256 µs is in the first bucket"
        );
        assert_eq!(RtHistogram::bucket(256_001), 1);
        assert_eq!(RtHistogram::bucket(1_000_000), 1);
        assert_eq!(RtHistogram::bucket(1_000_001), 2);
        assert_eq!(RtHistogram::bucket(4_000_000_000), 7);
        assert_eq!(RtHistogram::bucket(16_000_000_000), 8);
        assert_eq!(RtHistogram::bucket(16_000_000_001), 9);
        assert_eq!(RtHistogram::bucket(u64::MAX), 9);
    }

    #[test]
    fn histograms_merge_counts_and_keep_the_max() {
        let (mut a, mut b) = (RtHistogram::default(), RtHistogram::default());
        a.record(100_000);
        a.record(2_000_000);
        b.record(5_210_400);
        a.merge(&b);
        assert_eq!(
            a.line(),
            HistogramLine {
                counts: [1, 0, 1, 1, 0, 0, 0, 0, 0, 0],
                max_us: 5210
            }
        );
    }

    fn stats(ins: u64, del: u64, q: u64) -> ClientStats {
        let mut s = ClientStats::default();
        s.insert.done = ins;
        s.delete.done = del;
        s.query.done = q;
        s
    }

    #[test]
    fn interval_rates_use_the_interval_and_total_rates_the_whole_step() {
        let prev = stats(100, 100, 800);
        let mut cur = stats(300, 250, 1612);
        cur.insert.interval_max_ns = 2_140_000;
        cur.query.retries = 3;
        let l = IbIntervalLine::new(1, 2.0, 4.0, &prev, &cur);
        assert_eq!((l.i_ips, l.t_ips), (100.0, 75.0));
        assert_eq!((l.i_dps, l.t_dps), (75.0, 62.5));
        assert_eq!((l.i_qps, l.t_qps), (406.0, 403.0));
        assert_eq!((l.max_i_us, l.max_d_us, l.max_q_us), (2140, 0, 0));
        assert_eq!((l.t_ins, l.t_del, l.t_query), (300, 250, 1612));
        assert_eq!((l.retry_i, l.retry_q), (0, 3));
    }

    #[test]
    fn closing_an_interval_resets_only_its_maxima() {
        let mut s = ClientStats::default();
        s.record(Op::Insert, 50, 3_000_000, 0, 0);
        s.record(Op::Query, 1, 700_000, 2, 0);
        let first = s.close_interval();
        assert_eq!(first.insert.interval_max_ns, 3_000_000);
        let second = s.close_interval();
        assert_eq!(
            (second.insert.interval_max_ns, second.query.interval_max_ns),
            (0, 0)
        );
        assert_eq!(
            (second.insert.done, second.insert.hist.max_ns),
            (50, 3_000_000)
        );
        assert_eq!((second.open, s.open), (1, 2));
        let l = IbIntervalLine::new(1, 1.0, 2.0, &first, &second);
        assert_eq!((l.i_ips, l.max_i_us, l.t_ins, l.retry_q), (0.0, 0, 50, 2));
    }

    #[test]
    fn what_completes_after_the_boundary_counts_in_the_next_interval() {
        // A statement intended at t = 1.0 s finishes at 1.002 s, before the reporter wakes.
        let mut s = ClientStats::default();
        s.record(Op::Insert, 50, 1_000_000, 0, 0);
        s.record(Op::Insert, 50, 1_000_000, 0, 0);
        s.record(Op::Insert, 50, 2_000_000, 0, 1);
        let first = s.close_interval();
        assert_eq!(
            (first.insert.done, first.insert.interval_max_ns),
            (100, 1_000_000)
        );
        s.record(Op::Insert, 50, 1_500_000, 0, 1);
        let second = s.close_interval();
        assert_eq!(
            (second.insert.done, second.insert.interval_max_ns),
            (200, 2_000_000)
        );
        let l = IbIntervalLine::new(1, 1.0, 2.0, &first, &second);
        assert_eq!((l.i_ips, l.t_ips, l.max_i_us), (100.0, 100.0, 2000));
        assert_eq!(s.insert.done, 200, "the running totals keep everything");
    }

    #[test]
    fn the_summary_adds_clients_and_names_each() {
        let mut a = stats(20, 20, 81);
        a.end_s = Some(200.3);
        a.insert.hist.record(300_000);
        let b = stats(20, 19, 80);
        let s = IbSummaryLine::new("qr100", 200.4, &[a, b], false);
        assert_eq!((s.inserted, s.deleted, s.queries), (40, 39, 161));
        assert_eq!(s.clients[1].client, 2);
        assert_eq!(
            (s.clients[0].elapsed_s, s.clients[1].elapsed_s),
            (200.3, 200.4)
        );
        assert_eq!(s.histograms.insert.counts[1], 1);
        let text = serde_json::to_string(&IbLine::Summary(&s)).unwrap();
        assert!(!text.contains("interrupted"));
        assert!(
            text.starts_with(r#"{"type":"summary","step":"qr100","elapsed_s":200.4,"inserted":40"#)
        );
    }
}
