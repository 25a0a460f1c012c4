// The per-thread run loop: times each event with two Instant reads, adds it to the thread's
// own Tally under an uncontended lock, and stops at the deadline, after its share of
// `max_events`, or on request.

use super::event::{EventError, EventOutcome, EventRunner};
use super::plan::Plan;
use super::spec::NullSpec;
use super::stats::Tally;
use crate::backend::Session;
use crate::error::DriverError;
use crate::signal::STOP;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Null-backend behaviour: a fixed event period and a simulated latency instead of a measured one.
#[derive(Clone, Copy)]
pub struct Simulation {
    pub period: Option<Duration>,
    pub latency_ns: u64,
}

impl Simulation {
    /// The null spec's rate (split over `threads`) and latency.
    pub fn for_null(n: &NullSpec, threads: u32) -> Simulation {
        Simulation {
            period: (n.ops_per_s > 0.0)
                .then(|| Duration::from_secs_f64(threads as f64 / n.ops_per_s)),
            latency_ns: (n.latency_us * 1000.0).round() as u64,
        }
    }
}

/// Adds one event's outcome to a tally: its statements and rows always, then the event and
/// its latency, or the ignorable error that abandoned it; a fatal error is handed back.
pub fn tally_event(
    t: &mut Tally,
    out: &EventOutcome,
    result: Result<(), EventError>,
    ns: u64,
) -> Result<(), DriverError> {
    t.statements += out.statements;
    t.rows += out.rows;
    match result {
        Ok(()) => {
            t.events += 1;
            t.latency.record(ns);
        }
        Err(EventError::Ignorable(kind)) => t.errors.add(kind),
        Err(EventError::Fatal(e)) => return Err(e),
    }
    Ok(())
}

pub fn work<S: Session>(
    runner: &mut EventRunner<S>,
    plan: &Plan,
    tally: &Mutex<Tally>,
    deadline: Instant,
    sim: Option<Simulation>,
    max_events: Option<u64>,
) -> Result<(), DriverError> {
    let mut next = Instant::now();
    let mut attempted: u64 = 0;
    loop {
        if STOP.is_set() || max_events.is_some_and(|m| attempted >= m) {
            return Ok(());
        }
        attempted += 1;
        if let Some(period) = sim.and_then(|s| s.period) {
            next += period;
            if STOP.wait_until(next) {
                return Ok(());
            }
        }
        let mut out = EventOutcome::default();
        let t0 = Instant::now();
        let result = runner.run(plan, &mut out);
        let t1 = Instant::now();
        if t1 > deadline {
            return Ok(());
        }
        let ns = match sim {
            Some(s) => s.latency_ns,
            None => (t1 - t0).as_nanos() as u64,
        };
        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
        tally_event(&mut t, &out, result, ns)?;
    }
}
