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

mod mysql;
mod postgres;

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
        Dialect::Postgres => postgres::routines(),
        Dialect::Mysql => mysql::routines(),
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

/// Payment's update of the paying customer, the same statement in both dialects; for a
/// customer with bad credit it also writes `v_data`, the new `c_data`.
fn pay_customer(bad_credit: bool) -> String {
    let data = if bad_credit { ", c_data = v_data" } else { "" };
    format!(
        "UPDATE customer SET c_balance = c_balance - p_amount, \
         c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1{data}
      WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;"
    )
}

/// Payment's history row, the same statement in both dialects but for `data`, the
/// dialect's expression joining the warehouse and district names.
fn history_row(data: &str) -> String {
    format!(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c, p_c_d, p_c_w, p_d, p_w, CURRENT_TIMESTAMP, p_amount,
      {data});"
    )
}

/// Delivery's work on one order once its customer `v_c` is known, the same statements in
/// both dialects: carrier, delivery date, and the customer's balance and count. Lines after
/// the first start with `indent`, the routine's indentation where they stand.
fn deliver_order(indent: &str) -> String {
    [
        "UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;",
        "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP",
        "  WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;",
        "SELECT SUM(ol_amount) INTO v_sum FROM order_line",
        "  WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;",
        "UPDATE customer SET c_balance = c_balance + COALESCE(v_sum, 0),",
        "    c_delivery_cnt = c_delivery_cnt + 1",
        "  WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;",
    ]
    .join(&format!("\n{indent}"))
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
