"""The microbenchmark catalogue (results/outcomes.py's CatalogListing) as text: the
tests by group with their SQL; no I/O."""
from __future__ import annotations

from dbdrift.results.outcomes import CatalogListing


def render_text(listing: CatalogListing) -> str:
    out = []
    group = None
    for e in listing.entries:
        if e["group"] != group:
            group = e["group"]
            out.append(f"\n== {listing.group_titles[group]}\n")
        sets = ",".join(s for s, on in (("32", e["in_default32"]), ("42", e["in_all42"])) if on) or "-"
        out.append(f"{e['name']:<34} {e['rw']:<3} stmts/event={e['statements_per_event']:<3} "
                   f"sets={sets:<5} {e['lua']}\n")
        for sql in e["sql"]:
            out.append(f"    {sql if len(sql) < 150 else sql[:147] + '...'}\n")
    return "".join(out)
