"""The nightly recipes, run as written on real PostgreSQL servers (17.10 and 18.4): the `run:`
steps of examples/perf-tracking.yml as GitHub Actions runs them, for two nights into one store,
the second with a regression planted, and then the crontab line of docs/history.md for a third.
A campaign of one short test stands in for examples/nightly.toml (through CAMPAIGN, which the
workflow reads), and a `dbdrift` on PATH runs this checkout's code, as the installed one would."""
from __future__ import annotations

import getpass
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT, fake_tool, query, shared_work_dir

pytestmark = pytest.mark.server

WORKFLOW = ROOT / "examples" / "perf-tracking.yml"
HISTORY_DOC = ROOT / "docs" / "history.md"
ACTIONS_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]  # Actions' command for `shell: bash`
# The workflow's steps this test does not run, and why; it runs every other step.
NOT_RUN = {
    "actions/checkout": "the test runs in the checkout under test",
    "install": "pip install from a checkout on the host: the test's PATH gives this checkout's dbdrift instead",
    "actions/upload-pages-artifact": "GitHub's service: the test checks that it uploads the folder published",
}
OVERRIDDEN = ("STORE", "SITE", "CAMPAIGN")  # the workflow's variables the test points at its own files
REGRESSION_NAMED = {  # what a gate's stderr says for each regression it fails on
    "report": re.compile(r"^fail-on: .*: regression ", re.M),
    "history": re.compile(r"^new regression: ", re.M),
}
CAMPAIGN = """\
name = "nightly"
tables = 1
rows = 20000
threads = [1]
warmup_s = 0.5
read_s = 1
write_s = 1
settle_s = 0
warm_runs = false
tests = ["point-query"]
[[targets]]
name = "pg17.10"
version = "17.10"
base = true
settings = { shared_buffers = "256MB" }
[[targets]]
name = "pg18.4"
version = "18.4"
settings = { shared_buffers = "256MB" }
"""
# The second night's pg18.4 plans its point lookups as scans of all 20,000 rows, at about 4% of
# the base's QPS: a regression its report gate must fail on (a setup of its own: a series apart).
_before, _settings, _after = CAMPAIGN.rpartition('settings = { shared_buffers = "256MB" }')
SLOWED = _before + 'settings = { shared_buffers = "256MB", enable_indexscan = "off", enable_bitmapscan = "off" }' + _after


def dbdrift_on_path(directory: Path) -> Path:
    """A folder whose `dbdrift` runs this checkout's code with the Python running the tests
    (the checkout's venv), as an installed dbdrift would."""
    src = shlex.quote(str(ROOT / "src"))
    fake_tool(directory, "dbdrift", f'PYTHONPATH={src}${{PYTHONPATH:+:$PYTHONPATH}} '
                                    f'exec {shlex.quote(sys.executable)} -m dbdrift "$@"')
    return directory


# -- the workflow, run as Actions runs it ----------------------------------------------------------

def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def not_run(step: dict) -> str | None:
    """Why the test does not run this step (a key of NOT_RUN), or None: it runs it."""
    if "uses" in step:
        action = step["uses"].split("@")[0]
        assert action in NOT_RUN, f"step uses {action}: the test neither runs it nor says why not"
        return action
    return "install" if re.search(r"\bpip[\"']?\s+install\b", step["run"]) else None


def gate_of(script: str) -> str | None:
    """`report` or `history` for a step that gates with --fail-on, else None."""
    found = re.search(r"\bdbdrift (report|history)\b.*--fail-on", script)
    return found.group(1) if found else None


def runs_now(condition: str | None, outcomes: dict[str, str], failed: bool) -> bool:
    """Whether Actions runs a step after the steps before it: success() unless its `if:` names a
    status function, and the `steps.ID.outcome == '...'` terms it writes (nothing is cancelled
    here). A condition this does not know fails the test rather than being guessed."""
    if condition is None:
        return not failed
    expression = re.fullmatch(r"\$\{\{(.*)\}\}", condition.strip())
    terms = [t.strip() for t in (expression.group(1) if expression else condition).split("&&")]
    decided, status = True, False
    for term in terms:
        outcome = re.fullmatch(r"steps\.([\w-]+)\.outcome == '(\w+)'", term)
        if term in ("always()", "!cancelled()"):
            status = True
        elif term in ("success()", "failure()"):
            status, decided = True, decided and failed == (term == "failure()")
        elif outcome:
            decided = decided and outcomes.get(outcome.group(1), "skipped") == outcome.group(2)
        else:
            pytest.fail(f"the test cannot evaluate `if: {condition}` of {WORKFLOW.name}")
    return decided and (status or not failed)


@dataclass
class Ran:
    """A step of one night: its name, exit status (None: its `if:` kept it from running), output
    and what it wrote to $GITHUB_STEP_SUMMARY."""
    name: str
    script: str
    code: int | None
    out: str = ""
    err: str = ""
    summary: str = ""


def night(steps_dir: Path, env: dict[str, str]) -> tuple[list[Ran], list[tuple[str, str]]]:
    """The measure job's steps once, in order, each `run:` in a bash of its own as Actions runs
    it, in the checkout; returns the steps run or passed over, and those not run with why."""
    doc = workflow()
    job = doc["jobs"]["measure"]
    base = {**env, **{k: str(v) for k, v in {**doc.get("env", {}), **job.get("env", {})}.items()}}
    base.update({k: env[k] for k in OVERRIDDEN})
    steps_dir.mkdir(parents=True, exist_ok=True)
    ran: list[Ran] = []
    skipped: list[tuple[str, str]] = []
    outcomes: dict[str, str] = {}
    failed = False
    for i, step in enumerate(job["steps"]):
        name = step.get("name") or step["uses"]
        why = not_run(step)
        if why:
            skipped.append((name, NOT_RUN[why]))
            outcomes[step.get("id", "")] = "success"
            continue
        if not runs_now(step.get("if"), outcomes, failed):
            ran.append(Ran(name, step["run"], None))
            outcomes[step.get("id", "")] = "skipped"
            continue
        script, summary = steps_dir / f"{i}.sh", steps_dir / f"{i}.summary.md"
        script.write_text(step["run"])
        summary.write_text("")
        files = {k: steps_dir / f"{i}.{k.lower()}" for k in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH")}
        step_env = {**base, **{k: str(v) for k, v in step.get("env", {}).items()},
                    "GITHUB_STEP_SUMMARY": str(summary), **{k: str(v) for k, v in files.items()}}
        done = subprocess.run([*ACTIONS_BASH, str(script)], cwd=ROOT, env=step_env, capture_output=True, text=True,
                              timeout=600)
        ran.append(Ran(name, step["run"], done.returncode, done.stdout, done.stderr, summary.read_text()))
        outcomes[step.get("id", "")] = "success" if done.returncode == 0 else "failure"
        failed = failed or done.returncode != 0
    return ran, skipped


@dataclass
class Nights:
    bench: Path  # nightly.toml, nightly.db and site/ after the nights
    env: dict[str, str]
    nights: list[tuple[list[Ran], list[tuple[str, str]]]]
    reports: list[str]  # `dbdrift report --format markdown` after each night
    sites: list[str]  # site/index.html after each night


def markdown_report(env: dict[str, str]) -> str:
    done = subprocess.run(["dbdrift", "report", "--store", env["STORE"], "--format", "markdown"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory) -> Nights:
    tmp = tmp_path_factory.mktemp("recipes")
    bench = tmp / "bench"
    bench.mkdir()
    (bench / "nightly.toml").write_text(CAMPAIGN)
    (tmp / "slowed.toml").write_text(SLOWED)
    path = dbdrift_on_path(tmp / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k != "PYTHONPATH"}
    env.update(PATH=f"{path}{os.pathsep}{os.environ['PATH']}", DBDRIFT_WORK_DIR=str(shared_work_dir("recipes")),
               STORE=str(bench / "nightly.db"), SITE=str(bench / "site"))
    result = Nights(bench, env, [], [], [])
    for n, campaign in ((1, bench / "nightly.toml"), (2, tmp / "slowed.toml")):
        env["CAMPAIGN"] = str(campaign)
        result.nights.append(night(tmp / f"steps-{n}", env))
        result.reports.append(markdown_report(env))
        result.sites.append((bench / "site" / "index.html").read_text() if (bench / "site/index.html").exists() else "")
    return result


def campaign_rows(index: str) -> list[tuple[str, str]]:
    """(date, page) of each campaign named nightly in a published index."""
    return re.findall(r'<td class="l date">([^<]*)</td><th class="l" scope="row"><a href="(c/\d+\.html)">nightly</a>',
                      index)


def assert_published(bench: Path, index: str, nights: int) -> None:
    """The site's index lists each campaign of the store, newest first, with its page."""
    stored = query(bench / "nightly.db", "SELECT created_at FROM campaigns WHERE name = 'nightly' ORDER BY id DESC")
    rows = campaign_rows(index)
    assert len(stored) == nights and [d for d, _ in rows] == [r["created_at"][:16].replace("T", " ") for r in stored]
    assert sorted(p for _, p in rows) == [f"c/{n}.html" for n in range(1, nights + 1)]
    assert all("../index.html" in (bench / "site" / p).read_text() for _, p in rows)
    assert len(json.loads((bench / "site" / "site.json").read_text())["campaigns"]) == nights


def test_the_workflow_runs_nightly_and_on_push_on_one_benchmark_host_and_deploys_what_it_published():
    doc = workflow()
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["branches"] == ["main"] and triggers["schedule"][0]["cron"] == "0 2 * * *"
    assert doc["concurrency"]["cancel-in-progress"] is False and doc["concurrency"]["group"]
    assert doc["defaults"]["run"]["shell"] == "bash" and set(OVERRIDDEN) <= set(doc["env"])
    assert doc["env"]["CAMPAIGN"] == "examples/nightly.toml" and not doc["env"]["STORE"].startswith(".")
    measure, deploy = doc["jobs"]["measure"], doc["jobs"]["deploy"]
    assert measure["runs-on"] == ["self-hosted", "benchmark"]
    steps = measure["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "${{ env.SITE }}" and measure["outputs"]["site"] == "${{ steps.%s.outcome }}" % (
        upload["id"],)
    publish = next(i for i, s in enumerate(steps) if "run" in s and s["run"].startswith("dbdrift publish"))
    gates = [i for i, s in enumerate(steps) if "run" in s and gate_of(s["run"])]
    assert [gate_of(steps[i]["run"]) for i in gates] == ["report", "history"]
    assert publish < steps.index(upload) < gates[0] and gates == list(range(gates[0], len(steps)))
    published = {steps[publish]["id"]: "success"}
    assert all(runs_now(steps[i].get("if"), published, failed=True) for i in gates[1:])  # after a failed gate too
    assert deploy["needs"] == "measure" and "needs.measure.outputs.site == 'success'" in deploy["if"]
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    for step in steps:
        if "run" in step and not_run(step) is None:  # plain bash: no expression, only the workflow's variables
            assert "${{" not in step["run"], step["run"]
            used = set(re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", step["run"]))
            assert used <= set(OVERRIDDEN) | {"GITHUB_STEP_SUMMARY"}, (step["run"], used)


def test_the_workflow_steps_measure_publish_summarize_and_gate_two_nights_into_one_store(two_nights):
    for n, (ran, skipped) in enumerate(two_nights.nights, 1):
        assert skipped == [(s.get("name") or s["uses"], NOT_RUN[why]) for s in workflow()["jobs"]["measure"]["steps"]
                           if (why := not_run(s))] and {w for _, w in skipped} == set(NOT_RUN.values())
        for step in ran:
            gate = gate_of(step.script)
            assert step.code is not None, f"night {n}: step {step.name!r} did not run"
            assert "Traceback" not in step.err, step.err
            if gate is None:
                assert step.code == 0, f"night {n}: step {step.name!r} exited {step.code}: {step.err[-3000:]}"
            else:  # a gate passes or fails with 3, and fails exactly when it names a regression
                assert step.code in (0, 3), f"night {n}: gate {step.name!r} exited {step.code}: {step.err[-3000:]}"
                assert (step.code == 3) == bool(REGRESSION_NAMED[gate].search(step.err)), (n, step.name, step.err)
        gates = {gate_of(s.script): s for s in ran if gate_of(s.script)}
        assert list(gates) == ["report", "history"]
        if n == 2:  # the planted regression fails the first gate, and the second runs all the same
            assert gates["report"].code == 3 and "point-query x1 pg18.4: regression 0." in gates["report"].err, (
                gates["report"].err)
        summary = next(s for s in ran if s.summary)
        assert summary.summary == two_nights.reports[n - 1] and summary.summary.startswith("# dbdrift report: nightly")
        publish = next(s for s in ran if s.script.startswith("dbdrift publish"))
        assert f"published {n} campaign(s) from 1 store(s)" in publish.out and ": 1 read," in publish.out
        assert len(campaign_rows(two_nights.sites[n - 1])) == n
    assert_published(two_nights.bench, two_nights.sites[-1], 2)


# -- the crontab line of docs/history.md ------------------------------------------------------------

def crontab_recipe() -> tuple[dict[str, str], str, str]:
    """The crontab block of docs/history.md's "Nightly tracking": its variable lines, the
    entry's schedule and its command, as the doc prints them."""
    section = HISTORY_DOC.read_text().split("## Nightly tracking", 1)[1]
    block = next(b for b in re.findall(r"^```\n(.*?)^```", section, re.M | re.S) if b.startswith("# crontab"))
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    variables = dict(line.split("=", 1) for line in lines if re.match(r"[A-Z_]+=", line))
    entries = [line for line in lines if not re.match(r"[A-Z_]+=", line)]
    assert len(entries) == 1, f"a crontab entry is one line: {entries}"
    schedule = re.fullmatch(r"((?:\S+\s+){5})(.*)", entries[0])
    assert schedule, entries[0]
    return variables, schedule.group(1).strip(), schedule.group(2)


def test_the_crontab_line_of_the_docs_measures_publishes_and_gates_a_third_night(two_nights, tmp_path):
    variables, schedule, command = crontab_recipe()
    assert schedule == "0 2 * * *" and "%" not in command and not command.endswith("\\")  # cron's own syntax
    assert command.index("dbdrift publish") < command.index("--fail-on")  # the site whatever the gate finds
    bench = tmp_path / "bench"
    shutil.copytree(two_nights.bench, bench)  # the two nights' store and site, with their campaign file
    venv = dbdrift_on_path(tmp_path / "venv-bin")
    paths = {"/srv/bench/.venv/bin": str(venv), "/srv/bench": str(bench)}

    def placed(text: str) -> str:
        for doc_path, here in paths.items():
            text = text.replace(doc_path, here)
        return text

    assert "/srv/bench/.venv/bin" in variables.get("PATH", "") and "cd /srv/bench &&" in command
    # as cron runs it: /bin/sh, the crontab's variables over cron's own few, in the home folder
    env = {"HOME": os.path.expanduser("~"), "LOGNAME": getpass.getuser(), "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin",
           **{k: placed(v) for k, v in variables.items()},
           "DBDRIFT_WORK_DIR": two_nights.env["DBDRIFT_WORK_DIR"]}
    env.update({k: os.environ[k] for k in ("DBDRIFT_CACHE_DIR",) if k in os.environ})  # the builds the tests fetched
    done = subprocess.run(["/bin/sh", "-c", placed(command)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode in (0, 3) and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert (done.returncode == 3) == bool(REGRESSION_NAMED["history"].search(done.stderr)), done.stderr
    # what cron mails, as the doc says: run's notes, publish's progress line, history's findings; no tables
    assert done.stdout == "" and re.search(r"^stored \d+ runs \(0 failed\)", done.stderr, re.M), done.stderr
    assert "publish: read 1/1 campaigns" in done.stderr, done.stderr
    assert_published(bench, (bench / "site" / "index.html").read_text(), 3)
