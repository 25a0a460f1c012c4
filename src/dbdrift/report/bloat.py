"""A bloat outcome (results/outcomes.py's BloatOutcome) as a text table; no I/O."""
from __future__ import annotations

from dbdrift.report.numbers import fmt_mb, fmt_rel
from dbdrift.results.outcomes import BloatOutcome


def render_text(outcome: BloatOutcome) -> str:
    """Sizes in MB per target, relative to the first on the right; the object files that grew most."""
    rows, growth = outcome.binaries, outcome.objects
    first = rows[0]
    out = [f"server binary, MB (relative to {first['target']} on the right)",
           f"{'target':<16} {'version':<10} {'as-is':>8} {'stripped':>9} {'text':>8} {'data':>7} {'bss':>7} "
           f"{'own libs':>9}   {'as-is':>6} {'stripped':>8}"]
    for r in rows:
        sizes = [(r["bytes"], 8), (r["stripped_bytes"], 9), (r["text"], 8), (r["data"], 7), (r["bss"], 7),
                 (r["libs_bytes"], 9)]
        out.append(f"{r['target']:<16} {r['version']:<10} " + " ".join(f"{fmt_mb(v):>{w}}" for v, w in sizes)
                   + f"   {fmt_rel(r['bytes'], first['bytes']):>6} "
                   f"{fmt_rel(r['stripped_bytes'], first['stripped_bytes']):>8}")
    out.append("")
    for r in rows:
        out.append(f"{r['target']}: {r['path']}" + (
            "; own libraries: " + ", ".join(f"{lib['name']} {fmt_mb(lib['bytes'])}" for lib in r["libs"])
            if r["libs"] else ""))
    for g in growth:
        out += ["", f"object files that grew most, {g['target']} against {g['reference']} (text + data, KB)"]
        out += [f"  {o['object']:<60} {o['reference_bytes'] / 1000:>9.1f} -> {o['bytes'] / 1000:>9.1f}  "
                f"{fmt_rel(o['bytes'], o['reference_bytes'])}x" for o in g["objects"]]
    return "\n".join(out) + "\n"
