"""Reading one campaign-file value: limits, types and the messages that name what is wrong.

plan/campaign.py assembles a CampaignSpec from these; nothing here knows the whole campaign.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, TypeVar

from dbdrift import cpus
from dbdrift.plan import keys
from dbdrift.plan.keys import DAY_S, HOUR_S, INT64_MAX
from dbdrift.errors import InputError
from dbdrift.quantities import PercentRange, brief_repr, parse_duration_s, parse_percent

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
# "17.10", "8.0.33.1", "19rc1", "17.10.0-beta.17", with a source in front: "debian:18.6", "debian-sid:11.8.9"
_VERSION = re.compile(r"^([a-z][a-z0-9-]*:)?\d+(\.\d+){0,3}(~?(alpha|beta|rc)\d*)?(-[A-Za-z0-9.]+)?$")
_SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}")  # either engine's; each checks its own at render
TomlTable = Mapping[str, object]  # a table as tomllib reads it (or a caller builds it): each value is checked
MAX_CPU = 8191  # Linux numbers at most 8192 CPUs (NR_CPUS with MAXSMP)


# --- limits ---------------------------------------------------------------------------------
# Each key's hard limit (`high`: what the driver or the schema can take, always an error) and soft
# limit (`large`: a size campaigns rarely mean, an error unless allow_large = true) are in plan/keys.py.
MAX_DURATION_S = 365 * DAY_S  # keeps the driver's clocks and per-step row counts far inside 64 bits
_ALLOW_LARGE_HINT = "if you mean it, allow_large = true (a top-level key of the campaign file) accepts it"
_UNSET = object()
T = TypeVar("T")


SCALAR_KINDS = (keys.INTEGER, keys.DURATION, keys.FLAG, keys.CHOICE)  # what Table.record reads


@dataclass(frozen=True)
class Table:
    """One TOML table being read: its keys, where it is (for messages), allow_large, which
    campaign table it is and the rows of its keys (their defaults and limits): a workload's table
    brings its slice's (workloads/<name>/keys.py), the core's are plan/keys.py's (rows None)."""

    data: TomlTable
    where: str
    allow_large: bool = False
    table: str = "top"
    rows: tuple[keys.Key, ...] | None = None

    def key(self, name: str) -> keys.Key:
        """The row of one of the table's keys."""
        if self.rows is None:
            return keys.key(self.table, name)
        return {k.name: k for k in self.rows}[name]

    def every_row(self) -> tuple[keys.Key, ...]:
        """The rows of every key the table takes."""
        return keys.of(self.table) if self.rows is None else self.rows

    def _value(self, name: str, default: object) -> object:
        return self.data.get(name, self.key(name).default if default is _UNSET else default)

    def integer(self, name: str, default: object = _UNSET) -> int:
        """A positive integer within the key's limits; `default` when the parser derives it."""
        value, limit = self._value(name, default), self.key(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            example = limit.default if isinstance(limit.default, int) else 1
            raise InputError(f"{self.where}: {name} must be a positive integer, got {brief_repr(value)}",
                             f"write e.g. {name} = {default if isinstance(default, int) else example}")
        if limit.high is not None and value > limit.high:
            raise InputError(f"{self.where}: {name} = {value} is more than {limit.high}: {limit.why}",
                             f"use {name} = {limit.high} or less")
        if limit.large is not None and value > limit.large and not self.allow_large:
            raise InputError(f"{self.where}: {name} = {value} is more than {limit.large:,}, larger than campaigns "
                             "usually are", _ALLOW_LARGE_HINT)
        return value

    def duration(self, name: str, default: object = _UNSET) -> float:
        key = self.key(name)
        value = self._value(name, default)
        seconds = parse_duration_s(value, f"{self.where}: {name}", positive=key.measured)
        units = 'durations are seconds unless they carry a unit ("90s", "15m", "2h")'
        if seconds > MAX_DURATION_S:
            raise InputError(f"{self.where}: {name} = {brief_repr(value)} is more than 365 days", units)
        if key.high is not None and not key.bounds()[0] <= seconds <= key.high:
            raise InputError(f"{self.where}: {name} = {seconds:g} is out of range",
                             f"{key.why}; use {key.bounds()[0]:g} to {key.high:g}, e.g. the default "
                             f"{keys.toml(key.default)}")
        if key.large is not None and seconds > key.large and not self.allow_large:
            raise InputError(f"{self.where}: {name} = {brief_repr(value)} is longer than {key.large / HOUR_S:g} h",
                             f"{units}; {_ALLOW_LARGE_HINT}")
        return seconds

    def percent(self, name: str) -> float | None:
        """A percentage, `2` or "2%" alike, as every percentage option reads it
        (quantities.parse_percent), within the key's range; None when left out."""
        value = self.data.get(name)
        if value is None:
            return None
        low, high = self.key(name).bounds()
        return parse_percent(value, f"{self.where}: {name}", PercentRange(low, high, high_allowed=True))

    def flag(self, name: str, default: object = _UNSET) -> bool:
        value = self._value(name, default)
        if not isinstance(value, bool):
            raise InputError(f"{self.where}: {name} must be true or false, got {brief_repr(value)}",
                             f"write {name} = true")
        return value

    def subtable(self, name: str, rows: tuple[keys.Key, ...]) -> Table:
        """A table of this one, `[name]` (empty when left out), its keys checked against `rows`,
        the rows of a workload's table (its slice's keys.py)."""
        raw, label = self.data.get(name, {}), f"{self.where}: [{name}]"
        if not isinstance(raw, dict):
            raise InputError(f"{label} is not a table", f"write [{name}] followed by key = value lines")
        check_keys(raw, {k.name for k in rows}, label, retired=retired_hints(self.every_row() + rows))
        return Table(raw, label, self.allow_large, table=name, rows=rows)

    def scalar(self, key: keys.Key) -> int | float | bool | str:
        """One integer, duration, flag or choice key, read as its row's kind says."""
        readers: dict[str, Callable[[str], int | float | bool | str]] = {
            keys.INTEGER: self.integer, keys.DURATION: self.duration, keys.FLAG: self.flag, keys.CHOICE: self.choice}
        return readers[key.kind](key.name)

    def record(self, make: Callable[..., T]) -> T:
        """The table's integer, duration, flag and choice keys, each read by its row and passed
        to `make` (a record type such as TpccParams) under its field name, so that a new key of a
        workload's table is one row in its slice's keys.py and one field of its record. A key left out whose row has no default is not passed: the record's own default
        holds, or the caller derives it. `make` takes keyword arguments named by the rows,
        which only run time knows: hence `...`."""
        return make(**{k.field_name: self.scalar(k) for k in self.every_row()
                       if k.kind in SCALAR_KINDS and (k.name in self.data or k.default is not None)})

    def choice(self, name: str) -> str:
        """One of the key's choices; a retired one is refused with its current name."""
        key = self.key(name)
        value = self.data.get(name, key.default)
        if isinstance(value, str) and value in key.retired:
            new = key.retired[value]
            raise InputError(f'{self.where}: {name} = "{value}" is now called {name} = "{new}"',
                             f'write {name} = "{new}"' + (" (the default)" if new == key.default else ""))
        if not isinstance(value, str) or value not in key.choices:
            raise InputError(f"{self.where}: {name} must be one of {', '.join(key.choices)}, got {brief_repr(value)}",
                             f'write {name} = "{key.default}"')
        return value


def version(value: object, label: str, text: str | None) -> str:
    """A version is a string: TOML reads an unquoted 17.10 as the float 17.1, a different release."""
    if isinstance(value, str):
        if not _VERSION.match(value):
            raise InputError(f"{label}: version {brief_repr(value)} is not a version number",
                             'write e.g. version = "17.10"')
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{label}: version must be a string, got {brief_repr(value)}", 'write e.g. version = "17.10"')
    written = _as_written(text, "version", value) if text is not None else None
    if written is not None and _VERSION.match(written):
        why = (f"TOML reads {written} unquoted as the number {value!r}" if written != repr(value)
               else "a version is a string: quote it")
        hint = f'write version = "{written}" ({why})'
    elif _VERSION.match(repr(value)):
        hint = (f'write the version in quotes as you meant it, e.g. version = "{value!r}" '
                "(unquoted, TOML reads a number: 17.10 becomes 17.1)")
    else:
        hint = 'write e.g. version = "17.10" (unquoted, TOML reads a number: 17.10 becomes 17.1)'
    raise InputError(f"{label}: version {written or brief_repr(value)} is a number, not a string", hint)


def _as_written(text: str, key: str, value: int | float) -> str | None:
    """The unquoted number of `key = ...` in `text` that TOML reads as `value` (tomllib keeps only
    the number); the first in the file when several do. None when no line has it."""
    pattern = rf'(?:^|[\s{{,])"?{re.escape(key)}"?[ \t]*=[ \t]*([-+]?(?:nan|inf|[0-9][0-9_.eE+-]*))'
    for match in re.finditer(pattern, text, re.MULTILINE):
        if "#" in text[text.rfind("\n", 0, match.start(1)) + 1:match.start(1)]:
            continue  # a comment
        try:
            number = tomllib.loads(f"v = {match.group(1)}")["v"]
        except ValueError:  # TOMLDecodeError included
            continue
        if type(number) is type(value) and number == value:
            return match.group(1)
    return None


def path(raw: TomlTable, key: str, label: str, base_dir: Path) -> Path | None:
    """basedir or config: a path, relative to the campaign file."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\0" in value or len(value.encode(errors="replace")) > 4095:
        raise InputError(f"{label}: {key} must be a path (at most 4095 bytes), got {brief_repr(value)}",
                         f'write e.g. {key} = "/opt/pg17"; relative paths start at the campaign file')
    try:
        return (base_dir / Path(value).expanduser()).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: ~user of no such user
        raise InputError(f"{label}: {key} {brief_repr(value)} is not a usable path: {exc}",
                         "write an absolute path or one relative to the campaign file") from None


def exists(path: Path, directory: bool) -> bool:
    try:
        return path.is_dir() if directory else path.is_file()
    except OSError:  # e.g. a name too long
        return False


def settings(value: object, label: str) -> dict[str, str]:
    """settings = { name = value }: option names as either engine spells them, one-line scalar values."""
    if not isinstance(value, dict):
        raise InputError(f"{label}: settings must be a table", 'write settings = { shared_buffers = "4GB" }')
    settings = {}
    for key, item in value.items():
        if not isinstance(key, str) or not _SETTING_NAME.fullmatch(key):
            raise InputError(f"{label}: settings key {brief_repr(key)} is not a server option name",
                             "option names are letters, digits, '_', '.' and '-', e.g. shared_buffers")
        settings[key] = _setting(item, f"{label}: settings.{key}")
    return settings


def _setting(value: object, what: str) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return str(value)
    if isinstance(value, str) and not any(c in value for c in "\n\r\0"):
        return value
    raise InputError(f"{what} = {brief_repr(value)} is not a value a server option takes",
                     'write a string, a number or true/false, on one line, e.g. shared_buffers = "8GB"')


_RETIRED = keys.retired()


def retired_hints(rows: tuple[keys.Key, ...]) -> dict[str, str]:
    """Old key name -> what replaced it: of the core's tables, and of `rows` (a workload's)."""
    return {**_RETIRED, **keys.retired(rows)}


def check_keys(data: TomlTable, known: set[str], where: str, retired: Mapping[str, str] | None = None) -> None:
    """Every key of `data` is `known`; a retired one (the core's tables', or `retired`: a workload
    table's too) is refused with what replaced it, an unknown one with the closest known name."""
    import difflib

    gone = _RETIRED if retired is None else retired
    for key in data:
        if key in gone:
            raise InputError(f"{where}: {key} is no longer used", gone[key])
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1) if isinstance(key, str) else []
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(known))}"
            raise InputError(f"{where}: unknown key {brief_repr(key)}", hint)


def check_int64(data: TomlTable, where: str) -> None:
    """TOML integers are 64-bit, but tomllib reads longer ones as Python ints of any size."""
    stack: list[tuple[str, object]] = [(str(k), v) for k, v in reversed(list(data.items()))]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack += [(f"{path}.{k}", v) for k, v in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value)))]
        elif isinstance(value, int) and not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise InputError(f"{where}: {path} = {brief_repr(value)} does not fit in a 64-bit integer",
                             f"TOML integers are 64-bit (at most {INT64_MAX}); no campaign key takes a number "
                             "this large: check it")


def name(value: object, what: str) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise InputError(f"{what}: {brief_repr(value)} is not a valid name",
                         "use letters, digits, '.', '_', '+', '-' (at most 64 characters)")
    return value


def str_list(value: object, what: str, example: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{what} must be a list of strings, got {brief_repr(value)}", example)
    return value


def cpu_placement(value: object, where: str) -> str | tuple[str, str]:
    """cpus = "auto" | "shared" | { driver = "0", server = "1-3" } (dbdrift/cpus.py)."""
    if isinstance(value, str) and value in cpus.MODES:
        return value
    if isinstance(value, dict):
        check_keys(value, keys.names("cpus"), f"{where}: cpus")
        if set(value) == keys.names("cpus"):
            return _cpu_list(value["driver"], f"{where}: cpus.driver"), _cpu_list(value["server"], f"{where}: cpus.server")
    raise InputError(f"{where}: cpus must be \"auto\", \"shared\" or a table with driver and server, "
                     f"got {brief_repr(value)}",
                     'write cpus = "auto" (driver and servers on separate CPUs when there are two or more), '
                     'cpus = "shared", or cpus = { driver = "0", server = "1-3" }')


def _cpu_list(value: object, what: str) -> str:
    """A CPU list in the kernel's format; numbers checked before cpus.parse_list builds the set."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{what} must be a CPU list, got {brief_repr(value)}",
                         'write e.g. cpus = { driver = "0", server = "1-3" }')
    text = str(value)
    if any(len(n) > 4 or int(n) > MAX_CPU for n in re.findall(r"\d+", text)):
        raise InputError(f"{what}: {brief_repr(value)} names a CPU beyond {MAX_CPU}",
                         "use the CPU numbers `lscpu` lists as on-line, e.g. \"0-3\"")
    cpus.parse_list(text, what)
    return text


def threads(value: object, where: str, row: keys.Key) -> tuple[int, ...]:
    """Client thread counts within `row`'s range (sysbench's `threads`), duplicates dropped."""
    low, high = (int(n) for n in row.bounds())
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (not isinstance(value, list) or not value
            or not all(isinstance(v, int) and not isinstance(v, bool) and low <= v <= high for v in value)):
        raise InputError(f"{where}: threads must be a list of client counts in {low}..{high}, got {brief_repr(value)}",
                         "write e.g. threads = [1] or threads = [1, 8]")
    return tuple(dict.fromkeys(value))
