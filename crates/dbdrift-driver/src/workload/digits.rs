// ASCII rendering without format machinery: integers and sysbench's digit-group strings
// ("###########-###########-..."), written into caller-owned buffers.

use super::rng::Rng;

const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal form of `v` to `out`.
#[inline]
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

#[inline]
pub fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i] = PAIRS[d];
        tmp[i + 1] = PAIRS[d + 1];
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        tmp[i] = PAIRS[d];
        tmp[i + 1] = PAIRS[d + 1];
    } else {
        i -= 1;
        tmp[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&tmp[i..]);
}

pub const GROUP_DIGITS: usize = 11;

#[cfg(test)]
/// Length of `groups` groups of 11 digits joined by '-'.
pub fn digit_groups_len(groups: u32) -> usize {
    if groups == 0 {
        0
    } else {
        groups as usize * (GROUP_DIGITS + 1) - 1
    }
}

/// Appends `groups` groups of 11 uniform random digits joined by '-'. Each group takes
/// its digits from one 64-bit draw by repeated multiply-by-10 (high word is the digit).
#[inline]
pub fn push_digit_groups(out: &mut Vec<u8>, rng: &mut Rng, groups: u32) {
    for g in 0..groups {
        if g > 0 {
            out.push(b'-');
        }
        let mut x = rng.next_u64();
        let mut group = [0u8; GROUP_DIGITS];
        for d in group.iter_mut() {
            let m = x as u128 * 10;
            *d = b'0' + (m >> 64) as u8;
            x = m as u64;
        }
        out.extend_from_slice(&group);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut v = Vec::new();
        f(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn integers_render_like_display() {
        for v in [0i64, 7, 10, 99, 100, 12345, -1, -100, i64::MAX, i64::MIN] {
            assert_eq!(s(|o| push_i64(o, v)), v.to_string());
        }
    }

    #[test]
    fn ten_groups_are_119_chars_of_digits_and_dashes() {
        let mut r = Rng::new(1);
        let t = s(|o| push_digit_groups(o, &mut r, 10));
        assert_eq!(t.len(), 119);
        assert_eq!(digit_groups_len(10), 119);
        let parts: Vec<&str> = t.split('-').collect();
        assert_eq!(parts.len(), 10);
        assert!(parts
            .iter()
            .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())));
    }

    #[test]
    fn five_groups_are_59_chars() {
        let mut r = Rng::new(2);
        assert_eq!(s(|o| push_digit_groups(o, &mut r, 5)).len(), 59);
        assert_eq!(digit_groups_len(5), 59);
    }

    #[test]
    fn digits_cover_all_ten_values() {
        let mut r = Rng::new(3);
        let t = s(|o| push_digit_groups(o, &mut r, 50));
        for d in b'0'..=b'9' {
            assert!(t.as_bytes().contains(&d));
        }
    }
}
