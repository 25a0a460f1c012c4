// Turns (protocol.md "Turns"): one run against several servers that take turns.
// Every thread holds a connection (and its prepared statements) per target; time is cut into
// turns of `turn_s`, a round is one turn per target, and the order flips from round to round
// (A B, B A, ... for two targets), so drift and bursts of steal fall on every target alike and
// the turns of one round can be paired. All threads switch together at turn boundaries; an
// event belongs to the turn in which it started. Each measured turn is reported as an
// `interval` line with `target` and `round` and without latencies (turns are many and short;
// each target's latency histogram is in the summary); its start_s/end_s span the turn's first
// event start to its last event end, so the time spent on the other targets is not counted.

mod schedule;

use super::event::{EventOutcome, EventRunner};
use super::plan::Plan;
use super::run::{open, DRIVER_VERSION};
use super::spec::{RunSpec, TurnsSpec};
use super::stats::Tally;
use super::worker::{tally_event, Simulation};
use crate::backend::mysql::MyConn;
use crate::backend::null::NullSession;
use crate::backend::postgres::PgConn;
use crate::backend::Session;
use crate::emit::{self, round_s};
use crate::error::DriverError;
use crate::exec::failure::Failure;
use crate::signal::{exit_interrupted, STOP};
use crate::spec::{BackendKind, ConnectionSpec, PROTOCOL};
use crate::stats::histogram::{Histogram, LatencySummary};
use crate::stats::{client_cpu_s, ErrorCounts};
use schedule::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One thread's (or, merged, every thread's) counts for one turn.
struct TurnTally {
    turn: u64,
    tally: Tally,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl TurnTally {
    fn new(turn: u64) -> TurnTally {
        TurnTally {
            turn,
            tally: Tally::default(),
            first: None,
            last: None,
        }
    }

    fn merge(&mut self, o: &TurnTally) {
        self.tally.merge(&o.tally);
        self.first = match (self.first, o.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = self.last.max(o.last);
    }
}

/// What a worker shares with the reporter: finished turns, and the turn it is in now
/// (u64::MAX once it stopped), so the reporter knows which turns are complete.
#[derive(Default)]
struct Lane {
    done: Mutex<Vec<TurnTally>>,
    at: AtomicU64,
}

#[derive(Serialize)]
struct AltStartLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    protocol: u32,
    driver: &'static str,
    backend: &'a str,
    threads: u32,
    server_version: Option<&'a str>,
    backend_pids: Vec<i32>,
    targets: usize,
    target_pids: &'a [Vec<i32>],
    server_versions: &'a [String],
}

#[derive(Serialize)]
struct AltWarmupLine {
    #[serde(rename = "type")]
    kind: &'static str,
    duration_s: f64,
    events: u64,
    turn_s: f64,
    rounds: u64,
}

#[derive(Serialize)]
struct TurnLine {
    #[serde(rename = "type")]
    kind: &'static str,
    index: u64,
    round: u64,
    position: usize,
    target: usize,
    start_s: f64,
    end_s: f64,
    events: u64,
    statements: u64,
    rows: u64,
    errors: ErrorCounts,
}

#[derive(Serialize)]
struct TargetTotals {
    events: u64,
    statements: u64,
    rows: u64,
    busy_s: f64,
    errors: ErrorCounts,
    latency_us: LatencySummary,
}

#[derive(Serialize)]
struct AltSummaryLine {
    #[serde(rename = "type")]
    kind: &'static str,
    duration_s: f64,
    events: u64,
    statements: u64,
    rows: u64,
    errors: ErrorCounts,
    latency_us: LatencySummary,
    client_cpu_user_s: f64,
    client_cpu_sys_s: f64,
    interrupted: bool,
    targets: Vec<TargetTotals>,
}

/// Connects threads x targets (each target's runner for thread t has thread t's seed, so
/// the targets see the same parameter sequence) and runs the turns.
pub fn run(spec: &RunSpec, plan: &Plan, alt: &TurnsSpec) -> Result<i32, DriverError> {
    match (spec.backend, &spec.null) {
        (BackendKind::Null, Some(n)) => {
            let rows = n.rows_per_statement;
            let connect = |_: &ConnectionSpec| {
                Ok((
                    NullSession {
                        rows_per_statement: rows,
                    },
                    0,
                    String::new(),
                ))
            };
            connect_all(
                spec,
                plan,
                alt,
                connect,
                Some(Simulation::for_null(n, spec.threads)),
            )
        }
        (BackendKind::Mysql, _) => connect_all(spec, plan, alt, open::<MyConn>, None),
        _ => connect_all(spec, plan, alt, open::<PgConn>, None),
    }
}

fn connect_all<S: Session>(
    spec: &RunSpec,
    plan: &Plan,
    alt: &TurnsSpec,
    connect: impl Fn(&ConnectionSpec) -> Result<(S, i32, String), DriverError>,
    sim: Option<Simulation>,
) -> Result<i32, DriverError> {
    let n = alt.connections.len();
    let mut pids = vec![Vec::new(); n];
    let mut versions = vec![String::new(); n];
    let mut lanes_runners = Vec::new();
    for t in 0..spec.threads {
        let mut per_target = Vec::with_capacity(n);
        for (i, c) in alt.connections.iter().enumerate() {
            let (conn, pid, v) = connect(c).map_err(|e| target_error(e, i))?;
            pids[i].push(pid);
            versions[i] = v;
            per_target.push(EventRunner::new(conn, spec, plan, t).map_err(|e| target_error(e, i))?);
        }
        lanes_runners.push(per_target);
    }
    let real = sim.is_none();
    emit::line(&AltStartLine {
        kind: "start",
        protocol: PROTOCOL,
        driver: DRIVER_VERSION,
        backend: spec.backend.as_str(),
        threads: spec.threads,
        server_version: real.then(|| versions[0].as_str()),
        backend_pids: pids.iter().flatten().copied().collect(),
        targets: n,
        target_pids: &pids,
        server_versions: if real { &versions } else { &[] },
    });
    drive(spec, plan, alt, lanes_runners, sim)
}

/// Names the target whose connection failed, so the caller knows which server to look at.
fn target_error(mut e: DriverError, target: usize) -> DriverError {
    e.message = format!("target {target}: {}", e.message);
    e
}

fn drive<S: Session>(
    spec: &RunSpec,
    plan: &Plan,
    alt: &TurnsSpec,
    mut runners: Vec<Vec<EventRunner<S>>>,
    sim: Option<Simulation>,
) -> Result<i32, DriverError> {
    let sched = Schedule::new(spec, alt);
    let lanes: Vec<Lane> = runners.iter().map(|_| Lane::default()).collect();
    let failure = Failure::default();
    let mut reporter = Reporter::new(&sched);
    let ended = std::thread::scope(|s| {
        for (per_target, lane) in runners.iter_mut().zip(&lanes) {
            let (failure, sched) = (&failure, &sched);
            s.spawn(move || {
                if let Err(e) = work(per_target, plan, sched, lane, sim) {
                    failure.record(e);
                }
            });
        }
        let ended = reporter.until_end(&lanes);
        if STOP.interrupted() {
            exit_interrupted(|| reporter.finish(&lanes, true));
        }
        ended
    });
    if !ended {
        return Err(failure.into_error("a worker stopped"));
    }
    reporter.finish(&lanes, false);
    Ok(0)
}

fn work<S: Session>(
    runners: &mut [EventRunner<S>],
    plan: &Plan,
    sched: &Schedule,
    lane: &Lane,
    sim: Option<Simulation>,
) -> Result<(), DriverError> {
    let warm_end = sched.warm_end();
    let mut end = sched.end();
    let mut next = Instant::now();
    let mut cur: Option<TurnTally> = None;
    let result = loop {
        if STOP.is_set() {
            break Ok(());
        }
        if let Some(period) = sim.and_then(|s| s.period) {
            next += period;
            if STOP.wait_until(next) {
                break Ok(());
            }
        }
        let now = Instant::now();
        if now >= warm_end && end.is_none() {
            if sched.wait_measured().is_none() {
                break Ok(()); // stopped before the warm end
            }
            end = sched.end();
        }
        if end.is_some_and(|e| now >= e) {
            break Ok(());
        }
        let turn = sched.turn_of(now);
        if cur.as_ref().is_none_or(|c| c.turn != turn) {
            if let Some(done) = cur.take() {
                lane.done
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(done);
            }
            lane.at.store(turn, Ordering::SeqCst);
            cur = Some(TurnTally::new(turn));
        }
        let mut out = EventOutcome::default();
        let t0 = Instant::now();
        let result = runners[sched.target(turn)].run(plan, &mut out);
        let t1 = Instant::now();
        if end.is_some_and(|e| t1 > e) {
            break Ok(());
        }
        let c = cur.as_mut().expect("a turn is open");
        c.first.get_or_insert(t0);
        c.last = Some(t1);
        let ns = sim.map_or((t1 - t0).as_nanos() as u64, |s| s.latency_ns);
        if let Err(e) = tally_event(&mut c.tally, &out, result, ns) {
            break Err(target_error(e, sched.target(turn)));
        }
    };
    if let Some(done) = cur.take() {
        lane.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(done);
    }
    lane.at.store(u64::MAX, Ordering::SeqCst);
    result
}

/// Merges the workers' turns and emits each one once every worker has moved past it.
struct Reporter<'a> {
    sched: &'a Schedule,
    pending: BTreeMap<u64, TurnTally>,
    warm_done: bool,
    totals: Vec<(Tally, f64)>,
    next_index: u64,
}

impl<'a> Reporter<'a> {
    fn new(sched: &'a Schedule) -> Reporter<'a> {
        Reporter {
            sched,
            pending: BTreeMap::new(),
            warm_done: false,
            totals: (0..sched.targets)
                .map(|_| (Tally::default(), 0.0))
                .collect(),
            next_index: 0,
        }
    }

    /// Returns true at the scheduled end, false on a stop request (error or signal).
    fn until_end(&mut self, lanes: &[Lane]) -> bool {
        let mut turn = 0;
        loop {
            // Until the warm end is decided, measured_or_warm ends at the warm end.
            turn = (turn + 1).min(self.sched.measured_or_warm().end_turn);
            if STOP.wait_until(self.sched.at(turn)) {
                return false;
            }
            if self.sched.measured().is_none() && turn >= self.sched.warm_turns {
                self.collect(lanes);
                self.sched.decide(self.warm_mean_event_s());
            }
            if turn >= self.sched.measured_or_warm().end_turn {
                STOP.request(false);
                return true;
            }
            turn = turn.max(self.sched.turn_of(Instant::now()));
            // Where the workers are first, then what they pushed: a worker pushes a turn before
            // it moves on, so every turn before `complete` is in by then.
            let complete = lanes
                .iter()
                .map(|l| l.at.load(Ordering::SeqCst))
                .min()
                .unwrap_or(u64::MAX);
            self.collect(lanes);
            self.emit_before(complete);
        }
    }

    /// Mean event time over the warm turns every thread has finished (each thread's events
    /// one after the other, so this is also the time per event of one thread).
    fn warm_mean_event_s(&self) -> Option<f64> {
        let mut all = Histogram::new();
        for (_, s) in self.pending.range(..self.sched.warm_turns) {
            all.merge(&s.tally.latency);
        }
        all.mean_ns().map(|ns| ns / 1e9)
    }

    fn collect(&mut self, lanes: &[Lane]) {
        for lane in lanes {
            let done = std::mem::take(&mut *lane.done.lock().unwrap_or_else(|e| e.into_inner()));
            for s in done {
                self.pending
                    .entry(s.turn)
                    .or_insert_with(|| TurnTally::new(s.turn))
                    .merge(&s);
            }
        }
    }

    /// Emits every pending turn before `turn` (and the warmup line when warmup is over).
    fn emit_before(&mut self, turn: u64) {
        let m = self.sched.measured_or_warm();
        if !self.warm_done && turn >= self.sched.warm_turns {
            let measured = self.pending.split_off(&self.sched.warm_turns);
            let warm = std::mem::replace(&mut self.pending, measured);
            self.warm_done = true;
            emit::line_at(
                &AltWarmupLine {
                    kind: "warmup",
                    duration_s: round_s(
                        self.sched
                            .warm_end()
                            .duration_since(self.sched.t0)
                            .as_secs_f64(),
                    ),
                    events: warm.values().map(|s| s.tally.events).sum(),
                    turn_s: m.turn_s,
                    rounds: (m.end_turn - self.sched.warm_turns) / self.sched.targets,
                },
                self.sched.warm_end(),
            );
        }
        if !self.warm_done {
            return;
        }
        // Every turn gets a line, also one no thread entered (a stall longer than a turn).
        let first = self.sched.warm_turns + self.next_index;
        for k in first..turn.min(m.end_turn) {
            let s = self.pending.remove(&k).unwrap_or_else(|| TurnTally::new(k));
            self.emit_turn(&s);
        }
    }

    fn emit_turn(&mut self, s: &TurnTally) {
        let sched = self.sched;
        let target = sched.target(s.turn);
        let measured = s.turn - sched.warm_turns;
        let origin = sched.warm_end();
        let rel = |t: Instant| round_s(t.saturating_duration_since(origin).as_secs_f64());
        let nominal = sched.at(s.turn);
        let (start, end, at) = match (s.first, s.last) {
            (Some(a), Some(b)) => (rel(a), rel(b), b),
            _ => (rel(nominal), rel(nominal), nominal), // no event started in this turn
        };
        let total = &mut self.totals[target];
        total.0.merge(&s.tally);
        total.1 += end - start;
        self.next_index = measured + 1;
        emit::line_at(
            &TurnLine {
                kind: "interval",
                index: measured,
                round: measured / sched.targets,
                position: sched.position(s.turn),
                target,
                start_s: start,
                end_s: end,
                events: s.tally.events,
                statements: s.tally.statements,
                rows: s.tally.rows,
                errors: s.tally.errors,
            },
            at.max(origin),
        );
    }

    /// Emits what is left (all turns that started) and the summary.
    fn finish(&mut self, lanes: &[Lane], interrupted: bool) {
        self.collect(lanes);
        if !self.warm_done && !interrupted {
            self.emit_before(self.sched.warm_turns);
        }
        // Interrupted: up to the turn running now, not the scheduled end.
        let now = self.sched.turn_of(Instant::now()) + 1;
        self.emit_before(if interrupted { now } else { u64::MAX });
        let (user, sys) = client_cpu_s();
        let mut all = Tally::default();
        for (t, _) in &self.totals {
            all.merge(t);
        }
        let m = self.sched.measured_or_warm();
        let measured_s = (self.next_index as f64 * m.turn_s).min(
            self.sched
                .at(m.end_turn)
                .duration_since(self.sched.warm_end())
                .as_secs_f64(),
        );
        emit::line(&AltSummaryLine {
            kind: "summary",
            duration_s: round_s(measured_s),
            events: all.events,
            statements: all.statements,
            rows: all.rows,
            errors: all.errors,
            latency_us: all.latency.summary(),
            client_cpu_user_s: user,
            client_cpu_sys_s: sys,
            interrupted,
            targets: self
                .totals
                .iter()
                .map(|(t, busy)| TargetTotals {
                    events: t.events,
                    statements: t.statements,
                    rows: t.rows,
                    busy_s: round_s(*busy),
                    errors: t.errors,
                    latency_us: t.latency.summary(),
                })
                .collect(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_mean_is_exact() {
        let mut t = Tally::default();
        t.latency.record(1_000);
        t.latency.record_n(4_000, 3);
        let mut u = Tally::default();
        u.latency.record(5_000);
        t.merge(&u);
        assert_eq!(t.latency.mean_ns(), Some(18_000.0 / 5.0));
    }
}
