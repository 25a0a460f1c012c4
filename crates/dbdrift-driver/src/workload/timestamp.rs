// Local wall-clock time as SQL DATETIME text, for rows that carry the time they were written
// (Insert Benchmark inserts, TPROC-C's loaded dates). The one clock read of the data generators.

/// `YYYY-MM-DD HH:MM:SS`
pub const TIMESTAMP_LEN: usize = 19;

/// The current local time as `YYYY-MM-DD HH:MM:SS` (localtime_r reads the TZ setting).
pub fn local_timestamp() -> [u8; TIMESTAMP_LEN] {
    // SAFETY: time(NULL) has no preconditions; localtime_r writes only into the zeroed tm
    // we own and returns null on failure, which we check.
    let tm = unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return *b"1970-01-01 00:00:00";
        }
        tm
    };
    format_timestamp(
        tm.tm_year as i64 + 1900,
        [tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec],
    )
}

/// Formats year and [month, day, hour, minute, second] as `YYYY-MM-DD HH:MM:SS`.
fn format_timestamp(year: i64, parts: [i32; 5]) -> [u8; TIMESTAMP_LEN] {
    let mut out = *b"0000-00-00 00:00:00";
    let year = year.clamp(0, 9999) as i32;
    let two = |out: &mut [u8], v: i32| {
        out[0] = b'0' + (v / 10 % 10) as u8;
        out[1] = b'0' + (v % 10) as u8;
    };
    two(&mut out[0..2], year / 100);
    two(&mut out[2..4], year % 100);
    for (i, v) in parts.into_iter().enumerate() {
        two(&mut out[5 + 3 * i..7 + 3 * i], v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_zero_padded_local_time() {
        assert_eq!(
            &format_timestamp(2026, [1, 2, 3, 4, 5]),
            b"2026-01-02 03:04:05"
        );
        assert_eq!(
            &format_timestamp(1999, [12, 31, 23, 59, 60]),
            b"1999-12-31 23:59:60"
        );
        let now = local_timestamp();
        let s = std::str::from_utf8(&now).unwrap();
        assert!(s.starts_with("20") && s.as_bytes()[10] == b' ', "{s}");
    }
}
