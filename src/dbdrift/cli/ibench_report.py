"""`dbdrift report` (and the report after `dbdrift run`) for an Insert Benchmark campaign: the
three summary tables of the Insert Benchmark and the per-step details, from the stored steps."""
from __future__ import annotations

import json

from dbdrift.results.build import host_notes, repeats_notes
from dbdrift.results.targets import base_target, target_labels
from dbdrift.report import ibench_html
from dbdrift.report.ibench import ibench_report, render_csv, render_json, render_markdown, render_text
from dbdrift.version import __version__
from dbdrift.store.store import Store
from dbdrift.workloads.tpcc.plan import setup_text as tpcc_setup_text


def is_ibench(store: Store, campaign_id: int) -> bool:
    return workload(store, campaign_id) == "insert-benchmark"


def _context(store: Store, campaign_id: int, base: str | None) -> tuple:
    """(campaign row, targets with the base first, their labels, host facts, CPU count)."""
    row = store.campaign(campaign_id)
    targets = store.targets(campaign_id)
    base_name = base_target(targets, base, row["name"])
    ordered = [base_name] + [t["name"] for t in targets if t["name"] != base_name]  # the first row is the base
    host = json.loads(row["host_json"])
    return row, ordered, target_labels(targets), host, host.get("cpus") or 1


def ibench_data(store: Store, campaign_id: int, base: str | None, min_effect: float = 0.02,
                noisy: float = 0.05):
    """The Insert Benchmark report of a stored campaign, with its notes and verdicts."""
    row, ordered, labels, host, ncpu = _context(store, campaign_id, base)
    spec = json.loads(row["spec_json"])
    notes = host_notes(host) + repeats_notes(spec, "each step's rate")
    planned = tuple((spec.get("insert_benchmark") or {}).get("steps") or ())
    return ibench_report(store.ibench_steps(campaign_id), ordered, labels, ncpu, row["name"], notes, min_effect, noisy,
                         planned)


def render(store: Store, campaign_id: int, base: str | None, fmt: str, data=None) -> str:
    row, _, _, host, _ = _context(store, campaign_id, base)
    data = data or ibench_data(store, campaign_id, base)
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "csv":
        return render_csv(data)
    if fmt == "json":
        return render_json(data)
    if fmt == "html":
        spec = json.loads(row["spec_json"])
        return ibench_html.render_html(data, {"host": host, "run_on": row["created_at"], "dbdrift_version": __version__,
                                              "sizes": sizes_text(spec)})
    return render_text(data)


def sizes_text(spec: dict) -> str:
    """The campaign's Insert Benchmark sizes in a line: clients, rows per load step, query seconds, repeats."""
    ib = spec.get("insert_benchmark") or {}
    parts = [f"{ib.get('clients', '?')} client(s)",
             f"rows l.i0 {ib.get('rows_l_i0', '?'):,}" if isinstance(ib.get("rows_l_i0"), int) else "",
             f"l.i1 {ib.get('rows_l_i1'):,}" if isinstance(ib.get("rows_l_i1"), int) else "",
             f"l.i2 {ib.get('rows_l_i2'):,}" if isinstance(ib.get("rows_l_i2"), int) else "",
             f"{ib.get('query_s')} s per query step" if ib.get("query_s") is not None else ""]
    if (spec.get("repeats") or 1) > 1:
        parts.append(f"{spec['repeats']} repeats")
    if ib.get("io_bound"):
        parts.append("IO-bound (buffer pool well below the table)")
    return ", ".join(p for p in parts if p)


def workload(store: Store, campaign_id: int) -> str:
    return json.loads(store.campaign(campaign_id)["spec_json"]).get("workload", "sysbench")


def tpcc_data(store: Store, campaign_id: int, base: str | None, min_effect: float = 0.02, noisy: float = 0.05):
    """The TPROC-C report of a stored campaign, with its notes and verdicts."""
    from dbdrift.report import tpcc as tpcc_report

    row, ordered, labels, host, ncpu = _context(store, campaign_id, base)
    spec = json.loads(row["spec_json"])
    notes = host_notes(host) + repeats_notes(spec, "NOPM")
    return tpcc_report.tpcc_report(store.tpcc_runs(campaign_id), ordered, labels, ncpu, row["name"],
                                   tpcc_setup_text(spec), notes, min_effect, noisy)


def render_tpcc(store: Store, campaign_id: int, base: str | None, fmt: str, data=None) -> str:
    """The TPROC-C report of a stored campaign in `fmt`."""
    from dbdrift.report import tpcc as tpcc_report

    row, _, _, host, _ = _context(store, campaign_id, base)
    data = data or tpcc_data(store, campaign_id, base)
    if fmt in ("text", "markdown"):
        return tpcc_report.render_text(data, markdown=fmt == "markdown")
    if fmt == "csv":
        return tpcc_report.render_csv(data)
    if fmt == "json":
        return tpcc_report.render_json(data)
    return tpcc_report.render_html(data, {"host": host, "run_on": row["created_at"]})
