// TPC-C's random inputs (clause 2.1.6 and 4.3.2): NURand and its C constants, last names from
// the syllable table, the random strings of the initial population, and the transaction mix
// as a shuffled deck. Pure functions of a seeded Rng: no SQL, no clocks.

use crate::workload::rng::Rng;

/// Clause 4.3.2.3: the last name of number n (0..=999) is the syllables of its three digits.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

pub fn last_name(n: u32) -> String {
    let n = n % 1000;
    let mut s = String::with_capacity(15);
    for d in [n / 100, (n / 10) % 10, n % 10] {
        s.push_str(SYLLABLES[d as usize]);
    }
    s
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x (clause 2.1.6).
pub fn nurand(rng: &mut Rng, a: i64, x: i64, y: i64, c: i64) -> i64 {
    (((rng.range(0, a) | rng.range(x, y)) + c) % (y - x + 1)) + x
}

/// The C of NURand for each of its three uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuConstants {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

impl NuConstants {
    /// The constants the load uses, a function of the seed alone.
    pub fn load(seed: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0x7463_7063_6c6f_6164);
        NuConstants {
            c_last: rng.range(0, 255),
            c_id: rng.range(0, 1023),
            ol_i_id: rng.range(0, 8191),
        }
    }

    /// The run's constants: C_LAST differs from the load's (with the same seed) by a delta in
    /// [65, 119] other than 96 and 112, as clause 2.1.6.1 requires; the others are free.
    pub fn run(seed: u64) -> Self {
        let load = Self::load(seed);
        let mut rng = Rng::new(seed ^ 0x7463_7063_7275_6e00);
        let c_last = loop {
            let c = rng.range(0, 255);
            if run_delta_ok(c, load.c_last) {
                break c;
            }
        };
        NuConstants {
            c_last,
            c_id: rng.range(0, 1023),
            ol_i_id: rng.range(0, 8191),
        }
    }
}

pub fn run_delta_ok(c_run: i64, c_load: i64) -> bool {
    let d = (c_run - c_load).abs();
    (65..=119).contains(&d) && d != 96 && d != 112
}

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A random a-string of length uniform in [lo, hi]: letters and digits only, so it needs no
/// escaping in COPY text or SQL literals.
pub fn astring(rng: &mut Rng, lo: i64, hi: i64) -> String {
    let len = rng.range(lo, hi) as usize;
    (0..len)
        .map(|_| ALNUM[rng.below(ALNUM.len() as u64) as usize] as char)
        .collect()
}

/// A random n-string (digits) of length `len`.
pub fn nstring(rng: &mut Rng, len: usize) -> String {
    (0..len)
        .map(|_| (b'0' + rng.below(10) as u8) as char)
        .collect()
}

/// Clause 4.3.2.7: four random digits followed by "11111".
pub fn zip(rng: &mut Rng) -> String {
    let mut s = nstring(rng, 4);
    s.push_str("11111");
    s
}

/// I_DATA / S_DATA: an a-string of [lo, hi] chars, 10% of them holding "ORIGINAL" at a
/// random position (clause 4.3.3.1).
pub fn data_with_original(rng: &mut Rng, lo: i64, hi: i64) -> String {
    let mut s = astring(rng, lo, hi);
    if rng.below(10) == 0 {
        let at = rng.range(0, s.len() as i64 - 8) as usize;
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

/// A random permutation of 1..=n (O_C_ID of the initial orders).
pub fn permutation(rng: &mut Rng, n: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=n).collect();
    shuffle(rng, &mut v);
    v
}

fn shuffle<T>(rng: &mut Rng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxKind {
    pub const ALL: [TxKind; 5] = [
        TxKind::NewOrder,
        TxKind::Payment,
        TxKind::OrderStatus,
        TxKind::Delivery,
        TxKind::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TxKind::NewOrder => "new_order",
            TxKind::Payment => "payment",
            TxKind::OrderStatus => "order_status",
            TxKind::Delivery => "delivery",
            TxKind::StockLevel => "stock_level",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// Cards per deck of 100: 45 / 43 / 4 / 4 / 4 (HammerDB's TPROC-C mix).
    fn cards(self) -> usize {
        match self {
            TxKind::NewOrder => 45,
            TxKind::Payment => 43,
            _ => 4,
        }
    }
}

/// The mix as a deck of 100 cards, reshuffled when used up: every 100 transactions of a
/// virtual user hold the exact proportions, in random order.
pub struct Deck {
    cards: Vec<TxKind>,
    next: usize,
}

impl Default for Deck {
    fn default() -> Self {
        Self::new()
    }
}

impl Deck {
    pub fn new() -> Self {
        let cards: Vec<TxKind> = TxKind::ALL
            .iter()
            .flat_map(|&k| std::iter::repeat_n(k, k.cards()))
            .collect();
        let next = cards.len();
        Deck { cards, next }
    }

    pub fn draw(&mut self, rng: &mut Rng) -> TxKind {
        if self.next == self.cards.len() {
            shuffle(rng, &mut self.cards);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllable_table() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(40), "BARPRESBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
        assert!((0..1000).all(|n| last_name(n).len() <= 16));
    }

    #[test]
    fn nurand_stays_in_its_range_and_reaches_both_ends() {
        let mut rng = Rng::new(5);
        for (a, x, y, c) in [
            (255, 0, 999, 123),
            (1023, 1, 3000, 259),
            (8191, 1, 100_000, 7911),
        ] {
            let (mut lo, mut hi) = (false, false);
            for _ in 0..2_000_000 {
                let v = nurand(&mut rng, a, x, y, c);
                assert!((x..=y).contains(&v), "{v} outside [{x}, {y}]");
                lo |= v == x;
                hi |= v == y;
            }
            assert!(lo && hi, "A={a}: ends not reached");
        }
    }

    #[test]
    fn nurand_is_not_uniform() {
        // The OR with random(0, 255) sets low bits: some names are far more frequent.
        let mut rng = Rng::new(6);
        let mut counts = vec![0u32; 1000];
        for _ in 0..1_000_000 {
            counts[nurand(&mut rng, 255, 0, 999, 0) as usize] += 1;
        }
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(*max > 4 * *min.max(&1));
    }

    #[test]
    fn run_constants_keep_the_required_distance_from_the_load_ones() {
        for seed in 0..500 {
            let (load, run) = (NuConstants::load(seed), NuConstants::run(seed));
            assert!(run_delta_ok(run.c_last, load.c_last), "seed {seed}");
            assert!((0..=255).contains(&run.c_last) && (0..=1023).contains(&run.c_id));
            assert!((0..=8191).contains(&run.ol_i_id));
        }
        assert!(!run_delta_ok(196, 100) && !run_delta_ok(0, 112) && run_delta_ok(165, 100));
    }

    #[test]
    fn a_large_deck_holds_the_mix_proportions() {
        let mut rng = Rng::new(7);
        let mut deck = Deck::new();
        let mut counts = [0u32; 5];
        for _ in 0..100_000 {
            counts[deck.draw(&mut rng).index()] += 1;
        }
        assert_eq!(counts, [45_000, 43_000, 4_000, 4_000, 4_000]);
    }

    #[test]
    fn the_deck_is_shuffled() {
        let mut rng = Rng::new(8);
        let mut deck = Deck::new();
        let first: Vec<TxKind> = (0..100).map(|_| deck.draw(&mut rng)).collect();
        assert!(first[..45].iter().any(|&k| k != TxKind::NewOrder));
    }

    #[test]
    fn strings_have_the_asked_lengths_and_alphabets() {
        let mut rng = Rng::new(9);
        for _ in 0..1000 {
            let s = astring(&mut rng, 8, 16);
            assert!((8..=16).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()));
            let z = zip(&mut rng);
            assert!(z.len() == 9 && z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
            let d = data_with_original(&mut rng, 26, 50);
            assert!((26..=50).contains(&d.len()));
        }
        let originals = (0..10_000)
            .filter(|_| data_with_original(&mut rng, 26, 50).contains("ORIGINAL"))
            .count();
        assert!((800..1200).contains(&originals), "{originals}");
    }

    #[test]
    fn a_permutation_holds_every_number_once() {
        let mut rng = Rng::new(10);
        let mut p = permutation(&mut rng, 3000);
        assert_ne!(p[..10], (1..=10).collect::<Vec<u32>>()[..]);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<u32>>());
    }
}
