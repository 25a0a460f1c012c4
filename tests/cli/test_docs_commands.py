"""Every `dbdrift ...` command in a fenced block of README.md, docs/guide.md, docs/history.md and
docs/posts.md still works: argparse accepts it, a verb with --check plans it with --check, and a verb that
reads a store reads a small one (tests/unit/test_reports.py make_store). No server starts and
nothing is downloaded: where a build would come from is not asked (engines.locate is a stub),
and placeholders ($NEW_BUILD, /opt/pg-patched, pg18.toml, matrix.toml, nightly.db ...) are
fixtures."""
from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from dbdrift.app import check
from dbdrift.cli import main as main_cli
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS
from tests.helpers import shared_work_dir
from tests.unit.test_reports import make_store

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/guide.md", "docs/history.md", "docs/posts.md")
# verbs that read the store: run against make_store's campaign "golden"
STORE_VERBS = {"report", "campaigns", "history", "publish"}
# what make_store's single campaign cannot answer (no axes, no target named pg18.4, a sysbench campaign with
# no `--metric rate` measure, no A/A twin): parsed only
NEEDS_OTHER_STORE = ("--matrix", "--against", "--base", "rate", "false-verdicts")
# the campaign files the docs name, each a small campaign of the kind the text around it means
CAMPAIGNS = {
    "pg18.toml": 'name = "pg18"\ntests = ["point"]\n'
                 '[[targets]]\nname = "pg17.10"\nversion = "17.10"\n[[targets]]\nname = "pg18.4"\nversion = "18.4"\n',
    "matrix.toml": 'name = "matrix"\ntests = ["insert", "update-index", "update-nonindex"]\norder = "sequential"\n'
                   '[axes.sync]\n0 = { postgres = { synchronous_commit = "off" } }\n'
                   '1 = { postgres = { synchronous_commit = "on" } }\n'
                   '[axes.fpi]\n0 = { postgres = { full_page_writes = "off" } }\n'
                   '1 = { postgres = { full_page_writes = "on" } }\n'
                   '[[targets]]\nname = "pg17"\nversion = "17.10"\n',
    "ib.toml": 'name = "ib"\nworkload = "insert-benchmark"\n[insert_benchmark]\nrows_l_i0 = 10000\n'
               '[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "18.4"\n',
    "tpcc.toml": 'name = "tpcc"\nworkload = "tpcc"\n[tpcc]\nwarehouses = 1\n'
                 '[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "18.4"\n',
    "vector.toml": 'name = "vector"\nworkload = "vector"\n[vector]\nrows = 1000\ndim = 16\n'
                   '[[targets]]\nname = "a"\nversion = "debian:17.12"\n[[targets]]\nname = "b"\n'
                   'version = "debian:18.6"\n',
    "htap.toml": 'name = "htap"\nworkload = "htap"\n[htap]\nwarehouses = 1\n'
                 '[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "18.4"\n',
    "nightly.toml": (ROOT / "examples" / "nightly.toml").read_text(),  # docs/history.md's nightly recipe
}


# `&&` outside quotes: where a line (`cd DIR && dbdrift ...`, a crontab entry) chains commands
CHAINED = re.compile(r"&&(?=(?:[^'\"]*['\"][^'\"]*['\"])*[^'\"]*$)")


def doc_commands() -> list[tuple[str, str]]:
    """(where, command) for every command that runs dbdrift in a fenced block (not ```toml):
    a line, with the lines a trailing `\\` continues it onto, and each command it chains."""
    found = []
    for doc in DOCS:
        fence, held = None, ""
        for number, line in enumerate((ROOT / doc).read_text().splitlines(), 1):
            if line.startswith("```"):
                fence = None if fence is not None else line[3:].strip()
                continue
            text = held + line.strip().removeprefix("$ ")
            held = text[:-1] + " " if text.endswith("\\") else ""
            if fence in ("", "sh", "console") and not held:
                runs = [part.strip() for part in CHAINED.split(text) if part.strip().startswith("dbdrift ")]
                found += [(f"{doc}:{number}" + (f".{k}" if len(runs) > 1 else ""), command)
                          for k, command in enumerate(runs, 1)]
    return found


def test_the_docs_show_commands():
    assert len(doc_commands()) > 40


def fake_prefix(root: Path, program: str) -> Path:
    """An install prefix holding the programs an engine's build is recognised by."""
    for name in ((program,) if program != "postgres" else ("postgres", "initdb", "pg_ctl")):
        path = root / "bin" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return root


def argv_of(command: str, fixtures: dict[str, str]) -> list[str]:
    """The command's arguments after `dbdrift`, placeholders replaced, comments and
    redirections dropped."""
    for placeholder, value in fixtures.items():
        command = command.replace(placeholder, value)
    words = shlex.split(command, comments=True)[1:]
    for stop in (">", ">>", "|"):
        if stop in words:
            words = words[:words.index(stop)]
    return words


def git_checkout(root: Path, tags: tuple[str, ...]) -> Path:
    """A git repository with one empty commit per tag, in order."""
    import subprocess

    root.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(root), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    for tag in tags:
        subprocess.run(["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", tag], check=True, env=env)
        subprocess.run(["git", "-C", str(root), "tag", tag], check=True, env=env)
    return root


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "dbdrift.db"
    make_store(path).close()
    return path


@pytest.fixture
def fixtures(tmp_path, monkeypatch, golden_store) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    # short: pytest's tmp_path is too long for the servers' socket paths, which --check refuses
    monkeypatch.setenv("DBDRIFT_WORK_DIR", str(shared_work_dir("docs")))
    monkeypatch.setattr(check.engines, "locate", lambda target, cache: "located (test stub)")
    monkeypatch.setattr(check.engines, "to_fetch", lambda target, cache: None)  # a build to fetch: not asked
    shutil.copy(golden_store, tmp_path / "dbdrift.db")  # the default store the docs' commands read
    for name in ("nightly.db", "small.db", "large.db"):  # the stores docs/history.md names
        shutil.copy(golden_store, tmp_path / name)
    for name, text in CAMPAIGNS.items():
        (tmp_path / name).write_text(text)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the campaign files the docs run from the checkout
    checkout = git_checkout(tmp_path / "postgres", ("REL_15_17", "REL_15_18"))  # docs/history.md's source bisect
    pg = str(fake_prefix(tmp_path / "pg-patched", "postgres"))
    my = str(fake_prefix(tmp_path / "mysql-dev", "mysqld"))
    return {'"$NEW_BUILD"': pg, "/opt/pg-patched": pg, "/opt/mysql-dev": my, "NAME|ID": "golden",
            "--campaign NAME": "--campaign golden", "/srv/www/perf": "www-perf", "~/postgres": str(checkout)}


def needs_check(argv: list[str]) -> bool:
    parser = main_cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb").choices[argv[0]]
    return any("--check" in a.option_strings for a in sub._actions)


@pytest.mark.parametrize("where, command", doc_commands(), ids=[w for w, _ in doc_commands()])
def test_a_documented_command_parses_and_plans_without_starting_anything(where, command, fixtures, capsys):
    argv = argv_of(command, fixtures)
    try:
        main_cli.build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: argparse refused `{command}`: {capsys.readouterr().err.strip()}"
                    if exc.code else f"{where}: `{command}` only printed help")
    verb = argv[0]
    if needs_check(argv):
        argv += [] if "--check" in argv else ["--check"]
    elif verb not in STORE_VERBS or any(flag in argv for flag in NEEDS_OTHER_STORE):
        return  # parsing is what can be checked without a server, a cluster or the network
    code = main_cli.main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 3), f"{where}: `{' '.join(argv)}` exited {code}: {err.strip()}"
    assert "--check" not in argv or "--print-campaign" in argv or "nothing was started" in out


def test_a_doc_naming_an_option_that_does_not_exist_fails_the_check(fixtures, capsys):
    with pytest.raises(SystemExit):
        main_cli.build_parser().parse_args(argv_of("dbdrift compare 17.10 18.4 --duraton 60", fixtures))


def test_each_compare_and_demo_in_the_readme_and_guide_says_how_long_it_takes():
    """The README's and guide's tasks that measure say their expected time (from --check)."""
    missing = []
    for where, command in doc_commands():
        verb = command.split()[1]
        if verb in ("compare", "demo") and "--print-campaign" not in command and "about" not in command:
            missing.append(f"{where}: {command}")
    assert not missing, "commands without their expected time:\n" + "\n".join(missing)


ABOUT = re.compile(r"about (?:(\d+)h)?(?:(\d+) ?m(?:in)?)?(?:(\d+)s)?")


def minutes(text: str) -> float | None:
    """The first `about 1h18m` / `about 12 min` / `about 13m39s` in `text`, in minutes."""
    found = next((m for m in ABOUT.finditer(text) if any(m.groups())), None)
    if found is None:
        return None
    hours, mins, secs = (int(g or 0) for g in found.groups())
    return hours * 60 + mins + secs / 60


@pytest.mark.fault("docs")
def test_the_time_the_docs_give_a_compare_or_demo_is_the_one_check_estimates(fixtures, capsys, monkeypatch):
    """The docs' "# about N min" of each compare and demo is --check's expected time rounded to the
    minute, on the 2-CPU host the docs measure on with the servers taking turns."""
    import os

    from dbdrift.app import run as run_case

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(run_case, "fit_order", lambda spec, total, available: (spec, None))  # any host's memory
    wrong = []
    for where, command in doc_commands():
        verb, _, comment = command.split()[1], *command.partition("#")[1:]
        documented = minutes(comment)
        if verb not in ("compare", "demo") or documented is None or "--print-campaign" in command:
            continue
        argv = argv_of(command, fixtures)
        assert main_cli.main(argv + ([] if "--check" in argv else ["--check"])) == 0, where
        estimated = minutes(re.search(r"expected time: (about \S+)", capsys.readouterr().out).group(1))
        assert estimated is not None
        if abs(documented - estimated) > 0.5 + 1e-9 and round(estimated) != documented:
            wrong.append(f"{where}: `{command.partition('#')[0].strip()}` says about {documented:g} min, "
                         f"--check {estimated:.1f} min")
    assert wrong == []


def test_the_time_reader_reads_each_way_the_docs_write_a_time():
    assert [minutes(t) for t in ("# about 1h18m; x", "# about 12 min: y", "about 13m39s", "about 2h", "plans it")] \
        == [78, 12, 13 + 39 / 60, 120, None]


# a file a documented command reads is in the repository, a copy of one in examples/ that the doc names
# (docs/history.md's nightly job runs its copy of examples/nightly.toml), written by an earlier
# documented command (`> pg18.toml`), or shown in the doc after the command (a ```toml block: "the file below")
SHOWN_AFTER = 60  # lines after the command within which the doc shows the file


@pytest.mark.fault("docs")
def test_every_file_a_documented_command_reads_ships_or_is_made_or_shown_by_the_docs():
    missing = []
    for doc in DOCS:
        text = (ROOT / doc).read_text()
        lines = text.splitlines()
        written = set()
        for where, command in doc_commands():
            if not where.startswith(doc + ":"):
                continue
            words = shlex.split(command, comments=True)
            if ">" in words:
                written.add(words[words.index(">") + 1])
            number = int(where.split(":")[1].split(".")[0])
            shown = any(line.startswith("```toml") for line in lines[number:number + SHOWN_AFTER])
            for word in words[1:]:
                copied = (ROOT / "examples" / Path(word).name).is_file() and f"examples/{Path(word).name}" in text
                if word.endswith(".toml") and not (ROOT / word).is_file() and word not in written and not shown \
                        and not copied:
                    missing.append(f"{where}: `{command}` reads {word}, which ships nowhere")
    assert missing == []


def test_the_names_the_guide_says_csv_and_json_share_are_in_both(golden_store):
    """The guide lists the names a CSV line and a JSON row share: each is a CSV column and a key
    of a JSON row."""
    import json
    import re

    from dbdrift.cli import report as report_cli
    from dbdrift.workloads.sysbench.results.build import build_report
    from dbdrift.store.store import Store

    text = (ROOT / "docs/guide.md").read_text()
    listed = re.split(r",\s+", re.search(r"A CSV line and a JSON row share these names: `([^`]+)`", text).group(1))
    store = Store(golden_store)
    try:
        data = build_report(store, MICROBENCHMARKS, None, None, False, noise_floor="none")
        header = report_cli.render(data, "csv", False).splitlines()[0].split(",")
        row = json.loads(report_cli.render(data, "json", False))["rows"][0]
    finally:
        store.close()
    assert set(listed) <= set(header), set(listed) - set(header)
    assert set(listed) <= set(row), set(listed) - set(row)


# -- the docs after a pip install: `dbdrift docs`, and --help pointing to it -----------------------

def test_dbdrift_docs_lists_the_topics_and_prints_each(capsys):
    from dbdrift.cli.docs import TOPICS

    assert main_cli.main(["docs"]) == 0
    listing = capsys.readouterr().out
    for topic in TOPICS:
        assert listing.count(f"\n{topic} ") + listing.startswith(f"{topic} ") == 1
        assert main_cli.main(["docs", topic]) == 0
        assert capsys.readouterr().out.startswith("# ")


def test_help_points_to_dbdrift_docs_not_to_files_a_pip_install_lacks():
    parser = main_cli.build_parser()
    verbs = next(a for a in parser._actions if a.dest == "verb").choices
    for name, text in [("dbdrift", parser.format_help())] + [(v, p.format_help()) for v, p in verbs.items()]:
        assert "docs/" not in text, f"`dbdrift {name} --help` names a docs/ file; point to `dbdrift docs TOPIC`"
    assert "dbdrift docs" in parser.format_help()


# -- --check: the campaign's time by part, what --duration bounds, durability in turns -------------

def test_check_gives_the_time_by_part_and_says_settles_do_not_follow_duration(fixtures, capsys):
    assert main_cli.main(["compare", "17.10", "18.4", "--tests", "point,writes", "--duration", "60", "--check"]) == 0
    out = capsys.readouterr().out
    assert "expected time: about 48m20s for the whole campaign" in out
    for part in ("measured runs", "warm-up runs", "settles", "starts, loads, restarts"):
        assert f"    {part} " in out
    assert "settles (settle_s) and scan.warm (scan_warm_s) do not follow it" in out


@pytest.mark.fault("progress")
def test_a_write_only_campaign_plans_no_read_warm_up(fixtures, capsys, tmp_path):
    (tmp_path / "w.toml").write_text('tests = ["update-index", "insert"]\nwrite_s = 2\n'
                                     '[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "18.4"\n')
    assert main_cli.main(["run", "w.toml", "--check"]) == 0
    out = capsys.readouterr().out
    assert "    warm-up runs " not in out and "point-query.warm" not in out


def test_check_names_warm_ups_longer_than_the_measured_runs(fixtures, capsys, tmp_path):
    (tmp_path / "s.toml").write_text('tests = ["scan"]\nread_s = 2\nscan_warm_s = 60\n'
                                     '[[targets]]\nname = "a"\nversion = "17.10"\n[[targets]]\nname = "b"\nversion = "18.4"\n')
    assert main_cli.main(["run", "s.toml", "--check"]) == 0
    out = capsys.readouterr().out
    assert "    warm-up runs 2m26s: point-query.warm, scan.warm per target" in out
    assert ("note: the warm-up runs take longer than the measured runs: they last read_s (2s) and scan_warm_s (60s), "
            "whatever write_s is; a shorter read_s, scan_warm_s, or warm_runs = false shortens them") in out


@pytest.mark.parametrize("order, warned", [("turns", True), ("sequential", False)])
def test_a_durability_matrix_in_turns_is_warned_about_at_check(fixtures, capsys, monkeypatch, order, warned):
    from dbdrift.app import run as run_case

    monkeypatch.setattr(run_case, "fit_order", lambda spec, total, available: (spec, None))  # any host's memory
    assert main_cli.main(["run", "matrix.toml", "--set", f"order={order}", "--check"]) == 0
    out = capsys.readouterr().out
    assert ("warning: axis sync changes durability" in out) is warned
    assert "axis fpi" not in out  # full_page_writes changes what is written, not when a commit waits


def test_the_wheel_installs_every_topic_under_share_doc():
    """packaging/dbdrift.data/data/share/doc/dbdrift links each file `dbdrift docs` knows, and
    every Markdown file of docs/ is a topic, so a pip install brings them all."""
    from dbdrift.cli.docs import TOPICS

    shipped = ROOT / "packaging" / "dbdrift.data" / "data" / "share" / "doc" / "dbdrift"
    names = {file for file, _ in TOPICS.values()}
    assert names == {p.name for p in (ROOT / "docs").glob("*.md")} | {"README.md"}
    for name in names:
        assert (shipped / name).resolve() == (ROOT / ("README.md" if name == "README.md" else f"docs/{name}")).resolve()


@pytest.mark.fault("docs")
def test_demo_newest_with_another_engine_names_that_engines_own_demo(capsys):
    """The README's `demo --newest` line once read as `demo --newest --engine mariadb`: refused,
    the refusal names the demo the reader was after."""
    assert main_cli.main(["demo", "--newest", "--engine", "mariadb", "--print-campaign"]) == 2
    err = capsys.readouterr().err
    assert "hint: dbdrift demo --engine postgres --newest; mariadb's own demo is dbdrift demo --engine mariadb " \
           "(10.5.29 -> 10.11.19 -> 11.8.9)" in err
    assert main_cli.main(["demo", "--engine", "mariadb", "--print-campaign"]) == 0
