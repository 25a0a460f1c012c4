"""A host check (`dbdrift system check`: facts, perf support, valgrind, warnings) as text; no I/O."""
from __future__ import annotations

from dbdrift.model import JsonObject


def render_text(report: JsonObject) -> str:
    lines = [f"{name:<13} {value}" for name, value in fact_rows(report)]
    for w in report["warnings"]:
        lines += [f"warning: {w['message']}", f"  hint: {w['hint']}"]
    if not report["warnings"]:
        lines.append("no warnings")
    return "\n".join(lines) + "\n"


def fact_rows(report: JsonObject) -> list[tuple[str, str]]:
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
        ("fsync", fsync_text(report.get("fsync"))),
    ]


def fsync_text(flush: JsonObject | None) -> str:
    """"45 µs median, 74 µs p99 (8 KB write + fdatasync x 2,000 in /var/tmp/dbdrift-0)"."""
    if not flush:
        return "not measured (the work directory cannot be written)"
    return (f"{flush['p50_us']:,.0f} µs median, {flush['p99_us']:,.0f} µs p99 ({flush['method']} x {flush['ops']:,} "
            f"in {flush['path']})")


def known(value: object) -> str:
    return "unknown" if value is None else str(value)


def size(n_bytes: int | None) -> str:
    return "unknown" if n_bytes is None else f"{n_bytes / 2**30:.1f} GiB"
