"""TPROC-C, HammerDB's derivative of TPC-C (docs/methodology.md): the sizes a campaign gives it
and the consistency conditions of TPC-C clause 3.3.2 checked after every run.

The schema, the initial population and the five transactions are the driver's (`dbdrift-driver
tpcc`, docs/protocol.md); this module only says what to ask of it and what must hold after.
"""
from __future__ import annotations

from dataclasses import dataclass

from dbdrift.model import JsonObject

DBNAME = "tpcc"
ROWS_PER_WAREHOUSE = 100_000 + 10 + 30_000 * 3 + 9_000 + 300_000
"""About what a warehouse loads: stock, districts, customers, history and orders, new orders and
~10 order lines per order (for load ETAs; items add 100,000 once)."""


@dataclass(frozen=True)
class TpccParams:
    """A campaign's `[tpcc]` table: W warehouses, virtual users, load parallelism and the windows."""

    warehouses: int = 10
    clients: int = 4  # virtual users; each has a home warehouse (vu % W + 1)
    load_clients: int = 0  # loader connections; 0 = one per host CPU, at most W
    rampup_s: float = 60.0  # transactions run but are not counted
    duration_s: float = 300.0  # the measured window
    procedures: bool = False  # the transactions as stored procedures instead of client-side SQL
    consistency_checks: bool = True  # TPC-C clause 3.3.2's conditions checked after each run

    def loaders(self, cpus: int) -> int:
        return max(1, min(self.warehouses, self.load_clients or cpus))


@dataclass(frozen=True)
class Consistency:
    """One condition of TPC-C clause 3.3.2: `sql` returns the districts (or warehouses) that
    violate it, as (w_id, d_id or NULL, found, expected) rows; none means it holds."""

    name: str
    clause: str
    sql: str


CONSISTENCY = (
    Consistency(
        "warehouse YTD = sum of its districts' YTD", "3.3.2.1",
        "SELECT w.w_id, NULL, w.w_ytd, d.ytd FROM warehouse w JOIN "
        "(SELECT d_w_id, SUM(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id "
        "WHERE w.w_ytd <> d.ytd"),
    Consistency(
        "d_next_o_id - 1 = max(o_id) = max(no_o_id)", "3.3.2.2",
        "SELECT d.d_w_id, d.d_id, d.d_next_o_id - 1, o.max_o FROM district d "
        "JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS max_o FROM orders GROUP BY o_w_id, o_d_id) o "
        "ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id "
        "LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS max_no FROM new_order GROUP BY no_w_id, no_d_id) n "
        "ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id "
        "WHERE d.d_next_o_id - 1 <> o.max_o OR (n.max_no IS NOT NULL AND n.max_no <> o.max_o)"),
    Consistency(
        "max(no_o_id) - min(no_o_id) + 1 = rows in new_order", "3.3.2.3",
        "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order "
        "GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)"),
    Consistency(
        "sum(o_ol_cnt) = rows in order_line", "3.3.2.4",
        "SELECT o.o_w_id, o.o_d_id, o.cnt, l.cnt FROM "
        "(SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS cnt FROM orders GROUP BY o_w_id, o_d_id) o JOIN "
        "(SELECT ol_w_id, ol_d_id, COUNT(*) AS cnt FROM order_line GROUP BY ol_w_id, ol_d_id) l "
        "ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.cnt <> l.cnt"),
)


def load_estimate_s(sizes: TpccParams) -> float:
    """Seconds a load is expected to take (progress ETA): ~100,000 rows/s per loader."""
    rows = 100_000 + sizes.warehouses * ROWS_PER_WAREHOUSE
    return rows / (100_000 * max(1, min(sizes.warehouses, sizes.load_clients or 2)))


def setup_text(stored: JsonObject) -> str:
    """TPROC-C's sizes and windows in a few words, from the campaign as stored (to_dict)."""
    t = stored.get("tpcc") or {}
    text = (f"{t.get('warehouses', '?')} warehouse(s), {t.get('clients', '?')} virtual user(s), "
            f"{t.get('rampup_s', 0):g} s ramp-up, {t.get('duration_s', 0):g} s measured")
    if any(a.get("name") == "sp" for a in stored.get("axes") or []):  # plan.PROCEDURES_AXIS
        text += ", without and with stored procedures (sp0, sp1)"
    elif t.get("procedures"):
        text += ", stored procedures"
    if t.get("consistency_checks") is False:
        text += ", consistency not checked"
    if (stored.get("repeats") or 1) > 1:
        planned = "up to " if stored.get("detect_plan") else ""  # detect runs as many as its tests need
        text += f", {planned}{stored['repeats']} repeats (each on a fresh server)"
    return text
