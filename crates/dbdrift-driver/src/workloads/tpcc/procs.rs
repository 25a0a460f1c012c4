// `procedures: true`: the five transactions as stored routines named as HammerDB names them
// (neword, payment, ostat, delivery, slev), created by `load` and called once per
// transaction by `run` with the inputs `tx::draw` took. Each routine runs the statements of
// its client-side twin in `tx` (same reads, locks, writes and lock order) and is atomic:
//
// - PostgreSQL: PL/pgSQL functions, called as `SELECT neword(...)` in autocommit, so the call
//   is its own transaction; an error anywhere undoes all of it.
// - MySQL/MariaDB: procedures that START TRANSACTION and COMMIT themselves, called as
//   `CALL neword(...)` in autocommit; an exit handler rolls back and re-raises any error.
//
// New-order's unused item raises SQLSTATE `ROLLBACK_SQLSTATE` once the rest of its work is
// done (after the stock rows are updated, as the client-side version does before its
// ROLLBACK); the error undoes the work, and `call` maps it to `Outcome::RolledBack`.

use super::rows::DISTRICTS;
use super::tx::{money, q, Customer, Input, Outcome, TxError};
use crate::backend::{Dialect, Session};
use crate::error::{DriverError, ErrorClass};

/// The routines, in the order of `TxKind`.
pub const NAMES: [&str; 5] = ["neword", "payment", "ostat", "delivery", "slev"];

/// What new-order's routine signals for the unused item: not a code either server uses.
pub const ROLLBACK_SQLSTATE: &str = "TPC01";

/// Drops the routines if present; `load` runs these whether or not it creates them, so a
/// database loaded without `procedures` has none left over from an earlier load.
pub fn drop_all(dialect: Dialect) -> Vec<String> {
    NAMES
        .iter()
        .map(|n| match dialect {
            Dialect::Postgres => format!("DROP FUNCTION IF EXISTS {n}"),
            Dialect::Mysql => format!("DROP PROCEDURE IF EXISTS {n}"),
        })
        .collect()
}

/// One CREATE per routine, each a single statement (no client-side delimiter).
pub fn create(dialect: Dialect) -> Vec<String> {
    match dialect {
        Dialect::Postgres => pg_routines(),
        Dialect::Mysql => my_routines(),
    }
}

/// A query giving one row, one column: how many of the five routines the connected database
/// (PostgreSQL: the current schema) has.
pub fn count_sql(dialect: Dialect) -> String {
    let names = NAMES.map(|n| format!("'{n}'")).join(", ");
    match dialect {
        Dialect::Postgres => format!(
            "SELECT count(DISTINCT p.proname) FROM pg_proc p \
             JOIN pg_namespace n ON n.oid = p.pronamespace \
             WHERE n.nspname = current_schema() AND p.proname IN ({names})"
        ),
        Dialect::Mysql => format!(
            "SELECT COUNT(*) FROM information_schema.routines \
             WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' \
             AND routine_name IN ({names})"
        ),
    }
}

/// Before a run with `procedures`: fatal unless all five routines are there.
pub fn check_installed<C: Session>(conn: &mut C) -> Result<(), DriverError> {
    let sql = count_sql(C::CAPS.dialect);
    let res = conn.query(&sql).map_err(|e| e.into_driver(&sql))?;
    let n = res
        .rows
        .first()
        .and_then(|r| r[0].as_deref())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if n == NAMES.len() as u64 {
        return Ok(());
    }
    let mut e = DriverError::new(
        ErrorClass::Sql,
        format!(
            "the database has {n} of the {} tpcc stored procedures ({}): \
             load with procedures: true first",
            NAMES.len(),
            NAMES.join(", ")
        ),
    );
    e.sql = Some(sql);
    Err(e)
}

fn ints(dialect: Dialect, v: impl Iterator<Item = i64>) -> String {
    let list: Vec<String> = v.map(|x| x.to_string()).collect();
    match dialect {
        Dialect::Postgres => format!("ARRAY[{}]::int[]", list.join(",")),
        Dialect::Mysql => format!("'{}'", list.join(",")),
    }
}

/// The customer arguments: (id, last name), one of them NULL.
fn customer_args(c: &Customer, dialect: Dialect) -> String {
    match c {
        Customer::Id(id) => format!("{id}, NULL"),
        Customer::LastName(last) => format!("NULL, {}", dialect.quote(last)),
    }
}

/// The statement that runs `input`'s transaction.
pub fn call_sql(dialect: Dialect, input: &Input) -> String {
    let args = match input {
        Input::NewOrder(i) => format!(
            "{}, {}, {}, {}, {}, {}, {}, {}",
            i.w,
            i.d,
            i.c,
            i64::from(i.all_local),
            ints(dialect, i.lines.iter().map(|l| l.number)),
            ints(dialect, i.lines.iter().map(|l| l.i_id)),
            ints(dialect, i.lines.iter().map(|l| l.supply_w)),
            ints(dialect, i.lines.iter().map(|l| l.qty)),
        ),
        Input::Payment(i) => format!(
            "{}, {}, {}, {}, {}, {}",
            i.w,
            i.d,
            i.cw,
            i.cd,
            customer_args(&i.customer, dialect),
            money(i.cents)
        ),
        Input::OrderStatus(i) => {
            format!("{}, {}, {}", i.w, i.d, customer_args(&i.customer, dialect))
        }
        Input::Delivery(i) => format!("{}, {}", i.w, i.carrier),
        Input::StockLevel(i) => format!("{}, {}, {}", i.w, i.d, i.threshold),
    };
    let name = NAMES[match input {
        Input::NewOrder(_) => 0,
        Input::Payment(_) => 1,
        Input::OrderStatus(_) => 2,
        Input::Delivery(_) => 3,
        Input::StockLevel(_) => 4,
    }];
    match dialect {
        Dialect::Postgres => format!("SELECT {name}({args})"),
        Dialect::Mysql => format!("CALL {name}({args})"),
    }
}

/// One transaction as one call. The routine has ended its transaction either way.
pub fn call<C: Session>(conn: &mut C, input: &Input) -> Result<Outcome, TxError> {
    match q(conn, call_sql(C::CAPS.dialect, input)) {
        Ok(_) => Ok(Outcome::Committed),
        Err(TxError {
            err: crate::backend::DbError::Sql { sqlstate, .. },
            ..
        }) if sqlstate == ROLLBACK_SQLSTATE && matches!(input, Input::NewOrder(_)) => {
            Ok(Outcome::RolledBack)
        }
        Err(e) => Err(e),
    }
}

/// `s_dist_NN` of district `d` (a routine variable or parameter).
fn dist_info(d: &str) -> String {
    let arms: String = (1..=DISTRICTS)
        .map(|k| format!(" WHEN {k} THEN s_dist_{k:02}"))
        .collect();
    format!("CASE {d}{arms} END")
}

fn pg_routines() -> Vec<String> {
    // Customer by last name (clause 2.5.2.2): position ceil(n / 2) of the matches sorted by
    // c_first, from one scan of customer_i2 as the client-side query does.
    let by_name = |w: &str, d: &str| {
        format!(
            "IF p_c_last IS NOT NULL THEN
    SELECT (array_agg(c_id ORDER BY c_first))[((count(*) + 1) / 2)::int] INTO v_c
      FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last;
    IF v_c IS NULL THEN
      RAISE EXCEPTION 'no customer named % in warehouse % district %', p_c_last, {w}, {d}
        USING ERRCODE = 'P0002';
    END IF;
  END IF;"
        )
    };
    vec![
        format!(
            "CREATE FUNCTION neword(p_w int, p_d int, p_c int, p_all_local int, \
             p_numbers int[], p_i_ids int[], p_supply int[], p_qty int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_discount numeric; v_c_last varchar; v_credit char(2); v_w_tax numeric;
  v_o int; v_d_tax numeric; v_price numeric; v_i_name varchar; v_i_data varchar;
  v_have int; v_s_data varchar; v_dist varchar; v_left int; v_missing boolean := false;
BEGIN
  SELECT c_discount, c_last, c_credit, w_tax INTO STRICT v_discount, v_c_last, v_credit, v_w_tax
    FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
  SELECT d_next_o_id, d_tax INTO STRICT v_o, v_d_tax
    FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o, p_d, p_w, p_c, CURRENT_TIMESTAMP, NULL, cardinality(p_i_ids), p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
  FOR k IN 1 .. cardinality(p_i_ids) LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = p_i_ids[k];
    IF NOT FOUND THEN
      v_missing := true;
      CONTINUE;
    END IF;
    SELECT s_quantity, s_data, {dist} INTO STRICT v_have, v_s_data, v_dist
      FROM stock WHERE s_i_id = p_i_ids[k] AND s_w_id = p_supply[k] FOR UPDATE;
    v_left := CASE WHEN v_have - p_qty[k] >= 10 THEN v_have - p_qty[k] ELSE v_have - p_qty[k] + 91 END;
    UPDATE stock SET s_quantity = v_left, s_ytd = s_ytd + p_qty[k], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[k] <> p_w THEN 1 ELSE 0 END
      WHERE s_i_id = p_i_ids[k] AND s_w_id = p_supply[k];
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o, p_d, p_w, p_numbers[k], p_i_ids[k], p_supply[k], NULL, p_qty[k],
        round(p_qty[k] * v_price, 2), rtrim(v_dist));
  END LOOP;
  IF v_missing THEN
    RAISE EXCEPTION 'item number is not valid' USING ERRCODE = '{ROLLBACK_SQLSTATE}';
  END IF;
END
$$",
            dist = dist_info("p_d")
        ),
        format!(
            "CREATE FUNCTION payment(p_w int, p_d int, p_c_w int, p_c_d int, p_c_id int, \
             p_c_last varchar, p_amount numeric) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_w_name varchar; v_w_street_1 varchar; v_w_street_2 varchar; v_w_city varchar;
  v_w_state char(2); v_w_zip char(9);
  v_d_name varchar; v_d_street_1 varchar; v_d_street_2 varchar; v_d_city varchar;
  v_d_state char(2); v_d_zip char(9);
  v_c int := p_c_id; v_cust record; v_data varchar;
BEGIN
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
    INTO STRICT v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip
    FROM warehouse WHERE w_id = p_w FOR UPDATE;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
    INTO STRICT v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip
    FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  {by_name}
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
      c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since
    INTO STRICT v_cust
    FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c FOR UPDATE;
  IF v_cust.c_credit = 'BC' THEN
    SELECT c_data INTO STRICT v_data FROM customer
      WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    v_data := left(format('%s %s %s %s %s %s | %s', v_c, p_c_d, p_c_w, p_d, p_w, p_amount,
      rtrim(v_data)), 500);
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1, c_data = v_data
      WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c, p_c_d, p_c_w, p_d, p_w, CURRENT_TIMESTAMP, p_amount,
      rtrim(v_w_name) || '    ' || rtrim(v_d_name));
END
$$",
            by_name = by_name("p_c_w", "p_c_d")
        ),
        format!(
            "CREATE FUNCTION ostat(p_w int, p_d int, p_c_id int, p_c_last varchar) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_c int := p_c_id; v_balance numeric; v_first varchar; v_middle char(2); v_last varchar;
  v_o int; v_carrier int; v_entry timestamp;
BEGIN
  {by_name}
  SELECT c_balance, c_first, c_middle, c_last INTO STRICT v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  SELECT o_id, o_carrier_id, o_entry_d INTO v_o, v_carrier, v_entry
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  IF FOUND THEN
    PERFORM ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
      FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  END IF;
END
$$",
            by_name = by_name("p_w", "p_d")
        ),
        format!(
            "CREATE FUNCTION delivery(p_w int, p_carrier int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_o int; v_c int; v_sum numeric;
BEGIN
  FOR v_d IN 1 .. {DISTRICTS} LOOP
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF NOT FOUND THEN
      CONTINUE;
    END IF;
    DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
    SELECT o_c_id INTO STRICT v_c FROM orders
      WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o FOR UPDATE;
    UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
    UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
      WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
    SELECT SUM(ol_amount) INTO v_sum FROM order_line
      WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
    UPDATE customer SET c_balance = c_balance + COALESCE(v_sum, 0),
        c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
  END LOOP;
END
$$"
        ),
        "CREATE FUNCTION slev(p_w int, p_d int, p_threshold int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  v_next int; v_count int;
BEGIN
  SELECT d_next_o_id INTO STRICT v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT COUNT(DISTINCT s_i_id) INTO v_count FROM order_line, stock
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  RETURN v_count;
END
$$"
        .to_string(),
    ]
}

/// The k-th (from 1) element of a comma-separated list of integers.
fn my_nth(list: &str, k: &str) -> String {
    format!("CAST(SUBSTRING_INDEX(SUBSTRING_INDEX({list}, ',', {k}), ',', -1) AS SIGNED)")
}

fn my_routines() -> Vec<String> {
    // Every procedure is atomic: the handler undoes the transaction and re-raises the error
    // unchanged (a deadlock keeps its error 1213, new-order's rollback its SQLSTATE).
    const ATOMIC: &str = "DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;";
    // Customer by last name: position ceil(n / 2) of the matches sorted by c_first, from one
    // scan of customer_i2 as the client-side query does.
    let by_name = |w: &str, d: &str| {
        format!(
            "IF p_c_last IS NOT NULL THEN
    SELECT COUNT(*), GROUP_CONCAT(c_id ORDER BY c_first) INTO v_n, v_ids
      FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_c_last;
    IF v_n = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer with that last name';
    END IF;
    SET v_c = {pick};
  END IF;",
            pick = my_nth("v_ids", "(v_n + 1) DIV 2")
        )
    };
    let missing = |what: &str| {
        format!("SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'expected a row from {what}'")
    };
    vec![
        format!(
            "CREATE PROCEDURE neword(p_w INT, p_d INT, p_c INT, p_all_local INT, \
             p_numbers VARCHAR(200), p_i_ids VARCHAR(200), p_supply VARCHAR(200), p_qty VARCHAR(200))
BEGIN
  DECLARE v_discount DECIMAL(4,4); DECLARE v_c_last VARCHAR(16); DECLARE v_credit CHAR(2);
  DECLARE v_w_tax DECIMAL(4,4); DECLARE v_o INT; DECLARE v_d_tax DECIMAL(4,4);
  DECLARE v_price DECIMAL(5,2); DECLARE v_i_name VARCHAR(24); DECLARE v_i_data VARCHAR(50);
  DECLARE v_have INT; DECLARE v_s_data VARCHAR(50); DECLARE v_dist CHAR(24);
  DECLARE v_n INT; DECLARE v_k INT DEFAULT 1; DECLARE v_i INT; DECLARE v_sw INT; DECLARE v_q INT;
  DECLARE v_missing INT DEFAULT 0;
  {ATOMIC}
  START TRANSACTION;
  SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_c_last, v_credit, v_w_tax
    FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
  SELECT d_next_o_id, d_tax INTO v_o, v_d_tax
    FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  IF v_o IS NULL OR v_discount IS NULL THEN
    {no_district};
  END IF;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
  SET v_n = LENGTH(p_i_ids) - LENGTH(REPLACE(p_i_ids, ',', '')) + 1;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o, p_d, p_w, p_c, CURRENT_TIMESTAMP, NULL, v_n, p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
  WHILE v_k <= v_n DO
    SET v_i = {i}, v_sw = {sw}, v_q = {qty}, v_price = NULL;
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = v_i;
    IF v_price IS NULL THEN
      SET v_missing = 1;
    ELSE
      SET v_have = NULL;
      SELECT s_quantity, s_data, {dist} INTO v_have, v_s_data, v_dist
        FROM stock WHERE s_i_id = v_i AND s_w_id = v_sw FOR UPDATE;
      IF v_have IS NULL THEN
        {no_stock};
      END IF;
      UPDATE stock SET s_quantity = IF(v_have - v_q >= 10, v_have - v_q, v_have - v_q + 91),
          s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
          s_remote_cnt = s_remote_cnt + IF(v_sw <> p_w, 1, 0)
        WHERE s_i_id = v_i AND s_w_id = v_sw;
      INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
          ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o, p_d, p_w, {number}, v_i, v_sw, NULL, v_q, v_q * v_price, v_dist);
    END IF;
    SET v_k = v_k + 1;
  END WHILE;
  IF v_missing = 1 THEN
    SIGNAL SQLSTATE '{ROLLBACK_SQLSTATE}' SET MESSAGE_TEXT = 'item number is not valid';
  END IF;
  COMMIT;
END",
            i = my_nth("p_i_ids", "v_k"),
            sw = my_nth("p_supply", "v_k"),
            qty = my_nth("p_qty", "v_k"),
            number = my_nth("p_numbers", "v_k"),
            dist = dist_info("p_d"),
            no_district = missing("customer, warehouse or district"),
            no_stock = missing("stock"),
        ),
        format!(
            "CREATE PROCEDURE payment(p_w INT, p_d INT, p_c_w INT, p_c_d INT, p_c_id INT, \
             p_c_last VARCHAR(16), p_amount DECIMAL(6,2))
BEGIN
  DECLARE v_w_name VARCHAR(10); DECLARE v_w_street_1 VARCHAR(20); DECLARE v_w_street_2 VARCHAR(20);
  DECLARE v_w_city VARCHAR(20); DECLARE v_w_state CHAR(2); DECLARE v_w_zip CHAR(9);
  DECLARE v_d_name VARCHAR(10); DECLARE v_d_street_1 VARCHAR(20); DECLARE v_d_street_2 VARCHAR(20);
  DECLARE v_d_city VARCHAR(20); DECLARE v_d_state CHAR(2); DECLARE v_d_zip CHAR(9);
  DECLARE v_c INT DEFAULT p_c_id; DECLARE v_n INT; DECLARE v_ids TEXT;
  DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16);
  DECLARE v_street_1 VARCHAR(20); DECLARE v_street_2 VARCHAR(20); DECLARE v_city VARCHAR(20);
  DECLARE v_state CHAR(2); DECLARE v_zip CHAR(9); DECLARE v_phone CHAR(16);
  DECLARE v_credit CHAR(2); DECLARE v_credit_lim DECIMAL(12,2); DECLARE v_discount DECIMAL(4,4);
  DECLARE v_balance DECIMAL(12,2); DECLARE v_since DATETIME; DECLARE v_data VARCHAR(500);
  {ATOMIC}
  START TRANSACTION;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
    INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip
    FROM warehouse WHERE w_id = p_w FOR UPDATE;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
    INTO v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip
    FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  {by_name}
  SET v_credit = NULL;
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
      c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since
    INTO v_first, v_middle, v_last, v_street_1, v_street_2, v_city, v_state, v_zip,
      v_phone, v_credit, v_credit_lim, v_discount, v_balance, v_since
    FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c FOR UPDATE;
  IF v_credit IS NULL THEN
    {no_customer};
  END IF;
  IF v_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    SET v_data = LEFT(CONCAT(v_c, ' ', p_c_d, ' ', p_c_w, ' ', p_d, ' ', p_w, ' ', p_amount,
      ' | ', RTRIM(v_data)), 500);
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1, c_data = v_data
      WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c, p_c_d, p_c_w, p_d, p_w, CURRENT_TIMESTAMP, p_amount,
      CONCAT(RTRIM(v_w_name), '    ', RTRIM(v_d_name)));
  COMMIT;
END",
            by_name = by_name("p_c_w", "p_c_d"),
            no_customer = missing("customer"),
        ),
        format!(
            "CREATE PROCEDURE ostat(p_w INT, p_d INT, p_c_id INT, p_c_last VARCHAR(16))
BEGIN
  DECLARE v_c INT DEFAULT p_c_id; DECLARE v_n INT; DECLARE v_ids TEXT;
  DECLARE v_balance DECIMAL(12,2); DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2);
  DECLARE v_last VARCHAR(16); DECLARE v_o INT; DECLARE v_carrier INT; DECLARE v_entry DATETIME;
  {ATOMIC}
  START TRANSACTION;
  {by_name}
  SET v_first = NULL;
  SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  IF v_first IS NULL THEN
    {no_customer};
  END IF;
  SELECT o_id, o_carrier_id, o_entry_d INTO v_o, v_carrier, v_entry
    FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  IF v_o IS NOT NULL THEN
    SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
      FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  END IF;
  COMMIT;
END",
            by_name = by_name("p_w", "p_d"),
            no_customer = missing("customer"),
        ),
        format!(
            "CREATE PROCEDURE delivery(p_w INT, p_carrier INT)
BEGIN
  DECLARE v_d INT DEFAULT 1; DECLARE v_o INT; DECLARE v_c INT; DECLARE v_sum DECIMAL(12,2);
  {ATOMIC}
  START TRANSACTION;
  WHILE v_d <= {DISTRICTS} DO
    SET v_o = NULL;
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      SET v_c = NULL;
      SELECT o_c_id INTO v_c FROM orders
        WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o FOR UPDATE;
      IF v_c IS NULL THEN
        {no_order};
      END IF;
      UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
        WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      SELECT SUM(ol_amount) INTO v_sum FROM order_line
        WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      UPDATE customer SET c_balance = c_balance + COALESCE(v_sum, 0),
          c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
END",
            no_order = missing("orders"),
        ),
        format!(
            "CREATE PROCEDURE slev(p_w INT, p_d INT, p_threshold INT)
BEGIN
  DECLARE v_next INT; DECLARE v_count INT;
  {ATOMIC}
  START TRANSACTION;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF v_next IS NULL THEN
    {no_district};
  END IF;
  SELECT COUNT(DISTINCT s_i_id) INTO v_count FROM order_line, stock
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  COMMIT;
END",
            no_district = missing("district"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::tpcc::tx::{Line, NewOrderIn, PaymentIn};

    fn new_order() -> Input {
        Input::NewOrder(NewOrderIn {
            w: 1,
            d: 3,
            c: 42,
            lines: vec![
                Line {
                    number: 2,
                    i_id: 7,
                    supply_w: 1,
                    qty: 5,
                },
                Line {
                    number: 1,
                    i_id: 100_001,
                    supply_w: 2,
                    qty: 1,
                },
            ],
            all_local: false,
        })
    }

    #[test]
    fn new_order_passes_its_lines_as_arrays_or_lists_in_lock_order() {
        assert_eq!(
            call_sql(Dialect::Postgres, &new_order()),
            "SELECT neword(1, 3, 42, 0, ARRAY[2,1]::int[], ARRAY[7,100001]::int[], \
             ARRAY[1,2]::int[], ARRAY[5,1]::int[])"
        );
        assert_eq!(
            call_sql(Dialect::Mysql, &new_order()),
            "CALL neword(1, 3, 42, 0, '2,1', '7,100001', '1,2', '5,1')"
        );
    }

    #[test]
    fn payment_passes_either_the_customer_id_or_the_last_name() {
        let by_name = Input::Payment(PaymentIn {
            w: 1,
            d: 2,
            cw: 3,
            cd: 4,
            cents: 1205,
            customer: Customer::LastName("BARBARBAR".into()),
        });
        assert_eq!(
            call_sql(Dialect::Mysql, &by_name),
            "CALL payment(1, 2, 3, 4, NULL, 'BARBARBAR', 12.05)"
        );
        let by_id = Input::Payment(PaymentIn {
            w: 1,
            d: 2,
            cw: 1,
            cd: 2,
            cents: 100,
            customer: Customer::Id(9),
        });
        assert_eq!(
            call_sql(Dialect::Postgres, &by_id),
            "SELECT payment(1, 2, 1, 2, 9, NULL, 1.00)"
        );
    }

    #[test]
    fn every_routine_is_created_and_dropped_by_name() {
        for d in [Dialect::Postgres, Dialect::Mysql] {
            let create = create(d);
            let drop = drop_all(d);
            for (k, name) in NAMES.iter().enumerate() {
                assert!(create[k].contains(&format!(" {name}(")), "{name}");
                assert!(drop[k].ends_with(&format!(" {name}")));
            }
            assert!(create.iter().all(|s| !s.contains("DELIMITER")));
        }
        assert!(create(Dialect::Mysql)
            .iter()
            .all(|s| s.contains("START TRANSACTION") && s.contains("RESIGNAL")));
    }

    #[test]
    fn the_rollback_sqlstate_is_five_letters_or_digits() {
        assert_eq!(ROLLBACK_SQLSTATE.len(), 5);
        assert!(ROLLBACK_SQLSTATE
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()));
    }
}
