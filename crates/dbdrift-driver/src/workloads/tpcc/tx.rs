// The five TPROC-C transactions (TPC-C clause 2, as HammerDB's client-side versions run
// them) on one connection: inputs drawn from the VU's Rng first (the same draws in either
// mode), then either SQL text with literals, values read back from the text results, or
// one call of the transaction's stored routine (`procs`). No clocks and no counting here;
// `run` does both.

use super::procs;
use super::rows::{DISTRICTS, ITEMS};
use crate::backend::Session;
use crate::backend::{DbError, QueryResult};
use crate::workload::rng::Rng;
use crate::workloads::tpcc::mix::{last_name, nurand, NuConstants, TxKind};

/// A failed statement and its SQL, for the fatal line.
pub struct TxError {
    pub err: DbError,
    pub sql: String,
}

pub enum Outcome {
    Committed,
    /// New-order's 1% with an unused item id.
    RolledBack,
}

/// What every transaction of one VU knows.
pub struct Terminal {
    pub w_id: i64,
    pub warehouses: i64,
    pub c: NuConstants,
}

type Res<T> = Result<T, TxError>;

pub(super) fn q<C: Session>(conn: &mut C, sql: String) -> Res<QueryResult> {
    conn.query(&sql).map_err(|err| TxError { err, sql })
}

fn no_row(sql: &str) -> TxError {
    TxError {
        err: DbError::Protocol(format!("expected a row from: {sql}")),
        sql: sql.to_string(),
    }
}

/// The first row of a result that must have one.
fn one<C: Session>(conn: &mut C, sql: String) -> Res<Vec<Option<String>>> {
    let mut res = q(conn, sql.clone())?;
    if res.rows.is_empty() {
        return Err(no_row(&sql));
    }
    Ok(res.rows.swap_remove(0))
}

fn int(v: &Option<String>) -> i64 {
    v.as_deref()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map_or(0, |f| f as i64)
}

fn num(v: &Option<String>) -> f64 {
    v.as_deref()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0.0)
}

fn text(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("").trim_end()
}

/// The inputs of one transaction, drawn before any SQL is sent.
pub enum Input {
    NewOrder(NewOrderIn),
    Payment(PaymentIn),
    OrderStatus(OrderStatusIn),
    Delivery(DeliveryIn),
    StockLevel(StockLevelIn),
}

pub fn draw(kind: TxKind, rng: &mut Rng, t: &Terminal) -> Input {
    match kind {
        TxKind::NewOrder => Input::NewOrder(draw_new_order(rng, t)),
        TxKind::Payment => Input::Payment(draw_payment(rng, t)),
        TxKind::OrderStatus => Input::OrderStatus(draw_order_status(rng, t)),
        TxKind::Delivery => Input::Delivery(DeliveryIn {
            w: t.w_id,
            carrier: rng.range(1, 10),
        }),
        TxKind::StockLevel => Input::StockLevel(StockLevelIn {
            w: t.w_id,
            d: rng.range(1, DISTRICTS),
            threshold: rng.range(10, 20),
        }),
    }
}

/// One transaction: client-side statements between BEGIN and COMMIT/ROLLBACK, or with
/// `procedures` the single call of its routine (see `procs` for who ends the transaction).
pub fn execute<C: Session>(
    conn: &mut C,
    kind: TxKind,
    rng: &mut Rng,
    t: &Terminal,
    procedures: bool,
) -> Res<Outcome> {
    let input = draw(kind, rng, t);
    if procedures {
        return procs::call(conn, &input);
    }
    q(conn, "BEGIN".into())?;
    let outcome = match &input {
        Input::NewOrder(i) => new_order(conn, i)?,
        Input::Payment(i) => payment(conn, i)?,
        Input::OrderStatus(i) => order_status(conn, i)?,
        Input::Delivery(i) => delivery(conn, i)?,
        Input::StockLevel(i) => stock_level(conn, i)?,
    };
    match outcome {
        Outcome::Committed => q(conn, "COMMIT".into())?,
        Outcome::RolledBack => q(conn, "ROLLBACK".into())?,
    };
    Ok(outcome)
}

/// A warehouse other than the home one, uniform (only called when there are several).
fn remote(rng: &mut Rng, t: &Terminal) -> i64 {
    let w = rng.range(1, t.warehouses - 1);
    if w >= t.w_id {
        w + 1
    } else {
        w
    }
}

fn percent(rng: &mut Rng, p: i64) -> bool {
    rng.range(1, 100) <= p
}

/// An amount in hundredths as SQL text: `1234` → `12.34`.
pub fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

pub struct Line {
    /// Position in the order, from 1 (`ol_number`).
    pub number: i64,
    pub i_id: i64,
    pub supply_w: i64,
    pub qty: i64,
}

pub struct NewOrderIn {
    pub w: i64,
    pub d: i64,
    pub c: i64,
    /// In the order the stock rows are locked: by (supply warehouse, item), so two
    /// new-orders never wait on each other in a cycle.
    pub lines: Vec<Line>,
    pub all_local: bool,
}

/// Clause 2.4: 5..15 lines; 1% of transactions end on an unused item id and roll back.
fn draw_new_order(rng: &mut Rng, t: &Terminal) -> NewOrderIn {
    let (w, d) = (t.w_id, rng.range(1, DISTRICTS));
    let c = nurand(rng, 1023, 1, 3000, t.c.c_id);
    let n = rng.range(5, 15);
    let rollback = percent(rng, 1);
    let mut lines: Vec<Line> = (0..n)
        .map(|k| Line {
            number: k + 1,
            i_id: if rollback && k == n - 1 {
                ITEMS + 1
            } else {
                nurand(rng, 8191, 1, ITEMS, t.c.ol_i_id)
            },
            supply_w: if t.warehouses > 1 && percent(rng, 1) {
                remote(rng, t)
            } else {
                w
            },
            qty: rng.range(1, 10),
        })
        .collect();
    let all_local = lines.iter().all(|l| l.supply_w == w);
    lines.sort_by_key(|l| (l.supply_w, l.i_id));
    NewOrderIn {
        w,
        d,
        c,
        lines,
        all_local,
    }
}

fn new_order<C: Session>(conn: &mut C, i: &NewOrderIn) -> Res<Outcome> {
    let (w, d, c) = (i.w, i.d, i.c);
    let n = i.lines.len();
    one(
        conn,
        format!(
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
         WHERE w_id = {w} AND c_w_id = w_id AND c_d_id = {d} AND c_id = {c}"
        ),
    )?;
    let row = one(
        conn,
        format!(
            "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = {w} AND d_id = {d} FOR UPDATE"
        ),
    )?;
    let o = int(&row[0]);
    q(
        conn,
        format!(
            "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = {w} AND d_id = {d}"
        ),
    )?;
    q(conn, format!(
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
         VALUES ({o}, {d}, {w}, {c}, CURRENT_TIMESTAMP, NULL, {n}, {})", i64::from(i.all_local)))?;
    q(
        conn,
        format!("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ({o}, {d}, {w})"),
    )?;
    let ids: Vec<String> = i.lines.iter().map(|l| l.i_id.to_string()).collect();
    let items = q(
        conn,
        format!(
            "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({})",
            ids.join(", ")
        ),
    )?;
    let price = |i_id: i64| {
        items
            .rows
            .iter()
            .find(|r| int(&r[0]) == i_id)
            .map(|r| num(&r[1]))
    };
    let mut values = Vec::with_capacity(n);
    let mut missing = false;
    for &Line {
        number,
        i_id,
        supply_w,
        qty,
    } in &i.lines
    {
        let Some(price) = price(i_id) else {
            missing = true;
            continue;
        };
        let s = one(
            conn,
            format!(
                "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock \
             WHERE s_i_id = {i_id} AND s_w_id = {supply_w} FOR UPDATE"
            ),
        )?;
        let have = int(&s[0]);
        let left = if have - qty >= 10 {
            have - qty
        } else {
            have - qty + 91
        };
        q(conn, format!(
            "UPDATE stock SET s_quantity = {left}, s_ytd = s_ytd + {qty}, s_order_cnt = s_order_cnt + 1, \
             s_remote_cnt = s_remote_cnt + {} WHERE s_i_id = {i_id} AND s_w_id = {supply_w}",
            i64::from(supply_w != w)))?;
        values.push(format!(
            "({o}, {d}, {w}, {number}, {i_id}, {supply_w}, NULL, {qty}, {:.2}, {})",
            qty as f64 * price,
            C::CAPS.dialect.quote(text(&s[2]))
        ));
    }
    if missing {
        return Ok(Outcome::RolledBack);
    }
    q(
        conn,
        format!(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
         ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES {}", values.join(", ")),
    )?;
    Ok(Outcome::Committed)
}

/// The customer of payment and order-status.
pub enum Customer {
    Id(i64),
    /// The one at position ceil(n / 2) of the matches sorted by C_FIRST (clause 2.5.2.2).
    LastName(String),
}

/// 60% by last name, else NURand id.
fn draw_customer(rng: &mut Rng, t: &Terminal) -> Customer {
    if percent(rng, 60) {
        Customer::LastName(last_name(nurand(rng, 255, 0, 999, t.c.c_last) as u32))
    } else {
        Customer::Id(nurand(rng, 1023, 1, 3000, t.c.c_id))
    }
}

fn customer_id<C: Session>(conn: &mut C, w: i64, d: i64, who: &Customer) -> Res<i64> {
    let last = match who {
        Customer::Id(c) => return Ok(*c),
        Customer::LastName(last) => last,
    };
    let sql = format!(
        "SELECT c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {} \
         ORDER BY c_first",
        C::CAPS.dialect.quote(last)
    );
    let res = q(conn, sql.clone())?;
    if res.rows.is_empty() {
        return Err(no_row(&sql));
    }
    Ok(int(&res.rows[(res.rows.len() - 1) / 2][0]))
}

pub struct PaymentIn {
    pub w: i64,
    pub d: i64,
    /// The customer's warehouse and district.
    pub cw: i64,
    pub cd: i64,
    pub cents: i64,
    pub customer: Customer,
}

/// Clause 2.5: 85% home customer, 15% remote (with several warehouses).
fn draw_payment(rng: &mut Rng, t: &Terminal) -> PaymentIn {
    let (w, d) = (t.w_id, rng.range(1, DISTRICTS));
    let (cw, cd) = if t.warehouses > 1 && percent(rng, 15) {
        (remote(rng, t), rng.range(1, DISTRICTS))
    } else {
        (w, d)
    };
    let cents = rng.range(100, 500_000);
    let customer = draw_customer(rng, t);
    PaymentIn {
        w,
        d,
        cw,
        cd,
        cents,
        customer,
    }
}

fn payment<C: Session>(conn: &mut C, i: &PaymentIn) -> Res<Outcome> {
    let (w, d, cw, cd) = (i.w, i.d, i.cw, i.cd);
    let amount = money(i.cents);
    let wr = one(
        conn,
        format!(
            "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse \
         WHERE w_id = {w} FOR UPDATE"
        ),
    )?;
    q(
        conn,
        format!("UPDATE warehouse SET w_ytd = w_ytd + {amount} WHERE w_id = {w}"),
    )?;
    let dr = one(
        conn,
        format!(
            "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district \
         WHERE d_w_id = {w} AND d_id = {d} FOR UPDATE"
        ),
    )?;
    q(
        conn,
        format!("UPDATE district SET d_ytd = d_ytd + {amount} WHERE d_w_id = {w} AND d_id = {d}"),
    )?;
    let c = customer_id(conn, cw, cd, &i.customer)?;
    let key = format!("c_w_id = {cw} AND c_d_id = {cd} AND c_id = {c}");
    let cr = one(
        conn,
        format!(
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, \
         c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer \
         WHERE {key} FOR UPDATE"
        ),
    )?;
    let data = if text(&cr[9]) == "BC" {
        let old = one(conn, format!("SELECT c_data FROM customer WHERE {key}"))?;
        let mut data = format!("{c} {cd} {cw} {d} {w} {amount} | {}", text(&old[0]));
        data.truncate(500);
        format!(", c_data = {}", C::CAPS.dialect.quote(&data))
    } else {
        String::new()
    };
    q(
        conn,
        format!(
            "UPDATE customer SET c_balance = c_balance - {amount}, \
         c_ytd_payment = c_ytd_payment + {amount}, c_payment_cnt = c_payment_cnt + 1{data} \
         WHERE {key}"
        ),
    )?;
    let h_data = format!("{}    {}", text(&wr[0]), text(&dr[0]));
    q(conn, format!(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
         VALUES ({c}, {cd}, {cw}, {d}, {w}, CURRENT_TIMESTAMP, {amount}, {})",
        C::CAPS.dialect.quote(&h_data)))?;
    Ok(Outcome::Committed)
}

pub struct OrderStatusIn {
    pub w: i64,
    pub d: i64,
    pub customer: Customer,
}

/// Clause 2.6: home warehouse, district uniform.
fn draw_order_status(rng: &mut Rng, t: &Terminal) -> OrderStatusIn {
    let d = rng.range(1, DISTRICTS);
    OrderStatusIn {
        w: t.w_id,
        d,
        customer: draw_customer(rng, t),
    }
}

/// The customer's last order and its lines; read-only.
fn order_status<C: Session>(conn: &mut C, i: &OrderStatusIn) -> Res<Outcome> {
    let (w, d) = (i.w, i.d);
    let c = customer_id(conn, w, d, &i.customer)?;
    one(
        conn,
        format!(
            "SELECT c_balance, c_first, c_middle, c_last FROM customer \
         WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}"
        ),
    )?;
    let last = q(
        conn,
        format!(
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders \
         WHERE o_w_id = {w} AND o_d_id = {d} AND o_c_id = {c} ORDER BY o_id DESC LIMIT 1"
        ),
    )?;
    if let Some(row) = last.rows.first() {
        let o = int(&row[0]);
        q(
            conn,
            format!(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
             WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"),
        )?;
    }
    Ok(Outcome::Committed)
}

/// Clause 2.7: home warehouse, carrier 1..10.
pub struct DeliveryIn {
    pub w: i64,
    pub carrier: i64,
}

/// In-line, as HammerDB runs it: the oldest new order of each of the ten districts, in one
/// transaction; a district without one is skipped.
fn delivery<C: Session>(conn: &mut C, i: &DeliveryIn) -> Res<Outcome> {
    let (w, carrier) = (i.w, i.carrier);
    for d in 1..=DISTRICTS {
        let oldest = q(
            conn,
            format!(
                "SELECT no_o_id FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} \
             ORDER BY no_o_id LIMIT 1 FOR UPDATE"
            ),
        )?;
        let Some(row) = oldest.rows.first() else {
            continue;
        };
        let o = int(&row[0]);
        q(
            conn,
            format!(
                "DELETE FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} AND no_o_id = {o}"
            ),
        )?;
        let order = format!("o_w_id = {w} AND o_d_id = {d} AND o_id = {o}");
        let cust = one(
            conn,
            format!("SELECT o_c_id FROM orders WHERE {order} FOR UPDATE"),
        )?;
        let c = int(&cust[0]);
        q(
            conn,
            format!("UPDATE orders SET o_carrier_id = {carrier} WHERE {order}"),
        )?;
        let lines = format!("ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}");
        q(
            conn,
            format!("UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE {lines}"),
        )?;
        let sum = one(
            conn,
            format!("SELECT SUM(ol_amount) FROM order_line WHERE {lines}"),
        )?;
        q(conn, format!(
            "UPDATE customer SET c_balance = c_balance + {:.2}, c_delivery_cnt = c_delivery_cnt + 1 \
             WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}", num(&sum[0])))?;
    }
    Ok(Outcome::Committed)
}

/// Clause 2.8: district uniform, threshold 10..20.
pub struct StockLevelIn {
    pub w: i64,
    pub d: i64,
    pub threshold: i64,
}

/// Distinct items below the threshold in the district's last 20 orders.
fn stock_level<C: Session>(conn: &mut C, i: &StockLevelIn) -> Res<Outcome> {
    let (w, d, threshold) = (i.w, i.d, i.threshold);
    let row = one(
        conn,
        format!("SELECT d_next_o_id FROM district WHERE d_w_id = {w} AND d_id = {d}"),
    )?;
    let next = int(&row[0]);
    one(
        conn,
        format!(
            "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
         WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id < {next} AND ol_o_id >= {} \
         AND s_w_id = {w} AND s_i_id = ol_i_id AND s_quantity < {threshold}",
            next - 20
        ),
    )?;
    Ok(Outcome::Committed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_written_with_two_decimals() {
        for (cents, text) in [
            (100, "1.00"),
            (500_000, "5000.00"),
            (1234, "12.34"),
            (1205, "12.05"),
        ] {
            assert_eq!(money(cents), text);
        }
    }
}
