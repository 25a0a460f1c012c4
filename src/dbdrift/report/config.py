"""A campaign's target configurations (app/config.py's TargetConfig, read by attribute) as text:
per target each option, its value, where it came from and what it replaced, or the layers as
written to the server; and the list of named files. No I/O."""
from __future__ import annotations


def render_show(configs: list, written: bool) -> str:
    out = []
    for config in configs:
        out.append(_heading(config.target, config.version))
        out += _written(config.layers) if written else _table(config.options, config.target.engine)
        out.append("")
    return "\n".join(out)


def render_named(described: list[tuple[str, str, str]]) -> str:
    """The named configuration files: name, the versions they span, what they are."""
    width = max(len(name) for name, _, _ in described)
    return "".join(f"{name:<{width}}  {span:<32}  {about}\n" for name, span, about in described)


def _heading(target, version: str) -> str:
    what = f"target {target.name}: {target.engine} {version} ({target.source})"
    if target.variant:
        what += f", variant {target.variant} of {target.parent}"
    return what


def _table(options: list, engine: str) -> list[str]:
    empty = "''" if engine == "postgres" else "(set)"  # PostgreSQL's empty string; a bare my.cnf flag
    rows = [(e.key, e.value or empty, e.source, ", ".join(f"{v or empty} from {s}" for s, v in reversed(e.overrode)))
            for e in options]
    widths = [max(len(r[i]) for r in rows + [("option", "value", "from", "")]) for i in range(3)]
    out = ["  " + "  ".join(h.ljust(w) for h, w in zip(("option", "value", "from"), widths)) + "  replaces"]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + (f"  {r[3]}" if r[3] else "")
            for r in rows]
    return [line.rstrip() for line in out]


def _written(layers: list) -> list[str]:
    return [f"# --- {layer.title} ---\n{layer.text}\n" for layer in layers]
