"""`dbdrift report`: read a stored campaign, compute rQPS and summaries, render a format."""
from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from dbdrift.analysis.floor import campaign_sd, noise_floor
from dbdrift.analysis.hardware import metrics_rows
from dbdrift.analysis.instructions import EventCost, instruction_rows
from dbdrift.analysis.noise import CROSSOVER, OVER_REPEATS, IntervalSample
from dbdrift.analysis.relative import Measurement, compare
from dbdrift.analysis.summary import summarize_groups
from dbdrift.catalog.sysbench import GROUP_TITLES, GROUPS, report_order, scan_krps
from dbdrift.cli import ibench_report
from dbdrift.cli.targets import base_target, target_labels
from dbdrift.cpus import Placement
from dbdrift.errors import UserError
from dbdrift.report.csv import render_csv
from dbdrift.report.flamegraph import folded_text, render_diff_svg, render_svg
from dbdrift.report.html import render_html
from dbdrift.report.json import render_json
from dbdrift.report.markdown import render_markdown
from dbdrift.report.table import FORMAT_VERSION, ReportData
from dbdrift.report.text import render_text
from dbdrift.store.store import Store
from dbdrift.version import __version__

FORMATS = ("text", "markdown", "csv", "json", "html")
EXAMPLES = """\
examples:
  dbdrift report                                  the latest campaign in ./dbdrift.db
  dbdrift report --campaign demo-pg17-vs-pg18 --chain   each target against the one before it
  dbdrift report --format html > report.html      a page to share
  dbdrift report --format json | jq '.rows[] | select(.verdict == "regression")'
  dbdrift report --fail-on regression             for CI: exit 3 when any cell is a regression

exit status: 0 printed (and, with --fail-on, nothing found), 1 error (no store, no such campaign),
2 bad usage, 3 --fail-on found what it names (listed on stderr)
"""
# Below this many A/A calibrations the between-campaign sd is mostly luck (measured on the VMs
# dbdrift is developed on: bench/README.md, "Intervals widened by the between-campaign sd").
FEW_CALIBRATIONS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", type=Path, default=Path("dbdrift.db"), help="results store (default ./dbdrift.db)")
    parser.add_argument("--campaign", help="campaign name or id (default: the latest)")
    parser.add_argument("--base", help="target every other target is divided by (default: the campaign's base)")
    parser.add_argument("--chain", action="store_true", help="each target relative to the previous one")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="color rQPS <= 0.95 red and >= 1.05 green in text output")
    parser.add_argument("--min-effect", type=_percent, default=0.02, metavar="PCT",
                        help="smallest change called a regression or improvement (default 2%%)")
    parser.add_argument("--noise-floor", default="auto", metavar="auto|none|CAMPAIGN",
                        help="raise each test's minimum effect to the A/A noise measured by `dbdrift calibrate`, "
                             "and widen each interval by the between-campaign spread the calibrations measured "
                             "(auto: the newest calibration's floors and the spread over all calibrations in the "
                             "store, if any; CAMPAIGN: that one calibration for both)")
    parser.add_argument("--metrics", action="store_true",
                        help="hardware per operation (cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s, CPU µs server/client) "
                             "per test, absolute and relative to the base")
    parser.add_argument("--flamegraphs", type=Path, metavar="DIR",
                        help="write a flamegraph SVG (and folded stacks) per test and target recorded with "
                             "`run --flamegraph`, and a differential one against the base, into DIR")
    parser.add_argument("--config", action="store_true",
                        help="print the configuration each target's server ran with, as stored with the campaign "
                             "(the whole my.cnf; for PostgreSQL what dbdrift added to postgresql.conf), instead "
                             "of the rQPS report")
    parser.add_argument("--noisy", type=_percent, default=0.05, metavar="PCT",
                        help="a cell whose 95%% interval is wider than ±PCT is 'too noisy' (default 5%%)")
    parser.add_argument("--fail-on", type=_fail_on, default=[], metavar="KINDS",
                        help=f"exit with status {FINDING_EXIT} when the report finds one of KINDS "
                             f"({', '.join(FAIL_ON)}; comma-separated), after printing it; each finding is "
                             "listed on stderr")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES


def _percent(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (write 2% or 0.02)") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0% and 100%")
    return value


def no_campaign(store: Store, campaign: str | None) -> UserError:
    """The error for a campaign the store does not hold, naming those it does."""
    known = [c["name"] for c in store.campaigns()]
    if not known:
        return UserError(f"store {store.path} holds no campaign",
                         "run `dbdrift compare 17.10 18.4`, `dbdrift run CAMPAIGN.toml` or `dbdrift demo` first")
    names = ", ".join(dict.fromkeys(reversed(known)))  # newest first, each name once
    return UserError(f"store {store.path} has no campaign {campaign!r}",
                     f"it holds {names}; `dbdrift campaigns --store {store.path}` lists them with ids")


def report_meta(store: Store, campaign_id: int, generated_at: str | None = None) -> dict:
    """Who made this report from what: tool and format version, date, host, campaign settings."""
    row = store.campaign(campaign_id)
    host = json.loads(row["host_json"])
    spec = json.loads(row["spec_json"])
    targets = []
    for t in store.targets(campaign_id):
        server, install = json.loads(t["server_json"] or "{}"), json.loads(t["install_json"] or "{}")
        targets.append({"name": t["name"], "engine": t["engine"], "base": bool(t["is_base"]),
                        "version": server.get("version", install.get("version")), "source": install.get("source")})
    return {
        "dbdrift_version": __version__, "format_version": FORMAT_VERSION,
        "generated_at": generated_at or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": {k: host.get(k) for k in ("hostname", "cpu_model", "cpus", "memory_bytes", "kernel", "os",
                                          "virtualized")},
        "campaign": {"id": campaign_id, "name": row["name"], "created_at": row["created_at"],
                     "dbdrift_version": row["dbdrift_version"],
                     "settings": {k: v for k, v in spec.items() if k != "targets"}},
        "targets": targets,
    }


def build_report(store: Store, campaign: str | None, base: str | None, chain: bool,
                 min_effect: float = 0.02, noisy: float = 0.05, noise_floor: str = "none",
                 metrics: bool = False, generated_at: str | None = None) -> ReportData:
    campaign_id = store.latest_campaign_id(campaign)
    if campaign_id is None:
        raise no_campaign(store, campaign)
    row = store.campaign(campaign_id)
    targets = store.targets(campaign_id)
    names = [t["name"] for t in targets]
    base_name = base_target(targets, base, row["name"])
    floors, between, notes = _floors(store, noise_floor, campaign_id, min_effect, noisy)
    measurements = _measurements(store, campaign_id)
    comparison = compare(measurements, names, base_name, report_order({m.test for m in measurements}), chain,
                         min_effect=min_effect, noisy_half_width=noisy, noise_floor=floors, campaign_sd=between)
    notes += _campaign_sd_note(comparison, between)
    labels = target_labels(targets)
    counted = store.instructions(campaign_id)
    order = report_order({m.test for m in measurements} | {r["test"] for r in counted})
    host = json.loads(row["host_json"])
    notes += _interval_notes(comparison, json.loads(row["spec_json"]), between) + _host_notes(host)
    references = comparison.references
    return ReportData(row["name"], comparison, tuple(summarize_groups(comparison, list(GROUPS))), labels,
                      GROUPS, GROUP_TITLES, notes,
                      metrics=tuple(_metrics(store, campaign_id, names, references, order, host.get("cpus") or 1))
                      if metrics else (),
                      instructions=tuple(_instructions(counted, references, order)),
                      show_metrics=metrics, meta=report_meta(store, campaign_id, generated_at))


def _metrics(store: Store, campaign_id: int, targets: list[str], references: dict[str, str], order: list[str],
             ncpu: int):
    cells: dict = {}
    for r in store.runs(campaign_id):
        if "warm" in r["test"] or r["status"] != "ok" or not r["hardware_json"]:
            continue
        cells.setdefault((r["test"], r["threads"]), {}).setdefault(r["target"], []).append(
            (json.loads(r["hardware_json"]), r["value"]))
    return metrics_rows(cells, targets, references, order, ncpu)


def _instructions(counted, references: dict[str, str], order: list[str]):
    counts = {(r["test"], r["target"]): (EventCost(r["ir_per_event"], json.loads(r["self_json"]),
                                                   json.loads(r["inclusive_json"])), r["spread_pct"])
              for r in counted}
    return instruction_rows(counts, references, order)


def _interval_notes(comparison, spec: dict, between: dict[str, tuple[float, int]]) -> tuple[str, ...]:
    """Say when the rQPS intervals do not include what each server start draws, or what each
    campaign draws (docs/noise.md)."""
    # a calibration's between-campaign sd holds what a start draws as well
    methods = {e.method for row in comparison.rows for e in row.estimates.values()} - set(between)
    if any(m.startswith("paired turns") and "repeats" not in m for m in methods):
        return ("intervals: one start of each server per test; the offset a start draws (up to ~2% on small "
                'VMs) is not in them: repeats >= 3 with restart = "repeat" or "reload" put it in',)
    if spec.get("restart") == "never" and spec.get("repeats", 1) > 1 and methods:
        return ('intervals: restart = "never", so all repeats ran on one start of each server and the offset a '
                "start draws is not in them",)
    if methods & {OVER_REPEATS, CROSSOVER} and not spec.get("calibration"):
        return ("intervals: over this campaign's server starts only; the offset a whole campaign draws (an sd of "
                "about 0.5% on small VMs) is not in them: run `dbdrift calibrate` with this campaign's file three "
                "times or more, at different times, and reports put it in",)
    return ()


def _host_notes(host: dict) -> tuple[str, ...]:
    placed = (f"cpus: {Placement.from_dict(host['placement']).describe()}",) if "placement" in host else ()
    return placed + tuple(f"host warning: {w['message']} (hint: {w['hint']})" for w in host.get("warnings", []))


def _measurements(store: Store, campaign_id: int) -> list[Measurement]:
    table_rows = json.loads(store.campaign(campaign_id)["spec_json"]).get("rows", 0)
    return [measurement(store, r, table_rows) for r in store.runs(campaign_id) if "warm" not in r["test"]]


def _floors(store: Store, choice: str, campaign_id: int, min_effect: float,
            noisy: float) -> tuple[dict[str, float], dict[str, tuple[float, int]], tuple[str, ...]]:
    """Per-test A/A noise floors from the newest calibration campaign (or the one named), the
    between-campaign sd per interval method from every calibration campaign of the store (or
    the one named), and a note saying which."""
    if choice == "none":
        return {}, {}, ()
    if choice == "auto":
        aa_ids = [i for i in store.calibration_ids() if i != campaign_id]
    else:
        named = store.latest_campaign_id(choice)
        if named is None:
            raise UserError(f"--noise-floor {choice}: no such campaign in {store.path}",
                            "run `dbdrift calibrate CAMPAIGN.toml` first, or pass --noise-floor none")
        aa_ids = [named] if named != campaign_id else []
    if not aa_ids:
        return {}, {}, ()
    comparisons = []
    for aa_id in aa_ids:
        names = [t["name"] for t in store.targets(aa_id)]
        measurements = _measurements(store, aa_id)
        comparisons.append(compare(measurements, names, names[0], sorted({m.test for m in measurements}),
                                   min_effect=min_effect, noisy_half_width=noisy))
    floors = noise_floor(comparisons[0])
    aa = store.campaign(aa_ids[0])
    return floors, campaign_sd(comparisons), (
        f"noise floor: A/A campaign {aa['name']} (#{aa_ids[0]}, {aa['created_at']}) for {len(floors)} tests",)


def _campaign_sd_note(comparison, between: dict[str, tuple[float, int]]) -> tuple[str, ...]:
    """Say by how much the intervals were widened for what a whole campaign draws, or that
    the calibration could not say it for the way these intervals were estimated."""
    methods = {e.method for row in comparison.rows for e in row.estimates.values() if e.lower is not None}
    used = sorted(m for m in methods if m in between)
    notes = tuple(f"intervals ({m}) include a between-campaign sd of {between[m][0]:.2%} measured on "
                  f"{between[m][1]} A/A calibration campaign(s)" for m in used)
    few = min((between[m][1] for m in used), default=FEW_CALIBRATIONS)
    if few < FEW_CALIBRATIONS:
        notes += (f"a between-campaign sd from {few} calibration(s) is uncertain (each campaign draws one offset; "
                  f"it settles after about {FEW_CALIBRATIONS}): run `dbdrift calibrate` with this campaign's file "
                  "again at other times",)
    if between and methods - set(used):
        notes += (f"intervals ({', '.join(sorted(methods - set(used)))}) have no between-campaign part: no A/A "
                  "calibration was estimated that way; calibrate with this campaign's repeats and restart",)
    return notes


def measurement(store: Store, run, table_rows: int) -> Measurement:
    """A stored run with its per-interval throughput (QPS, or Krps for scan) and host steal."""
    intervals = []
    for iv in store.intervals(run["id"]):
        seconds = iv["end_s"] - iv["start_s"]
        if seconds <= 0:
            continue
        if run["metric"] == "krps":
            value = scan_krps(table_rows, iv["events"], seconds, run["threads"])
        else:
            value = iv["statements"] / seconds
        intervals.append(IntervalSample(value, seconds, iv["steal_pct"], iv["round"]))
    warnings = tuple(w["message"] for w in json.loads(run["warnings_json"] or "[]"))
    note = ""
    if run["status"] == "skipped":
        note = run["error"] or "skipped"  # "skipped: server died"
    elif run["status"] != "ok":
        note = run["status"]
        if run["error"]:
            warnings += (f"{run['status']}: {run['error'][:160]}",)
    return Measurement(run["test"], run["test_group"], run["target"], run["threads"], run["value"], run["metric"],
                       run["status"], run["repeat"], tuple(intervals), warnings, note)


def write_flamegraphs(store: Store, campaign: str | None, data: ReportData, directory: Path) -> list[Path]:
    """Per (test, threads, target): the stacks of all its runs merged, as SVG and folded text;
    per compared target also a differential SVG against its reference."""
    campaign_id = store.latest_campaign_id(campaign)
    merged: dict[tuple[str, int, str], dict[str, int]] = {}
    for r in store.runs(campaign_id):
        if r["folded_json"] and "warm" not in r["test"]:
            stacks = merged.setdefault((r["test"], r["threads"], r["target"]), {})
            for stack, count in json.loads(r["folded_json"]).items():
                stacks[stack] = stacks.get(stack, 0) + count
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}", "pass --flamegraphs a writable directory") from None
    references = data.comparison.references
    written = []
    for (test, threads, target), stacks in sorted(merged.items()):
        stem = f"{_file_safe(test)}.x{threads}.{_file_safe(target)}"
        written += [_write(directory / f"{stem}.svg", render_svg(stacks, f"{test} x{threads}: {target}")),
                    _write(directory / f"{stem}.folded", folded_text(stacks))]
        ref = references.get(target)
        if (test, threads, ref) in merged:
            title = f"{test} x{threads}: {target} vs {ref} (red: more samples, blue: fewer)"
            written.append(_write(directory / f"{stem}-vs-{_file_safe(ref)}.diff.svg",
                                  render_diff_svg(merged[(test, threads, ref)], stacks, title)))
    return written


def render_configs(store: Store, campaign_id: int | None, campaign: str | None) -> str:
    """Each target's stored server configuration, headed by its engine, version and source."""
    if campaign_id is None:
        raise no_campaign(store, campaign)
    parts = []
    for t in store.targets(campaign_id):
        server = json.loads(t["server_json"] or "{}")
        install = json.loads(t["install_json"] or "{}")
        head = (f"# ===== target {t['name']}: {t['engine']} "
                f"{server.get('version', install.get('version', '?'))} ({install.get('source', '?')})")
        text = server.get("config_text")
        parts.append(head + "\n" + (text.rstrip("\n") + "\n" if text else
                                    "# no configuration stored: its server never started\n"))
    return "\n".join(parts)


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def render(data: ReportData, fmt: str, color: bool = False) -> str:
    if fmt == "markdown":
        return render_markdown(data)
    if fmt == "csv":
        return render_csv(data)
    if fmt == "json":
        return render_json(data)
    if fmt == "html":
        return render_html(data)
    return render_text(data, color=color)


def use_color(choice: str) -> bool:
    """always, never, or auto: on a terminal unless NO_COLOR is set (no-color.org)."""
    return choice == "always" or (choice == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


FAIL_ON = ("regression", "not-measured")
FINDING_EXIT = 3  # `--fail-on`: the report found what it was told to fail on


def findings(data: ReportData, kinds: list[str]) -> list[str]:
    """The cells `--fail-on` names: `point-query x1 pg18: regression 0.95 [0.94,0.96]`."""
    found = []
    for row in data.comparison.rows:
        for target in data.comparison.compared:
            verdict = row.verdicts.get(target)
            if verdict == "regression" and "regression" in kinds:
                est = row.estimates.get(target)
                interval = f" [{est.lower:.3f},{est.upper:.3f}]" if est and est.lower is not None else ""
                found.append(f"{row.test} x{row.threads} {target}: regression {row.ratios[target]:.3f}{interval} "
                             f"vs {row.references.get(target)}")
            elif verdict == "not measured" and "not-measured" in kinds:
                found.append(f"{row.test} x{row.threads} {target}: not measured ({row.status(target) or 'failed'})")
    return found


def _fail_on(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",")]
    bad = [k for k in kinds if k not in FAIL_ON]
    if bad:
        raise argparse.ArgumentTypeError(f"{bad[0]!r}: choose from {', '.join(FAIL_ON)} (comma-separated)")
    return kinds


def main(args: argparse.Namespace) -> int:
    if not args.store.exists():
        raise UserError(f"store {args.store} does not exist", "pass --store PATH, or run a campaign first")
    store = Store(args.store)
    try:
        campaign_id = store.latest_campaign_id(args.campaign)
        if args.config:
            sys.stdout.write(render_configs(store, campaign_id, args.campaign))
            return 0
        if campaign_id is not None and ibench_report.is_ibench(store, campaign_id) and args.fail_on:
            raise UserError(f"--fail-on applies to sysbench campaigns; {store.campaign(campaign_id)['name']} is an "
                            "Insert Benchmark", "leave --fail-on out for this campaign", exit_code=2)
        if campaign_id is not None and ibench_report.is_ibench(store, campaign_id):
            sys.stdout.write(ibench_report.render(store, campaign_id, args.base, args.format))
            return 0
        data = build_report(store, args.campaign, args.base, args.chain, args.min_effect, args.noisy,
                            args.noise_floor, args.metrics)
        if args.flamegraphs:
            written = write_flamegraphs(store, args.campaign, data, args.flamegraphs)
            sys.stderr.write(f"wrote {len(written)} flamegraph files to {args.flamegraphs}\n" if written else
                             "no flamegraphs stored: run the campaign with `dbdrift run --flamegraph`\n")
    finally:
        store.close()
    sys.stdout.write(render(data, args.format, use_color(args.color)))
    if args.fail_on:
        found = findings(data, args.fail_on)
        for line in found:
            sys.stderr.write(f"fail-on: {line}\n")
        if found:
            sys.stderr.write(f"fail-on: {len(found)} finding(s) of {','.join(args.fail_on)}; exit {FINDING_EXIT}\n")
            return FINDING_EXIT
    return 0
