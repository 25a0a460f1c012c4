// What every workload counts with: latency histograms, the ignorable error classes and
// their counts, and the driver's own CPU time. Each workload's counters and lines are its own.

pub mod histogram;

use serde::Serialize;

/// An ignorable SQLSTATE class (protocol.md): the event is abandoned and counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignorable {
    Deadlock,
    Serialization,
    Lock,
    Duplicate,
}

impl Ignorable {
    pub fn from_sqlstate(state: &[u8]) -> Option<Ignorable> {
        match state {
            b"40P01" => Some(Ignorable::Deadlock),
            b"40001" => Some(Ignorable::Serialization),
            b"55P03" => Some(Ignorable::Lock),
            b"23505" => Some(Ignorable::Duplicate),
            _ => None,
        }
    }
}

#[derive(Serialize, Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCounts {
    pub deadlock: u64,
    pub serialization: u64,
    pub lock: u64,
    pub duplicate: u64,
}

impl ErrorCounts {
    pub fn add(&mut self, kind: Ignorable) {
        match kind {
            Ignorable::Deadlock => self.deadlock += 1,
            Ignorable::Serialization => self.serialization += 1,
            Ignorable::Lock => self.lock += 1,
            Ignorable::Duplicate => self.duplicate += 1,
        }
    }

    pub fn merge(&mut self, o: &ErrorCounts) {
        self.deadlock += o.deadlock;
        self.serialization += o.serialization;
        self.lock += o.lock;
        self.duplicate += o.duplicate;
    }
}

/// User and system CPU seconds of this process so far, from getrusage(RUSAGE_SELF).
pub fn client_cpu_s() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we own; no other invariants.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}
