"""`dbdrift report` (and the report after `dbdrift run`) for an Insert Benchmark campaign: the
three summary tables of the Insert Benchmark and the per-step details, from the stored steps."""
from __future__ import annotations

import json

from dbdrift.results.targets import base_target, target_labels
from dbdrift.errors import UserError
from dbdrift.report.ibench import ibench_report, render_csv, render_json, render_markdown, render_text
from dbdrift.store.store import Store


def is_ibench(store: Store, campaign_id: int) -> bool:
    return json.loads(store.campaign(campaign_id)["spec_json"]).get("workload") == "insert-benchmark"


def render(store: Store, campaign_id: int, base: str | None, fmt: str) -> str:
    row = store.campaign(campaign_id)
    targets = store.targets(campaign_id)
    names = [t["name"] for t in targets]
    base_name = base_target(targets, base, row["name"])
    labels = target_labels(targets)
    ordered = [base_name] + [n for n in names if n != base_name]  # the first row is the base
    ncpu = json.loads(row["host_json"]).get("cpus") or 1
    data = ibench_report(store.ibench_steps(campaign_id), ordered, labels, ncpu, row["name"])
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "csv":
        return render_csv(data)
    if fmt == "json":
        return render_json(data)
    if fmt == "html":
        raise UserError(f"campaign {row['name']} is an Insert Benchmark: its HTML report is not written yet",
                        "use --format json (it carries every table and the per-second chart data), text, "
                        "markdown or csv")
    return render_text(data)
