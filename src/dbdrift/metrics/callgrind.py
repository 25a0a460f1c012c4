"""Reads callgrind profiles (valgrind --tool=callgrind output) into per-function event counts, and
finds valgrind itself.

Owns the file format and waiting for a profile to be written; per-event arithmetic is analysis's.
"""
from __future__ import annotations

import re
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from dbdrift.errors import UserError

Symbol = tuple[str, str]  # (object file, function name)
K = TypeVar("K")
J = TypeVar("J")

_LINE = re.compile(r"([a-z]+)([=:])\s*(.*)")
_COMPRESSED = re.compile(r"\((\d+)\)(?:\s+(.*))?")
_RECURSION_LEVEL = re.compile(r"'\d+$")  # callgrind names deeper recursion levels g'2, g'3 ...
# Each position spec reads and writes the name-compression table of its kind.
_TABLE = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
          "jfi": "fl", "fn": "fn", "cfn": "fn", "jfn": "fn"}
_HINT = "the file may be cut short or not a callgrind profile; compare with `callgrind_annotate {path}`"


def require_valgrind() -> str:
    """The valgrind binary, or a UserError before any server starts."""
    found = shutil.which("valgrind")
    if not found:
        raise UserError("count_instructions needs valgrind, which is not installed",
                        "apt-get install valgrind (or drop --count-instructions / count_instructions)")
    return found


@dataclass(frozen=True)
class Profile:
    """Counts of one event (Ir unless another is chosen) per function, from one or more dumps.

    `self_ir`: cost of the function's own instructions. `inclusive_ir`: self cost plus the cost
    of every call the function makes to a *different* function. Calls to itself are left out
    because callgrind already counts a nested call inside the outer one; recursion levels that
    callgrind names g'2, g'3 are folded into g for the same reason. Indirect recursion (a calls b
    calls a) is still counted twice, as in callgrind_annotate; merging by name can create it (two
    objects' "(below main)"). Keys are function names with all objects merged; the `*_by_symbol`
    dicts keep (object, function) apart. `total_ir`: per part its totals:, else its summary:,
    else the sum of its self costs, summed over parts. totals: is the sum of the costs the part
    lists; a dump's summary: can be larger, by costs no listed function carries (MariaDB 11.4
    and MySQL 5.6 under --toggle-collect: 39M or 78M instructions, varying from run to run). A forked child's counts include its
    parent's before the fork: only differences between two profiles are meaningful.
    """

    total_ir: int
    self_ir: dict[str, int]
    inclusive_ir: dict[str, int]
    self_ir_by_symbol: dict[Symbol, int]
    inclusive_ir_by_symbol: dict[Symbol, int]
    event: str = "Ir"
    events: tuple[str, ...] = ("Ir",)
    pid: int | None = None
    cmd: str | None = None
    parts: int = 1
    totals: dict[str, int] = field(default_factory=dict)  # every event's total (summary:/totals: lines)


class _Reader:
    """Line-by-line state machine over the format (valgrind docs, "Callgrind Format Specification")."""

    def __init__(self, name: str, event: str | None) -> None:
        self.name, self.wanted, self.lineno = name, event, 0
        self.tables: dict[str, dict[str, str]] = {"ob": {}, "fl": {}, "fn": {}}
        self.events: tuple[str, ...] | None = None
        self.event_index, self.positions, self.total, self.parts = 0, 1, 0, 0
        self.ob = ""
        self.fn: Symbol | None = None
        self.call_ob: str | None = None  # cob= applies to the next call only; the default is ob
        self.call_fn: str | None = None
        self.callee: Symbol | None = None  # set by calls=: the next cost line is that call's inclusive cost
        self.part_started, self.part_self = False, 0
        self.part_summary: list[str] | None = None
        self.part_totals: list[str] | None = None
        self.self_cost: dict[Symbol, int] = defaultdict(int)
        self.call_cost: dict[tuple[Symbol, Symbol], int] = defaultdict(int)
        self.pid: int | None = None
        self.cmd: str | None = None
        self.totals: dict[str, int] = {}
        self._new_part()

    def error(self, problem: str) -> UserError:
        return UserError(f"callgrind profile {self.name} line {self.lineno}: {problem}",
                         _HINT.format(path=self.name))

    def feed(self, line: str) -> None:
        self.lineno += 1
        first = line[:1]
        if not first or first == "#" or line.isspace():
            return
        if first in "0123456789+-*":
            self._cost_line(line)
            return
        match = _LINE.match(line)
        if match is None:
            raise self.error(f"unrecognised line {line[:80]!r}")
        key, sep, value = match.groups()
        if sep == "=":
            self._body_spec(key, value.rstrip())
        else:
            self._header(key, value.rstrip())

    def _cost_line(self, line: str) -> None:
        # Positions (absolute, +n, -n, *) are only skipped: their count is fixed by `positions:`.
        if self.events is None:
            raise self.error("cost line before the events: line")
        if self.fn is None:
            raise self.error("cost line before any fn= line")
        fields = line.split()
        index = self.positions + self.event_index
        try:
            cost = int(fields[index]) if len(fields) > index else 0
        except ValueError:
            raise self.error(f"cost {fields[index]!r} is not an integer") from None
        self.part_started = True
        if self.callee is not None:  # inclusive cost of the call: the caller's inclusive, never its self
            self.call_cost[(self.fn, self.callee)] += cost
            self.callee, self.call_ob = None, None
        else:
            self.self_cost[self.fn] += cost
            self.part_self += cost

    def _body_spec(self, key: str, value: str) -> None:
        if key in _TABLE:
            name = self._name(_TABLE[key], value)
            if key == "ob":
                self.ob = name
            elif key == "fn":
                self.fn = (self.ob, _RECURSION_LEVEL.sub("", name))
            elif key == "cob":
                self.call_ob = name  # applies to the next call only; the default is ob
            elif key == "cfn":
                self.call_fn = _RECURSION_LEVEL.sub("", name)
        elif key == "calls":
            count = value.split()[:1]
            if not count or not count[0].isdigit():
                raise self.error(f"calls= needs a count, got {value!r}")
            if self.call_fn is None:
                raise self.error("calls= without a preceding cfn= line")
            self.callee = (self.call_ob if self.call_ob is not None else self.ob, self.call_fn)
        elif key not in ("jump", "jcnd"):  # jumps carry no cost; their source line has none either
            raise self.error(f"unknown line kind {key}=")

    def _name(self, table: str, value: str) -> str:
        match = _COMPRESSED.fullmatch(value)
        if match is None:
            return value
        number, name = match.groups()
        if name is not None:
            self.tables[table][number] = name
            return name
        if number not in self.tables[table]:
            raise self.error(f"{table} id ({number}) is used before it is defined")
        return self.tables[table][number]

    def _header(self, key: str, value: str) -> None:
        if key == "events":
            events = tuple(value.split())
            wanted = self.wanted or events[0]
            if wanted not in events:
                raise UserError(f"callgrind profile {self.name} has no event {wanted!r} (it has {value})",
                                "choose one of the events the profile lists")
            self.events, self.event_index, self.part_started = events, events.index(wanted), True
        elif key == "positions":
            self.positions = len(value.split())
        elif key == "summary":
            self.part_summary, self.part_started = value.split(), True
        elif key == "totals":
            self.part_totals, self.part_started = value.split(), True
        elif key == "part":
            self._close_part()
        elif key == "pid":
            self.pid = int(value) if value.isdigit() else None
        elif key == "cmd":
            self.cmd = value
        # desc:, version:, creator:, thread:, event: carry nothing a count needs

    def _new_part(self) -> None:
        self.part_started, self.part_self = False, 0
        self.part_summary = None
        self.part_totals = None

    def _close_part(self) -> None:
        """A part's total is its totals:, else its summary:, else the sum of its self costs."""
        if not self.part_started:
            return
        stated = self.part_totals or self.part_summary
        if stated is not None and self.events is not None:
            self.total += int(stated[self.event_index]) if len(stated) > self.event_index else 0
            for name, value in zip(self.events, stated):
                self.totals[name] = self.totals.get(name, 0) + int(value)
        else:
            self.total += self.part_self
        self.parts += 1
        self._new_part()

    def finish(self) -> Profile:
        self._close_part()
        if self.events is None:
            raise UserError(f"callgrind profile {self.name} has no events: line", _HINT.format(path=self.name))
        if self.callee is not None:
            raise self.error("the file ends between a calls= line and its cost line")
        by_symbol = dict(self.self_cost)
        by_name = _by(by_symbol, lambda symbol: symbol[1])
        calls_by_name = _by(self.call_cost, lambda pair: (pair[0][1], pair[1][1]))
        return Profile(
            total_ir=self.total, self_ir=by_name, inclusive_ir=_inclusive(by_name, calls_by_name),
            self_ir_by_symbol=by_symbol, inclusive_ir_by_symbol=_inclusive(by_symbol, self.call_cost),
            event=self.events[self.event_index], events=self.events, pid=self.pid, cmd=self.cmd,
            parts=self.parts, totals=dict(self.totals))


def _add(dicts: Iterable[Mapping[K, int]]) -> dict[K, int]:
    out: dict[K, int] = defaultdict(int)
    for d in dicts:
        for k, value in d.items():
            out[k] += value
    return dict(out)


def _by(counts: Mapping[K, int], key: Callable[[K], J]) -> dict[J, int]:
    """`counts` summed per key(k): per function name over object files, say."""
    out: dict[J, int] = defaultdict(int)
    for k, value in counts.items():
        out[key(k)] += value
    return dict(out)


def _inclusive(self_cost: Mapping[K, int], calls: Mapping[tuple[K, K], int]) -> dict[K, int]:
    """Each function's self cost plus the inclusive cost of its calls to other functions."""
    out: dict[K, int] = defaultdict(int, self_cost)
    for (caller, callee), cost in calls.items():
        if caller != callee:
            out[caller] += cost
    return dict(out)


def parse_profile(source: str | Path, event: str | None = None) -> Profile:
    """Parse one callgrind output file; `source` is a Path, a path string, or the text itself.

    A str containing a newline is taken as text. Every `part:` of the file is summed, name
    compression tables run on across parts. `event` picks the counted event (default: the first
    on the `events:` line, which is Ir for callgrind).
    """
    if isinstance(source, str) and "\n" in source:
        name, text = "<text>", source
    else:
        name = str(source)
        try:
            text = Path(source).read_text(errors="replace")
        except OSError as exc:
            raise UserError(f"cannot read callgrind profile {name}: {exc.strerror}",
                            "check that valgrind wrote it (--callgrind-out-file)") from None
    reader = _Reader(name, event)
    for line in text.splitlines():
        reader.feed(line)
    return reader.finish()


def merge_profiles(profiles: list[Profile]) -> Profile:
    """Sum profiles of one process (one file per dump, or per thread). Empty list: ValueError."""
    if not profiles:
        raise ValueError("merge_profiles needs at least one profile")
    if len({p.event for p in profiles}) > 1:
        raise ValueError("cannot merge profiles counting different events")
    pids = {p.pid for p in profiles}
    first = profiles[0]
    return Profile(
        total_ir=sum(p.total_ir for p in profiles), self_ir=_add(p.self_ir for p in profiles),
        inclusive_ir=_add(p.inclusive_ir for p in profiles),
        self_ir_by_symbol=_add(p.self_ir_by_symbol for p in profiles),
        inclusive_ir_by_symbol=_add(p.inclusive_ir_by_symbol for p in profiles),
        event=first.event, events=first.events, pid=first.pid if len(pids) == 1 else None, cmd=first.cmd,
        parts=sum(p.parts for p in profiles), totals=_add(p.totals for p in profiles))


def _natural_key(path: Path) -> list[int | str]:
    return [int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", path.name)]


def find_profiles(directory: str | Path, pid: int | None = None) -> list[Path]:
    """`cg.*.out*` files in `directory`, in pid then dump order; only process `pid`'s if given.

    Names follow --callgrind-out-file=DIR/cg.%p.out: cg.PID.out, plus .N per extra dump and
    -TID per thread; merge_profiles sums the files of one process.
    """
    pattern = f"cg.{pid}.out*" if pid is not None else "cg.*.out*"
    return sorted((p for p in Path(directory).glob(pattern) if p.is_file()), key=_natural_key)


def is_complete(path: str | Path) -> bool:
    """True when the file's last line is a finished `totals:` or `summary:` line.

    callgrind writes the whole dump when the process exits (or on a requested dump), ending
    with `totals:`; a missing file or a file cut mid-line is not complete.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, 2) - 4096))
            tail = handle.read()
    except FileNotFoundError:
        return False
    last_line = tail.rstrip().rsplit(b"\n", 1)[-1]
    return tail.endswith(b"\n") and last_line.startswith((b"totals:", b"summary:"))


def wait_complete(path: str | Path, timeout_s: float, poll_s: float = 0.05) -> None:
    """Poll until `path` is complete (see is_complete); after `timeout_s` raise a UserError."""
    deadline = time.monotonic() + timeout_s
    while not is_complete(path):
        if time.monotonic() >= deadline:
            raise UserError(
                f"callgrind profile {path} is not complete after {timeout_s:g} s (no final totals: line)",
                "callgrind writes it when the process exits: close the backend's connection first, "
                "or allow a longer wait")
        time.sleep(poll_s)
