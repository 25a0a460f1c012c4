// The five routines as PL/pgSQL functions (see the parent module for what each must keep
// equal to its client-side twin); called as `SELECT name(...)` in autocommit.

use super::{deliver_order, dist_info, history_row, pay_customer, ROLLBACK_SQLSTATE};
use crate::workloads::tpcc::rows::DISTRICTS;

pub(super) fn routines() -> Vec<String> {
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
    {pay_with_data}
  ELSE
    {pay}
  END IF;
  {history}
END
$$",
            by_name = by_name("p_c_w", "p_c_d"),
            pay_with_data = pay_customer(true),
            pay = pay_customer(false),
            history = history_row("rtrim(v_w_name) || '    ' || rtrim(v_d_name)"),
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
    {deliver}
  END LOOP;
END
$$",
            deliver = deliver_order("    "),
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
