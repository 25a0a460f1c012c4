"""`dbdrift system check`: print host facts, what perf and valgrind can measure here, and
warnings with a concrete fix each. Advice only: exits 0 even with warnings, changes nothing."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict

from dbdrift.cli import options
from dbdrift.metrics import host, perf


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check",), help="check: host facts, perf support and warnings")
    options.add_format(parser, ("text", "json"), "text: facts, then warnings with hints; json: the facts, warnings, "
                                                 "perf probe and valgrind path")
    parser.add_argument("--steal-window", type=options.duration("--steal-window", positive=False), default="1s",
                        metavar="DURATION",
                        help="how long to watch CPU steal in /proc/stat (default: 1s; 0 skips it)")


def main(args: argparse.Namespace) -> int:
    facts = host.host_facts(steal_window_s=args.steal_window)
    report = {"facts": facts, "warnings": host.check(facts), "perf": asdict(perf.probe()),
              "valgrind": shutil.which("valgrind")}
    if args.format == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0


def render_text(report: dict) -> str:
    lines = [f"{name:<13} {value}" for name, value in fact_rows(report)]
    for w in report["warnings"]:
        lines += [f"warning: {w['message']}", f"  hint: {w['hint']}"]
    if not report["warnings"]:
        lines.append("no warnings")
    return "\n".join(lines) + "\n"


def fact_rows(report: dict) -> list[tuple[str, str]]:
    f, p = report["facts"], report["perf"]
    return [
        ("cpu", f"{known(f['cpu_model'])}, {known(f['cores'])} logical / {known(f['physical_cores'])} physical cores"
                + (", virtualized (hypervisor flag)" if f["virtualized"] else "")),
        ("memory", size(f["memory_bytes"])),
        ("os", f"{known(f['os'])}, kernel {known(f['kernel'])}"),
        ("governor", f"{f['governor']} ({f['cpufreq_driver']})" if f["governor"] else "no cpufreq (typical of VMs)"),
        ("turbo", "unknown (no intel_pstate/no_turbo or cpufreq/boost)" if f["turbo"] is None
         else f"{'on' if f['turbo'] else 'off'} ({f['turbo_knob']})"),
        ("THP", known(f["thp"])),
        ("swap", "none" if not f["swap_total_bytes"] else f"{size(f['swap_used_bytes'])} used of "
                                                          f"{size(f['swap_total_bytes'])}"),
        ("load (1 min)", known(f["load_1min"])),
        ("cpu MHz", f"{min(f['cpu_mhz']):.0f}-{max(f['cpu_mhz']):.0f}" if f["cpu_mhz"] else "unknown"),
        ("steal", "not measured" if f["steal_pct"] is None else f"{f['steal_pct']:.1f}% over {f['steal_window_s']:g} s"),
        ("busy", "not measured" if f["busy_pct"] is None else f"{f['busy_pct']:.1f}% of all CPUs over "
                                                               f"{f['steal_window_s']:g} s"),
        ("perf", f"hardware counters {'yes' if p['hardware_counters'] else 'no'}, software events "
                 f"{'yes' if p['software_events'] else 'no'}: {p['reason']}"),
        ("valgrind", f"yes ({report['valgrind']}): callgrind can count instructions" if report["valgrind"]
         else "no: no instruction counts without hardware counters (apt-get install valgrind)"),
    ]


def known(value: object) -> str:
    return "unknown" if value is None else str(value)


def size(n_bytes: int | None) -> str:
    return "unknown" if n_bytes is None else f"{n_bytes / 2**30:.1f} GiB"
