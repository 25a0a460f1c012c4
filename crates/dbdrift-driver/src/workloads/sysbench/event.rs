// One event of the run workload on one session: BEGIN, each statement entry `repeat` times,
// COMMIT. Owns the thread's generator and prepared statements; never reads a clock.

use super::plan::Plan;
use super::spec::{RunSpec, TablePick};
use crate::backend::{Control, DbError, Session};
use crate::error::DriverError;
use crate::stats::Ignorable;
use crate::workload::params::{Generator, ParamValues};

/// What an event did, kept even when it was abandoned.
#[derive(Default)]
pub struct EventOutcome {
    pub statements: u64,
    pub rows: u64,
}

pub enum EventError {
    /// An ignorable SQLSTATE: the event was abandoned (and rolled back).
    Ignorable(Ignorable),
    Fatal(DriverError),
}

pub struct EventRunner<S: Session> {
    pub session: S,
    /// Prepared statements by entry, then by table number - 1.
    stmts: Vec<Vec<S::Stmt>>,
    gen: Generator,
    values: ParamValues,
    thread_table: u32,
}

/// Seed of thread `t`: distinct per thread, reproducible from the spec seed.
fn thread_seed(seed: u64, t: u32) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(t as u64 + 1)
}

impl<S: Session> EventRunner<S> {
    /// Prepares every entry for every table on this session.
    pub fn new(
        mut session: S,
        spec: &RunSpec,
        plan: &Plan,
        thread: u32,
    ) -> Result<Self, DriverError> {
        let mut stmts = Vec::with_capacity(plan.entries.len());
        for (i, e) in plan.entries.iter().enumerate() {
            let mut per_table = Vec::with_capacity(e.sql_by_table.len());
            for (t, sql) in e.sql_by_table.iter().enumerate() {
                let name = format!("dbdrift_{}_{}", i, t + 1);
                let st = session
                    .prepare(&name, sql, spec.prepared && S::CAPS.server_prepare)
                    .map_err(|err| err.into_driver(sql))?;
                per_table.push(st);
            }
            stmts.push(per_table);
        }
        Ok(EventRunner {
            session,
            stmts,
            gen: Generator::new(
                thread_seed(spec.seed, thread),
                &spec.rand,
                plan.id_max,
                plan.slots,
            ),
            values: ParamValues::with_capacity(),
            thread_table: thread % plan.tables + 1,
        })
    }

    #[inline]
    pub fn run(&mut self, plan: &Plan, out: &mut EventOutcome) -> Result<(), EventError> {
        if plan.transaction {
            self.control(Control::Begin, "BEGIN", false)?;
            out.statements += 1;
        }
        let mut table = 1u32;
        for (i, e) in plan.entries.iter().enumerate() {
            table = match e.table {
                TablePick::Random => self.gen.table(plan.tables),
                TablePick::Previous => table,
                TablePick::Thread => self.thread_table,
            };
            let stmt = &self.stmts[i][table as usize - 1];
            for _ in 0..e.repeat {
                self.gen.fill(&e.params, &mut self.values);
                match self.session.execute(stmt, &self.values) {
                    Ok(rows) => {
                        out.statements += 1;
                        out.rows += if e.count_rows { rows } else { 0 };
                    }
                    Err(err) => {
                        let sql = &e.sql_by_table[table as usize - 1];
                        return Err(abandon(&mut self.session, err, plan.transaction, sql));
                    }
                }
            }
        }
        if plan.transaction {
            self.control(Control::Commit, "COMMIT", true)?;
            out.statements += 1;
        }
        Ok(())
    }

    fn control(&mut self, c: Control, sql: &str, in_tx: bool) -> Result<(), EventError> {
        self.session
            .control(c)
            .map_err(|err| abandon(&mut self.session, err, in_tx, sql))
    }
}

/// Classifies a failed statement: ignorable ones roll back (inside a transaction) and
/// let the thread go on, anything else is fatal.
#[cold]
fn abandon<S: Session>(session: &mut S, err: DbError, in_tx: bool, sql: &str) -> EventError {
    let kind = session.ignorable(&err);
    match kind {
        None => EventError::Fatal(err.into_driver(sql)),
        Some(k) if !in_tx => EventError::Ignorable(k),
        Some(k) => match session.control(Control::Rollback) {
            Ok(()) => EventError::Ignorable(k),
            Err(e) => EventError::Fatal(e.into_driver("ROLLBACK")),
        },
    }
}
