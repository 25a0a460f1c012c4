// The deterministic null run: intervals computed from the declared rate, no threads, no
// clocks, client CPU 0, so the output is byte-for-byte reproducible (the golden file mode).

use super::plan::Plan;
use super::run::DRIVER_VERSION;
use super::spec::{NullSpec, RunSpec};
use super::stats::{IntervalLine, StartLine, SummaryLine, Tally, WarmupLine};
use crate::emit::{self, round_s};
use crate::spec::PROTOCOL;

pub fn run(spec: &RunSpec, plan: &Plan, null: &NullSpec) -> i32 {
    emit::line(&StartLine {
        kind: "start",
        protocol: PROTOCOL,
        driver: DRIVER_VERSION,
        backend: spec.backend.as_str(),
        threads: spec.threads,
        server_version: None,
        backend_pids: &[],
    });
    emit::line(&WarmupLine {
        kind: "warmup",
        duration_s: spec.warmup_s,
        events: (null.ops_per_s * spec.warmup_s).round() as u64,
    });
    let latency_ns = (null.latency_us * 1000.0).round() as u64;
    let count = (spec.duration_s / spec.interval_s - 1e-9).ceil().max(1.0) as u64;
    let mut total = Tally::default();
    for i in 0..count {
        let start_s = round_s(i as f64 * spec.interval_s);
        let end_s = round_s(((i + 1) as f64 * spec.interval_s).min(spec.duration_s));
        let events = (null.ops_per_s * (end_s - start_s)).round() as u64;
        let mut t = Tally {
            events,
            statements: events * plan.statements_per_event,
            rows: events * plan.counted_statements_per_event * null.rows_per_statement,
            ..Tally::default()
        };
        t.latency.record_n(latency_ns, events);
        emit::line(&IntervalLine::new(i, start_s, end_s, &t));
        total.merge(&t);
    }
    emit::line(&SummaryLine {
        kind: "summary",
        duration_s: spec.duration_s,
        events: total.events,
        statements: total.statements,
        rows: total.rows,
        errors: total.errors,
        latency_us: total.latency.summary(),
        client_cpu_user_s: 0.0,
        client_cpu_sys_s: 0.0,
        interrupted: false,
    });
    0
}
