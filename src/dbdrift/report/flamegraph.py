"""Flamegraphs as self-contained SVG (plain and differential) and the folded text format, all
pure functions of folded stacks {"a;b;c": samples}. No perf, no I/O.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable
from xml.sax.saxutils import escape

from dbdrift.analysis.flame_areas import AreaShares
from dbdrift.model import JsonObject

FRAME_H = 16
FONT_PX = 12
CHAR_W = FONT_PX * 0.59  # average glyph width of Verdana at FONT_PX, as flamegraph.pl assumes
X_PAD = 10
TOP_PAD = FONT_PX * 3
BOTTOM_PAD = FONT_PX
MIN_FRACTION = 0.001  # frames under 0.1% of all samples are dropped, with their children
ROOT = "all"

AREAS_TITLE = "flamegraph areas (% of samples)"
AREAS_LEGEND = ("the samples of the flamegraph (server and driver, perf at 333 Hz over the measured part) by where "
                "they were: client the driver, db-fg the connections' work and, under it, its statement kinds by "
                "their frames (the outermost of ExecInsert/ExecUpdate/ExecDelete or mysql_insert/update/delete, then "
                "commit, parse and plan, network, and the executor's reads as select; fg-other the rest), db-bg the "
                "server's background (vacuum, checkpointer, writers, page cleaner, purge, the postmaster), other "
                "stacks of no known frame (docs/hardware.md, 'Flamegraph areas')")


def areas_json(a: AreaShares) -> JsonObject:
    """One flamegraph's areas for the JSON report: samples, and each area and kind as a share."""
    return {"samples": a.samples, "areas": dict(a.areas), "kinds": dict(a.kinds)}


_XML_INVALID = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


@dataclass
class _Node:
    count: float = 0.0
    children: dict[str, "_Node"] = field(default_factory=dict)


@dataclass(frozen=True)
class _Frame:
    path: tuple[str, ...]  # from the root's first child to this frame; () is the root
    count: float
    x: float
    width: float

    @property
    def name(self) -> str:
        return self.path[-1] if self.path else ROOT


def folded_text(folded: dict[str, int]) -> str:
    """The standard folded format: one `stack count` line per stack, sorted by stack."""
    return "".join(f"{stack} {count}\n" for stack, count in sorted(folded.items()))


def render_svg(folded: dict[str, int], title: str, width: int = 1200) -> str:
    """A flamegraph: one rect per frame, width proportional to its samples (children included),
    callers below callees, a warm colour hashed from the function name, a tooltip each."""
    tree = _tree(folded, 1.0)
    total = tree.count

    def tooltip(frame: _Frame) -> str:
        pct = 100.0 * frame.count / total if total else 0.0
        return f"{frame.name} ({frame.count:.0f} samples, {pct:.2f}%)"

    return _svg(_layout(tree, width), title, width, lambda f: _warm(f.name), tooltip)


def render_diff_svg(base: dict[str, int], new: dict[str, int], title: str, width: int = 1200) -> str:
    """A differential flamegraph on the shape of `new`: each frame is coloured by the change of
    its share of all samples from `base` to `new` (red grew, blue shrank, white same), both
    profiles first scaled to the same total as `difffolded.pl -n` does. Frames only in `base`
    do not appear; render `base` against `new` to see them."""
    new_tree = _tree(new, 1.0)
    base_total = sum(base.values())
    base_tree = _tree(base, new_tree.count / base_total if base_total else 0.0)
    total = new_tree.count

    def shares(frame: _Frame) -> tuple[float, float]:
        node: _Node | None = base_tree
        for name in frame.path:
            node = node.children.get(name) if node else None
        base_count = node.count if node else 0.0
        return (base_count / total, frame.count / total) if total else (0.0, 0.0)

    frames = _layout(new_tree, width)
    max_delta = max((abs(b - n) for b, n in map(shares, frames)), default=0.0)

    def colour(frame: _Frame) -> str:
        base_share, new_share = shares(frame)
        return _diverging(new_share - base_share, max_delta)

    def tooltip(frame: _Frame) -> str:
        base_share, new_share = shares(frame)
        return (f"{frame.name} (base {100 * base_share:.2f}%, new {100 * new_share:.2f}%, "
                f"delta {100 * (new_share - base_share):+.2f} pp)")

    return _svg(frames, title, width, colour, tooltip)


def _tree(folded: dict[str, int], scale: float) -> _Node:
    root = _Node()
    for stack, count in folded.items():
        value = count * scale
        if value <= 0:
            continue
        node = root
        node.count += value
        for name in stack.split(";"):
            node = node.children.setdefault(name, _Node())
            node.count += value
    return root


def _layout(root: _Node, width: int) -> list[_Frame]:
    """Frames in drawing order (root first), siblings sorted by name as flamegraph.pl does."""
    if root.count <= 0:
        return []
    px_per_sample = (width - 2 * X_PAD) / root.count
    min_count = root.count * MIN_FRACTION
    frames: list[_Frame] = []
    todo: list[tuple[tuple[str, ...], _Node, float]] = [((), root, 0.0)]
    while todo:
        path, node, x = todo.pop()
        frames.append(_Frame(path, node.count, X_PAD + x * px_per_sample, node.count * px_per_sample))
        offset = x
        for name in sorted(node.children):
            child = node.children[name]
            if child.count >= min_count:
                todo.append((path + (name,), child, offset))
            offset += child.count
    return frames


def _svg(frames: list[_Frame], title: str, width: int, colour: Callable[[_Frame], str],
         tooltip: Callable[[_Frame], str]) -> str:
    depth = max((len(f.path) for f in frames), default=0)
    height = int(TOP_PAD + (depth + 1) * FRAME_H + BOTTOM_PAD)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" style="background:#f8f8f8">',
           '<style>text{font-family:Verdana,sans-serif;font-size:%dpx}'
           'rect{stroke:#aaa;stroke-width:0.3}.f:hover rect{stroke:#000;stroke-width:0.8}</style>' % FONT_PX,
           f'<text x="{width / 2:.1f}" y="{FONT_PX * 2}" text-anchor="middle" '
           f'style="font-size:{FONT_PX + 5}px">{_text(title)}</text>']
    for frame in frames:
        y = height - BOTTOM_PAD - (len(frame.path) + 1) * FRAME_H
        out.append(f'<g class="f"><title>{_text(tooltip(frame))}</title>'
                   f'<rect x="{frame.x:.2f}" y="{y}" width="{frame.width:.2f}" '
                   f'height="{FRAME_H - 1}" fill="{colour(frame)}" rx="2"/>'
                   f'{_label(frame, y)}</g>')
    out.append("</svg>\n")
    return "\n".join(out)


def _label(frame: _Frame, y: float) -> str:
    fits = int((frame.width - 6) / CHAR_W)
    if fits < 3:
        return ""
    name = frame.name if len(frame.name) <= fits else frame.name[:fits - 2] + ".."
    return f'<text x="{frame.x + 3:.2f}" y="{y + FRAME_H - 4}">{_text(name)}</text>'


def _text(value: str) -> str:
    return escape(_XML_INVALID.sub("?", value))


def _hash_unit(name: str, salt: str) -> float:
    digest = hashlib.blake2b((salt + name).encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 2**32


def _warm(name: str) -> str:
    """flamegraph.pl's "hot" palette, with hash-based rather than random variation."""
    red = 205 + int(50 * _hash_unit(name, "r"))
    green = int(230 * _hash_unit(name, "g"))
    blue = int(55 * _hash_unit(name, "b"))
    return f"rgb({red},{green},{blue})"


def _diverging(delta: float, max_delta: float) -> str:
    """White at 0, full red at +max_delta, full blue at -max_delta, linear in between."""
    strength = min(1.0, abs(delta) / max_delta) if max_delta > 0 else 0.0
    fade = int(round(255 * (1 - strength)))
    if delta > 0:
        return f"rgb(255,{fade},{fade})"
    if delta < 0:
        return f"rgb({fade},{fade},255)"
    return "rgb(255,255,255)"


def file_safe(name: str) -> str:
    """`name` (a test, step or target) as part of a file name: anything but letters, digits and
    `-_.` becomes `_`."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def part_files(part: str, stem: str, target: str, stacks: dict[str, int], reference: str | None = None,
               reference_stacks: dict[str, int] | None = None) -> list[tuple[str, str]]:
    """(file name, text) of one part's stacks on one target (a cell `point-query x1`, a step, a
    run): `<stem>.<target>` as SVG and folded text, and, with its reference's stacks, a
    differential SVG against them. `stem` is the part as a file name (file_safe)."""
    name = f"{stem}.{file_safe(target)}"
    files = [(f"{name}.svg", render_svg(stacks, f"{part}: {target}")), (f"{name}.folded", folded_text(stacks))]
    if reference is not None and reference_stacks is not None:
        title = f"{part}: {target} vs {reference} (red: more samples, blue: fewer)"
        files.append((f"{name}-vs-{file_safe(reference)}.diff.svg", render_diff_svg(reference_stacks, stacks, title)))
    return files
