"""CH-benCHmark's analytical side: its three tables beside TPC-C's (supplier, nation, region) and
its 22 queries, TPC-H's adapted to the TPC-C schema (Cole et al., "The mixed workload
CH-benCHmark", DBTest 2011), as the driver's TPROC-C schema names the columns.

The queries are written once, in the SQL both PostgreSQL and MySQL/MariaDB read; what differs
per engine is rewritten by `for_engine`. Stock rows map to suppliers by mod(s_w_id * s_i_id,
10000), customers to nations by ascii of the first letter of c_state (TPC-C draws it from
[0-9A-Za-z], so the 62 nations are keyed by those characters' codes), nations to 5 regions.
The date literals sit before any order's entry date (the load stamps them with its own time),
as CH-benCHmark's do, so each query reads the whole history the transactions grow.
"""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.model import JsonObject
from dbdrift.workloads.tpcc.catalog import TpccParams

SUPPLIERS = 10_000
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # the driver's c_state letters
REGIONS = ("Africa", "America", "Asia", "Australia", "Europe")
NATIONS = (  # 62: one per character of ALNUM, in its order; each with its region
    ("Australia", 3), ("Belgium", 4), ("Cameroon", 0), ("Denmark", 4), ("Ecuador", 1), ("France", 4),
    ("Germany", 4), ("Hungary", 4), ("Italy", 4), ("Japan", 2), ("Kenya", 0), ("Lithuania", 4), ("Mexico", 1),
    ("Netherlands", 4), ("Oman", 2), ("Portugal", 4), ("Qatar", 2), ("Rwanda", 0), ("Serbia", 4), ("Togo", 0),
    ("United States", 1), ("Vietnam", 2), ("Singapore", 2), ("Uganda", 0), ("Yemen", 2), ("Zimbabwe", 0),
    ("Argentina", 1), ("Bangladesh", 2), ("Cambodia", 2), ("Djibouti", 0), ("Egypt", 0), ("Fiji", 3),
    ("Ghana", 0), ("Haiti", 1), ("India", 2), ("Jamaica", 1), ("Kazakhstan", 2), ("Laos", 2), ("Malaysia", 2),
    ("Nepal", 2), ("Nigeria", 0), ("Peru", 1), ("Qatar North", 2), ("Romania", 4), ("Samoa", 3), ("Tonga", 3),
    ("Uruguay", 1), ("Vanuatu", 3), ("Wales", 4), ("Xinjiang", 2), ("Yukon", 1), ("Zambia", 0), ("Albania", 4),
    ("Bolivia", 1), ("Chile", 1), ("Dominica", 1), ("Estonia", 4), ("Finland", 4), ("Greece", 4),
    ("Honduras", 1), ("Iceland", 4), ("Jordan", 2),
)
assert len(NATIONS) == len(ALNUM)

TABLES = {
    "region": "r_regionkey INTEGER NOT NULL PRIMARY KEY, r_name CHAR(55), r_comment CHAR(152)",
    "nation": "n_nationkey INTEGER NOT NULL PRIMARY KEY, n_name CHAR(25), n_regionkey INTEGER, n_comment CHAR(152)",
    "supplier": ("su_suppkey INTEGER NOT NULL PRIMARY KEY, su_name CHAR(25), su_address VARCHAR(40), "
                 "su_nationkey INTEGER, su_phone CHAR(15), su_acctbal DECIMAL(12,2), su_comment CHAR(100)"),
}

T0 = "'2007-01-02 00:00:00'"  # before every order the load or the run enters
T1 = "'2020-01-01 00:00:00'"
T2 = "'2030-01-02 00:00:00'"  # after every one

QUERIES: tuple[tuple[str, str], ...] = (
    ("Q1", f"""SELECT ol_number, SUM(ol_quantity) AS sum_qty, SUM(ol_amount) AS sum_amount,
  AVG(ol_quantity) AS avg_qty, AVG(ol_amount) AS avg_amount, COUNT(*) AS count_order
FROM order_line WHERE ol_delivery_d > {T0}
GROUP BY ol_number ORDER BY ol_number"""),
    ("Q2", """SELECT su_suppkey, su_name, n_name, i_id, i_name, su_address, su_phone, su_comment
FROM item, supplier, stock, nation, region,
  (SELECT s_i_id AS m_i_id, MIN(s_quantity) AS m_s_quantity
   FROM stock, supplier, nation, region
   WHERE MOD(s_w_id * s_i_id, 10000) = su_suppkey AND su_nationkey = n_nationkey
     AND n_regionkey = r_regionkey AND r_name LIKE 'Europ%'
   GROUP BY s_i_id) m
WHERE i_id = s_i_id AND MOD(s_w_id * s_i_id, 10000) = su_suppkey AND su_nationkey = n_nationkey
  AND n_regionkey = r_regionkey AND i_data LIKE '%b' AND r_name LIKE 'Europ%'
  AND i_id = m_i_id AND s_quantity = m_s_quantity
ORDER BY n_name, su_name, i_id"""),
    ("Q3", f"""SELECT ol_o_id, ol_w_id, ol_d_id, SUM(ol_amount) AS revenue, o_entry_d
FROM customer, new_order, orders, order_line
WHERE c_state LIKE 'A%' AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
  AND no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
  AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d > {T0}
GROUP BY ol_o_id, ol_w_id, ol_d_id, o_entry_d
ORDER BY revenue DESC, o_entry_d"""),
    ("Q4", f"""SELECT o_ol_cnt, COUNT(*) AS order_count
FROM orders
WHERE o_entry_d >= {T0} AND o_entry_d < {T2}
  AND EXISTS (SELECT * FROM order_line WHERE o_id = ol_o_id AND o_w_id = ol_w_id AND o_d_id = ol_d_id
              AND ol_delivery_d >= o_entry_d)
GROUP BY o_ol_cnt ORDER BY o_ol_cnt"""),
    ("Q5", f"""SELECT n_name, SUM(ol_amount) AS revenue
FROM customer, orders, order_line, stock, supplier, nation, region
WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
  AND ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id
  AND ol_w_id = s_w_id AND ol_i_id = s_i_id AND MOD(s_w_id * s_i_id, 10000) = su_suppkey
  AND ASCII(SUBSTRING(c_state FROM 1 FOR 1)) = su_nationkey AND su_nationkey = n_nationkey
  AND n_regionkey = r_regionkey AND r_name = 'Europe' AND o_entry_d >= {T0}
GROUP BY n_name ORDER BY revenue DESC"""),
    ("Q6", f"""SELECT SUM(ol_amount) AS revenue
FROM order_line
WHERE ol_delivery_d >= {T0} AND ol_delivery_d < {T2} AND ol_quantity BETWEEN 1 AND 100000"""),
    ("Q7", """SELECT su_nationkey AS supp_nation, SUBSTRING(c_state FROM 1 FOR 1) AS cust_nation,
  EXTRACT(YEAR FROM o_entry_d) AS l_year, SUM(ol_amount) AS revenue
FROM supplier, stock, order_line, orders, customer, nation n1, nation n2
WHERE ol_supply_w_id = s_w_id AND ol_i_id = s_i_id AND MOD(s_w_id * s_i_id, 10000) = su_suppkey
  AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
  AND su_nationkey = n1.n_nationkey AND ASCII(SUBSTRING(c_state FROM 1 FOR 1)) = n2.n_nationkey
  AND ((n1.n_name = 'Germany' AND n2.n_name = 'Cambodia') OR (n1.n_name = 'Cambodia' AND n2.n_name = 'Germany'))
GROUP BY su_nationkey, SUBSTRING(c_state FROM 1 FOR 1), EXTRACT(YEAR FROM o_entry_d)
ORDER BY su_nationkey, cust_nation, l_year"""),
    ("Q8", """SELECT EXTRACT(YEAR FROM o_entry_d) AS l_year,
  SUM(CASE WHEN n2.n_name = 'Germany' THEN ol_amount ELSE 0 END) / SUM(ol_amount) AS mkt_share
FROM item, supplier, stock, order_line, orders, customer, nation n1, nation n2, region
WHERE i_id = s_i_id AND ol_i_id = s_i_id AND ol_supply_w_id = s_w_id
  AND MOD(s_w_id * s_i_id, 10000) = su_suppkey
  AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
  AND n1.n_nationkey = ASCII(SUBSTRING(c_state FROM 1 FOR 1)) AND n1.n_regionkey = r_regionkey
  AND ol_i_id < 1000 AND r_name = 'Europe' AND su_nationkey = n2.n_nationkey
  AND i_data LIKE '%b' AND i_id = ol_i_id
GROUP BY EXTRACT(YEAR FROM o_entry_d) ORDER BY l_year"""),
    ("Q9", """SELECT n_name, EXTRACT(YEAR FROM o_entry_d) AS l_year, SUM(ol_amount) AS sum_profit
FROM item, stock, supplier, order_line, orders, nation
WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id AND MOD(s_w_id * s_i_id, 10000) = su_suppkey
  AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  AND ol_i_id = i_id AND su_nationkey = n_nationkey AND i_data LIKE '%BB'
GROUP BY n_name, EXTRACT(YEAR FROM o_entry_d) ORDER BY n_name, l_year DESC"""),
    ("Q10", f"""SELECT c_id, c_last, SUM(ol_amount) AS revenue, c_city, c_phone, n_name
FROM customer, orders, order_line, nation
WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
  AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  AND o_entry_d >= {T0} AND o_entry_d <= ol_delivery_d
  AND n_nationkey = ASCII(SUBSTRING(c_state FROM 1 FOR 1))
GROUP BY c_id, c_last, c_city, c_phone, n_name
ORDER BY revenue DESC"""),
    ("Q11", """SELECT s_i_id, SUM(s_order_cnt) AS ordercount
FROM stock, supplier, nation
WHERE MOD(s_w_id * s_i_id, 10000) = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany'
GROUP BY s_i_id
HAVING SUM(s_order_cnt) > (SELECT SUM(s_order_cnt) * 0.005 FROM stock, supplier, nation
                           WHERE MOD(s_w_id * s_i_id, 10000) = su_suppkey AND su_nationkey = n_nationkey
                             AND n_name = 'Germany')
ORDER BY ordercount DESC"""),
    ("Q12", f"""SELECT o_ol_cnt,
  SUM(CASE WHEN o_carrier_id = 1 OR o_carrier_id = 2 THEN 1 ELSE 0 END) AS high_line_count,
  SUM(CASE WHEN o_carrier_id <> 1 AND o_carrier_id <> 2 THEN 1 ELSE 0 END) AS low_line_count
FROM orders, order_line
WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  AND o_entry_d <= ol_delivery_d AND ol_delivery_d < {T2}
GROUP BY o_ol_cnt ORDER BY o_ol_cnt"""),
    ("Q13", """SELECT c_count, COUNT(*) AS custdist
FROM (SELECT c_id, COUNT(o_id) AS c_count
      FROM customer LEFT OUTER JOIN orders
        ON (c_w_id = o_w_id AND c_d_id = o_d_id AND c_id = o_c_id AND o_carrier_id > 8)
      GROUP BY c_id) c_orders
GROUP BY c_count ORDER BY custdist DESC, c_count DESC"""),
    ("Q14", f"""SELECT 100.00 * SUM(CASE WHEN i_data LIKE 'PR%' THEN ol_amount ELSE 0 END)
  / (1 + SUM(ol_amount)) AS promo_revenue
FROM order_line, item
WHERE ol_i_id = i_id AND ol_delivery_d >= {T0} AND ol_delivery_d < {T2}"""),
    ("Q15", f"""SELECT su_suppkey, su_name, su_address, su_phone, total_revenue
FROM supplier,
  (SELECT MOD(s_w_id * s_i_id, 10000) AS supplier_no, SUM(ol_amount) AS total_revenue
   FROM order_line, stock
   WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id AND ol_delivery_d >= {T0}
   GROUP BY MOD(s_w_id * s_i_id, 10000)) revenue0
WHERE su_suppkey = supplier_no
  AND total_revenue = (SELECT MAX(total_revenue) FROM
    (SELECT SUM(ol_amount) AS total_revenue FROM order_line, stock
     WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id AND ol_delivery_d >= {T0}
     GROUP BY MOD(s_w_id * s_i_id, 10000)) revenue1)
ORDER BY su_suppkey"""),
    ("Q16", """SELECT i_name, SUBSTRING(i_data FROM 1 FOR 3) AS brand, i_price,
  COUNT(DISTINCT MOD(s_w_id * s_i_id, 10000)) AS supplier_cnt
FROM stock, item
WHERE i_id = s_i_id AND i_data NOT LIKE 'zz%'
  AND MOD(s_w_id * s_i_id, 10000) NOT IN (SELECT su_suppkey FROM supplier WHERE su_comment LIKE '%bad%')
GROUP BY i_name, SUBSTRING(i_data FROM 1 FOR 3), i_price
ORDER BY supplier_cnt DESC"""),
    ("Q17", """SELECT SUM(ol_amount) / 2.0 AS avg_yearly
FROM order_line,
  (SELECT i_id, AVG(ol_quantity) AS a FROM item, order_line WHERE i_data LIKE '%b' AND ol_i_id = i_id
   GROUP BY i_id) t
WHERE ol_i_id = t.i_id AND ol_quantity < t.a"""),
    ("Q18", """SELECT c_last, c_id, o_id, o_entry_d, o_ol_cnt, SUM(ol_amount) AS amount_sum
FROM customer, orders, order_line
WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
  AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
GROUP BY o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt
HAVING SUM(ol_amount) > 200
ORDER BY amount_sum DESC, o_entry_d"""),
    ("Q19", """SELECT SUM(ol_amount) AS revenue
FROM order_line, item
WHERE (ol_i_id = i_id AND i_data LIKE '%a' AND ol_quantity >= 1 AND ol_quantity <= 10
       AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 3))
   OR (ol_i_id = i_id AND i_data LIKE '%b' AND ol_quantity >= 1 AND ol_quantity <= 10
       AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 4))
   OR (ol_i_id = i_id AND i_data LIKE '%c' AND ol_quantity >= 1 AND ol_quantity <= 10
       AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 5, 3))"""),
    ("Q20", f"""SELECT su_name, su_address
FROM supplier, nation
WHERE su_suppkey IN (SELECT MOD(s_i_id * s_w_id, 10000) FROM stock
                     WHERE s_i_id IN (SELECT i_id FROM item WHERE i_data LIKE 'co%')
                       AND s_quantity > (SELECT SUM(ol_quantity) / 2 FROM order_line
                                         WHERE ol_i_id = s_i_id AND ol_delivery_d > {T0}))
  AND su_nationkey = n_nationkey AND n_name = 'Germany'
ORDER BY su_name"""),
    ("Q21", """SELECT su_name, COUNT(*) AS numwait
FROM supplier, order_line l1, orders, stock, nation
WHERE l1.ol_o_id = o_id AND l1.ol_w_id = o_w_id AND l1.ol_d_id = o_d_id
  AND l1.ol_w_id = s_w_id AND l1.ol_i_id = s_i_id AND MOD(s_w_id * s_i_id, 10000) = su_suppkey
  AND l1.ol_delivery_d > o_entry_d
  AND NOT EXISTS (SELECT * FROM order_line l2 WHERE l2.ol_o_id = l1.ol_o_id AND l2.ol_w_id = l1.ol_w_id
                  AND l2.ol_d_id = l1.ol_d_id AND l2.ol_delivery_d > l1.ol_delivery_d)
  AND su_nationkey = n_nationkey AND n_name = 'Germany'
GROUP BY su_name ORDER BY numwait DESC, su_name"""),
    ("Q22", """SELECT SUBSTRING(c_state FROM 1 FOR 1) AS country, COUNT(*) AS numcust, SUM(c_balance) AS totacctbal
FROM customer
WHERE SUBSTRING(c_phone FROM 1 FOR 1) IN ('1', '2', '3', '4', '5', '6', '7')
  AND c_balance > (SELECT AVG(c_balance) FROM customer
                   WHERE c_balance > 0.00 AND SUBSTRING(c_phone FROM 1 FOR 1) IN ('1', '2', '3', '4', '5', '6', '7'))
  AND NOT EXISTS (SELECT * FROM orders WHERE o_c_id = c_id AND o_w_id = c_w_id AND o_d_id = c_d_id)
GROUP BY SUBSTRING(c_state FROM 1 FOR 1)
ORDER BY SUBSTRING(c_state FROM 1 FOR 1)"""),
)
assert [name for name, _ in QUERIES] == [f"Q{i}" for i in range(1, 23)]


def for_engine(sql: str, engine: str) -> str:
    """A query as `engine` reads it. PostgreSQL compares a timestamp with a quoted literal and
    takes every function above as written; MySQL and MariaDB also read them as written, but
    c_state's first letter must compare by its byte, not the collation's case-folding (Q3's
    LIKE 'A%' would match 'a' too), so the LIKE is made binary there."""
    if engine in ("mysql", "mariadb"):
        return sql.replace("c_state LIKE 'A%'", "c_state LIKE BINARY 'A%'")
    return sql


QUERY_NAMES = tuple(name for name, _ in QUERIES)
WINDOWS = ("analytics", "transactions", "together")
"""Each repeat's three measured windows, in this order, of one length: the analytical streams
alone (their scans of every table also warm the caches for what follows, so the transactions do
not meet a cold database in one window and a warm one in the other), TPROC-C's virtual users
alone, then both together (the HTAP window)."""
JUDGED = ("NOPM with analytics", "NOPM alone", "queries/h with transactions", "queries/h alone")
"""The campaign-wide figures that get a verdict; each query's latency with transactions gets one
too (as `Qn latency`, base ÷ new, so that above 1 is faster like every other ratio)."""
WINDOW_TITLES = {"transactions": "transactions alone", "analytics": "analytics alone", "together": "together"}


@dataclass(frozen=True)
class HtapParams:
    """A campaign's `[htap]` table: TPROC-C's warehouses and virtual users, the analytical
    streams beside them, the queries they run and the length of each of the three windows."""

    warehouses: int = 10
    clients: int = 4  # transactional virtual users (TPROC-C's)
    streams: int = 1  # analytical streams, each one connection running the queries in turn
    load_clients: int = 0  # loader connections; 0 = one per host CPU, at most W
    rampup_s: float = 30.0  # before each window: running, not counted
    duration_s: float = 300.0  # each window's measured length
    queries: tuple[str, ...] = QUERY_NAMES  # CH-benCHmark's queries the streams run, in this order
    consistency_checks: bool = True  # TPC-C clause 3.3.2's conditions checked after the last window

    def tpcc(self) -> TpccParams:
        """The TPROC-C part, as the TPROC-C driver calls and ETAs take it."""
        return TpccParams(warehouses=self.warehouses, clients=self.clients, load_clients=self.load_clients,
                         rampup_s=self.rampup_s, duration_s=self.duration_s, procedures=False,
                         consistency_checks=self.consistency_checks)

    def window(self, name: str) -> tuple[int, int]:
        """(virtual users, analytical streams) of a window."""
        return {"transactions": (self.clients, 0), "analytics": (0, self.streams),
                "together": (self.clients, self.streams)}[name]


def queries_for(engine: str, names: tuple[str, ...], repeat: int = 0) -> list[JsonObject]:
    """The driver's analytics queries for `engine`: `names` in order, rotated by the repeat so
    the queries a short window never reaches differ from repeat to repeat."""
    text = dict(QUERIES)
    chosen = [{"name": n, "sql": for_engine(text[n], engine)} for n in names]
    shift = (repeat * 7) % len(chosen) if chosen else 0
    return chosen[shift:] + chosen[:shift]


def _literal(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def load_statements(seed: int, batch: int = 1000) -> list[str]:
    """CREATE TABLE and INSERT statements of the three tables, in the SQL every engine reads."""
    out = [f"CREATE TABLE {name} ({columns})" for name, columns in TABLES.items()]
    for name, rows in (("region", region_rows()), ("nation", nation_rows()), ("supplier", supplier_rows(seed))):
        for i in range(0, len(rows), batch):
            values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows[i:i + batch])
            out.append(f"INSERT INTO {name} VALUES {values}")
    return out


def setup_text(stored: JsonObject) -> str:
    """The campaign's HTAP sizes and windows in a few words, from the campaign as stored (to_dict)."""
    h = stored.get("htap") or {}
    names = h.get("queries") or QUERY_NAMES
    which = "22 queries" if len(names) == len(QUERY_NAMES) else f"queries {', '.join(names)}"
    text = (f"{h.get('warehouses', '?')} warehouse(s), {h.get('clients', '?')} virtual user(s), "
            f"{h.get('streams', '?')} analytical stream(s) of CH-benCHmark's {which}; three windows "
            f"(analytics alone, transactions alone, together) of {h.get('rampup_s', 0):g} s ramp-up + "
            f"{h.get('duration_s', 0):g} s measured")
    if h.get("consistency_checks") is False:
        text += ", consistency not checked"
    if (stored.get("repeats") or 1) > 1:
        planned = "up to " if stored.get("detect_plan") else ""
        text += f", {planned}{stored['repeats']} repeats (each on a fresh server)"
    return text


def supplier_rows(seed: int) -> list[tuple[object, ...]]:
    """The 10,000 suppliers: key 0..9999 (mod(s_w_id * s_i_id, 10000) meets them all), a nation
    each (key % 62), and 5 in 10,000 comments holding 'bad' (Q16 leaves their stock out)."""
    import random
    rng = random.Random(seed)
    out: list[tuple[object, ...]] = []
    for key in range(SUPPLIERS):
        nation = ord(ALNUM[key % len(ALNUM)])
        comment = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(40))
        if key % 2000 == 7:
            comment = comment[:10] + " bad " + comment[15:]
        out.append((key, f"Supplier#{key:09d}", f"street {rng.randrange(1, 9999)}", nation,
                    f"{nation % 90 + 10}-{rng.randrange(100, 999)}-{rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}",
                    round(rng.uniform(-999.99, 9999.99), 2), comment))
    return out


def nation_rows() -> list[tuple[object, ...]]:
    return [(ord(ch), name, region, f"{name} of {REGIONS[region]}") for ch, (name, region) in zip(ALNUM, NATIONS)]


def region_rows() -> list[tuple[object, ...]]:
    return [(key, name, f"the {name} region") for key, name in enumerate(REGIONS)]
