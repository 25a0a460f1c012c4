// The nine TPC-C tables as HammerDB creates them (column names and types of clause 1.3), per
// dialect: tables first, primary keys (PostgreSQL) and HammerDB's two secondary indexes after
// the load, then statistics. Only SQL text lives here.

use crate::backend::Dialect;

/// In load order; also the order of the summary's `rows`.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// (table, columns, primary key).
const DEFS: [(&str, &str, &str); 9] = [
    (
        "warehouse",
        "w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), \
         w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2)",
        "w_id",
    ),
    (
        "district",
        "d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), \
         d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), \
         d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INTEGER",
        "d_w_id, d_id",
    ),
    (
        "customer",
        "c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first VARCHAR(16), \
         c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), \
         c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since TIMESTAMP, \
         c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), \
         c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, \
         c_delivery_cnt INTEGER, c_data VARCHAR(500)",
        "c_w_id, c_d_id, c_id",
    ),
    (
        "history",
        "h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, \
         h_date TIMESTAMP, h_amount DECIMAL(6,2), h_data VARCHAR(24)",
        "",
    ),
    (
        "new_order",
        "no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL",
        "no_w_id, no_d_id, no_o_id",
    ),
    (
        "orders",
        "o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, \
         o_entry_d TIMESTAMP, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER",
        "o_w_id, o_d_id, o_id",
    ),
    (
        "order_line",
        "ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, \
         ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, \
         ol_delivery_d TIMESTAMP, ol_quantity INTEGER, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24)",
        "ol_w_id, ol_d_id, ol_o_id, ol_number",
    ),
    (
        "item",
        "i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL(5,2), \
         i_data VARCHAR(50)",
        "i_id",
    ),
    (
        "stock",
        "s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, \
         s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), \
         s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), \
         s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER, \
         s_remote_cnt INTEGER, s_data VARCHAR(50)",
        "s_w_id, s_i_id",
    ),
];

/// HammerDB's secondary indexes (name, table, columns).
const INDEXES: [(&str, &str, &str); 2] = [
    (
        "customer_i2",
        "customer",
        "c_w_id, c_d_id, c_last, c_first, c_id",
    ),
    ("orders_i2", "orders", "o_w_id, o_d_id, o_c_id, o_id"),
];

/// Drops (if present) and creates the tables. InnoDB clusters rows by the primary key, so
/// MySQL gets it in the CREATE; PostgreSQL adds it after the load, which is faster.
pub fn create(dialect: Dialect) -> Vec<String> {
    let mut out = vec![format!("DROP TABLE IF EXISTS {}", TABLES.join(", "))];
    for (table, columns, pk) in DEFS {
        out.push(match dialect {
            Dialect::Postgres => format!("CREATE TABLE {table} ({columns})"),
            Dialect::Mysql => {
                let columns = columns.replace("TIMESTAMP", "DATETIME");
                let key = if pk.is_empty() {
                    String::new()
                } else {
                    format!(", PRIMARY KEY ({pk})")
                };
                format!("CREATE TABLE {table} ({columns}{key}) ENGINE=InnoDB")
            }
        });
    }
    out
}

/// Index statements that follow the load, one table each, so loaders can run them in parallel.
pub fn indexes(dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    if dialect == Dialect::Postgres {
        for (table, _, pk) in DEFS.iter().filter(|d| !d.2.is_empty()) {
            let mut stmt = format!("ALTER TABLE {table} ADD PRIMARY KEY ({pk})");
            if let Some((name, _, cols)) = INDEXES.iter().find(|i| i.1 == *table) {
                stmt.push_str(&format!("; CREATE INDEX {name} ON {table} ({cols})"));
            }
            out.push(stmt);
        }
    } else {
        for (name, table, cols) in INDEXES {
            out.push(format!("CREATE INDEX {name} ON {table} ({cols})"));
        }
    }
    out
}

pub fn analyze(dialect: Dialect) -> String {
    match dialect {
        Dialect::Postgres => format!("ANALYZE {}", TABLES.join(", ")),
        Dialect::Mysql => format!("ANALYZE TABLE {}", TABLES.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_tables_are_innodb_with_their_primary_key_and_datetimes() {
        let ddl = create(Dialect::Mysql);
        assert_eq!(ddl.len(), 10);
        let stock = ddl
            .iter()
            .find(|s| s.starts_with("CREATE TABLE stock"))
            .unwrap();
        assert!(stock.ends_with("PRIMARY KEY (s_w_id, s_i_id)) ENGINE=InnoDB"));
        assert!(ddl.iter().all(|s| !s.contains("TIMESTAMP")));
    }

    #[test]
    fn postgres_gets_every_primary_key_and_both_secondary_indexes_after_the_load() {
        let idx = indexes(Dialect::Postgres).join(";");
        assert_eq!(idx.matches("ADD PRIMARY KEY").count(), 8);
        assert!(idx.contains("customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first, c_id)"));
        assert!(idx.contains("orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id)"));
    }
}
