// The `run` phase: one thread and connection per virtual user, the mix dealt from a deck,
// no keying or think time, and with `analytics` one per analytical stream (analytics.rs).
// Each completion is filed under the interval it ended in (the clock is read under the VU's
// lock, so the reporter never misses one it has passed) and, inside the measured window,
// under its type's histogram. The main thread prints the phase and interval lines, cancels
// the analytical queries in flight when the run stops, then prints the summary.

use super::analytics::{self, Streams};
use super::tx::{self, Outcome, Terminal};
use super::StartLine;
use crate::backend::Session;
use crate::emit;
use crate::error::DriverError;
use crate::exec::failure::{spawn_workers, wait, Failure, Wake};
use crate::signal::STOP;
use crate::spec::ConnectionSpec;
use crate::workload::rng::Rng;
use crate::workloads::tpcc::mix::{Deck, NuConstants, TxKind};
use crate::workloads::tpcc::spec::TpccSpec;
use crate::workloads::tpcc::stats::{Counts, IntervalLine, PhaseLine, RunSummary, TypeStats};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Error messages kept for the summary.
const ERRORS_SAMPLE: usize = 5;
/// How long the reporter sleeps at most between looks at the virtual users.
const POLL: Duration = Duration::from_millis(50);

/// The interval grid: ends of the ramp-up intervals (the last one cut at the ramp-up's end),
/// then of the measured ones (the last cut at the window's end), in seconds from the start.
pub struct Grid {
    pub ends: Vec<f64>,
    pub rampup_s: f64,
    pub end_s: f64,
}

impl Grid {
    pub fn new(rampup_s: f64, duration_s: f64, interval_s: f64) -> Self {
        let mut ends = Vec::new();
        let mut push_until = |from: f64, to: f64| {
            let mut k = 1u64;
            loop {
                let t = from + interval_s * k as f64;
                if t >= to - 1e-9 {
                    ends.push(to);
                    break;
                }
                ends.push(t);
                k += 1;
            }
        };
        if rampup_s > 0.0 {
            push_until(0.0, rampup_s);
        }
        push_until(rampup_s, rampup_s + duration_s);
        Grid {
            ends,
            rampup_s,
            end_s: rampup_s + duration_s,
        }
    }

    /// The interval a completion at `t` seconds belongs to; None after the end.
    pub fn index(&self, t: f64) -> Option<usize> {
        let i = self.ends.partition_point(|&e| e <= t);
        (i < self.ends.len()).then_some(i)
    }

    /// Where a completion at `end`, in a run that started at `t0`, is counted: its interval,
    /// and whether it is in the measured window; None once the window has closed.
    pub fn place(&self, t0: Instant, end: Instant) -> Option<(usize, bool)> {
        let t = (end - t0).as_secs_f64();
        self.index(t).map(|i| (i, self.measured(t)))
    }

    pub fn start_of(&self, i: usize) -> f64 {
        if i == 0 {
            0.0
        } else {
            self.ends[i - 1]
        }
    }

    pub fn measured(&self, t: f64) -> bool {
        t >= self.rampup_s && t < self.end_s
    }
}

/// What one VU has done: counts per interval, and per type over the measured window.
struct VuStats {
    intervals: Vec<Counts>,
    measured: [TypeStats; 5],
    errors_sample: Vec<String>,
}

struct Shared<'a> {
    spec: &'a TpccSpec,
    grid: Grid,
    t0: Instant,
    vus: Vec<Mutex<VuStats>>,
    failure: Failure,
    /// VUs and streams not yet ended.
    running: AtomicUsize,
    c: NuConstants,
    /// The analytical streams, with analytics.
    streams: Option<Streams>,
    /// `analytics::cancel_in_flight` for the run's session type.
    cancel: fn(&ConnectionSpec, &Streams, bool),
}

impl Shared<'_> {
    fn vu(&self, i: usize) -> MutexGuard<'_, VuStats> {
        self.vus[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn summary(&self, elapsed_s: f64, interrupted: bool) {
        let mut by_type: [TypeStats; 5] = Default::default();
        let mut sample = Vec::new();
        for i in 0..self.vus.len() {
            let g = self.vu(i);
            for (a, b) in by_type.iter_mut().zip(g.measured.iter()) {
                a.merge(b);
            }
            for m in &g.errors_sample {
                if sample.len() < ERRORS_SAMPLE {
                    sample.push(m.clone());
                }
            }
        }
        let analytics = (self.spec.analytics.as_ref())
            .zip(self.streams.as_ref())
            .map(|(a, s)| s.summary(a, elapsed_s));
        emit::line(&RunSummary::new(
            elapsed_s,
            &by_type,
            interrupted,
            sample,
            analytics,
        ));
    }

    /// Cancels the analytical queries in flight, once or until none is (see
    /// `analytics::cancel_in_flight`).
    fn cancel_queries(&self, until_idle: bool) {
        if let Some(s) = &self.streams {
            (self.cancel)(&self.spec.connection, s, until_idle);
        }
    }
}

pub fn run<C: Session>(spec: &TpccSpec) -> Result<i32, DriverError> {
    let mut conns = Vec::with_capacity(spec.clients as usize);
    for _ in 0..spec.clients {
        conns.push(C::connect(&spec.connection)?);
    }
    let mut stream_conns = Vec::new();
    for _ in 0..spec.analytics.as_ref().map_or(0, |a| a.streams) {
        stream_conns.push(C::connect(&spec.connection)?);
    }
    // Without VUs (analytics alone) no routine is called.
    if let (true, Some(conn)) = (spec.procedures, conns.first_mut()) {
        super::procs::check_installed(conn)?;
    }
    let pids = conns.iter().map(|c| c.backend_pid()).collect();
    let stream_pids: Vec<u64> = stream_conns.iter().map(|c| c.backend_pid()).collect();
    // The spec guarantees a VU or a stream.
    let version = (conns.iter().chain(&stream_conns).next())
        .map_or(String::new(), |c| c.server_version().to_string());
    let mut start = StartLine::new(spec, &version, pids);
    if spec.analytics.is_some() {
        start = start.with_analytics_pids(stream_pids.clone());
    }
    start.emit();
    let grid = Grid::new(spec.rampup_s, spec.duration_s, spec.interval_s);
    let streams = (spec.analytics.as_ref())
        .map(|a| Streams::new(stream_pids, grid.ends.len(), a.queries.len()));
    let shared = Shared {
        vus: (0..conns.len())
            .map(|_| {
                Mutex::new(VuStats {
                    intervals: vec![Counts::default(); grid.ends.len()],
                    measured: Default::default(),
                    errors_sample: Vec::new(),
                })
            })
            .collect(),
        grid,
        spec,
        t0: Instant::now(),
        failure: Failure::default(),
        running: AtomicUsize::new(conns.len() + stream_conns.len()),
        c: NuConstants::run(spec.seed),
        streams,
        cancel: analytics::cancel_in_flight::<C>,
    };
    emit::line(&PhaseLine::new("rampup", 0.0));
    std::thread::scope(|s| {
        let (failure, running) = (&shared.failure, &shared.running);
        spawn_workers(s, conns, failure, running, |conn, i| {
            virtual_user(conn, &shared, i)
        });
        if let (Some(a), Some(streams)) = (&spec.analytics, &shared.streams) {
            spawn_workers(s, stream_conns, failure, running, |conn, j| {
                analytics::stream(conn, a, streams, j, &shared.grid, shared.t0)
            });
        }
        report(&shared);
        STOP.request(false);
        // A VU ends with its transaction in hand; an analytical query may run for minutes.
        shared.cancel_queries(true);
    });
    shared.summary(spec.duration_s, false);
    Ok(0)
}

/// VU i: home warehouse (i mod W) + 1, so a few VUs spread over a few warehouses evenly.
fn virtual_user<C: Session>(conn: &mut C, shared: &Shared, i: usize) -> Result<(), DriverError> {
    let spec = shared.spec;
    let terminal = Terminal {
        w_id: (i as i64 % spec.warehouses as i64) + 1,
        warehouses: spec.warehouses as i64,
        c: shared.c,
    };
    let mut rng = Rng::new(
        spec.seed
            .wrapping_add(i as u64 + 1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let mut deck = Deck::new();
    while !STOP.is_set() {
        let kind = deck.draw(&mut rng);
        let start = Instant::now();
        let result = tx::execute(conn, kind, &mut rng, &terminal, spec.procedures);
        let error = match result {
            Ok(outcome) => {
                let mut g = shared.vu(i);
                let end = Instant::now();
                if !file(
                    &mut g,
                    &shared.grid,
                    shared.t0,
                    kind,
                    Ok(outcome),
                    start,
                    end,
                ) {
                    return Ok(());
                }
                continue;
            }
            Err(e) if conn.retryable(&e.err) => e,
            Err(e) => return Err(e.err.into_driver(&e.sql)),
        };
        // Client-side: ends the transaction. With procedures the routine has already undone
        // its work (a MySQL handler, or PostgreSQL's aborted autocommit call): a no-op.
        if let Err(err) = conn.query("ROLLBACK") {
            return Err(err.into_driver("ROLLBACK"));
        }
        let message = match &error.err {
            crate::backend::DbError::Sql { sqlstate, message } => {
                format!("{}: {message} (SQLSTATE {sqlstate})", kind.name())
            }
            other => format!("{}: {other:?}", kind.name()),
        };
        let mut g = shared.vu(i);
        if g.errors_sample.len() < ERRORS_SAMPLE {
            g.errors_sample.push(message);
        }
        let end = Instant::now();
        if !file(&mut g, &shared.grid, shared.t0, kind, Err(()), start, end) {
            return Ok(());
        }
    }
    Ok(())
}

/// Counts one finished transaction (Err: rolled back after a retryable error); false once
/// the window has closed, when the VU stops.
fn file(
    g: &mut VuStats,
    grid: &Grid,
    t0: Instant,
    kind: TxKind,
    outcome: Result<Outcome, ()>,
    start: Instant,
    end: Instant,
) -> bool {
    let Some((i, measured)) = grid.place(t0, end) else {
        return false;
    };
    let k = kind.index();
    let counts = &mut g.intervals[i];
    match outcome {
        Ok(Outcome::Committed) => counts.tx[k] += 1,
        Ok(Outcome::RolledBack) => counts.rollbacks += 1,
        Err(()) => counts.errors += 1,
    }
    if measured {
        let ns = (end - start).as_nanos() as u64;
        g.measured[k].record(outcome.map(|o| matches!(o, Outcome::RolledBack)), ns);
    }
    true
}

/// Prints the phase and interval lines until the window closes. Handles a signal (summary
/// so far, exit 130) and a VU's failure (fatal line, exit 1) without joining the VUs.
fn report(shared: &Shared) {
    let grid = &shared.grid;
    let mut measure_announced = false;
    for (i, &end) in grid.ends.iter().enumerate() {
        let start = grid.start_of(i);
        if !measure_announced && start >= grid.rampup_s {
            emit::line(&PhaseLine::new("measure", grid.rampup_s));
            measure_announced = true;
        }
        wait_until(shared, shared.t0 + Duration::from_secs_f64(end));
        let mut total = Counts::default();
        for v in 0..shared.vus.len() {
            total.merge(&shared.vu(v).intervals[i]);
        }
        let queries = shared.streams.as_ref().map(|s| s.completed_in(i));
        let phase = if start >= grid.rampup_s {
            "measure"
        } else {
            "rampup"
        };
        emit::line(&IntervalLine::new(phase, end, end - start, &total, queries));
    }
    emit::line(&PhaseLine::new("end", grid.end_s));
}

fn wait_until(shared: &Shared, deadline: Instant) {
    let none_running = || shared.running.load(Ordering::SeqCst) == 0;
    match wait(Some(&shared.failure), Some(deadline), POLL, none_running) {
        Wake::Deadline => {}
        // VUs stop only once the window has closed, so none running before the deadline
        // means they failed.
        Wake::Finished if Instant::now() >= deadline => {}
        Wake::Finished => shared
            .failure
            .exit_fatal("every virtual user stopped before the end of the run"),
        // Both exit without joining: the analytical queries in flight are cancelled first, so
        // they do not go on in the server after the driver has gone.
        Wake::Failed => {
            shared.cancel_queries(false);
            shared.failure.exit_fatal("a virtual user stopped")
        }
        Wake::Interrupted => {
            shared.cancel_queries(false);
            crate::signal::exit_interrupted(|| {
                let t = shared.t0.elapsed().as_secs_f64();
                let measured = (t - shared.grid.rampup_s).clamp(0.0, shared.spec.duration_s);
                shared.summary(measured, true);
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_cuts_intervals_at_the_rampup_and_window_ends() {
        let g = Grid::new(2.5, 3.0, 1.0);
        assert_eq!(g.ends, vec![1.0, 2.0, 2.5, 3.5, 4.5, 5.5]);
        assert_eq!(g.index(0.0), Some(0));
        assert_eq!(g.index(2.4), Some(2));
        assert_eq!(g.index(2.5), Some(3));
        assert_eq!(g.index(5.5), None);
        assert!(!g.measured(2.4) && g.measured(2.5) && !g.measured(5.5));
    }

    #[test]
    fn without_rampup_the_grid_starts_measuring_at_once() {
        let g = Grid::new(0.0, 2.0, 1.0);
        assert_eq!(g.ends, vec![1.0, 2.0]);
        assert_eq!(g.start_of(0), 0.0);
        assert!(g.measured(0.0));
    }
}
