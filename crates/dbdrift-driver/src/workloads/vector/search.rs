// The `search` phase: `clients` connections, each running its session statements (the search
// setting) and then the k-nearest-neighbour query for one query vector after another, without
// pause: client c takes queries s + c, s + c + clients, ... round the set (s: the seed). Each answer's ids are
// compared with the query's exact neighbours (recall@k). Queries that end in the warm-up are
// not counted; in the measured window each is timed into a histogram and filed under its
// interval, and a query's recall counts once, at its first answer in the window.

use super::data::{read_f32, read_i32, with_vector};
use super::spec::VectorSpec;
use super::{IntervalLine, PhaseLine, StartLine, Summary};
use crate::backend::Session;
use crate::emit;
use crate::error::DriverError;
use crate::exec::failure::{spawn_workers, wait, Failure, Wake};
use crate::signal::STOP;
use crate::stats::histogram::Histogram;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(50);

/// Of a query's answer (ids, row numbers + 1), how many are among its true k nearest.
pub fn hits(ids: &[i64], truth: &[i32], k: usize) -> u32 {
    let truth = &truth[..k.min(truth.len())];
    ids.iter()
        .take(k)
        .filter(|&&id| truth.iter().any(|&t| i64::from(t) + 1 == id))
        .count() as u32
}

/// One client's counts: queries per interval, the window's latencies, each query's hits at
/// its first answer in the window (-1: not answered yet).
struct ClientStats {
    intervals: Vec<u64>,
    latency: Histogram,
    hits: Vec<i32>,
}

struct Shared<'a> {
    spec: &'a VectorSpec,
    sql: Vec<String>,
    truth: Vec<i32>,
    t0: Instant,
    ends: Vec<f64>,
    clients: Vec<Mutex<ClientStats>>,
    failure: Failure,
    running: AtomicUsize,
}

impl Shared<'_> {
    fn client(&self, i: usize) -> MutexGuard<'_, ClientStats> {
        self.clients[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn window_end(&self) -> f64 {
        self.spec.warmup_s + self.spec.duration_s
    }

    fn summary(&self, elapsed_s: f64, interrupted: bool) {
        let mut latency = Histogram::new();
        let mut hits = vec![-1i32; self.spec.queries as usize];
        for i in 0..self.clients.len() {
            let g = self.client(i);
            latency.merge(&g.latency);
            for (a, &b) in hits.iter_mut().zip(g.hits.iter()) {
                if *a < 0 {
                    *a = b;
                }
            }
        }
        let seen: Vec<i32> = hits.into_iter().filter(|&h| h >= 0).collect();
        let recall = (!seen.is_empty()).then(|| {
            seen.iter().map(|&h| h as f64).sum::<f64>() / (seen.len() as f64 * self.spec.k as f64)
        });
        emit::line(&Summary::search(elapsed_s, &latency, recall, seen.len() as u64, interrupted));
    }
}

pub fn search<C: Session>(spec: &VectorSpec) -> Result<i32, DriverError> {
    let queries = read_f32(&spec.queries_path, "query vectors", spec.queries as u64, spec.dim as u64)?;
    let truth = read_i32(&spec.truth_path, "exact neighbours", spec.queries as u64, spec.truth_k as u64)?;
    if let Some(&bad) = truth.iter().find(|&&t| t < 0 || t as u64 >= spec.rows) {
        return Err(DriverError::spec(format!(
            "exact neighbours {} name row {bad}, outside the {} rows",
            spec.truth_path, spec.rows
        )));
    }
    let dim = spec.dim as usize;
    let sql: Vec<String> = queries.chunks_exact(dim).map(|q| with_vector(&spec.query_sql, q)).collect();
    let mut conns = Vec::with_capacity(spec.clients as usize);
    for _ in 0..spec.clients {
        let mut conn = C::connect(&spec.connection)?;
        for s in &spec.session_sql {
            conn.query(s).map_err(|e| e.into_driver(s))?;
        }
        conns.push(conn);
    }
    StartLine::new(spec, conns[0].server_version()).emit();
    let mut ends = Vec::new();
    let mut t = spec.warmup_s;
    while t + spec.interval_s < spec.warmup_s + spec.duration_s - 1e-9 {
        t += spec.interval_s;
        ends.push(t);
    }
    ends.push(spec.warmup_s + spec.duration_s);
    let shared = Shared {
        clients: (0..conns.len())
            .map(|_| {
                Mutex::new(ClientStats {
                    intervals: vec![0; ends.len()],
                    latency: Histogram::new(),
                    hits: vec![-1; spec.queries as usize],
                })
            })
            .collect(),
        spec,
        sql,
        truth,
        t0: Instant::now(),
        ends,
        failure: Failure::default(),
        running: AtomicUsize::new(conns.len()),
    };
    std::thread::scope(|s| {
        let (failure, running) = (&shared.failure, &shared.running);
        spawn_workers(s, conns, failure, running, |conn, i| client(conn, &shared, i));
        report(&shared);
        STOP.request(false);
    });
    shared.summary(spec.duration_s, false);
    Ok(0)
}

fn client<C: Session>(conn: &mut C, shared: &Shared, i: usize) -> Result<(), DriverError> {
    let spec = shared.spec;
    let (n, k, width) = (shared.sql.len(), spec.k as usize, spec.truth_k as usize);
    let mut q = (spec.seed as usize).wrapping_add(i) % n; // each repeat (its seed) starts elsewhere
    let mut ids = Vec::with_capacity(k);
    while !STOP.is_set() {
        let start = Instant::now();
        let result = conn.query(&shared.sql[q]).map_err(|e| e.into_driver(&shared.sql[q]))?;
        let end = Instant::now();
        let t = (end - shared.t0).as_secs_f64();
        if t >= shared.window_end() {
            return Ok(());
        }
        if t >= spec.warmup_s {
            ids.clear();
            for row in &result.rows {
                let id = row.first().and_then(|v| v.as_deref()).and_then(|v| v.parse::<i64>().ok());
                ids.push(id.ok_or_else(|| {
                    DriverError::spec(format!("the search returned {row:?}: its first column must be the id"))
                })?);
            }
            let got = hits(&ids, &shared.truth[q * width..(q + 1) * width], k);
            let interval = shared.ends.partition_point(|&e| e <= t).min(shared.ends.len() - 1);
            let mut g = shared.client(i);
            g.intervals[interval] += 1;
            g.latency.record((end - start).as_nanos() as u64);
            if g.hits[q] < 0 {
                g.hits[q] = got as i32;
            }
        }
        q = (q + spec.clients as usize) % n;
    }
    Ok(())
}

/// Prints the window's edges (phase lines: dbdrift samples the host between them) and an
/// interval line at each interval's end, until the window closes.
fn report(shared: &Shared) {
    let mut start = shared.spec.warmup_s;
    wait_until(shared, shared.t0 + Duration::from_secs_f64(start));
    emit::line(&PhaseLine::new("measure", start));
    for (i, &end) in shared.ends.iter().enumerate() {
        wait_until(shared, shared.t0 + Duration::from_secs_f64(end));
        let queries: u64 = (0..shared.clients.len()).map(|c| shared.client(c).intervals[i]).sum();
        emit::line(&IntervalLine::new(end - shared.spec.warmup_s, end - start, queries));
        start = end;
    }
    emit::line(&PhaseLine::new("end", shared.window_end()));
}

fn wait_until(shared: &Shared, deadline: Instant) {
    let none_running = || shared.running.load(Ordering::SeqCst) == 0;
    match wait(Some(&shared.failure), Some(deadline), POLL, none_running) {
        Wake::Deadline => {}
        Wake::Finished if Instant::now() >= deadline => {}
        Wake::Finished => shared.failure.exit_fatal("every client stopped before the end of the run"),
        Wake::Failed => shared.failure.exit_fatal("a client stopped"),
        Wake::Interrupted => crate::signal::exit_interrupted(|| {
            let t = shared.t0.elapsed().as_secs_f64();
            shared.summary((t - shared.spec.warmup_s).clamp(0.0, shared.spec.duration_s), true);
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::hits;

    #[test]
    fn hits_count_ids_among_the_true_k_nearest_with_ids_one_above_row_numbers() {
        let truth = [4, 7, 1, 9, 3];
        assert_eq!(hits(&[5, 8, 2], &truth, 3), 3);
        assert_eq!(hits(&[5, 10, 4], &truth, 3), 1); // 10 is row 9, outside the true 3 nearest
        assert_eq!(hits(&[5, 8, 2, 10], &truth, 3), 3); // only the first k answers count
        assert_eq!(hits(&[], &truth, 3), 0);
    }
}
