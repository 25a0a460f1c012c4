// Stopping: SIGINT/SIGTERM are blocked in every thread and taken by one waiter thread, which
// raises the shared stop so the reporter wakes at once. Workers only read an atomic per event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

pub struct Stop {
    flag: AtomicBool,
    interrupted: AtomicBool,
    lock: Mutex<()>,
    cv: Condvar,
}

pub static STOP: Stop = Stop {
    flag: AtomicBool::new(false),
    interrupted: AtomicBool::new(false),
    lock: Mutex::new(()),
    cv: Condvar::new(),
};

impl Stop {
    /// Asks every thread to stop; `interrupted` marks a signal rather than an error or the end.
    pub fn request(&self, interrupted: bool) {
        if interrupted {
            self.interrupted.store(true, Ordering::SeqCst);
        }
        self.flag.store(true, Ordering::SeqCst);
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }

    #[inline]
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Sleeps until `deadline` or a stop request; returns true if a stop was requested.
    pub fn wait_until(&self, deadline: Instant) -> bool {
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.flag.load(Ordering::SeqCst) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            g = match self.cv.wait_timeout(g, deadline - now) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Wakes waiters without requesting a stop (a worker finished, say).
    pub fn notify(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }

    /// Waits up to `deadline` for a notify or stop; returns true if a stop was requested.
    pub fn wait_notified(&self, deadline: Instant) -> bool {
        let g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.flag.load(Ordering::SeqCst) {
            return true;
        }
        let now = Instant::now();
        if now < deadline {
            let _ = self.cv.wait_timeout(g, deadline - now);
        }
        self.flag.load(Ordering::SeqCst)
    }
}

/// After a signal: gives workers a moment to record the event in hand, runs `report` (the
/// summary of what finished) and exits with 130, without joining the workers, since one may
/// sit in a read that never returns.
pub fn exit_interrupted(report: impl FnOnce()) -> ! {
    std::thread::sleep(Duration::from_millis(50));
    report();
    std::process::exit(130)
}

/// Blocks SIGINT/SIGTERM in this (the main) thread, so in every thread spawned later, and
/// starts the thread that waits for them. Call before spawning anything else.
pub fn install() {
    // SAFETY: plain libc signal-set calls on a set we own; sigwait only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let _ = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || loop {
                let mut sig: libc::c_int = 0;
                if libc::sigwait(&set, &mut sig) == 0 {
                    STOP.request(true);
                }
            });
    }
}
