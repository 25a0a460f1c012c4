// The initial population of clause 4.3.3.1, one table piece at a time: item (100,000 rows),
// and per warehouse its warehouse row, stock, districts, customers, history, orders, order
// lines and new orders. Each piece has its own seeded generator, so the data does not depend
// on how warehouses are split among loaders. Writes rows only; `load` sends them.

use crate::backend::RowWriter;
use crate::workload::rng::Rng;
use crate::workloads::tpcc::mix::{
    astring, data_with_original, last_name, nstring, nurand, permutation, zip, NuConstants,
};

pub const ITEMS: i64 = 100_000;
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
/// Orders above this one are undelivered: no carrier, new_order rows.
pub const DELIVERED: i64 = 2_100;

/// A row source for `Session::bulk`: writes one row per call, false when it wrote the last.
pub type Next<'a> = Box<dyn FnMut(&mut RowWriter) -> bool + 'a>;

fn piece_rng(seed: u64, w: i64, table: u64) -> Rng {
    Rng::new(
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add((w as u64) << 8)
            .wrapping_add(table),
    )
}

/// Counts 1..=n, calling `row` for each; the usual shape of a piece.
fn counted<'a>(n: i64, mut row: impl FnMut(i64, &mut RowWriter) + 'a) -> Next<'a> {
    let mut i = 0;
    Box::new(move |w| {
        i += 1;
        row(i, w);
        i < n
    })
}

/// `counted` with the piece's own generator (warehouse `w`, table number `table`) handed to
/// `row`: the shape of every piece with random columns.
fn seeded<'a>(
    seed: u64,
    w: i64,
    table: u64,
    n: i64,
    mut row: impl FnMut(&mut Rng, i64, &mut RowWriter) + 'a,
) -> Next<'a> {
    let mut rng = piece_rng(seed, w, table);
    counted(n, move |i, out| row(&mut rng, i, out))
}

pub fn item(seed: u64) -> Next<'static> {
    seeded(seed, 0, 1, ITEMS, move |rng, i, w| {
        w.int(i)
            .int(rng.range(1, 10_000))
            .text(&astring(rng, 14, 24))
            .fixed(rng.range(100, 10_000), 2)
            .text(&data_with_original(rng, 26, 50))
            .end();
    })
}

/// Name, two streets, city, state, zip: the address block of warehouse and district.
fn address(rng: &mut Rng, w: &mut RowWriter) {
    w.text(&astring(rng, 6, 10));
    for _ in 0..3 {
        w.text(&astring(rng, 10, 20));
    }
    w.text(&astring(rng, 2, 2)).text(&zip(rng));
}

pub fn warehouse(seed: u64, wid: i64) -> Next<'static> {
    seeded(seed, wid, 2, 1, move |rng, _, w| {
        w.int(wid);
        address(rng, w);
        w.fixed(rng.range(0, 2000), 4).fixed(30_000_000, 2).end();
    })
}

pub fn district(seed: u64, wid: i64) -> Next<'static> {
    seeded(seed, wid, 3, DISTRICTS, move |rng, d, w| {
        w.int(d).int(wid);
        address(rng, w);
        w.fixed(rng.range(0, 2000), 4)
            .fixed(3_000_000, 2)
            .int(ORDERS + 1)
            .end();
    })
}

pub fn stock(seed: u64, wid: i64) -> Next<'static> {
    seeded(seed, wid, 4, ITEMS, move |rng, i, w| {
        w.int(i).int(wid).int(rng.range(10, 100));
        for _ in 0..10 {
            w.text(&astring(rng, 24, 24));
        }
        w.int(0)
            .int(0)
            .int(0)
            .text(&data_with_original(rng, 26, 50))
            .end();
    })
}

pub fn customer<'a>(seed: u64, wid: i64, now: &'a str) -> Next<'a> {
    let c_last = NuConstants::load(seed).c_last;
    seeded(seed, wid, 5, DISTRICTS * CUSTOMERS, move |rng, n, w| {
        let (d, c) = ((n - 1) / CUSTOMERS + 1, (n - 1) % CUSTOMERS + 1);
        let last = if c <= 1000 {
            last_name(c as u32 - 1)
        } else {
            last_name(nurand(rng, 255, 0, 999, c_last) as u32)
        };
        w.int(c).int(d).int(wid);
        w.text(&astring(rng, 8, 16)).text("OE").text(&last);
        for _ in 0..3 {
            w.text(&astring(rng, 10, 20));
        }
        w.text(&astring(rng, 2, 2))
            .text(&zip(rng))
            .text(&nstring(rng, 16))
            .text(now)
            .text(if rng.below(10) == 0 { "BC" } else { "GC" })
            .fixed(5_000_000, 2)
            .fixed(rng.range(0, 5000), 4)
            .fixed(-1000, 2)
            .fixed(1000, 2)
            .int(1)
            .int(0)
            .text(&astring(rng, 300, 500))
            .end();
    })
}

pub fn history<'a>(seed: u64, wid: i64, now: &'a str) -> Next<'a> {
    seeded(seed, wid, 6, DISTRICTS * CUSTOMERS, move |rng, n, w| {
        let (d, c) = ((n - 1) / CUSTOMERS + 1, (n - 1) % CUSTOMERS + 1);
        w.int(c)
            .int(d)
            .int(wid)
            .int(d)
            .int(wid)
            .text(now)
            .fixed(1000, 2)
            .text(&astring(rng, 12, 24))
            .end();
    })
}

/// What orders and order lines of one warehouse share: per district, the customer of each
/// order (a random permutation) and its line count.
pub struct OrderPlan {
    customers: Vec<Vec<u32>>,
    lines: Vec<Vec<u8>>,
}

impl OrderPlan {
    pub fn new(seed: u64, wid: i64) -> Self {
        let mut rng = piece_rng(seed, wid, 7);
        let customers = (0..DISTRICTS)
            .map(|_| permutation(&mut rng, CUSTOMERS as u32))
            .collect();
        let lines = (0..DISTRICTS)
            .map(|_| (0..ORDERS).map(|_| rng.range(5, 15) as u8).collect())
            .collect();
        OrderPlan { customers, lines }
    }

    pub fn order_lines(&self) -> u64 {
        self.lines.iter().flatten().map(|&n| n as u64).sum()
    }
}

pub fn orders<'a>(seed: u64, wid: i64, plan: &'a OrderPlan, now: &'a str) -> Next<'a> {
    seeded(seed, wid, 8, DISTRICTS * ORDERS, move |rng, n, w| {
        let (d, o) = ((n - 1) / ORDERS + 1, (n - 1) % ORDERS + 1);
        let (di, oi) = (d as usize - 1, o as usize - 1);
        w.int(o)
            .int(d)
            .int(wid)
            .int(plan.customers[di][oi] as i64)
            .text(now);
        if o <= DELIVERED {
            w.int(rng.range(1, 10));
        } else {
            w.null();
        }
        w.int(plan.lines[di][oi] as i64).int(1).end();
    })
}

pub fn order_line<'a>(seed: u64, wid: i64, plan: &'a OrderPlan, now: &'a str) -> Next<'a> {
    let mut rng = piece_rng(seed, wid, 9);
    let total = plan.order_lines();
    let (mut d, mut o, mut number) = (1i64, 1i64, 0i64);
    let mut written = 0u64;
    Box::new(move |w| {
        number += 1;
        if number > plan.lines[d as usize - 1][o as usize - 1] as i64 {
            number = 1;
            o += 1;
            if o > ORDERS {
                o = 1;
                d += 1;
            }
        }
        w.int(o).int(d).int(wid).int(number);
        w.int(rng.range(1, ITEMS)).int(wid);
        if o <= DELIVERED {
            w.text(now).int(5).fixed(0, 2);
        } else {
            w.null().int(5).fixed(rng.range(1, 999_999), 2);
        }
        w.text(&astring(&mut rng, 24, 24)).end();
        written += 1;
        written < total
    })
}

pub fn new_order(wid: i64) -> Next<'static> {
    let per = ORDERS - DELIVERED;
    counted(DISTRICTS * per, move |n, w| {
        let (d, o) = ((n - 1) / per + 1, DELIVERED + (n - 1) % per + 1);
        w.int(o).int(d).int(wid).end();
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row a piece writes, as COPY text lines split into fields.
    fn rows_of(mut next: Next) -> Vec<Vec<String>> {
        let mut w = RowWriter::copy_for_tests();
        while next(&mut w) {}
        String::from_utf8(w.buf)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn districts_start_their_order_ids_at_3001() {
        let rows = rows_of(district(1, 3));
        assert_eq!(rows.len(), 10);
        assert!(rows
            .iter()
            .all(|r| r[1] == "3" && r[10] == "3001" && r[9] == "30000.00"));
    }

    #[test]
    fn the_first_thousand_customers_of_a_district_take_the_last_names_in_sequence() {
        let rows = rows_of(customer(1, 1, "2020-01-01 00:00:00"));
        assert_eq!(rows.len(), 30_000);
        assert_eq!(rows[0][5], "BARBARBAR");
        assert_eq!(rows[371][5], "PRICALLYOUGHT");
        assert_eq!(rows[3000 + 999][5], "EINGEINGEING");
        let bc = rows.iter().filter(|r| r[13] == "BC").count();
        assert!((2_500..3_500).contains(&bc), "about 10% bad credit: {bc}");
    }

    #[test]
    fn orders_above_2100_are_undelivered_and_have_new_orders() {
        let plan = OrderPlan::new(1, 1);
        let orders = rows_of(orders(1, 1, &plan, "now"));
        assert_eq!(orders.len(), 30_000);
        let undelivered: Vec<_> = orders.iter().filter(|r| r[5] == "\\N").collect();
        assert_eq!(undelivered.len(), 9_000);
        assert!(undelivered
            .iter()
            .all(|r| r[0].parse::<i64>().unwrap() > DELIVERED));
        let lines = rows_of(order_line(1, 1, &plan, "now"));
        let ol_cnt: u64 = orders.iter().map(|r| r[6].parse::<u64>().unwrap()).sum();
        assert_eq!(lines.len() as u64, ol_cnt);
        assert_eq!(rows_of(new_order(1)).len(), 9_000);
    }

    #[test]
    fn the_data_depends_on_the_seed_and_warehouse_only() {
        assert_eq!(rows_of(stock(4, 2))[..50], rows_of(stock(4, 2))[..50]);
        assert_ne!(rows_of(stock(4, 2))[0], rows_of(stock(4, 3))[0]);
    }
}
