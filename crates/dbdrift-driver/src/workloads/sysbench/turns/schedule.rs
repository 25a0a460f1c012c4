// The turn schedule: which target runs in which turn, the warm-up's even number of rounds,
// and the measured turn length, fixed once at the warm end. Arithmetic on Instants; the one
// wait is a worker's for that decision. It reads no counters and prints nothing.

use crate::signal::STOP;
use crate::workloads::sysbench::spec::{RunSpec, TurnsSpec};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Fewest measured rounds a grown turn may leave (the interval uses 20 batches of rounds).
const MIN_ROUNDS: f64 = 20.0;

/// The measured part of the schedule, fixed once the warm-up is over.
#[derive(Clone, Copy, Debug)]
pub(super) struct Measured {
    pub turn_s: f64,
    pub end_turn: u64,
}

/// Which target runs in which turn, and where warmup and measurement start and end.
/// Warm turns are `warm_turn_s` long. Measured turns are too, unless `turn_events` is set:
/// then the reporter measures the mean event time over the warm-up and fixes the measured
/// turn length at the warm end (workers that reach it first wait for that, microseconds).
pub(super) struct Schedule {
    pub(super) t0: Instant,
    pub(super) warm_turn_s: f64,
    pub(super) targets: u64,
    pub(super) warm_turns: u64,
    pub(super) duration_s: f64,
    pub(super) turn_events: Option<f64>,
    pub(super) rounds: Vec<Vec<usize>>,
    pub(super) measured: OnceLock<Measured>,
}

impl Schedule {
    pub(super) fn new(spec: &RunSpec, alt: &TurnsSpec) -> Schedule {
        let n = alt.connections.len() as u64;
        let round_s = alt.turn_s * n as f64;
        // An even number of warm rounds: the first measured round runs in the listed order.
        let mut warm_rounds = (spec.warmup_s / round_s - 1e-9).ceil().max(0.0) as u64;
        warm_rounds += warm_rounds % 2;
        let sched = Schedule {
            t0: Instant::now(),
            warm_turn_s: alt.turn_s,
            targets: n,
            warm_turns: warm_rounds * n,
            duration_s: spec.duration_s,
            turn_events: alt.turn_events,
            rounds: alt.rounds.clone(),
            measured: OnceLock::new(),
        };
        if sched.warm_turns == 0 || sched.turn_events.is_none() {
            sched.decide(None); // nothing to learn from: measured turns are turn_s
        }
        sched
    }

    /// Fixes the measured turns: `turn_events` mean event times (thread-wise) per turn, never
    /// shorter than the warm turn, nor so long that fewer than MIN_ROUNDS rounds remain.
    pub(super) fn decide(&self, mean_event_s: Option<f64>) -> Measured {
        *self.measured.get_or_init(|| {
            let n = self.targets as f64;
            let wanted = match (self.turn_events, mean_event_s) {
                (Some(k), Some(m)) if m.is_finite() => k * m,
                _ => 0.0,
            };
            let cap = self.duration_s / (n * MIN_ROUNDS);
            let turn_s = wanted.min(cap).max(self.warm_turn_s);
            let rounds = (self.duration_s / (turn_s * n)).round().max(1.0) as u64;
            Measured {
                turn_s,
                end_turn: self.warm_turns + rounds * self.targets,
            }
        })
    }

    pub(super) fn measured(&self) -> Option<Measured> {
        self.measured.get().copied()
    }

    /// For a worker at the warm end: the measured schedule once decided; None on a stop.
    pub(super) fn wait_measured(&self) -> Option<Measured> {
        loop {
            if let Some(m) = self.measured() {
                return Some(m);
            }
            if STOP.is_set() {
                return None;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// The measured schedule, or the warm turns continued while it is not decided yet.
    pub(super) fn measured_or_warm(&self) -> Measured {
        self.measured().unwrap_or(Measured {
            turn_s: self.warm_turn_s,
            end_turn: self.warm_turns,
        })
    }

    pub(super) fn at(&self, turn: u64) -> Instant {
        if turn <= self.warm_turns {
            return self.t0 + Duration::from_secs_f64(turn as f64 * self.warm_turn_s);
        }
        let m = self.measured_or_warm();
        self.warm_end() + Duration::from_secs_f64((turn - self.warm_turns) as f64 * m.turn_s)
    }

    pub(super) fn turn_of(&self, now: Instant) -> u64 {
        let warm_end = self.warm_end();
        if now < warm_end {
            return (now.saturating_duration_since(self.t0).as_secs_f64() / self.warm_turn_s)
                as u64;
        }
        let m = self.measured_or_warm();
        self.warm_turns + (now.duration_since(warm_end).as_secs_f64() / m.turn_s) as u64
    }

    /// Whose turn `turn` is. Rounds are counted from the start of the measurement (and
    /// separately within the warm-up), so the measured turns begin the cycle of rounds.
    pub(super) fn target(&self, turn: u64) -> usize {
        let round = if turn < self.warm_turns {
            turn / self.targets
        } else {
            (turn - self.warm_turns) / self.targets
        };
        let pos = self.position(turn);
        if !self.rounds.is_empty() {
            return self.rounds[(round % self.rounds.len() as u64) as usize][pos];
        }
        if round % 2 == 0 {
            pos
        } else {
            self.targets as usize - 1 - pos
        }
    }

    /// The place of `turn` in its round (0 = first).
    pub(super) fn position(&self, turn: u64) -> usize {
        (turn % self.targets) as usize
    }

    pub(super) fn warm_end(&self) -> Instant {
        self.t0 + Duration::from_secs_f64(self.warm_turns as f64 * self.warm_turn_s)
    }

    /// The scheduled end; None before the measured turns are decided.
    pub(super) fn end(&self) -> Option<Instant> {
        self.measured().map(|m| self.at(m.end_turn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(n: u64) -> Schedule {
        let s = Schedule {
            t0: Instant::now(),
            warm_turn_s: 0.1,
            targets: n,
            warm_turns: 0,
            duration_s: 10.0 * n as f64,
            turn_events: None,
            rounds: Vec::new(),
            measured: OnceLock::new(),
        };
        s.decide(None);
        s
    }

    fn adaptive(warmup_s: f64, duration_s: f64) -> Schedule {
        let spec: RunSpec = serde_json::from_str(&format!(
            r#"{{"protocol":3,"backend":"null","seed":1,"threads":1,"warmup_s":{warmup_s},"duration_s":{duration_s},
                "interval_s":1,"tables":1,"table_size":1,"rand":{{"type":"uniform"}},"prepared":true,
                "workload":{{"transaction":false,"id_max":1,"statements":[]}},
                "turns":{{"connections":[{{}},{{}}],"turn_s":0.01,"turn_events":10}}}}"#
        ))
        .unwrap();
        Schedule::new(&spec, spec.turns.as_ref().unwrap())
    }

    #[test]
    fn two_targets_take_turns_a_b_then_b_a() {
        let s = sched(2);
        let order: Vec<usize> = (0..8).map(|k| s.target(k)).collect();
        assert_eq!(order, vec![0, 1, 1, 0, 0, 1, 1, 0]);
    }

    #[test]
    fn given_rounds_are_cycled_from_the_first_measured_turn() {
        let mut s = sched(3);
        s.rounds = vec![vec![0, 1, 2], vec![2, 0, 1]];
        let order: Vec<usize> = (0..9).map(|k| s.target(k)).collect();
        assert_eq!(order, vec![0, 1, 2, 2, 0, 1, 0, 1, 2]);
        assert_eq!(s.position(4), 1);
        s.warm_turns = 3; // one warm round: measurement still starts with the first round
        assert_eq!(s.target(3), 0);
        assert_eq!(s.target(6), 2);
    }

    #[test]
    fn three_targets_reverse_every_other_round() {
        let s = sched(3);
        let order: Vec<usize> = (0..6).map(|k| s.target(k)).collect();
        assert_eq!(order, vec![0, 1, 2, 2, 1, 0]);
    }

    #[test]
    fn warm_rounds_are_even_so_measurement_starts_in_listed_order() {
        let spec: RunSpec = serde_json::from_str(
            r#"{"protocol":3,"backend":"null","seed":1,"threads":1,"warmup_s":0.25,"duration_s":1.0,
                "interval_s":1,"tables":1,"table_size":1,"rand":{"type":"uniform"},"prepared":true,
                "workload":{"transaction":false,"id_max":1,"statements":[]},"turns":{"connections":[{},{}],"turn_s":0.1}}"#,
        )
        .unwrap();
        let s = Schedule::new(&spec, spec.turns.as_ref().unwrap());
        assert_eq!(s.warm_turns, 4); // 0.25 s is 1.25 rounds of 0.2 s: 2 rounds
        assert_eq!(s.measured().unwrap().end_turn, 4 + 10);
        assert_eq!(s.target(s.warm_turns), 0);
    }

    #[test]
    fn turns_grow_to_turn_events_mean_event_times_after_the_warmup() {
        let s = adaptive(1.0, 20.0);
        assert!(s.measured().is_none()); // decided at the warm end, from the warm-up's events
        assert_eq!(s.warm_turns, 100);
        let m = s.decide(Some(0.004)); // 4 ms events, 10 per turn: 40 ms turns
        assert!((m.turn_s - 0.04).abs() < 1e-12);
        assert_eq!(m.end_turn, 100 + 2 * 250); // 20 s of turns of 2 x 40 ms
                                               // turns keep counting across the change of length
        let warm_end = s.warm_end();
        assert_eq!(s.turn_of(warm_end - Duration::from_micros(1)), 99);
        assert_eq!(s.turn_of(warm_end + Duration::from_millis(41)), 101);
        assert_eq!(s.at(102), warm_end + Duration::from_secs_f64(0.08));
        assert_eq!(s.end().unwrap(), warm_end + Duration::from_secs_f64(20.0));
    }

    #[test]
    fn short_events_keep_turn_s_and_long_ones_leave_at_least_twenty_rounds() {
        assert!((adaptive(1.0, 20.0).decide(Some(0.00005)).turn_s - 0.01).abs() < 1e-12);
        assert!((adaptive(1.0, 20.0).decide(None).turn_s - 0.01).abs() < 1e-12);
        let m = adaptive(1.0, 20.0).decide(Some(0.2)); // 2 s turns would leave 5 rounds
        assert!((m.turn_s - 0.5).abs() < 1e-12);
        assert_eq!((m.end_turn - 100) / 2, 20);
    }

    #[test]
    fn without_a_warmup_there_is_nothing_to_learn_from() {
        let s = adaptive(0.0, 2.0);
        assert_eq!(s.warm_turns, 0);
        assert!((s.measured().unwrap().turn_s - 0.01).abs() < 1e-12);
    }
}
