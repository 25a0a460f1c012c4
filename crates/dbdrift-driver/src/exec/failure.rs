// The first error of a multi-threaded verb and the main thread's wait on its workers: every
// subcommand records failures and polls through this module. It never prints on its own;
// `exit_fatal` is the one place a failure ends the process without joining the workers.

use crate::emit;
use crate::error::DriverError;
use crate::signal::STOP;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::Scope;
use std::time::{Duration, Instant};

/// The first error any worker hit. Recording one asks every thread to stop.
#[derive(Default)]
pub struct Failure(Mutex<Option<DriverError>>);

impl Failure {
    /// Keeps `e` unless an earlier error is already kept, and requests a stop.
    pub fn record(&self, e: DriverError) {
        self.keep(e);
        STOP.request(false);
    }

    /// A worker's end: keeps its error if it failed, counts it out of `running` and wakes
    /// the main thread's wait, so that the wait sees the failure or the last worker at once.
    pub fn worker_ended(&self, result: Result<(), DriverError>, running: &AtomicUsize) {
        if let Err(e) = result {
            self.record(e);
        }
        running.fetch_sub(1, Ordering::SeqCst);
        STOP.notify();
    }

    fn keep(&self, e: DriverError) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    }

    pub fn is_set(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    pub fn take(&self) -> Option<DriverError> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The kept error, or an I/O error saying `lost` when a worker stopped without one.
    pub fn into_error(self, lost: &str) -> DriverError {
        self.0
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(|| DriverError::new(crate::error::ErrorClass::Io, lost))
    }

    /// Prints the kept error's fatal line and exits with its status, without joining: a
    /// worker may sit in a statement (a COPY, a CREATE INDEX) that runs for minutes.
    /// `lost` describes the failure when a worker stopped without leaving an error.
    pub fn exit_fatal(&self, lost: &str) -> ! {
        let e = self
            .take()
            .unwrap_or_else(|| DriverError::new(crate::error::ErrorClass::Io, lost));
        emit::fatal(&e);
        std::process::exit(e.exit_code())
    }
}

/// Runs `work(conn, i)` on a thread of the scope `s` for each connection i, each ending
/// through `Failure::worker_ended`, so that the caller's `wait` sees the first failure and
/// the last worker to end.
pub fn spawn_workers<'scope, C, F>(
    s: &'scope Scope<'scope, '_>,
    conns: Vec<C>,
    failure: &'scope Failure,
    running: &'scope AtomicUsize,
    work: F,
) where
    C: Send + 'scope,
    F: Fn(&mut C, usize) -> Result<(), DriverError> + Copy + Send + 'scope,
{
    for (i, mut conn) in conns.into_iter().enumerate() {
        s.spawn(move || failure.worker_ended(work(&mut conn, i), running));
    }
}

/// Why `wait` returned.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake {
    /// A worker recorded a failure.
    Failed,
    /// A signal asked the driver to stop.
    Interrupted,
    /// `finished` said every worker is done.
    Finished,
    /// The deadline passed with workers still running.
    Deadline,
}

/// Waits on the workers until one of the `Wake` conditions holds, checked in that order.
/// Workers notify STOP when they end, but a notify between a check and the wait is missed, so
/// each wait is bounded by `poll`. Without `failure` the caller learns of errors from its
/// workers' results (they stop on STOP and end): the wait goes on until they have.
pub fn wait(
    failure: Option<&Failure>,
    deadline: Option<Instant>,
    poll: Duration,
    finished: impl Fn() -> bool,
) -> Wake {
    loop {
        if failure.is_some_and(Failure::is_set) {
            return Wake::Failed;
        }
        if STOP.interrupted() {
            return Wake::Interrupted;
        }
        if finished() {
            return Wake::Finished;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Wake::Deadline;
        }
        let wake = deadline.map_or(now + poll, |d| d.min(now + poll));
        if STOP.wait_notified(wake) {
            // A stop without a signal: workers are ending; do not spin while they do.
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn the_first_recorded_failure_is_the_one_kept() {
        let f = Failure::default();
        assert!(!f.is_set());
        // `keep`, not `record`: the unit tests share one process-wide STOP.
        f.keep(DriverError::spec("first"));
        f.keep(DriverError::spec("second"));
        assert!(f.is_set());
        assert_eq!(f.take().unwrap().message, "first");
        assert!(f.take().is_none());
    }

    #[test]
    fn wait_returns_finished_once_the_workers_are_done() {
        let running = AtomicUsize::new(0);
        let wake = wait(None, None, Duration::from_millis(1), || {
            running.load(Ordering::SeqCst) == 0
        });
        assert_eq!(wake, Wake::Finished);
    }

    #[test]
    fn wait_returns_at_a_deadline_already_past() {
        let past = Instant::now();
        let wake = wait(None, Some(past), Duration::from_millis(1), || false);
        assert_eq!(wake, Wake::Deadline);
    }
}
