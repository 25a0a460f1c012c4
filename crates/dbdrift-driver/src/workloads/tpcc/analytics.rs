// Analytical streams of the `run` phase (CH-benCHmark style): with `analytics` in the spec,
// each stream is a thread with its own connection that runs the spec's queries back to back,
// each stream from its own place in the list, beside the VUs and on the same interval grid.
// A query is filed like a transaction, by the time it ends. When the run stops, the queries
// still in flight are cancelled from one extra connection, so a long query cannot hold the
// end of the run; the error that cancel causes is counted, not fatal.

use super::run::Grid;
use super::spec::{AnalyticQuery, AnalyticsSpec};
use super::stats::{AnalyticsSummary, QueryStats};
use crate::backend::{DbError, Dialect, Session};
use crate::error::{DriverError, ErrorClass};
use crate::signal::STOP;
use crate::spec::ConnectionSpec;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long the end of the run waits for cancelled queries to return before cancelling
/// again (a cancel that reached a connection just before its next query was read is lost).
const RECANCEL: Duration = Duration::from_secs(1);
/// How often that wait looks at the streams.
const POLL: Duration = Duration::from_millis(10);

/// What one stream has done: completions per interval, and per query over the measured
/// window.
pub struct StreamStats {
    intervals: Vec<u64>,
    by_query: Vec<QueryStats>,
    /// A query was sent and has not returned: the target of the cancel at the end.
    in_flight: bool,
}

/// The streams of a run: their connections' backend pids and their counters.
pub struct Streams {
    pub pids: Vec<u64>,
    stats: Vec<Mutex<StreamStats>>,
}

impl Streams {
    pub fn new(pids: Vec<u64>, intervals: usize, queries: usize) -> Self {
        let stats = pids
            .iter()
            .map(|_| {
                Mutex::new(StreamStats {
                    intervals: vec![0; intervals],
                    by_query: (0..queries).map(|_| QueryStats::default()).collect(),
                    in_flight: false,
                })
            })
            .collect();
        Streams { pids, stats }
    }

    fn stream(&self, j: usize) -> MutexGuard<'_, StreamStats> {
        self.stats[j].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queries of every stream completed in interval `i`.
    pub fn completed_in(&self, i: usize) -> u64 {
        (0..self.stats.len())
            .map(|j| self.stream(j).intervals[i])
            .sum()
    }

    /// The summary's `analytics` object over the measured window of `elapsed_s`.
    pub fn summary(&self, spec: &AnalyticsSpec, elapsed_s: f64) -> AnalyticsSummary {
        let mut by_query: Vec<QueryStats> =
            spec.queries.iter().map(|_| QueryStats::default()).collect();
        for j in 0..self.stats.len() {
            for (a, b) in by_query.iter_mut().zip(self.stream(j).by_query.iter()) {
                a.merge(b);
            }
        }
        let names: Vec<&str> = spec.queries.iter().map(|q| q.name.as_str()).collect();
        AnalyticsSummary::new(spec.streams, &names, &by_query, elapsed_s)
    }

    /// The backend pids of the streams with a query in flight.
    fn in_flight_pids(&self) -> Vec<u64> {
        (0..self.stats.len())
            .filter(|&j| self.stream(j).in_flight)
            .map(|j| self.pids[j])
            .collect()
    }
}

/// The order in which stream `j` of `streams` runs `n` queries: the list rotated to start at
/// (j * n / streams) mod n, so the streams begin spread over the list.
pub fn rotation(n: usize, streams: usize, j: usize) -> Vec<usize> {
    let start = (j * n / streams) % n;
    (0..n).map(|k| (start + k) % n).collect()
}

/// Stream `j`: its queries in rotation, over and over, until STOP. Each query's rows are
/// read and dropped.
pub fn stream<C: Session>(
    conn: &mut C,
    spec: &AnalyticsSpec,
    streams: &Streams,
    j: usize,
    grid: &Grid,
    t0: Instant,
) -> Result<(), DriverError> {
    let order = rotation(spec.queries.len(), spec.streams as usize, j);
    for &q in order.iter().cycle() {
        {
            // STOP is read under the lock the end of the run takes to find the queries in
            // flight: either this stream sees STOP, or the end sees this query in flight.
            let mut g = streams.stream(j);
            if STOP.is_set() {
                return Ok(());
            }
            g.in_flight = true;
        }
        let query = &spec.queries[q];
        let start = Instant::now();
        let result = conn.query(&query.sql).map(drop);
        // The clock is read under the lock, as a VU's: the reporter cannot sum an interval
        // and then see a query filed in it.
        let mut g = streams.stream(j);
        let end = Instant::now();
        g.in_flight = false;
        match result {
            Ok(()) => {
                if !file(&mut g, grid, t0, q, start, end) {
                    return Ok(());
                }
            }
            // The run has stopped: this is the cancel of the query in flight.
            Err(DbError::Sql { .. }) if STOP.is_set() => {
                g.by_query[q].cancelled += 1;
                return Ok(());
            }
            Err(e) => return Err(query_error(query, e)),
        }
    }
    Ok(())
}

/// Counts one completed query; false once the window has closed, when the stream stops.
fn file(
    g: &mut StreamStats,
    grid: &Grid,
    t0: Instant,
    q: usize,
    start: Instant,
    end: Instant,
) -> bool {
    let Some((i, measured)) = grid.place(t0, end) else {
        return false;
    };
    g.intervals[i] += 1;
    if measured {
        g.by_query[q]
            .latency
            .record((end - start).as_nanos() as u64);
    }
    true
}

/// The fatal error of an analytical query: a query the server cannot run is a bug in the
/// query list, so it names the query.
fn query_error(query: &AnalyticQuery, e: DbError) -> DriverError {
    let what = |m: String| format!("analytical query {}: {m}", query.name);
    match e {
        DbError::Sql { sqlstate, message } => {
            DriverError::sql(&sqlstate, what(message), &query.sql)
        }
        DbError::Io(m) => DriverError::new(ErrorClass::Io, what(m)),
        DbError::Protocol(m) => DriverError::new(ErrorClass::Protocol, what(m)),
    }
}

/// The statement that cancels the query the session `pid` is running, if any.
pub fn cancel_sql(dialect: Dialect, pid: u64) -> String {
    match dialect {
        Dialect::Postgres => format!("SELECT pg_cancel_backend({pid})"),
        Dialect::Mysql => format!("KILL QUERY {pid}"),
    }
}

/// Cancels the queries in flight, from a connection of its own; call after STOP. With
/// `until_idle`, waits until no stream has a query in flight, cancelling again each
/// RECANCEL; without, cancels once (the process is about to exit). Best effort: a failed
/// connect or cancel is tried again next round, or left to the query's own end.
pub fn cancel_in_flight<C: Session>(c: &ConnectionSpec, streams: &Streams, until_idle: bool) {
    let mut conn: Option<C> = None;
    loop {
        let pids = streams.in_flight_pids();
        if pids.is_empty() {
            return;
        }
        if conn.is_none() {
            conn = C::connect(c).ok();
        }
        if let Some(s) = conn.as_mut() {
            let lost = pids.iter().any(|&pid| {
                // A server error (a session that has just ended: MySQL's unknown thread id)
                // leaves the connection usable; a lost connection is opened again.
                let r = s.query(&cancel_sql(C::CAPS.dialect, pid));
                matches!(r, Err(DbError::Io(_) | DbError::Protocol(_)))
            });
            if lost {
                conn = None;
            }
        }
        if !until_idle {
            return;
        }
        let deadline = Instant::now() + RECANCEL;
        while Instant::now() < deadline && !streams.in_flight_pids().is_empty() {
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_start_spread_over_the_query_list() {
        assert_eq!(rotation(4, 1, 0), [0, 1, 2, 3]);
        assert_eq!(rotation(4, 2, 1), [2, 3, 0, 1]);
        assert_eq!(
            rotation(22, 4, 3),
            (16..22).chain(0..16).collect::<Vec<_>>()
        );
        // More streams than queries: several start at the same query.
        let starts: Vec<usize> = (0..5).map(|j| rotation(2, 5, j)[0]).collect();
        assert_eq!(starts, [0, 0, 0, 1, 1]);
    }

    #[test]
    fn a_query_is_filed_by_the_time_it_ends() {
        let grid = Grid::new(1.0, 2.0, 1.0);
        let streams = Streams::new(vec![7], grid.ends.len(), 2);
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let mut g = streams.stream(0);
        // Ends in the ramp-up: counted in its interval, not timed.
        assert!(file(&mut g, &grid, t0, 0, at(0.1), at(0.5)));
        // Started in the ramp-up, ends in the window: timed whole.
        assert!(file(&mut g, &grid, t0, 1, at(0.5), at(1.5)));
        assert!(file(&mut g, &grid, t0, 1, at(1.5), at(2.25)));
        // Ends after the window: dropped, and the stream stops.
        assert!(!file(&mut g, &grid, t0, 0, at(2.5), at(3.5)));
        assert_eq!(g.intervals, [1, 1, 1]);
        assert_eq!(g.by_query[0].latency.count, 0);
        assert_eq!(g.by_query[1].latency.count, 2);
        assert_eq!(g.by_query[1].latency.max_ns, 1_000_000_000);
        drop(g);
        assert_eq!(streams.completed_in(1), 1);
    }

    #[test]
    fn the_summary_merges_the_streams_per_query() {
        let spec = AnalyticsSpec {
            streams: 2,
            queries: ["Q1", "Q2"]
                .iter()
                .map(|n| AnalyticQuery {
                    name: n.to_string(),
                    sql: "SELECT 1".into(),
                })
                .collect(),
        };
        let streams = Streams::new(vec![1, 2], 1, 2);
        streams.stream(0).by_query[1].latency.record(1_000_000);
        streams.stream(1).by_query[1].latency.record(3_000_000);
        streams.stream(1).by_query[0].cancelled = 1;
        let v = serde_json::to_value(streams.summary(&spec, 2.0)).unwrap();
        assert_eq!(
            (v["completed"].as_u64(), v["cancelled"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(v["qph"], 3600.0);
        assert_eq!(v["by_query"]["Q2"]["count"], 2);
        assert_eq!(v["by_query"]["Q2"]["mean_ms"], 2.0);
        assert_eq!(v["by_query"]["Q1"]["count"], 0);
        assert_eq!(v["by_query"]["Q1"]["cancelled"], 1);
    }

    #[test]
    fn only_streams_with_a_query_in_flight_are_cancelled() {
        let streams = Streams::new(vec![11, 12, 13], 1, 1);
        streams.stream(1).in_flight = true;
        assert_eq!(streams.in_flight_pids(), [12]);
        assert_eq!(
            cancel_sql(Dialect::Postgres, 12),
            "SELECT pg_cancel_backend(12)"
        );
        assert_eq!(cancel_sql(Dialect::Mysql, 12), "KILL QUERY 12");
    }

    #[test]
    fn a_failed_query_is_named_in_its_fatal_error() {
        let q = AnalyticQuery {
            name: "Q7".into(),
            sql: "SELECT nope".into(),
        };
        let e = query_error(
            &q,
            DbError::Sql {
                sqlstate: "42703".into(),
                message: "column \"nope\" does not exist".into(),
            },
        );
        assert_eq!(e.class, ErrorClass::Sql);
        assert_eq!(
            e.message,
            "analytical query Q7: column \"nope\" does not exist"
        );
        assert_eq!(e.sql.as_deref(), Some("SELECT nope"));
    }
}
