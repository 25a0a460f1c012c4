"""Flamegraph areas (analysis/flame_areas.py): the share of client, server foreground and
background, and the foreground's statement kinds, from folded stacks of both engines."""
import pytest

from dbdrift.analysis.flame_areas import CLIENT, area_of, kind_of, merged, shallow, shares, table

PG_BACKEND = "postgres;main;PostmasterMain;ServerLoop;BackendStartup;PostgresMain"
PG_EXEC = PG_BACKEND + ";exec_execute_message;PortalRun;PortalRunMulti;ProcessQuery;standard_ExecutorRun;ExecutePlan"
MY_CONN = "connection;start_thread;handle_connection;do_command;dispatch_command(THD*, COM_DATA const*, enum_server_command)"
MY_EXEC = MY_CONN + ";dispatch_sql_command(THD*, Parser_state*);mysql_execute_command(THD*, bool)"


def test_a_postgres_backend_forked_by_the_postmaster_is_foreground_and_its_autovacuum_background():
    assert area_of((PG_EXEC + ";ExecModifyTable;ExecInsert").split(";")) == "db-fg"
    autovacuum = "postgres;main;PostmasterMain;ServerLoop;StartAutoVacWorker;AutoVacWorkerMain;do_autovacuum;heap_vacuum_rel"
    assert area_of(autovacuum.split(";")) == "db-bg"
    assert area_of("postgres;main;PostmasterMain;ServerLoop;WaitEventSetWait".split(";")) == "db-bg"


def test_an_innodb_connection_that_writes_the_redo_log_is_foreground_and_the_page_cleaner_background():
    commit = MY_EXEC + ";trans_commit_stmt(THD*, bool);ha_commit_trans(THD*, bool, bool);log_write_up_to(unsigned long, bool)"
    assert area_of(commit.split(";")) == "db-fg" and kind_of(commit.split(";")[1:]) == "commit"
    cleaner = "ib_pg_flush_co;start_thread;buf_flush_page_cleaner_coordinator;pc_flush_slot"
    assert area_of(cleaner.split(";")) == "db-bg"


def test_the_drivers_stacks_are_the_client_and_a_stack_of_no_known_frame_is_other():
    assert area_of([CLIENT, "main", "tokio::run"]) == "client"
    assert area_of(["postgres", "[unknown]"]) == "other"


@pytest.mark.parametrize("leaf, kind", [
    (";ExecModifyTable;ExecUpdate;ExecInsertIndexTuples;btinsert", "update"),  # an UPDATE inserting index entries
    (";ExecModifyTable;ExecInsert;heap_insert", "insert"),
    (";ExecModifyTable;ExecScan;IndexNext", "select"),  # the read that finds the rows to change
    (";ExecSeqScan", "select"),
])
def test_the_outermost_dml_frame_names_a_postgres_statements_kind(leaf, kind):
    assert kind_of((PG_EXEC + leaf).split(";")[1:]) == kind


@pytest.mark.parametrize("frames, kind", [
    (PG_BACKEND + ";finish_xact_command;CommitTransactionCommand;RecordTransactionCommit;XLogFlush", "commit"),
    (PG_BACKEND + ";exec_parse_message;pg_parse_query;raw_parser", "parse"),
    (PG_BACKEND + ";ReadCommand;SocketBackend;pq_getbyte;secure_read", "network"),
    (PG_BACKEND + ";StartTransactionCommand", "fg-other"),
    (MY_EXEC + ";Sql_cmd_dml::execute(THD*);Sql_cmd_update::execute_inner(THD*);ha_innobase::update_row", "update"),
    (MY_EXEC + ";Sql_cmd_dml::execute(THD*);Query_expression::execute(THD*);row_search_mvcc", "select"),
    (MY_CONN + ";my_net_read(NET*);vio_read", "network"),
    (MY_CONN + ";dispatch_sql_command(THD*, Parser_state*);parse_sql(THD*, Parser_state*, Object_creation_ctx*)", "parse"),
])
def test_commit_parse_network_and_reads_are_named_by_their_frames_in_both_engines(frames, kind):
    assert kind_of(frames.split(";")[1:]) == kind


def test_shares_are_of_all_samples_and_the_kinds_add_up_to_the_foreground():
    folded = {PG_EXEC + ";ExecModifyTable;ExecInsert": 30, PG_EXEC + ";ExecSeqScan": 10,
              "postgres;main;PostmasterMain;ServerLoop;CheckpointerMain": 20, f"{CLIENT};main": 40}
    s = shares(folded)
    assert s.samples == 100
    assert s.areas == {"client": 0.4, "db-fg": 0.4, "db-bg": 0.2, "other": 0.0}
    assert (s.kinds["insert"], s.kinds["select"]) == (0.3, 0.1) and sum(s.kinds.values()) == pytest.approx(0.4)
    assert shares({}) is None


def test_the_table_puts_the_base_column_first_and_ends_with_the_samples():
    base, new = shares({f"{CLIENT};main": 1, PG_EXEC: 3}), shares({PG_EXEC: 1})
    rows = table([("base", base), ("new", new)])
    assert rows[0] == ["client", "25.0", "0.0"] and rows[1] == ["db-fg", "75.0", "100.0"]
    assert ["  select", "75.0", "100.0"] in rows and rows[-1] == ["samples", "4", "1"]


def test_repeats_merge_by_adding_their_samples():
    assert merged([{"a;b": 1}, None, {"a;b": 2, "a;c": 1}]) == {"a;b": 3, "a;c": 1}


def test_a_graph_of_mostly_unknown_frames_is_named_as_unreadable():
    deep, flat = shares({PG_EXEC: 3, "postgres;base_yyparse": 1}), shares({"postgres;base_yyparse": 3, PG_EXEC: 1})
    assert shallow([("deep", deep), ("flat", flat)]) == ["flat"]
