// The `load` phase: the base vectors into `table` as (id, vector) rows, ids 1..=rows, by the
// backend's bulk path (COPY FROM STDIN, or multi-row INSERTs), `clients` connections each
// loading a contiguous range of rows. The index is built afterwards, by dbdrift (its build is
// timed on its own).

use super::data::{push_literal, RowReader};
use super::spec::{VectorSpec, PLACEHOLDER};
use super::{StartLine, Summary};
use crate::backend::Session;
use crate::emit;
use crate::error::DriverError;
use crate::exec::failure::{spawn_workers, wait, Failure, Wake};
use crate::signal::STOP;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Rows read from the file at once.
const BLOCK_ROWS: u64 = 1024;

/// Loader i's rows: `rows` split into `loaders` contiguous ranges, the first ones one row longer.
pub fn range(rows: u64, loaders: u64, i: u64) -> (u64, u64) {
    let (each, extra) = (rows / loaders, rows % loaders);
    let first = i * each + i.min(extra);
    (first, each + u64::from(i < extra))
}

pub fn load<C: Session>(spec: &VectorSpec) -> Result<i32, DriverError> {
    let loaders = (spec.clients as u64).min(spec.rows).max(1);
    let mut conns = Vec::new();
    for _ in 0..loaders {
        conns.push(C::connect(&spec.connection)?);
    }
    StartLine::new(spec, conns[0].server_version()).emit();
    let (before, after) = spec
        .load_value
        .split_once(PLACEHOLDER)
        .expect("the spec check keeps the placeholder in load_value");
    let t0 = Instant::now();
    let failure = Failure::default();
    let loaded = AtomicU64::new(0);
    let running = AtomicUsize::new(conns.len());
    std::thread::scope(|s| {
        spawn_workers(s, conns, &failure, &running, |conn, i| {
            let (first, count) = range(spec.rows, loaders, i as u64);
            load_range(conn, spec, first, count, (before, after), &loaded)
        });
        match wait(Some(&failure), None, Duration::from_millis(100), || {
            running.load(Ordering::SeqCst) == 0
        }) {
            Wake::Failed => failure.exit_fatal("a loader stopped"),
            Wake::Interrupted => crate::signal::exit_interrupted(|| {
                let elapsed = t0.elapsed().as_secs_f64();
                emit::line(&Summary::load(loaded.load(Ordering::SeqCst), elapsed, true));
            }),
            Wake::Finished | Wake::Deadline => {}
        }
    });
    if let Some(e) = failure.take() {
        return Err(e);
    }
    emit::line(&Summary::load(loaded.load(Ordering::SeqCst), t0.elapsed().as_secs_f64(), false));
    Ok(0)
}

fn load_range<C: Session>(
    conn: &mut C,
    spec: &VectorSpec,
    first: u64,
    count: u64,
    (before, after): (&str, &str),
    loaded: &AtomicU64,
) -> Result<(), DriverError> {
    let dim = spec.dim as usize;
    let mut reader = RowReader::open(&spec.base_path, spec.rows, spec.dim as u64, first, count)?;
    let (mut block, mut at, mut id) = (Vec::new(), 0usize, first as i64 + 1);
    let mut read_error = None;
    let mut value = String::new();
    let sql = format!("bulk load of {}", spec.table);
    conn.bulk(&spec.table, &mut |w| {
        if STOP.is_set() {
            return false;
        }
        if at * dim >= block.len() {
            match reader.next_rows(BLOCK_ROWS) {
                Ok(rows) if !rows.is_empty() => (block, at) = (rows, 0),
                Ok(_) => return false,
                Err(e) => {
                    read_error = Some(e);
                    return false;
                }
            }
        }
        value.clear();
        value.push_str(before);
        push_literal(&mut value, &block[at * dim..(at + 1) * dim]);
        value.push_str(after);
        w.int(id).raw(&value).end();
        loaded.fetch_add(1, Ordering::Relaxed);
        (at, id) = (at + 1, id + 1);
        true
    })
    .map_err(|e| e.into_driver(&sql))?;
    match read_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::range;

    #[test]
    fn the_ranges_cover_every_row_once_in_order() {
        let ranges: Vec<_> = (0..3).map(|i| range(10, 3, i)).collect();
        assert_eq!(ranges, vec![(0, 4), (4, 3), (7, 3)]);
        assert_eq!(range(2, 1, 0), (0, 2));
    }
}
