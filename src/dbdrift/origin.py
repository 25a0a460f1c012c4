"""Where this dbdrift was installed from, and the pip commands that work from there: adding an
extra, reinstalling, upgrading, installing a package beside it. Every install hint dbdrift
prints comes from here (tests/unit/test_origin.py holds that), because dbdrift is not on PyPI:
`pip install 'dbdrift[history]'` fails for everyone who installed it from a checkout.

The origin is read, in this order, from where the running package's files are (a source tree's
`src/dbdrift`: an editable install, or the tree on PYTHONPATH) and from the installed
distribution's direct_url.json (PEP 610: a directory, an archive or a VCS URL pip installed
it from); a distribution without one came from a package index. Nothing here raises: an
origin that cannot be read is taken to be an index.
"""
from __future__ import annotations

import json
import shlex
import sys
import tomllib
import urllib.parse
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

NAME = "dbdrift"  # the distribution's name in pyproject.toml


@dataclass(frozen=True)
class Origin:
    """Where the running dbdrift came from.

    kind: "checkout" (the package runs from a source tree: installed editable, or on PYTHONPATH),
    "directory" (`pip install DIR`: copied from a source tree), "archive" (a wheel or sdist, a
    file or a URL), "vcs" (`pip install git+URL`), "index" (a package index).
    where: the source tree's path, the archive's path or URL, the VCS URL ("git+https://..."), or "".
    revision: the VCS revision it was installed at (as asked for, else the commit; "" for none).
    """

    kind: str
    where: str = ""
    revision: str = ""

    @property
    def tree(self) -> Path | None:
        """The source tree it was installed from, when that tree is still there."""
        if self.kind in ("checkout", "directory") and is_source_tree(Path(self.where)):
            return Path(self.where)
        return None

    def describe(self) -> str:
        return {"checkout": f"the checkout {self.where}", "directory": f"the source tree {self.where}",
                "archive": self.where, "vcs": self.where, "index": "a package index"}[self.kind]


def is_source_tree(path: Path) -> bool:
    """A directory whose pyproject.toml is dbdrift's."""
    try:
        return str(tomllib.loads((path / "pyproject.toml").read_text()).get("project", {}).get("name")) == NAME
    except (OSError, ValueError):
        return False


def read_origin(package_dir: Path, direct_url: str | None) -> Origin:
    """The origin of a dbdrift whose package files are in `package_dir` and whose distribution
    carries `direct_url` (the text of its direct_url.json, None when it has none)."""
    if package_dir.parent.name == "src" and is_source_tree(package_dir.parent.parent):
        return Origin("checkout", str(package_dir.parent.parent))
    try:
        info = json.loads(direct_url) if direct_url else None
        url = str(info["url"]) if isinstance(info, dict) else ""
    except (ValueError, KeyError):
        return Origin("index")
    if not url:
        return Origin("index")
    local = urllib.request.url2pathname(urllib.parse.urlsplit(url).path) if url.startswith("file:") else None
    if isinstance(info, dict) and isinstance(info.get("vcs_info"), dict):
        vcs = info["vcs_info"]
        return Origin("vcs", f"{vcs.get('vcs', 'git')}+{url}", str(vcs.get("requested_revision") or vcs.get("commit_id") or ""))
    if isinstance(info, dict) and "dir_info" in info and local is not None:
        editable = bool((info.get("dir_info") or {}).get("editable"))
        return Origin("checkout" if editable else "directory", local)
    return Origin("archive", local if local is not None else url)


@lru_cache(maxsize=1)
def origin() -> Origin:
    """The running dbdrift's origin."""
    try:
        direct_url = metadata.distribution(NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct_url = None
    return read_origin(Path(__file__).resolve().parent, direct_url)


def _pip(*args: str) -> str:
    """A pip command for the environment dbdrift runs in (its own Python: a bare `pip` on the
    PATH may belong to another)."""
    return " ".join([shlex.quote(sys.executable or "python3"), "-m", "pip", *args])


def _requirement(where: Origin, extra: str | None) -> list[str]:
    """pip's arguments naming dbdrift, with `extra`, as it was installed (a source tree that is
    gone: see _gone)."""
    suffix = f"[{extra}]" if extra else ""
    if where.kind == "checkout":
        return ["-e", shlex.quote(f"{where.where}{suffix}")]
    if where.kind == "directory" or (where.kind == "archive" and "://" not in where.where):
        return [shlex.quote(f"{where.where}{suffix}")]
    if where.kind in ("archive", "vcs"):
        revision = f"@{where.revision}" if where.revision else ""
        return [shlex.quote(f"{NAME}{suffix} @ {where.where}{revision}")]
    return [shlex.quote(f"{NAME}{suffix}")]


def _gone(where: Origin) -> str | None:
    """What to say when the source dbdrift was installed from is no longer there."""
    if where.kind in ("checkout", "directory") and where.tree is None:
        return f"dbdrift was installed from {where.where}, which is no longer a dbdrift source tree; in a checkout of it, run "
    if where.kind == "archive" and "://" not in where.where and not Path(where.where).is_file():
        return f"dbdrift was installed from {where.where}, which is gone; in a checkout of it, run "
    return None


def _dev_setup(where: Origin, what: str) -> str:
    tree = where.tree
    if where.kind == "checkout" and tree is not None and (tree / "dev").is_file():
        return f" (or `./dev setup` in {tree}, which {what})"
    return ""


def extra_hint(extra: str, what: str, hosts: str = "", where: Origin | None = None) -> str:
    """How to install the optional extra `extra` (which brings `what`) into this dbdrift
    (`hosts`: where, when not only here, e.g. " on this host and on every worker host")."""
    return _install_hint(f"install dbdrift's extra {extra} ({what}){hosts}: ", where or origin(), extra,
                         "installs every extra")


def reinstall_hint(why: str, where: Origin | None = None) -> str:
    """How to install this dbdrift again, with its dependencies and its driver (`why`: what
    was missing, e.g. "the load driver")."""
    return _install_hint(f"reinstall dbdrift ({why}): ", where or origin(), None, "does it too")


def _install_hint(head: str, where: Origin, extra: str | None, dev_setup_does: str) -> str:
    """`head`, then the pip command that installs dbdrift (with its extra `extra`) again: editable
    in a checkout when the source it was installed from is gone, else from that source."""
    gone = _gone(where)
    if gone:
        return head + f"{gone}`{_pip('install', '-e', shlex.quote(f'.[{extra}]') if extra else '.')}`"
    return head + f"`{_pip('install', *_requirement(where, extra))}`{_dev_setup(where, dev_setup_does)}"


def upgrade_hint(where: Origin | None = None) -> str:
    """How to get a newer dbdrift from where this one came from."""
    where = where or origin()
    tree = where.tree
    if tree is not None and (tree / ".git").exists():
        return (f"update the checkout (`git -C {shlex.quote(str(tree))} pull`) and reinstall it: "
                f"`{_pip('install', *_requirement(where, None))}`{_dev_setup(where, 'does it too')}")
    if tree is not None:
        return (f"put a newer dbdrift into {tree} and reinstall it: `{_pip('install', *_requirement(where, None))}`"
                f"{_dev_setup(where, 'does it too')}")
    if where.kind == "vcs":
        return f"`{_pip('install', '-U', shlex.quote(f'{NAME} @ {where.where}'))}`"
    if where.kind == "index":
        return f"`{_pip('install', '-U', NAME)}`"
    return f"install a newer dbdrift the way this one was ({where.describe()}), in a checkout of dbdrift: " \
           f"`{_pip('install', '-e', '.')}`"


def package_hint(package: str, what: str) -> str:
    """How to install a third-party package from PyPI beside dbdrift (`what`: what it does for it)."""
    return f"`{_pip('install', shlex.quote(package))}` ({what})"
