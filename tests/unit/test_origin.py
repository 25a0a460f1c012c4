"""Install hints name a command that works from where dbdrift came from (issue 65): dbdrift is not
on PyPI, so `pip install 'dbdrift[history]'` fails for a user of a checkout. Every hint comes
from dbdrift/origin.py, names the source tree (which exists) or the URL it was installed from,
and only extras pyproject.toml declares."""
from __future__ import annotations

import ast
import json
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from dbdrift import origin
from dbdrift.analysis import changepoints
from dbdrift.origin import Origin, extra_hint, read_origin, reinstall_hint, upgrade_hint

pytestmark = pytest.mark.fault("docs")
ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "dbdrift"
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def commands(hint: str) -> list[list[str]]:
    """The pip commands in a hint's backquotes, split as a shell would."""
    return [shlex.split(c) for c in re.findall(r"`([^`]*-m pip [^`]*)`", hint)]


def test_no_module_but_origin_spells_a_pip_command():
    spelled = [f"{p.relative_to(SRC)}:{n}" for p in SRC.rglob("*.py") if p.name != "origin.py"
               for n, line in enumerate(p.read_text().splitlines(), 1) if "pip install" in line or "dbdrift[" in line]
    assert spelled == []


def extras_named_in_source() -> set[str]:
    """The first argument of every extra_hint call in src (a string, or changepoints.EXTRA)."""
    named = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "extra_hint":
                first = node.args[0]
                if isinstance(first, ast.Starred):
                    assert getattr(first.value, "id", None) == "EXTRA", ast.unparse(node)
                    named.add(changepoints.EXTRA[0])
                else:
                    assert isinstance(first, ast.Constant), ast.unparse(node)
                    named.add(first.value)
    return named


def test_every_extra_a_hint_names_is_declared_in_pyproject():
    named = extras_named_in_source()
    assert named >= {"history", "cluster"} and named <= set(EXTRAS)


def test_this_checkout_is_the_origin_and_its_hint_installs_the_extra_from_it():
    assert origin.origin() == Origin("checkout", str(ROOT))
    hint = extra_hint("history", "Apache Otava")
    [command] = commands(hint)
    assert command[:5] == [sys.executable, "-m", "pip", "install", "-e"]
    tree, extra = re.fullmatch(r"(.*)\[(\w+)\]", command[5]).groups()
    assert Path(tree) == ROOT and (ROOT / "pyproject.toml").is_file() and extra in EXTRAS
    assert f"`./dev setup` in {ROOT}" in hint and (ROOT / "dev").is_file()


def editable(path: Path) -> str:
    return json.dumps({"url": path.as_uri(), "dir_info": {"editable": True}})


def test_an_editable_install_reinstalls_editable_from_its_tree(tmp_path):
    tree = ROOT  # an existing source tree, seen from an installed copy's site-packages
    where = read_origin(tmp_path / "site-packages" / "dbdrift", editable(tree))
    assert where == Origin("checkout", str(tree))
    assert commands(reinstall_hint("the driver", where)) == [[sys.executable, "-m", "pip", "install", "-e", str(ROOT)]]


def test_a_directory_install_names_the_directory_with_the_extra(tmp_path):
    where = read_origin(tmp_path / "site" / "dbdrift", json.dumps({"url": ROOT.as_uri(), "dir_info": {}}))
    assert where == Origin("directory", str(ROOT))
    assert commands(extra_hint("cluster", "Dask", where=where)) == [
        [sys.executable, "-m", "pip", "install", f"{ROOT}[cluster]"]]


def test_a_tree_that_is_gone_is_said_and_the_hint_works_in_any_checkout(tmp_path):
    gone = tmp_path / "removed-checkout"
    where = read_origin(tmp_path / "site" / "dbdrift", json.dumps({"url": gone.as_uri(), "dir_info": {}}))
    hint = extra_hint("history", "Apache Otava", where=where)
    assert f"installed from {gone}, which is no longer a dbdrift source tree; in a checkout of it" in hint
    assert commands(hint) == [[sys.executable, "-m", "pip", "install", "-e", ".[history]"]]


def test_a_git_install_names_its_url_and_revision():
    url = {"url": "https://example.org/dbdrift.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    where = read_origin(Path("/site/dbdrift"), json.dumps(url))
    assert commands(extra_hint("history", "Otava", where=where)) == [
        [sys.executable, "-m", "pip", "install", "dbdrift[history] @ git+https://example.org/dbdrift.git@abc123"]]
    assert commands(upgrade_hint(where)) == [
        [sys.executable, "-m", "pip", "install", "-U", "dbdrift @ git+https://example.org/dbdrift.git"]]


def test_a_wheel_install_names_the_wheel(tmp_path):
    wheel = tmp_path / "dbdrift-0.1.0-py3-none-linux_x86_64.whl"
    wheel.write_bytes(b"")
    where = read_origin(Path("/site/dbdrift"), json.dumps({"url": wheel.as_uri(), "archive_info": {}}))
    assert commands(extra_hint("cluster", "Dask", where=where)) == [
        [sys.executable, "-m", "pip", "install", f"{wheel}[cluster]"]]


def test_an_index_install_names_the_package_and_upgrades_with_minus_u():
    where = read_origin(Path("/site/dbdrift"), None)
    assert where == Origin("index")
    assert commands(extra_hint("history", "Otava", where=where))[0][-1] == "dbdrift[history]"
    assert commands(upgrade_hint(where)) == [[sys.executable, "-m", "pip", "install", "-U", "dbdrift"]]


def test_the_upgrade_of_a_checkout_pulls_it_and_reinstalls_it():
    hint = upgrade_hint(Origin("checkout", str(ROOT)))
    assert f"`git -C {ROOT} pull`" in hint
    assert commands(hint) == [[sys.executable, "-m", "pip", "install", "-e", str(ROOT)]]
