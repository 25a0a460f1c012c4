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

    .venv/bin/python bench/starts.py [--starts 8] [--seconds 10] [--tests point-query insert]
                                     [--factors default no-aslr ...] [--version 17.10]
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

from dbdrift.analysis.noise import Z975  # noqa: E402
from dbdrift.plan import rounds  # noqa: E402
from dbdrift.store.store import Store  # noqa: E402

FACTORS = ("default", "no-aslr", "no-aslr-env", "unpinned", "drop-caches", "huge-pages")
HUGE_PAGES = 1100  # 2 MiB pages: shared_buffers of 1 GB and the rest of the shared memory


def campaign_toml(name: str, factor: str, args) -> str:
    settings = '{ shared_buffers = "1GB"' + (', huge_pages = "on"' if factor == "huge-pages" else "") + " }"
    return "\n".join([
        f'name = "{name}"', "tables = 1", f"rows = {args.rows}", "threads = [1]", "warmup_s = 2",
        f"read_s = {args.seconds}", f"write_s = {args.seconds}", 'order = "sequential"', "settle_s = 0",
        "warm_runs = false", f"tests = {args.tests!r}".replace("'", '"'),
        *(['cpus = "shared"'] if factor == "unpinned" else []),
        "[[targets]]", 'name = "a"', f'version = "{args.version}"', f"settings = {settings}",
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
    args = parser.parse_args()
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
    s = Store(store)
    qps: dict[tuple[str, str], list[float]] = {}
    for factor, campaigns in names.items():
        for name in campaigns:
            for run in s.runs(s.latest_campaign_id(name)):
                if run["status"] == "ok" and run["value"]:
                    qps.setdefault((factor, run["test"]), []).append(run["value"])
    s.close()
    out(f"\n{'test':<14} {'factor':<13} {'starts':>6} {'mean QPS':>9}  {'sd of ln(QPS) [95%]':<24} vs default")
    for test in args.tests:
        base = qps.get(("default", test))
        for factor in args.factors:
            values = qps.get((factor, test), [])
            if len(values) < 3:
                out(f"{test:<14} {factor:<13} {len(values):6d}  too few starts")
                continue
            sd, lo, hi = spread(values)
            ratio = f"{sd / spread(base)[0]:.2f}x" if base and len(base) >= 3 and factor != "default" else ""
            out(f"{test:<14} {factor:<13} {len(values):6d} {statistics.fmean(values):9.0f}  "
                f"{sd:.2%} [{lo:.2%}, {hi:.2%}]{'':<4} {ratio}")
    return finish(out, store)


if __name__ == "__main__":
    sys.exit(main())
