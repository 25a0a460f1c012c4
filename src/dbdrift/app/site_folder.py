"""The folder of a published site (`dbdrift publish --out`): its state, `site.json`, checked field
by field as it is read; written first, as the folder's mark, and again as the publish goes, so a
publish stopped any way (Ctrl-C, SIGKILL, a full disk) leaves a folder the next publish recognises
and completes; and its pages, each replaced whole. What the pages say is publish.py's.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import types
from dataclasses import MISSING, asdict, fields
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from dbdrift.analysis.changepoints import Change
from dbdrift.errors import UserError
from dbdrift.report import site
from dbdrift.results.history import Point
from dbdrift.version import __version__

STATE = "site.json"
STATE_FORMAT = 1
SAVE_EVERY_S = 2.0  # while campaigns are read: a publish killed then reads again at most this much
SAVE_SHARE = 0.1  # and at most this share of a publish's time goes to saving its state meanwhile
PARTIAL = ".partial"  # a page or the state being written; left only by a publish killed meanwhile
POINT_FIELDS = [f.name for f in fields(Point)]


class SiteFolder:
    """The site being written: its folder, its state, and what this publish made of it."""

    def __init__(self, out: Path, state: dict[str, Any]) -> None:
        self.out = out
        self.state = state
        self.produced: set[str] = set()
        self.written = 0
        self.resumed = not state.get("complete", True)  # the last publish into it was stopped midway
        self._saved_at = 0.0
        self._took = 0.0  # seconds the last save took

    @classmethod
    def read(cls, out: Path) -> SiteFolder:
        """The site in `out` as its state says (nothing is written yet): an empty state for a new
        or empty folder; refused when the folder is not a site or its state is damaged."""
        return cls(out, _load_state(out))

    def begin(self) -> None:
        """Make the folder if missing and mark it as being published, before any page is written:
        a folder with this publish's pages always holds its site.json."""
        _make(self.out)
        for left in [*self.out.glob("*" + PARTIAL), *self.out.glob("*/*" + PARTIAL),
                     *self.out.glob("*/*/*" + PARTIAL)]:
            left.unlink(missing_ok=True)  # a publish killed while writing it
        self.state["complete"] = False
        self.save()

    def write(self, rel: str, text: str) -> None:
        """Write the page `rel` unless it holds `text` already (by the hash kept in the state)."""
        self.produced.add(rel)
        digest = hashlib.sha256(text.encode()).hexdigest()
        pages = self.state["pages"]
        path = self.out / rel
        if pages.get(rel) == digest and path.exists():
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_whole(path, text)  # a reader never sees half a page
        except OSError as exc:
            raise _unwritable(self.out, path, exc) from None
        pages[rel] = digest
        self.written += 1

    def keep(self, rel: str) -> None:
        """The page `rel` stays as it is (its campaign did not change)."""
        self.produced.add(rel)

    def save(self, every_s: float = 0.0) -> None:
        """Write the state, unless it was written less than `every_s` ago, or (a large site's
        state takes a while) less than SAVE_SHARE's inverse times as long as writing it took."""
        now = time.monotonic()
        if every_s and now - self._saved_at < max(every_s, self._took / SAVE_SHARE):
            return
        try:
            _write_whole(self.out / STATE, json.dumps(self.state, separators=(",", ":")))
        except OSError as exc:
            raise _unwritable(self.out, self.out / STATE, exc) from None
        self._saved_at = time.monotonic()
        self._took = self._saved_at - now

    def save_what_was_done(self) -> None:
        """Save the state of a publish that is stopping midway (what it read is not read again);
        a folder that cannot be written keeps the state it has (the error is reported already)."""
        if not (self.out / STATE).exists() and not self.written:
            return  # nothing of this publish is in the folder: leave it as it was
        try:
            self.save()
        except UserError:
            pass

    def finish(self) -> int:
        """Remove what an earlier publish wrote that this one did not produce, mark the site
        complete and save it; the number of pages removed."""
        stale = [rel for rel in self.state["pages"] if rel not in self.produced]
        if self.resumed:  # pages a stopped publish wrote before its state said so
            stale += [rel for rel in self._pages_on_disk() if rel not in self.produced and rel not in stale]
        for rel in stale:
            try:
                (self.out / rel).unlink(missing_ok=True)
            except OSError as exc:
                raise _unwritable(self.out, self.out / rel, exc) from None
            self.state["pages"].pop(rel, None)
        self.state["complete"] = True
        self.save()
        return len(stale)

    def _pages_on_disk(self) -> list[str]:
        found = [*self.out.glob("index*.html"), *self.out.glob("c/*.html"), *self.out.glob("h/*/*.html")]
        return [p.relative_to(self.out).as_posix() for p in found]


def _write_whole(path: Path, text: str) -> None:
    partial = path.with_name(path.name + PARTIAL)
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _make(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out} cannot be made: {exc.strerror or exc}",
                        "pass a folder you can write (it is made if missing), e.g. --out site", exit_code=2) from None


def _unwritable(out: Path, path: Path, exc: OSError) -> UserError:
    return UserError(f"--out {out}: {path} cannot be written: {exc.strerror or exc}",
                     f"make {out} writable (an immutable folder: chattr -i; a read-only mount: remount it) or pass "
                     "another --out; publishing again carries on where this stopped", exit_code=2)


def _load_state(out: Path) -> dict[str, Any]:
    """The state of the site in `out`: empty for a new or empty folder; a folder with other
    files and no state is refused, so a publish never overwrites what it did not write."""
    fresh: dict[str, Any] = {"format": STATE_FORMAT, "dbdrift_version": __version__, "campaigns": {}, "pages": {}}
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file", "pass a folder for the site (it is made if missing)", exit_code=2)
    path = out / STATE
    remake = f"publish into a new folder, or delete {out} and publish again (every campaign is read again)"
    try:
        if not path.exists():
            if out.exists() and any(out.iterdir()):
                raise UserError(f"--out {out} holds files and no {STATE}: it is not a site dbdrift published",
                                "pass an empty or new folder, or the folder of an earlier `dbdrift publish`",
                                exit_code=2)
            return fresh
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UserError(f"{path} cannot be read as a published site's state ({why})", remake, exit_code=2) from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise UserError(f"{path} is not the state of a site this dbdrift publishes", remake, exit_code=2)
    wrong = _problem(state, STATE_TYPES, "") or _outside(state)
    if wrong:
        where, expected = wrong
        raise UserError(f"{path}: field {where} is " + (expected if expected == "missing" else f"not {expected}"),
                        remake, exit_code=2)
    state.setdefault("groups", {})
    if state["dbdrift_version"] != __version__:  # its pages may differ: read every campaign again
        for campaign in state["campaigns"].values():
            campaign["fingerprint"] = ""  # each keeps its number, so links into the site stay
        state["dbdrift_version"] = __version__
    return state


def _outside(state: dict[str, Any]) -> tuple[str, str] | None:
    """The first page named in the state that is not a page of the site's folder (a publish
    removes the pages its state lists: none may lead out of it)."""
    named = [(f"pages[{json.dumps(rel, ensure_ascii=False)}]", rel) for rel in state["pages"]]
    named += [(f"campaigns[{json.dumps(key, ensure_ascii=False)}].entry.page", c["entry"]["page"]) for key, c in state["campaigns"].items()]
    named += [(f"groups[{json.dumps(key, ensure_ascii=False)}].pages[{i}]", rel) for key, g in state.get("groups", {}).items()
              for i, rel in enumerate(g["pages"])]
    for where, rel in named:
        parts = Path(rel).parts
        if rel and (Path(rel).is_absolute() or ".." in parts or not rel.endswith(".html")):
            return where, "a page of the site (a relative path to an .html file inside it)"
    return None


# --- the state's rows -------------------------------------------------------------------


def point_row(p: Point) -> list[Any]:
    return [getattr(p, f) for f in POINT_FIELDS]


def point_of(row: list[Any]) -> Point:
    values = dict(zip(POINT_FIELDS, row))
    values["commit_order"] = tuple(values["commit_order"])
    if values.get("paired") is not None:
        values["paired"] = tuple(values["paired"])
    return Point(**values)


def entry_row(entry: site.CampaignEntry) -> dict[str, Any]:
    return asdict(entry)


def entry_of(d: dict[str, Any]) -> site.CampaignEntry:
    return site.CampaignEntry(**{**d, "targets": tuple(tuple(t) for t in d["targets"]), "counts": tuple(d["counts"]),
                                 "worst": tuple(d["worst"]), "measured": tuple(d.get("measured", ())),
                                 "measures": tuple(tuple(m) for m in d.get("measures", ()))})


def change_row(c: Change) -> list[Any]:
    return list(asdict(c).values())


def change_of(row: list[Any]) -> Change:
    return Change(*row)


# --- what each field of the state holds ---------------------------------------------------


class _Rows:
    """A list of a dataclass's fields in order (a point, a change): the first `required` must be there."""

    def __init__(self, of: type, required: int) -> None:
        self.hints = [get_type_hints(of)[f.name] for f in fields(of)]
        self.names = [f.name for f in fields(of)]
        self.required = required


class _Object:
    """A dict of a dataclass's fields by name; those with a default may be missing."""

    def __init__(self, of: type) -> None:
        hints = get_type_hints(of)
        self.fields = {f.name: hints[f.name] for f in fields(of)}
        self.optional = {f.name for f in fields(of) if f.default is not MISSING or f.default_factory is not MISSING}


class _Keyed:
    """A dict of strings, each to a `value`."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _ListOf:
    """A list, each item an `item`."""

    def __init__(self, item: Any) -> None:
        self.item = item


CAMPAIGN_TYPES = {"n": int, "fingerprint": str, "entry": _Object(site.CampaignEntry),
                  "points": _ListOf(_Rows(Point, POINT_FIELDS.index("target") + 1))}
GROUP_TYPES = {"digest": str, "pages": list[str], "summary": _Object(site.GroupSummary),
               "changes": _Keyed(_ListOf(_Rows(Change, len(fields(Change)))))}
STATE_TYPES = {"format": int, "dbdrift_version": str, "campaigns": _Keyed(CAMPAIGN_TYPES),
               "pages": _Keyed(str), "groups?": _Keyed(GROUP_TYPES), "complete?": bool}
"""site.json as this dbdrift writes it: a dict lists its keys (`?`: may be missing)."""

WHAT = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", type(None): "null"}


def _problem(value: Any, kind: Any, where: str) -> tuple[str, str] | None:
    """The first field of `value` that does not hold `kind` (where, what it should be), or None."""
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            return where or "(the whole file)", "an object"
        return _fields_problem(value, {key.rstrip("?"): inner for key, inner in kind.items()},
                               {key.rstrip("?") for key in kind if key.endswith("?")}, where)
    if isinstance(kind, _Keyed):
        if not isinstance(value, dict):
            return where, "an object"
        return _first(_problem(inner, kind.value, f"{where}[{json.dumps(key, ensure_ascii=False)}]")
                      for key, inner in value.items())
    if isinstance(kind, _Object):
        if not isinstance(value, dict):
            return where, "an object"
        return _fields_problem(value, kind.fields, kind.optional, where)
    if isinstance(kind, _ListOf):
        if not isinstance(value, list):
            return where, "a list"
        return _first(_problem(item, kind.item, f"{where}[{i}]") for i, item in enumerate(value))
    if isinstance(kind, _Rows):
        if not isinstance(value, list) or not kind.required <= len(value) <= len(kind.hints):
            count = kind.required if kind.required == len(kind.hints) else f"{kind.required} to {len(kind.hints)}"
            return where, f"a list of {count} values ({', '.join(kind.names)})"
        return _first(_problem(item, hint, f"{where}[{i}] ({name})")
                      for i, (name, item, hint) in enumerate(zip(kind.names, value, kind.hints)))
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        if any(_problem(value, a, where) is None for a in args):
            return None
        return where, " or ".join(_expected(a) for a in args)
    if origin is dict:  # a JSON object kept as it is (an entry's twin rate): its keys are not checked
        return None if isinstance(value, dict) else (where, "an object")
    if origin in (list, tuple):
        if not isinstance(value, list):
            return where, _expected(kind)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                return where, _expected(kind)
            hints = list(args)
        else:
            hints = [args[0]] * len(value)
        return _first(_problem(item, hint, f"{where}[{i}]") for i, (item, hint) in enumerate(zip(value, hints)))
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    return None if ok else (where, _expected(kind))


def _fields_problem(value: dict[str, Any], kinds: dict[str, Any], optional: set[str],
                    where: str) -> tuple[str, str] | None:
    """The first of the named fields `kinds` that the object `value` lacks (unless it is
    `optional`) or holds wrong, in their order; None when there is none."""

    def field(name: str, inner: Any) -> tuple[str, str] | None:
        if name in value:
            return _problem(value[name], inner, _at(where, name))
        return None if name in optional else (_at(where, name), "missing")

    return _first(field(name, inner) for name, inner in kinds.items())


def _first(found: Iterable[tuple[str, str] | None]) -> tuple[str, str] | None:
    """The first problem `found` names (a generator: nothing after it is checked), or None."""
    return next((problem for problem in found if problem), None)


def _expected(kind: Any) -> str:
    origin, args = get_origin(kind), get_args(kind)
    if origin in (list, tuple):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return f"a list of {len(args)} values"
        return f"a list of {_expected(args[0]).removeprefix('a ')}s" if args else "a list"
    if origin in (Union, types.UnionType):
        return " or ".join(_expected(a) for a in args)
    if origin is dict:
        return "an object"
    return WHAT.get(kind, getattr(kind, "__name__", str(kind)))


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
