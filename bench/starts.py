"""What moves the start-to-start spread: fresh servers of one version, one after the other, one
factor changed at a time.

Each start is a campaign of its own through the dbdrift CLI: a new server (initdb, start, load,
one run per test, stop). Per factor and test it prints the spread over starts: the sd of
ln(QPS) with its 95% interval (chi-square), and its ratio to the default's. The factors:
  default       as dbdrift runs servers (pinned apart from the driver, ASLR on)
  no-aslr       dbdrift (so its servers and driver) under `setarch -R`: the same address-space
                layout at every start
  no-aslr-env   as no-aslr, with an environment variable of random length (0-4 KiB) per
                start: does the stack's place still move results once layout is fixed?
  unpinned      cpus = "shared": the scheduler places the driver and the backends
  drop-caches   the page cache dropped before every start (cold binaries, libraries, data files)
  huge-pages    huge_pages = "on" (vm.nr_hugepages set for the run, restored after)
All starts use shared_buffers = 1GB. Factors take turns start by start, in a rotating order
(plan/rounds.repeat_order), so drift over the hour lands on all of them alike.

With --turns it measures what an rQPS interval over starts sees instead: per factor, A/A
campaigns of two servers of the version in turns, every repeat on a new start of both
(restart = "repeat"); host noise hits both alike, so what is left is the offset each start
draws. Per factor and test: the sd of that offset (between), of one start's turns (within)
and the ratio to the default's, from analysis/planning.noise_of with the campaigns pooled.
Factors: default, no-aslr, unpinned, huge-pages (drop-caches and the environment size act
before the first start only, so they have no place here).

    .venv/bin/python bench/starts.py [--starts 8] [--seconds 10] [--tests point-query insert]
                                     [--factors default no-aslr ...] [--version 17.10]
    .venv/bin/python bench/starts.py --turns [--starts 4] [--campaigns 2] [--seconds 5]
    .venv/bin/python bench/starts.py --analyse STORE.db       (the sequential table again)
"""
from __future__ import annotations

import math
import os
import platform
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT_DIR, campaign_output, campaign_parser, dbdrift_cli, finish, progress  # noqa: E402

from dbdrift.analysis import planning  # noqa: E402
from dbdrift.analysis.noise import Z975, run_value  # noqa: E402
from dbdrift.results.measurements import measurements_of  # noqa: E402
from dbdrift.plan import rounds  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402
from dbdrift.workloads.sysbench.results import MICROBENCHMARKS  # noqa: E402

FACTORS = ("default", "no-aslr", "no-aslr-env", "unpinned", "drop-caches", "huge-pages")
TURNS_FACTORS = ("default", "no-aslr", "unpinned", "huge-pages")
HUGE_PAGES = 1100  # 2 MiB pages: shared_buffers of 1 GB and the rest of the shared memory


def campaign_toml(name: str, factor: str, args) -> str:
    settings = '{ shared_buffers = "1GB"' + (', huge_pages = "on"' if factor == "huge-pages" else "") + " }"
    order = ['order = "turns"', f"repeats = {args.starts}", 'restart = "repeat"'] if args.turns else \
        ['order = "sequential"']
    targets = ("a", "a2") if args.turns else ("a",)
    return "\n".join([
        f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]", "warmup_s = 2",
        f"read_s = {args.seconds}", f"write_s = {args.seconds}", *order, "settle_s = 0",
        "warm_runs = false", f"tests = {args.tests!r}".replace("'", '"'),
        *(['cpus = "shared"'] if factor == "unpinned" else []),
        *[line for t in targets for line in ("[[targets]]", f'name = "{t}"', f'version = "{args.version}"',
                                              f"settings = {settings}")],
    ]) + "\n"


def one_start(store: Path, name: str, factor: str, args, rng: random.Random) -> None:
    path = OUT_DIR / f"{name}.toml"
    path.write_text(campaign_toml(name, factor, args))
    prefix: tuple[str, ...] = ()
    env = dict(os.environ)
    if factor.startswith("no-aslr"):
        prefix = ("setarch", platform.machine(), "-R")
    if factor == "no-aslr-env":
        env["DBDRIFT_BENCH_PAD"] = "x" * rng.randrange(0, 4096)
    if factor == "drop-caches":
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    result = dbdrift_cli("run", str(path), "--store", str(store), "--no-report", prefix=prefix, env=env)
    if result.returncode != 0:
        raise SystemExit(f"error: start {name} failed (exit {result.returncode}): {result.stderr[-2000:]}")


def chi2(p: float, k: int) -> float:
    """The chi-square quantile (Wilson-Hilferty; within about 1% from 3 degrees of freedom)."""
    z = Z975 if p > 0.5 else -Z975
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


def spread(values: list[float]) -> tuple[float, float, float]:
    """sd of ln(values) and its 95% interval."""
    logs = [math.log(v) for v in values]
    sd, k = statistics.stdev(logs), len(logs) - 1
    return sd, sd * math.sqrt(k / chi2(0.975, k)), sd * math.sqrt(k / chi2(0.025, k))


def main() -> int:
    parser = campaign_parser(__doc__)
    parser.add_argument("--starts", type=int, default=8, help="fresh servers per factor")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per test per start")
    parser.add_argument("--tests", nargs="+", default=["point-query", "insert"])
    parser.add_argument("--factors", nargs="+", choices=FACTORS, default=list(FACTORS))
    parser.add_argument("--version", default="17.10")
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--turns", action="store_true", help="A/A in turns: the offset each start draws")
    parser.add_argument("--campaigns", type=int, default=2, help="--turns: campaigns per factor")
    parser.add_argument("--analyse", type=Path, metavar="STORE", help="print the sequential table of a store it wrote")
    args = parser.parse_args()
    if args.analyse:
        return analyse(args.analyse, args.tests)
    if args.turns:
        return in_turns(args)
    out, stamp, store = campaign_output("starts")
    out(f"start-to-start spread: postgres {args.version}, {args.rows:,} rows, {args.starts} starts per factor, "
        f"{args.seconds:g} s per test; store {store}")
    rng = random.Random(7)
    hugepages = Path("/proc/sys/vm/nr_hugepages")
    before = hugepages.read_text().strip()
    if "huge-pages" in args.factors:
        hugepages.write_text(f"{HUGE_PAGES}\n")
    names: dict[str, list[str]] = {f: [] for f in args.factors}
    try:
        total = args.starts * len(args.factors)
        for i in range(args.starts):
            for k in rounds.repeat_order(i, len(args.factors)):
                factor = args.factors[k]
                name = f"starts-{stamp}-{factor}-{i}"
                progress(f"start {sum(map(len, names.values())) + 1}/{total}: {factor}")
                one_start(store, name, factor, args, rng)
                names[factor].append(name)
    finally:
        hugepages.write_text(f"{before}\n")
    table(out, store, names, args.tests)
    return finish(out, store)


def table(out, store: Path, names: dict[str, list[str]], tests: list[str]) -> None:
    """Per test and factor: the spread of the starts' throughput as stored, and of their calm
    throughput (intervals in seconds of more than 10% host steal left out, as reports do;
    a start with fewer than half its intervals calm is left out)."""
    s = Store(store)
    qps: dict[tuple[str, str], list[float]] = {}
    calm: dict[tuple[str, str], list[float]] = {}
    for factor, campaigns in names.items():
        for name in campaigns:
            for m in measurements_of(s, MICROBENCHMARKS, s.latest_campaign_id(name)):
                if m.status != "ok" or not m.value:
                    continue
                qps.setdefault((factor, m.test), []).append(m.value)
                value, dropped = run_value(m.sample())
                if value and dropped <= len(m.intervals) / 2:
                    calm.setdefault((factor, m.test), []).append(value)
    s.close()
    out(f"\n{'test':<14} {'factor':<13} {'starts':>6} {'mean QPS':>9}  {'sd of ln(QPS) [95%]':<24} vs default"
        f"  {'calm':>5} {'sd calm':>8}")
    for test in tests:
        base = qps.get(("default", test))
        for factor in names:
            values, quiet = qps.get((factor, test), []), calm.get((factor, test), [])
            if len(values) < 3:
                out(f"{test:<14} {factor:<13} {len(values):6d}  too few starts")
                continue
            sd, lo, hi = spread(values)
            ratio = f"{sd / spread(base)[0]:.2f}x" if base and len(base) >= 3 and factor != "default" else ""
            quiet_sd = f"{spread(quiet)[0]:8.2%}" if len(quiet) >= 3 else "       -"
            out(f"{test:<14} {factor:<13} {len(values):6d} {statistics.fmean(values):9.0f}  "
                f"{sd:.2%} [{lo:.2%}, {hi:.2%}]{'':<4} {ratio:<10} {len(quiet):5d} {quiet_sd}")


def analyse(store: Path, tests: list[str]) -> int:
    """The sequential table again, from a store the script wrote (campaigns starts-STAMP-FACTOR-I)."""
    out, _, _ = campaign_output("starts", store)
    s = Store(store)
    found = [row["name"] for row in s.db.execute("SELECT name FROM campaigns ORDER BY id")]
    s.close()
    names: dict[str, list[str]] = {}
    for name in found:
        factor = name.split("-", 2)[2].rsplit("-", 1)[0]
        names.setdefault(factor, []).append(name)
    out(f"start-to-start spread from {store}: {', '.join(f'{f} {len(n)}' for f, n in names.items())} starts")
    table(out, store, names, tests)
    return finish(out, store)


def in_turns(args) -> int:
    factors = [f for f in args.factors if f in TURNS_FACTORS] if args.factors != list(FACTORS) else list(TURNS_FACTORS)
    out, stamp, store = campaign_output("starts-turns")
    out(f"start offsets in turns: postgres {args.version} A/A, {args.rows:,} rows, {args.campaigns} campaigns of "
        f"{args.starts} starts per factor, {args.seconds:g} s per test; store {store}")
    hugepages = Path("/proc/sys/vm/nr_hugepages")
    before = hugepages.read_text().strip()
    if "huge-pages" in factors:
        hugepages.write_text(f"{2 * HUGE_PAGES}\n")
    names: dict[str, list[str]] = {f: [] for f in factors}
    try:
        for i in range(args.campaigns):
            for k in rounds.repeat_order(i, len(factors)):
                factor = factors[k]
                name = f"starts-turns-{stamp}-{factor}-{i}"
                progress(f"campaign {sum(map(len, names.values())) + 1}/{args.campaigns * len(factors)}: {factor}")
                one_start(store, name, factor, args, random.Random(i))
                names[factor].append(name)
    finally:
        hugepages.write_text(f"{before}\n")
    s = Store(store)
    noise: dict[tuple[str, str], list] = {}
    for factor, campaigns in names.items():
        for name in campaigns:
            cid = s.latest_campaign_id(name)
            found = planning.noise_of(measurements_of(s, MICROBENCHMARKS, cid), "a", {t: args.seconds for t in args.tests})
            for (test, _), n in found.items():
                noise.setdefault((factor, test), []).append(n)
    s.close()
    out(f"\n{'test':<14} {'factor':<11} {'starts':>6}  {'between sd':>10}  {'within sd':>9}  {'one start':>9}  vs default")
    for test in args.tests:
        base = pooled(noise.get(("default", test), []))
        for factor in factors:
            found = pooled(noise.get((factor, test), []))
            if found is None:
                out(f"{test:<14} {factor:<11} too few starts")
                continue
            starts, between, within = found
            ratio = f"{math.sqrt(between + within) / math.sqrt(base[1] + base[2]):.2f}x" \
                if base and factor != "default" else ""
            out(f"{test:<14} {factor:<11} {starts:6d}  {math.sqrt(between):10.2%}  {math.sqrt(within):9.2%}  "
                f"{math.sqrt(between + within):9.2%}  {ratio}")
    out("between: sd of the ln rQPS offset a start draws (pooled over the factor's campaigns); within: sd of one "
        "start's ln rQPS from its own turns; one start: both")
    return finish(out, store)


def pooled(found: list) -> tuple[int, float, float] | None:
    """(starts, between, within) of a factor's campaigns, each weighted by its starts less one."""
    if not found:
        return None
    df = sum(n.starts - 1 for n in found)
    between = sum((n.starts - 1) * n.between for n in found) / df
    within = sum((n.starts - 1) * n.within for n in found) / df
    return sum(n.starts for n in found), between, within


if __name__ == "__main__":
    sys.exit(main())
