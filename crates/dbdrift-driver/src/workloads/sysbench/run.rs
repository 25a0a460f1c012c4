// The `run` subcommand: connects the threads, prints `start`, drives workers through warmup
// and measurement, and reports `warmup`, `interval` and `summary` lines from the main thread.

use super::deterministic;
use super::event::EventRunner;
use super::plan::Plan;
use super::spec::RunSpec;
use super::stats::{IntervalLine, StartLine, SummaryLine, Tally, WarmupLine};
use super::worker::{work, Simulation};
use crate::backend::mysql::MyConn;
use crate::backend::null::NullSession;
use crate::backend::postgres::PgConn;
use crate::backend::Session;
use crate::emit::{self, round_s};
use crate::error::DriverError;
use crate::exec::failure::Failure;
use crate::signal::{exit_interrupted, STOP};
use crate::spec::{BackendKind, ConnectionSpec};
use crate::stats::client_cpu_s;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const DRIVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs the benchmark; returns the exit status (0, or 130 when interrupted).
pub fn run(spec: &RunSpec) -> Result<i32, DriverError> {
    let plan = Plan::compile(spec)?;
    if let Some(alt) = &spec.turns {
        return super::turns::run(spec, &plan, alt);
    }
    match (spec.backend, &spec.null) {
        (BackendKind::Null, Some(n)) if n.deterministic => {
            emit::stamp_lines(false);
            Ok(deterministic::run(spec, &plan, n))
        }
        (BackendKind::Null, Some(n)) => {
            let sim = Simulation::for_null(n, spec.threads);
            let mut runners = Vec::new();
            for t in 0..spec.threads {
                let session = NullSession {
                    rows_per_statement: n.rows_per_statement,
                };
                runners.push(EventRunner::new(session, spec, &plan, t)?);
            }
            drive(spec, &plan, runners, None, &[], Some(sim))
        }
        (BackendKind::Mysql, _) => {
            connect_and_drive(spec, &plan, || open::<MyConn>(&spec.connection))
        }
        _ => connect_and_drive(spec, &plan, || open::<PgConn>(&spec.connection)),
    }
}

/// A connection with its backend pid or connection id (as the start line's pid: MySQL ids
/// are u32, pids i32, so ids past 2^31 wrap) and the server's version string.
pub(super) fn open<S: Session>(c: &ConnectionSpec) -> Result<(S, i32, String), DriverError> {
    let conn = S::connect(c)?;
    let (pid, version) = (conn.backend_pid() as i32, conn.server_version().to_string());
    Ok((conn, pid, version))
}

/// One connection per thread (backend pid/connection id and server version noted), then
/// the run.
fn connect_and_drive<S: Session>(
    spec: &RunSpec,
    plan: &Plan,
    connect: impl Fn() -> Result<(S, i32, String), DriverError>,
) -> Result<i32, DriverError> {
    let mut runners = Vec::new();
    let mut pids = Vec::new();
    let mut version = String::new();
    for t in 0..spec.threads {
        let (conn, pid, v) = connect()?;
        pids.push(pid);
        version = v;
        runners.push(EventRunner::new(conn, spec, plan, t)?);
    }
    drive(spec, plan, runners, Some(&version), &pids, None)
}

fn start_line(spec: &RunSpec, version: Option<&str>, pids: &[i32]) {
    emit::line(&StartLine {
        kind: "start",
        protocol: crate::spec::PROTOCOL,
        driver: DRIVER_VERSION,
        backend: spec.backend.as_str(),
        threads: spec.threads,
        server_version: version,
        backend_pids: pids,
    });
}

/// How the reporter loop ended.
enum End {
    Completed,
    Interrupted,
    Failed,
}

/// Reporter state: what has been emitted so far.
struct Report {
    total: Tally,
    next_index: u64,
    last_end_s: f64,
    origin: Instant, // the end of warmup: start_s and end_s count from here
}

fn drive<S: Session>(
    spec: &RunSpec,
    plan: &Plan,
    mut runners: Vec<EventRunner<S>>,
    version: Option<&str>,
    pids: &[i32],
    sim: Option<Simulation>,
) -> Result<i32, DriverError> {
    start_line(spec, version, pids);
    let tallies: Vec<Mutex<Tally>> = runners
        .iter()
        .map(|_| Mutex::new(Tally::default()))
        .collect();
    let failure = Failure::default();
    // With max_events the last worker to finish its share ends the run early.
    let running = AtomicUsize::new(runners.len());
    let all_done = AtomicBool::new(false);
    let threads = runners.len() as u64;
    let t0 = Instant::now();
    let warm_end = t0 + Duration::from_secs_f64(spec.warmup_s);
    let end = warm_end + Duration::from_secs_f64(spec.duration_s);
    let mut report = Report {
        total: Tally::default(),
        next_index: 0,
        last_end_s: 0.0,
        origin: warm_end,
    };
    let outcome = std::thread::scope(|s| {
        for (t, (runner, tally)) in runners.iter_mut().zip(&tallies).enumerate() {
            let (failure, running, all_done) = (&failure, &running, &all_done);
            let share = spec
                .max_events
                .map(|m| m / threads + u64::from((t as u64) < m % threads));
            s.spawn(move || {
                if let Err(e) = work(runner, plan, tally, end, sim, share) {
                    failure.record(e);
                } else if running.fetch_sub(1, Ordering::SeqCst) == 1 && share.is_some() {
                    all_done.store(true, Ordering::SeqCst);
                    STOP.request(false);
                }
            });
        }
        let end_kind = report_until_end(spec, &tallies, &mut report, t0, warm_end, end, &all_done);
        if let End::Interrupted = end_kind {
            exit_interrupted(|| {
                finish(
                    spec,
                    &tallies,
                    &mut report,
                    warm_end.elapsed().as_secs_f64(),
                    true,
                )
            });
        }
        end_kind
    });
    match outcome {
        End::Failed => Err(failure.into_error("a worker stopped")),
        _ => {
            let end_s = warm_end.elapsed().as_secs_f64().min(spec.duration_s);
            finish(spec, &tallies, &mut report, end_s, false);
            Ok(0)
        }
    }
}

/// Merges every thread's counts since the last call into a fresh Tally.
fn collect(tallies: &[Mutex<Tally>]) -> Tally {
    let mut snap = Tally::default();
    for t in tallies {
        t.lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain_into(&mut snap);
    }
    snap
}

fn stop_kind(all_done: &AtomicBool) -> End {
    if STOP.interrupted() {
        End::Interrupted
    } else if all_done.load(Ordering::SeqCst) {
        End::Completed
    } else {
        End::Failed
    }
}

/// Emits warmup and every full interval; returns at the end of the run (workers told to
/// stop) or on a stop request. The last interval is emitted by `finish`.
fn report_until_end(
    spec: &RunSpec,
    tallies: &[Mutex<Tally>],
    report: &mut Report,
    t0: Instant,
    warm_end: Instant,
    end: Instant,
    all_done: &AtomicBool,
) -> End {
    if STOP.wait_until(warm_end) {
        return stop_kind(all_done);
    }
    let warm = collect(tallies);
    emit::line_at(
        &WarmupLine {
            kind: "warmup",
            duration_s: round_s(t0.elapsed().as_secs_f64()),
            events: warm.events,
        },
        warm_end,
    );
    let interval = Duration::from_secs_f64(spec.interval_s);
    loop {
        let boundary = (warm_end + interval * (report.next_index as u32 + 1)).min(end);
        if STOP.wait_until(boundary) {
            return stop_kind(all_done);
        }
        if boundary >= end {
            STOP.request(false);
            return End::Completed;
        }
        let snap = collect(tallies);
        let end_s = round_s(warm_end.elapsed().as_secs_f64());
        emit_interval(report, end_s, snap);
    }
}

fn emit_interval(report: &mut Report, end_s: f64, snap: Tally) {
    emit::line_at(
        &IntervalLine::new(report.next_index, report.last_end_s, end_s, &snap),
        report.origin + Duration::from_secs_f64(end_s),
    );
    report.total.merge(&snap);
    report.next_index += 1;
    report.last_end_s = end_s;
}

/// Emits the last (possibly partial) interval and the summary.
fn finish(
    spec: &RunSpec,
    tallies: &[Mutex<Tally>],
    report: &mut Report,
    end_s: f64,
    interrupted: bool,
) {
    let measuring = end_s > 0.0;
    let snap = collect(tallies);
    let end_s = round_s(end_s.min(spec.duration_s).max(0.0));
    if measuring && end_s > report.last_end_s {
        emit_interval(report, end_s, snap);
    }
    let (user, sys) = client_cpu_s();
    let t = &report.total;
    emit::line(&SummaryLine {
        kind: "summary",
        duration_s: report.last_end_s,
        events: t.events,
        statements: t.statements,
        rows: t.rows,
        errors: t.errors,
        latency_us: t.latency.summary(),
        client_cpu_user_s: user,
        client_cpu_sys_s: sys,
        interrupted,
    });
}
