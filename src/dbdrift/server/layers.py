"""A server configuration as layers, each with where it came from: dbdrift's defaults, a named
file shipped with dbdrift, the user's file, each matrix level, the target's settings, and the
connection options dbdrift owns. Later layers win.

The same layers are written to the server's configuration (server/pgconf.py, server/mycnf.py)
and shown by `dbdrift config show`, so what is shown is what the server reads. Pure: the
callers read the files.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dbdrift.model import TargetSpec

Pairs = Sequence[tuple[str, object]]  # options as given: values rendered with str()
Parsed = list[tuple[str, str]]  # options as read from a file's text


@dataclass(frozen=True)
class Layer:
    source: str  # what `config show` says: "default", "named file z12a", "user file PATH", "matrix level sync1", ...
    title: str  # the comment line heading it in the written configuration
    text: str  # its lines as written
    pairs: tuple[tuple[str, str], ...]  # the options it sets, in order


@dataclass(frozen=True)
class Effective:
    """One option's final value and source, and the values it overrode (source, value), oldest first."""

    key: str
    value: str
    source: str
    overrode: tuple[tuple[str, str], ...] = ()


def target_layers(target: TargetSpec, defaults: Pairs, owned: Pairs, *, lines: Callable[[Pairs], str],
                  parse: Callable[[str], Parsed], head: str = "", named_text: str | None = None,
                  file_text: str | None = None) -> list[Layer]:
    """The layers of `target` in the order they are written. `lines` renders key/value pairs in
    the engine's syntax, `parse` reads the options out of a file's text, `head` starts each
    rendered section (`[mysqld]\\n` in my.cnf)."""
    def rendered(source: str, title: str, pairs: Pairs) -> Layer:
        return Layer(source, title, head + lines(pairs), tuple((k, str(v)) for k, v in pairs))

    def written(source: str, title: str, text: str) -> Layer:
        return Layer(source, title, text.rstrip("\n"), tuple((k, str(v)) for k, v in parse(text)))

    out = [rendered("default", "dbdrift defaults", defaults)]
    if named_text is not None:
        for name, text in named_parts(named_text, target.named_config or ""):
            out.append(written(f"named file {name}", f"config = {target.named_config!r} (shipped with dbdrift)"
                               + ("" if name == target.named_config else f": {name}"), text))
    if file_text is not None:
        out.append(written(f"user file {target.config}", f"config = {target.config}", file_text))
    for level in target.levels:
        if level.settings:
            out.append(rendered(f"matrix level {level.label}", f"matrix axis {level.axis}, level {level.name}",
                                list(level.settings.items())))
    if target.settings:
        out.append(rendered("settings", f"settings of target {target.parent or target.name}",
                            list(target.settings.items())))
    out.append(rendered("dbdrift (owned)", "connection (owned by dbdrift): a private socket, no TCP", owned))
    return out


def named_parts(text: str, name: str) -> list[tuple[str, str]]:
    """A named config's text as (file name, text) parts: one part, or one per `# [named file X]`
    heading of a config built on others (catalog/configs.py), so each option says its file."""
    pieces = re.split(r"^# \[named file ([\w.]+)\]\n", text, flags=re.M)
    if len(pieces) == 1:
        return [(name, text)]
    parts = [(pieces[i], pieces[i + 1]) for i in range(1, len(pieces), 2)]
    return [(parts[0][0], pieces[0] + parts[0][1]), *parts[1:]]


def render(layers: list[Layer]) -> str:
    return "".join(f"# --- {layer.title} ---\n{layer.text}\n\n" for layer in layers)


def effective(layers: list[Layer], normalize: Callable[[str], str]) -> list[Effective]:
    """Each option's final value, in the order options first appear; `normalize` says which
    spellings are the same option."""
    found: dict[str, Effective] = {}
    for layer in layers:
        for key, value in layer.pairs:
            name = normalize(key)
            old = found.get(name)
            overrode = (*old.overrode, (old.source, old.value)) if old else ()
            found[name] = Effective(name, value, layer.source, overrode)
    return list(found.values())


_PG_LINE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(?:=\s*|\s+)(.*?)\s*$")


def parse_postgresql_conf(text: str) -> Parsed:
    """The `name = value` lines of a postgresql.conf text (comments and include lines left out)."""
    pairs = []
    for line in text.splitlines():
        line = _strip_comment(line)
        match = _PG_LINE.match(line)
        if match and match.group(1) not in ("include", "include_if_exists", "include_dir"):
            value = match.group(2)
            if len(value) >= 2 and value[0] == value[-1] == "'":
                value = value[1:-1].replace("''", "'")
            pairs.append((match.group(1), value))
    return pairs


_MY_SECTIONS = {"mysqld", "server", "mariadb", "mariadbd"}


def parse_my_cnf(text: str) -> Parsed:
    """The options of a my.cnf text in the sections a server reads ([mysqld], [server], [mariadb],
    [mariadbd]); a bare option (`skip_log_bin`) has the value ""."""
    pairs, section = [], "mysqld"
    for line in text.splitlines():
        line = _strip_comment(line).strip()
        if not line or line.startswith("!"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        if section not in _MY_SECTIONS:
            continue
        key, sep, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        pairs.append((key.strip(), value if sep else ""))
    return pairs


def _strip_comment(line: str) -> str:
    """A line without its # comment (a # inside quotes stays)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" or (char == ";" and not line[:i].strip()):
            return line[:i]
    return line
