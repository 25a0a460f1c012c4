// The five routines as MySQL/MariaDB procedures (see the parent module for what each must
// keep equal to its client-side twin); each starts and commits its own transaction.

use super::{deliver_order, dist_info, history_row, pay_customer, ROLLBACK_SQLSTATE};
use crate::workloads::tpcc::rows::DISTRICTS;

/// The k-th (from 1) element of a comma-separated list of integers.
fn my_nth(list: &str, k: &str) -> String {
    format!("CAST(SUBSTRING_INDEX(SUBSTRING_INDEX({list}, ',', {k}), ',', -1) AS SIGNED)")
}

pub(super) fn routines() -> Vec<String> {
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
    {pay_with_data}
  ELSE
    {pay}
  END IF;
  {history}
  COMMIT;
END",
            by_name = by_name("p_c_w", "p_c_d"),
            no_customer = missing("customer"),
            pay_with_data = pay_customer(true),
            pay = pay_customer(false),
            history = history_row("CONCAT(RTRIM(v_w_name), '    ', RTRIM(v_d_name))"),
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
      {deliver}
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
END",
            no_order = missing("orders"),
            deliver = deliver_order("      "),
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
