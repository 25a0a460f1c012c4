// The `exec` subcommand: phases in order, each phase's jobs taken in order by a pool of
// min(threads, jobs) connections; one `job` line per finished job, then a summary.

use super::copy::SbtestRows;
use super::failure::{wait, Failure, Wake};
use crate::backend::mysql::MyConn;
use crate::backend::postgres::PgConn;
use crate::backend::{CopyStep, QueryResult, Session};
use crate::emit::{self, round_s};
use crate::error::DriverError;
use crate::signal::STOP;
use crate::spec::{BackendKind, ExecSpec, Job, JobSpec, SbtestRowsSpec};
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const COPY_CHUNK: usize = 64 * 1024;
/// sysbench's BULK_PACKET_SIZE: a multi-row INSERT grows to about this many bytes.
const INSERT_BYTES: usize = 512 * 1024;

#[derive(Serialize)]
struct JobLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: usize,
    job: usize,
    elapsed_s: f64,
    command: &'a str,
    columns: &'a [String],
    rows: &'a [Vec<Option<String>>],
}

#[derive(Serialize)]
struct ExecSummary {
    #[serde(rename = "type")]
    kind: &'static str,
    elapsed_s: f64,
    jobs: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
}

/// Runs every phase; returns the exit status (0, or 130 when interrupted).
pub fn exec(spec: &ExecSpec) -> Result<i32, DriverError> {
    let t0 = Instant::now();
    let done = AtomicUsize::new(0);
    let null = spec.backend == BackendKind::Null;
    for (p, phase) in spec.phases.iter().enumerate() {
        if null {
            null_phase(p, phase, &done);
        } else {
            run_phase(spec, p, phase, &done, t0)?;
        }
        if STOP.interrupted() {
            summary(
                t0.elapsed().as_secs_f64(),
                done.load(Ordering::SeqCst),
                true,
            );
            return Ok(130);
        }
    }
    let elapsed = if null {
        0.0
    } else {
        t0.elapsed().as_secs_f64()
    };
    summary(elapsed, done.load(Ordering::SeqCst), false);
    Ok(0)
}

fn summary(elapsed_s: f64, jobs: usize, interrupted: bool) {
    emit::line(&ExecSummary {
        kind: "summary",
        elapsed_s: round_s(elapsed_s),
        jobs,
        interrupted,
    });
}

fn job_line(phase: usize, job: usize, elapsed_s: f64, r: &QueryResult) {
    emit::line(&JobLine {
        kind: "job",
        phase,
        job,
        elapsed_s: round_s(elapsed_s),
        command: &r.command,
        columns: &r.columns,
        rows: &r.rows,
    });
}

/// The null backend runs jobs in order on no connection: deterministic output.
fn null_phase(p: usize, phase: &[JobSpec], done: &AtomicUsize) {
    for j in 0..phase.len() {
        let r = QueryResult {
            command: "NULL".into(),
            ..QueryResult::default()
        };
        job_line(p, j, 0.0, &r);
        done.fetch_add(1, Ordering::SeqCst);
    }
}

fn run_phase(
    spec: &ExecSpec,
    p: usize,
    phase: &[JobSpec],
    done: &AtomicUsize,
    t0: Instant,
) -> Result<(), DriverError> {
    let workers = (spec.threads as usize).min(phase.len());
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let failure = Failure::default();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let result = match spec.backend {
                    BackendKind::Mysql => pool_worker::<MyConn>(spec, p, phase, &next, done),
                    _ => pool_worker::<PgConn>(spec, p, phase, &next, done),
                };
                if let Err(e) = result {
                    failure.record(e);
                }
                finished.fetch_add(1, Ordering::SeqCst);
                STOP.notify();
            });
        }
        wait_for_pool(&finished, workers, done, t0);
    });
    match failure.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Waits for the pool, which ends on its own after a failure; on a signal, reports what
/// finished and exits without joining, since a worker may be inside a long statement.
fn wait_for_pool(finished: &AtomicUsize, workers: usize, done: &AtomicUsize, t0: Instant) {
    let all_finished = || finished.load(Ordering::SeqCst) >= workers;
    if wait(None, None, Duration::from_millis(100), all_finished) == Wake::Interrupted {
        summary(
            t0.elapsed().as_secs_f64(),
            done.load(Ordering::SeqCst),
            true,
        );
        std::process::exit(130);
    }
}

fn pool_worker<S: Session>(
    spec: &ExecSpec,
    p: usize,
    phase: &[JobSpec],
    next: &AtomicUsize,
    done: &AtomicUsize,
) -> Result<(), DriverError> {
    let mut conn = S::connect(&spec.connection)?;
    loop {
        if STOP.is_set() {
            return Ok(());
        }
        let j = next.fetch_add(1, Ordering::SeqCst);
        let Some(job) = phase.get(j) else {
            return Ok(());
        };
        let start = Instant::now();
        let result = run_job(&mut conn, spec.seed, job).map_err(|e| e.at_job(p, j))?;
        if STOP.is_set() && STOP.interrupted() {
            return Ok(());
        }
        job_line(p, j, start.elapsed().as_secs_f64(), &result);
        done.fetch_add(1, Ordering::SeqCst);
    }
}

fn run_job<S: Session>(conn: &mut S, seed: u64, job: &JobSpec) -> Result<QueryResult, DriverError> {
    match job.job() {
        Job::Sql(sql) => conn.query(sql).map_err(|e| e.into_driver(sql)),
        Job::CopySbtest(c) => {
            // Validation rejects copy_sbtest for other backends; this is the backstop.
            if !S::CAPS.copy_in {
                return Err(DriverError::spec("copy_sbtest needs backend \"postgres\""));
            }
            let mut rows = SbtestRows::new(seed, c);
            let mut produce = |out: &mut Vec<u8>| {
                if STOP.is_set() {
                    CopyStep::Abort
                } else if rows.fill(out, COPY_CHUNK) {
                    CopyStep::More
                } else {
                    CopyStep::Done
                }
            };
            let command = conn
                .copy_in(&c.sql, &mut produce)
                .map_err(|e| e.into_driver(&c.sql))?;
            Ok(QueryResult {
                command,
                ..QueryResult::default()
            })
        }
        Job::InsertSbtest(i) => insert_sbtest(conn, seed, i),
    }
}

/// Multi-row INSERTs of about INSERT_BYTES each (autocommit per statement, as sysbench's
/// prepare); the command says how many rows went in.
fn insert_sbtest<S: Session>(
    conn: &mut S,
    seed: u64,
    spec: &SbtestRowsSpec,
) -> Result<QueryResult, DriverError> {
    let mut rows = SbtestRows::new(seed, spec);
    let mut buf: Vec<u8> = Vec::with_capacity(INSERT_BYTES + 4096);
    let mut inserted = 0u64;
    loop {
        if STOP.is_set() {
            break;
        }
        buf.clear();
        buf.extend_from_slice(spec.sql.as_bytes());
        buf.push(b' ');
        let more = rows.fill_values(&mut buf, INSERT_BYTES);
        let sql = std::str::from_utf8(&buf)
            .map_err(|_| DriverError::spec("insert_sbtest.sql is not UTF-8"))?;
        conn.query(sql).map_err(|e| e.into_driver(&spec.sql))?;
        inserted = rows.inserted(spec);
        if !more {
            break;
        }
    }
    Ok(QueryResult {
        command: format!("INSERT {inserted}"),
        ..QueryResult::default()
    })
}
