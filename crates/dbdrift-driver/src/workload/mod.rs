// What every workload draws its data with: compiled parameter generators, placeholder
// parsing, random numbers, digit strings and timestamps. No workload's spec is read here.

pub mod digits;
pub mod params;
pub mod rng;
pub mod timestamp;
pub mod zipf;

pub enum Gen {
    Id,
    Uniform { lo: i64, hi: i64 },
    Ref { slot: usize, plus: i64 },
    Int(i64),
    Digits(u32),
}

pub struct ParamGen {
    pub gen: Gen,
    pub save: Option<usize>,
}

/// A piece of SQL text for the unprepared path: literal text or the n-th parameter (0-based).
#[derive(Debug, PartialEq, Eq)]
pub enum Segment {
    Text(String),
    Param(usize),
}

/// Finds `$n` placeholders outside single-quoted literals: (byte start, byte end, n).
fn placeholders(sql: &str) -> Vec<(usize, usize, usize)> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut quoted) = (0, false);
    while i < b.len() {
        match b[i] {
            b'\'' => quoted = !quoted,
            b'$' if !quoted => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j > i + 1 {
                    if let Ok(n) = sql[i + 1..j].parse::<usize>() {
                        out.push((i, j, n));
                    }
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

pub fn max_placeholder(sql: &str) -> usize {
    placeholders(sql).iter().map(|p| p.2).max().unwrap_or(0)
}

/// Splits SQL at its placeholders so literals can be inlined for `prepared: false`.
pub fn split_placeholders(sql: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut last = 0;
    for (start, end, n) in placeholders(sql) {
        if start > last {
            out.push(Segment::Text(sql[last..start].to_string()));
        }
        out.push(Segment::Param(n.saturating_sub(1)));
        last = end;
    }
    if last < sql.len() {
        out.push(Segment::Text(sql[last..].to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_inside_quotes_are_ignored() {
        assert_eq!(max_placeholder("SELECT '$3' , $1, $2"), 2);
    }

    #[test]
    fn split_keeps_text_around_parameters() {
        let s = split_placeholders("SELECT c FROM t WHERE id BETWEEN $1 AND $2");
        assert_eq!(
            s,
            vec![
                Segment::Text("SELECT c FROM t WHERE id BETWEEN ".into()),
                Segment::Param(0),
                Segment::Text(" AND ".into()),
                Segment::Param(1),
            ]
        );
    }

    #[test]
    fn two_digit_placeholder_is_one_parameter() {
        assert_eq!(max_placeholder("INSERT INTO t VALUES ($10)"), 10);
    }
}
