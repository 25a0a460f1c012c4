// The `load` phase: recreates the nine tables, fills them from `clients` loader threads
// (warehouses dealt round-robin, item by the first loader), builds the indexes in parallel,
// analyzes, and prints a `load` line per finished piece and the summary.

use super::{procs, rows, schema, StartLine};
use crate::backend::Session;
use crate::emit;
use crate::error::DriverError;
use crate::exec::failure::{wait, Failure, Wake};
use crate::signal::STOP;
use crate::workload::timestamp::local_timestamp;
use crate::workloads::tpcc::spec::TpccSpec;
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the main thread sleeps at most between looks at the loaders.
const POLL: Duration = Duration::from_millis(50);

#[derive(Serialize)]
struct LoadLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    table: &'a str,
    /// None for item, which belongs to no warehouse.
    warehouse: Option<i64>,
    rows: u64,
    /// Seconds this piece took.
    elapsed_s: f64,
}

#[derive(Serialize, Default, Clone, Copy)]
struct RowCounts {
    warehouse: u64,
    district: u64,
    customer: u64,
    history: u64,
    new_order: u64,
    orders: u64,
    order_line: u64,
    item: u64,
    stock: u64,
}

impl RowCounts {
    fn add(&mut self, table: &str, n: u64) {
        let slot = match table {
            "warehouse" => &mut self.warehouse,
            "district" => &mut self.district,
            "customer" => &mut self.customer,
            "history" => &mut self.history,
            "new_order" => &mut self.new_order,
            "orders" => &mut self.orders,
            "order_line" => &mut self.order_line,
            "item" => &mut self.item,
            _ => &mut self.stock,
        };
        *slot += n;
    }
}

#[derive(Serialize)]
struct LoadSummary {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    elapsed_s: f64,
    rows: RowCounts,
    /// Of elapsed_s: building primary keys and indexes, and ANALYZE.
    index_s: f64,
    analyze_s: f64,
    /// Stored routines created (0 without `procedures`).
    procedures: usize,
    interrupted: bool,
}

struct Shared {
    t0: Instant,
    rows: Mutex<RowCounts>,
    failure: Failure,
    running: AtomicUsize,
    index_s: Mutex<f64>,
    procedures: Mutex<usize>,
}

impl Shared {
    fn summary(&self, analyze_s: f64, interrupted: bool) {
        emit::line(&LoadSummary {
            kind: "summary",
            phase: "load",
            elapsed_s: emit::round_s(self.t0.elapsed().as_secs_f64()),
            rows: *self.rows.lock().unwrap_or_else(|p| p.into_inner()),
            index_s: emit::round_s(*self.index_s.lock().unwrap_or_else(|p| p.into_inner())),
            analyze_s: emit::round_s(analyze_s),
            procedures: *self.procedures.lock().unwrap_or_else(|p| p.into_inner()),
            interrupted,
        });
    }
}

pub fn load<C: Session>(spec: &TpccSpec) -> Result<i32, DriverError> {
    let shared = Shared {
        t0: Instant::now(),
        rows: Mutex::new(RowCounts::default()),
        failure: Failure::default(),
        running: AtomicUsize::new(0),
        index_s: Mutex::new(0.0),
        procedures: Mutex::new(0),
    };
    let loaders = spec.clients.min(spec.warehouses) as usize;
    let mut conns = vec![C::connect(&spec.connection)?];
    StartLine::new(spec, conns[0].server_version(), Vec::new()).emit();
    for sql in procs::drop_all(C::CAPS.dialect) {
        run_sql(&mut conns[0], &sql)?;
    }
    for sql in schema::create(C::CAPS.dialect) {
        run_sql(&mut conns[0], &sql)?;
    }
    for _ in 1..loaders {
        conns.push(C::connect(&spec.connection)?);
    }
    let now = String::from_utf8_lossy(&local_timestamp()).into_owned();
    in_parallel(&mut conns, &shared, &|i, conn| {
        load_share(conn, spec, &shared, &now, i, loaders)
    });
    let t_index = Instant::now();
    let stmts = schema::indexes(C::CAPS.dialect);
    let next = AtomicUsize::new(0);
    in_parallel(&mut conns, &shared, &|_, conn| loop {
        let k = next.fetch_add(1, Ordering::SeqCst);
        match stmts.get(k) {
            Some(sql) if !STOP.is_set() => run_sql(conn, sql)?,
            _ => return Ok(()),
        }
    });
    *shared.index_s.lock().unwrap_or_else(|p| p.into_inner()) = t_index.elapsed().as_secs_f64();
    if spec.procedures && !STOP.is_set() {
        for sql in procs::create(C::CAPS.dialect) {
            run_sql(&mut conns[0], &sql)?;
        }
        *shared.procedures.lock().unwrap_or_else(|p| p.into_inner()) = procs::NAMES.len();
    }
    let t_analyze = Instant::now();
    run_sql(&mut conns[0], &schema::analyze(C::CAPS.dialect))?;
    shared.summary(t_analyze.elapsed().as_secs_f64(), false);
    Ok(0)
}

pub fn run_sql<C: Session>(conn: &mut C, sql: &str) -> Result<(), DriverError> {
    conn.query(sql).map(|_| ()).map_err(|e| e.into_driver(sql))
}

/// Runs `work(i, conn)` on a thread per connection and waits for all of them. A signal
/// prints the summary so far and exits 130, a failure prints its fatal line and exits: in
/// both cases without joining, since a thread may sit in a long COPY or CREATE INDEX.
fn in_parallel<C: Session>(
    conns: &mut [C],
    shared: &Shared,
    work: &(dyn Fn(usize, &mut C) -> Result<(), DriverError> + Sync),
) {
    shared.running.store(conns.len(), Ordering::SeqCst);
    std::thread::scope(|s| {
        for (i, conn) in conns.iter_mut().enumerate() {
            s.spawn(move || shared.failure.worker_ended(work(i, conn), &shared.running));
        }
        let none_running = || shared.running.load(Ordering::SeqCst) == 0;
        match wait(Some(&shared.failure), None, POLL, none_running) {
            Wake::Failed => shared.failure.exit_fatal("a loader stopped"),
            Wake::Interrupted => crate::signal::exit_interrupted(|| shared.summary(0.0, true)),
            Wake::Finished | Wake::Deadline => {}
        }
    });
}

/// Loader i's part: item if it is the first, then warehouses i+1, i+1+loaders, ...
fn load_share<C: Session>(
    conn: &mut C,
    spec: &TpccSpec,
    shared: &Shared,
    now: &str,
    i: usize,
    loaders: usize,
) -> Result<(), DriverError> {
    let seed = spec.seed;
    if i == 0 {
        piece(conn, shared, "item", None, rows::item(seed))?;
    }
    for w in (i as i64 + 1..=spec.warehouses as i64).step_by(loaders) {
        piece(conn, shared, "warehouse", Some(w), rows::warehouse(seed, w))?;
        piece(conn, shared, "district", Some(w), rows::district(seed, w))?;
        piece(conn, shared, "stock", Some(w), rows::stock(seed, w))?;
        piece(
            conn,
            shared,
            "customer",
            Some(w),
            rows::customer(seed, w, now),
        )?;
        piece(
            conn,
            shared,
            "history",
            Some(w),
            rows::history(seed, w, now),
        )?;
        let plan = rows::OrderPlan::new(seed, w);
        piece(
            conn,
            shared,
            "orders",
            Some(w),
            rows::orders(seed, w, &plan, now),
        )?;
        let lines = rows::order_line(seed, w, &plan, now);
        piece(conn, shared, "order_line", Some(w), lines)?;
        piece(conn, shared, "new_order", Some(w), rows::new_order(w))?;
    }
    Ok(())
}

fn piece<C: Session>(
    conn: &mut C,
    shared: &Shared,
    table: &str,
    warehouse: Option<i64>,
    mut next: rows::Next,
) -> Result<(), DriverError> {
    if STOP.is_set() {
        return Ok(());
    }
    let t = Instant::now();
    let n = conn.bulk(table, &mut *next).map_err(|e| match e {
        crate::backend::DbError::Sql { sqlstate, message } => {
            DriverError::sql(&sqlstate, message, &format!("bulk load of {table}"))
        }
        other => other.into_driver(table),
    })?;
    shared
        .rows
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .add(table, n);
    emit::line(&LoadLine {
        kind: "load",
        table,
        warehouse,
        rows: n,
        elapsed_s: emit::round_s(t.elapsed().as_secs_f64()),
    });
    Ok(())
}
