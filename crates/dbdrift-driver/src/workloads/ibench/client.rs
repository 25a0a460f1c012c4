// The threads of one ibench client, each on its own connection: the inserter (paced by the
// InsertPlan), the deleter fed by it through a bounded queue, and the query threads. They
// time their statements and count into the client's ClientStats; they never print.

use super::schedule::InsertPlan;
use crate::backend::{DbError, Session};
use crate::error::DriverError;
use crate::signal::STOP;
use crate::spec::RandSpec;
use crate::workload::params::{Generator, ParamValues};
use crate::workload::timestamp::local_timestamp;
use crate::workload::{max_placeholder, Gen, ParamGen};
use crate::workloads::ibench::rows::IbRows;
use crate::workloads::ibench::spec::{IbenchSpec, QueryKind};
use crate::workloads::ibench::stats::{ClientStats, Op};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// The minimum-transactionid estimate before anyone has read it.
const UNKNOWN: i64 = i64::MIN;

/// What the threads of one client share.
pub struct ClientShared {
    pub stats: Mutex<ClientStats>,
    /// Kept by the deleter, read by point queries.
    pub min_estimate: AtomicI64,
    pub threads_left: AtomicUsize,
}

impl ClientShared {
    pub fn new(threads: usize) -> Self {
        ClientShared {
            stats: Mutex::new(ClientStats::default()),
            min_estimate: AtomicI64::new(UNKNOWN),
            threads_left: AtomicUsize::new(threads),
        }
    }

    pub fn stats(&self) -> MutexGuard<'_, ClientStats> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client ends when its last thread does.
    pub fn thread_ended(&self, t0: Instant) {
        if self.threads_left.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.stats().end_s = Some(t0.elapsed().as_secs_f64());
        }
        STOP.notify();
    }
}

/// One client's view of the step.
pub struct ClientCtx<'a> {
    pub spec: &'a IbenchSpec,
    pub shared: &'a ClientShared,
    /// 1-based, as in the output.
    pub number: u32,
    pub t0: Instant,
    /// Inserters of the whole step still running; query threads stop at 0.
    pub inserters_left: &'a AtomicUsize,
}

impl ClientCtx<'_> {
    fn sql(&self, template: &str) -> String {
        template.replace("{table}", &self.spec.tables[self.number as usize - 1])
    }

    /// Counts a statement that completed at `end` in the interval it completed in.
    fn record(&self, op: Op, units: u64, start: Instant, end: Instant, retries: u64) {
        let since_t0 = end.saturating_duration_since(self.t0).as_secs_f64();
        let interval = (since_t0 / self.spec.interval_s) as u64;
        let ns = end.saturating_duration_since(start).as_nanos() as u64;
        self.shared.stats().record(op, units, ns, retries, interval);
    }

    fn plan(&self) -> InsertPlan {
        let s = self.spec;
        InsertPlan::new(
            s.rows_per_client,
            s.rows_per_statement,
            s.inserts_per_second,
        )
    }
}

/// Runs `op` until it succeeds; deadlocks, lock wait timeouts and serialization failures are
/// retried (and counted; `Session::retryable`), anything else is fatal. Returns the result and the retries.
fn retrying<C: Session, T>(
    conn: &mut C,
    sql: &str,
    mut op: impl FnMut(&mut C) -> Result<T, DbError>,
) -> Result<(T, u64), DriverError> {
    let mut retries = 0;
    loop {
        match op(conn) {
            Ok(v) => return Ok((v, retries)),
            Err(e) if conn.retryable(&e) && !STOP.is_set() => retries += 1,
            Err(e) => return Err(e.into_driver(sql)),
        }
    }
}

/// The first column of the first row as an integer; NULL or no row is 0.
fn read_scalar<C: Session>(conn: &mut C, sql: &str) -> Result<(i64, u64), DriverError> {
    let (res, retries) = retrying(conn, sql, |c| c.query(sql))?;
    let value = match res.rows.first().and_then(|r| r.first()) {
        Some(Some(v)) => v.trim().parse().map_err(|_| {
            DriverError::new(
                crate::error::ErrorClass::Protocol,
                format!("{sql:?} returned {v:?}, not an integer"),
            )
        })?,
        _ => 0,
    };
    Ok((value, retries))
}

/// Rows a DELETE affected, from its command ("DELETE 50" on PostgreSQL, "OK 50" on MySQL).
pub fn affected_rows(command: &str) -> u64 {
    command
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Writes the client's rows at the planned pace, hands each finished INSERT to the
/// deleter, then runs the `after` statements.
pub fn insert<C: Session>(
    conn: &mut C,
    cx: &ClientCtx,
    to_deleter: Option<SyncSender<Instant>>,
) -> Result<(), DriverError> {
    let plan = cx.plan();
    let prefix = cx.sql(&cx.spec.sql.insert);
    let mut rows = IbRows::new(
        cx.spec.seed.wrapping_add(cx.number as u64),
        cx.spec.data_length,
    );
    let mut buf = Vec::with_capacity(prefix.len() + 128 * plan.rows_per_statement as usize);
    for k in 0..plan.statements {
        let start = match plan.intended_offset(k) {
            Some(offset) => {
                let at = cx.t0 + offset;
                if STOP.wait_until(at) {
                    return Ok(());
                }
                at
            }
            None if STOP.is_set() => return Ok(()),
            None => Instant::now(),
        };
        buf.clear();
        rows.push_statement(&mut buf, &prefix, plan.rows_in(k), &local_timestamp());
        let sql =
            std::str::from_utf8(&buf).map_err(|_| DriverError::spec("sql.insert is not UTF-8"))?;
        let (_, retries) = retrying(conn, &prefix, |c| c.query(sql))?;
        let done = Instant::now();
        cx.record(Op::Insert, plan.rows_in(k), start, done, retries);
        // A closed queue means the deleter failed; its error stops the step.
        if to_deleter.as_ref().is_some_and(|tx| tx.send(done).is_err()) {
            return Ok(());
        }
    }
    drop(to_deleter);
    // Clients sharing one table (shared_table) build its indexes once: its first client does.
    let mine = cx.number as usize - 1;
    if cx
        .spec
        .tables
        .iter()
        .position(|t| *t == cx.spec.tables[mine])
        != Some(mine)
    {
        return Ok(());
    }
    for template in &cx.spec.sql.after {
        if STOP.is_set() {
            return Ok(());
        }
        let sql = cx.sql(template);
        retrying(conn, &sql, |c| c.query(&sql))?;
    }
    Ok(())
}

/// One DELETE of the oldest rows per request, until the inserter closes the queue.
pub fn delete<C: Session>(
    conn: &mut C,
    cx: &ClientCtx,
    requests: Receiver<Instant>,
) -> Result<(), DriverError> {
    let rows = cx.plan().rows_per_statement;
    let template = cx
        .sql(cx.spec.sql.delete.as_deref().unwrap_or_default())
        .replace("{rows}", &rows.to_string());
    let min_sql = cx.sql(cx.spec.sql.min.as_deref().unwrap_or_default());
    let (mut estimate, mut deletes) = (0i64, 0u64);
    while let Ok(queued) = requests.recv() {
        if STOP.is_set() {
            return Ok(());
        }
        let mut retries = 0;
        if deletes % 1000 == 0 {
            let (min, r) = read_scalar(conn, &min_sql)?;
            (estimate, retries) = (min, r);
            cx.shared.min_estimate.store(estimate, Ordering::Relaxed);
        }
        let sql = template.replace("{min}", &estimate.to_string());
        let (res, r) = retrying(conn, &sql, |c| c.query(&sql))?;
        let done = Instant::now();
        let deleted = affected_rows(&res.command);
        cx.record(Op::Delete, deleted, queued, done, retries + r);
        deletes += 1;
        estimate = estimate.saturating_add(rows as i64);
        cx.shared.min_estimate.store(estimate, Ordering::Relaxed);
    }
    Ok(())
}

/// A query thread's connection with its statements prepared (before the step starts).
pub struct Querier<C: Session> {
    conn: C,
    stmts: Vec<(C::Stmt, String)>,
    seed: u64,
}

impl<C: Session> Querier<C> {
    /// Prepares the range statements (or the point statement) for `table` on `conn`.
    pub fn new(
        mut conn: C,
        spec: &IbenchSpec,
        table: &str,
        seed: u64,
    ) -> Result<Self, DriverError> {
        let texts: Vec<&str> = match spec.query {
            Some(QueryKind::Range) => spec.sql.range.iter().map(|r| r.sql.as_str()).collect(),
            Some(QueryKind::Point) => spec.sql.point.as_deref().into_iter().collect(),
            None => Vec::new(),
        };
        let mut stmts = Vec::with_capacity(texts.len());
        for (i, t) in texts.into_iter().enumerate() {
            let sql = t.replace("{table}", table);
            let stmt = conn
                .prepare(&format!("dbdrift_ib_{i}"), &sql, C::CAPS.server_prepare)
                .map_err(|e| e.into_driver(&sql))?;
            stmts.push((stmt, sql));
        }
        Ok(Querier { conn, stmts, seed })
    }
}

/// Queries back to back until every inserter of the step has finished.
pub fn query<C: Session>(q: &mut Querier<C>, cx: &ClientCtx) -> Result<(), DriverError> {
    let spec = cx.spec;
    let mut gen = Generator::new(q.seed, &RandSpec::Uniform, 1, 0);
    let mut values = ParamValues::with_capacity();
    let nparams = max_placeholder(&q.stmts[0].1);
    let mut params: Vec<ParamGen> = (0..nparams)
        .map(|_| ParamGen {
            gen: Gen::Uniform { lo: 0, hi: 0 },
            save: None,
        })
        .collect();
    let max_sql = spec.sql.max.as_deref().map(|m| cx.sql(m));
    let min_sql = spec.sql.min.as_deref().map(|m| cx.sql(m));
    let (mut max, mut done) = (0i64, 0u64);
    while cx.inserters_left.load(Ordering::SeqCst) > 0 && !STOP.is_set() {
        let mut retries = 0;
        let i = match spec.query {
            Some(QueryKind::Range) => {
                let i = gen.rng.below(q.stmts.len() as u64) as usize;
                params[0].gen = Gen::Uniform {
                    lo: 0,
                    hi: spec.sql.range[i].domain - 1,
                };
                i
            }
            _ => {
                if done % 100 == 0 {
                    (max, retries) =
                        read_scalar(&mut q.conn, max_sql.as_deref().unwrap_or_default())?;
                }
                let lo = min_estimate(&mut q.conn, cx.shared, min_sql.as_deref(), &mut retries)?;
                let hi = (max - 1).max(lo);
                for p in params.iter_mut() {
                    p.gen = Gen::Uniform { lo, hi };
                }
                0
            }
        };
        gen.fill(&params, &mut values);
        let (stmt, sql) = &q.stmts[i];
        let start = Instant::now();
        let (_, r) = retrying(&mut q.conn, sql, |c| c.execute(stmt, &values))?;
        cx.record(Op::Query, 1, start, Instant::now(), retries + r);
        done += 1;
    }
    Ok(())
}

/// The client's minimum estimate; read with `min` by the first query thread that needs it
/// before the deleter has (or when the step has no deleter).
fn min_estimate<C: Session>(
    conn: &mut C,
    shared: &ClientShared,
    min_sql: Option<&str>,
    retries: &mut u64,
) -> Result<i64, DriverError> {
    let known = shared.min_estimate.load(Ordering::Relaxed);
    if known != UNKNOWN {
        return Ok(known);
    }
    let (min, r) = read_scalar(conn, min_sql.unwrap_or_default())?;
    *retries += r;
    let _ =
        shared
            .min_estimate
            .compare_exchange(UNKNOWN, min, Ordering::Relaxed, Ordering::Relaxed);
    Ok(shared.min_estimate.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affected_rows_read_both_backends_commands() {
        assert_eq!(affected_rows("DELETE 50"), 50);
        assert_eq!(affected_rows("OK 5"), 5);
        assert_eq!(affected_rows(""), 0);
    }
}
