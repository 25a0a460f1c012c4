// The Insert Benchmark (the `ibench` subcommand), one step at a time: connects every
// client's threads, prints `start`, releases them together, reports per-client `interval`
// lines from the main thread and ends with `summary`. Its spec, rows, pacing and counters
// live beside it.

pub mod client;
pub mod rows;
pub mod schedule;
pub mod spec;
pub mod stats;

use crate::backend::Session;
use crate::error::DriverError;
use crate::exec::failure::{wait, Failure, Wake};
use client::{ClientCtx, ClientShared, Querier};
use spec::IbenchSpec;
use stats::{ClientStats, IbIntervalLine, IbLine, IbStartLine, IbSummaryLine};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

/// The inserter may run this many statements ahead of the deleter.
const DELETE_QUEUE: usize = 8;
/// How long the reporter sleeps at most between looks at the client threads.
const POLL: Duration = Duration::from_millis(50);

workload!(
    /// The `ibench` subcommand: one step of the Insert Benchmark.
    Ibench: IbenchSpec = spec::parse_ibench, execute
);

/// Runs the step with the session type of the spec's server; returns the exit status (0,
/// or 130 when interrupted).
fn execute(spec: &IbenchSpec) -> Result<i32, DriverError> {
    on_server!(spec.backend, "ibench", C => drive::<C>(spec))
}

/// Every connection of one client, opened (and the queries prepared) before the start.
struct ClientConns<C: Session> {
    inserter: C,
    deleter: Option<C>,
    queriers: Vec<Querier<C>>,
}

impl<C: Session> ClientConns<C> {
    fn threads(&self) -> usize {
        1 + usize::from(self.deleter.is_some()) + self.queriers.len()
    }
}

/// Query thread q of client n: its own stream, reproducible from the spec seed.
fn query_seed(seed: u64, client: u32, q: u32) -> u64 {
    seed.wrapping_add(client as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(q as u64 + 1)
}

fn connect_all<C: Session>(
    spec: &IbenchSpec,
) -> Result<(Vec<ClientConns<C>>, String), DriverError> {
    let mut version = String::new();
    let mut open = || -> Result<C, DriverError> {
        let conn = C::connect(&spec.connection)?;
        version = conn.server_version().to_string();
        Ok(conn)
    };
    let mut clients = Vec::with_capacity(spec.clients as usize);
    for n in 1..=spec.clients {
        let inserter = open()?;
        let deleter = if spec.deletes { Some(open()?) } else { None };
        let mut queriers = Vec::new();
        for q in 0..spec.query_threads_per_client() {
            let table = &spec.tables[n as usize - 1];
            queriers.push(Querier::new(
                open()?,
                spec,
                table,
                query_seed(spec.seed, n, q),
            )?);
        }
        clients.push(ClientConns {
            inserter,
            deleter,
            queriers,
        });
    }
    Ok((clients, version))
}

/// What the reporter sees of the whole step.
struct Step<'a> {
    spec: &'a IbenchSpec,
    t0: Instant,
    clients: Vec<ClientShared>,
    inserters_left: AtomicUsize,
    failure: Failure,
}

impl Step<'_> {
    fn all_ended(&self) -> bool {
        self.clients
            .iter()
            .all(|c| c.threads_left.load(Ordering::SeqCst) == 0)
    }

    fn ctx(&self, n: usize) -> ClientCtx<'_> {
        ClientCtx {
            spec: self.spec,
            shared: &self.clients[n],
            number: n as u32 + 1,
            t0: self.t0,
            inserters_left: &self.inserters_left,
        }
    }

    fn totals(&self) -> Vec<ClientStats> {
        self.clients.iter().map(|c| *c.stats()).collect()
    }

    fn summary(&self, elapsed_s: f64, interrupted: bool) {
        let stats = self.totals();
        IbLine::Summary(&IbSummaryLine::new(
            &self.spec.step,
            elapsed_s,
            &stats,
            interrupted,
        ))
        .emit();
    }
}

fn drive<C: Session>(spec: &IbenchSpec) -> Result<i32, DriverError> {
    let (conns, version) = connect_all::<C>(spec)?;
    IbLine::Start(&IbStartLine {
        step: &spec.step,
        clients: spec.clients,
        server_version: &version,
    })
    .emit();
    let step = Step {
        spec,
        clients: conns
            .iter()
            .map(|c| ClientShared::new(c.threads()))
            .collect(),
        inserters_left: AtomicUsize::new(conns.len()),
        failure: Failure::default(),
        t0: Instant::now(),
    };
    std::thread::scope(|s| {
        for (n, conns) in conns.into_iter().enumerate() {
            spawn_client(s, &step, n, conns);
        }
        match report(&step) {
            Wake::Interrupted => {
                // Threads may sit in a statement that never returns: report without joining.
                step.summary(step.t0.elapsed().as_secs_f64(), true);
                std::process::exit(130);
            }
            Wake::Failed => step.failure.exit_fatal("a client thread stopped"),
            Wake::Finished | Wake::Deadline => {}
        }
    });
    let elapsed = step
        .totals()
        .iter()
        .filter_map(|c| c.end_s)
        .fold(0.0, f64::max);
    step.summary(elapsed, false);
    Ok(0)
}

fn spawn_client<'s, C: Session + 's>(
    s: &'s std::thread::Scope<'s, '_>,
    step: &'s Step<'s>,
    n: usize,
    conns: ClientConns<C>,
) {
    let (tx, rx) = match conns.deleter {
        Some(_) => {
            let (tx, rx) = sync_channel(DELETE_QUEUE);
            (Some(tx), Some(rx))
        }
        None => (None, None),
    };
    let mut inserter = conns.inserter;
    spawn_thread(s, step, n, move |cx| {
        let r = client::insert(&mut inserter, cx, tx);
        cx.inserters_left.fetch_sub(1, Ordering::SeqCst);
        r
    });
    if let (Some(mut deleter), Some(rx)) = (conns.deleter, rx) {
        spawn_thread(s, step, n, move |cx| client::delete(&mut deleter, cx, rx));
    }
    for mut q in conns.queriers {
        spawn_thread(s, step, n, move |cx| client::query(&mut q, cx));
    }
}

/// One thread of client n: a failure stops the step; the client ends with its last thread.
fn spawn_thread<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    step: &'s Step<'s>,
    n: usize,
    work: impl FnOnce(&ClientCtx) -> Result<(), DriverError> + Send + 's,
) {
    s.spawn(move || {
        let cx = step.ctx(n);
        if let Err(e) = work(&cx) {
            step.failure.record(e);
        }
        cx.shared.thread_ended(step.t0);
    });
}

/// Prints one interval line per running client every interval_s until the step ends. Each
/// line covers exactly [k - 1, k) × interval_s: threads file a completion under the interval
/// it happened in, so the reporter waking late does not move statements between lines.
fn report(step: &Step) -> Wake {
    let interval_s = step.spec.interval_s;
    let mut prev = vec![ClientStats::default(); step.clients.len()];
    for k in 1u64.. {
        let t_sec = interval_s * k as f64;
        let boundary = step.t0 + Duration::from_secs_f64(t_sec);
        match wait(Some(&step.failure), Some(boundary), POLL, || {
            step.all_ended()
        }) {
            Wake::Deadline => {}
            ended => return ended,
        }
        for (n, client) in step.clients.iter().enumerate() {
            let snap = client.stats().close_interval();
            if snap.end_s.is_none_or(|end| end > t_sec) {
                let line = IbIntervalLine::new(n as u32 + 1, interval_s, t_sec, &prev[n], &snap);
                IbLine::Interval(&line).emit();
            }
            prev[n] = snap;
        }
    }
    Wake::Finished
}
