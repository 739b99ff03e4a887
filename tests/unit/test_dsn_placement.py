"""--dsn's rules (workloads/engine.py, engine_mariadb.py, cli/bench/command.py): on a user's server MariaDB places
only its own tables, per table with DATA DIRECTORY (the clause quoted, sysbench's tables through a
wrapper of the stock Lua test, tpcc's schema with the clause on every table, the files read back and
checked); every other role, PostgreSQL's placement and the managed server's own options are refused
before anything starts, with the reason."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from conftest import assert_clean_error, call_main
from dbtier.cli.settings_options import add_engine_options, engine_options
from dbtier.core.errors import DbtierError
from dbtier.workloads.parsers.sysbench import WORKLOADS, lua_string, sysbench_args, table_options_script, MysqlTarget
from dbtier.workloads.engine_mariadb import MariaDBEngine
from dbtier.workloads.engine_postgres import PostgresEngine
from dbtier.workloads.settings import EngineOptions
from dbtier.workloads.mariadb import (data_directory_clause, data_directory_failure, local_host, sql_string,
                                      table_placement)
from dbtier.workloads.mariadb_tpcc import TABLE_COLUMNS, _sql, with_table_options

DSN = "mysql://bench@127.0.0.1:3306/"


# ------------------------------------------------------------------ placement rules
def test_mariadb_places_only_data_with_dsn_and_says_why_not_the_rest():
    MariaDBEngine.check_dsn_placement({"data": "/srv/fast"})
    for role in ("redo", "undo", "temp", "binlog"):
        with pytest.raises(DbtierError) as e:
            MariaDBEngine.check_dsn_placement({"data": "/srv/fast", role: "/srv/x"})
        assert f"--place {role}=/srv/x with --dsn" in e.value.message
        assert "server-wide settings" in e.value.message and "never changes on your server" in e.value.message
        assert "data" in e.value.hint


@pytest.mark.parametrize("d", ["srv/fast", "./x", "~/x", "/srv/a\nb"])
def test_data_directory_must_be_absolute(d):
    with pytest.raises(DbtierError) as e:
        MariaDBEngine.check_dsn_placement({"data": d})
    assert "not an absolute path" in e.value.message and "server resolves" in e.value.hint


def test_postgres_places_nothing_on_a_dsn_server():
    assert PostgresEngine.dsn_roles == ()
    with pytest.raises(DbtierError) as e:
        PostgresEngine.check_dsn_placement({"data": "/srv/fast"})
    assert "--place data=/srv/fast with --dsn" in e.value.message
    assert "tablespaces" in e.value.message and "leave --dsn out" in e.value.hint


def test_local_hosts():
    assert local_host("127.0.0.1") and local_host("localhost") and local_host("::1") and local_host("127.0.1.1")
    assert not local_host("db1") and not local_host("10.0.0.127")
    assert MariaDBEngine.dsn_is_local(DSN) and not MariaDBEngine.dsn_is_local("mysql://u@db1:3306/")


# ------------------------------------------------------------------ the server's own options
def parsed(cls, *argv: str) -> EngineOptions:
    p = argparse.ArgumentParser()
    add_engine_options(p, cls, "oltp")
    return engine_options(cls, "oltp", p.parse_args(list(argv)))


@pytest.mark.parametrize("argv, want", [
    ((), []),
    (("--buffer-pool-size", "1G"), ["--buffer-pool-size 1G"]),
    (("--flush-log-at-trx-commit", "2", "--doublewrite", "off"), ["--flush-log-at-trx-commit 2", "--doublewrite off"]),
    (("--sync-binlog", "0",), ["--sync-binlog 0"]),
    (("--flush-method", "fsync", "--binlog", "on"), ["--flush-method fsync", "--binlog on"]),
])
def test_mariadb_options_given_are_found_without_a_list(argv, want):
    assert MariaDBEngine.server_options_given(parsed(MariaDBEngine, *argv)) == want


@pytest.mark.parametrize("argv, want", [
    ((), []),
    (("--shared-buffers", "1GB"), ["--shared-buffers 1GB"]),
    (("--synchronous-commit", "off"), ["--synchronous-commit off"]),
    (("--checkpoint-timeout", "30min"), ["--checkpoint-timeout 30min"]),
    (("--max-wal-size", "4GB"), ["--max-wal-size 4GB"]),
])
def test_postgres_options_given(argv, want):
    assert PostgresEngine.server_options_given(parsed(PostgresEngine, *argv)) == want


def test_another_engines_options_in_the_namespace_are_not_this_ones():
    p = argparse.ArgumentParser()            # both engines' options, as `bench oltp` has them
    for cls in (PostgresEngine, MariaDBEngine):
        add_engine_options(p, cls, "oltp")
    ns = p.parse_args(["--buffer-pool-size", "1G"])
    assert PostgresEngine.server_options_given(engine_options(PostgresEngine, "oltp", ns)) == []
    assert MariaDBEngine.server_options_given(engine_options(MariaDBEngine, "oltp", ns)) == ["--buffer-pool-size 1G"]


SHORT = ["bench", "oltp", "--clients", "1", "--duration", "1", "--warmup", "0"]


@pytest.mark.parametrize("engine, dsn, option", [
    ("mariadb", DSN, ["--buffer-pool-size", "1G"]),
    ("mariadb", DSN, ["--flush-log-at-trx-commit", "0"]),
    ("mariadb", DSN, ["--binlog", "on"]),
    ("postgres", "host=db1 dbname=postgres", ["--shared-buffers", "1GB"]),
    ("postgres", "host=db1 dbname=postgres", ["--synchronous-commit", "off"]),
])
def test_cli_refuses_the_managed_servers_options_with_dsn(tmp_path: Path, engine, dsn, option):
    r = call_main(*SHORT, "--engine", engine, "--dsn", dsn, *option, cwd=tmp_path)
    assert r.returncode == 2
    assert_clean_error(r, f"{option[0]} {option[1]} with --dsn", "reads your server's own settings and never "
                       "changes them", "set it on your server")
    assert not list(tmp_path.iterdir())   # refused before a run directory (or anything) was made


@pytest.mark.parametrize("engine, dsn, place, needle", [
    ("mariadb", DSN, "redo=/srv/x", "--place redo=/srv/x with --dsn: redo, undo, temp and binlog are server-wide"),
    ("mariadb", DSN, "data=rel/dir", "--place data=rel/dir with --dsn: not an absolute path"),
    ("mariadb", DSN, "index=/srv/x", "InnoDB keeps a table's indexes"),
    ("postgres", "host=db1 dbname=postgres", "data=/srv/x", "--place data=/srv/x with --dsn: on your server"),
    ("postgres", "host=db1 dbname=postgres", "wal=/srv/x", "--place wal=/srv/x with --dsn"),
])
def test_cli_refuses_placement_a_dsn_server_cannot_take(tmp_path: Path, engine, dsn, place, needle):
    r = call_main(*SHORT, "--engine", engine, "--dsn", dsn, "--place", place, cwd=tmp_path)
    assert r.returncode == 2
    assert_clean_error(r, needle)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("engine, dsn", [("mariadb", DSN), ("postgres", "host=db1 dbname=postgres")])
def test_cli_refuses_the_matrix_with_dsn(tmp_path: Path, engine, dsn):
    r = call_main(*SHORT, "--engine", engine, "--dsn", dsn, "--placement-matrix", "/srv/a,/srv/b", cwd=tmp_path)
    assert_clean_error(r, "--placement-matrix needs the managed cluster, not --dsn")


# ------------------------------------------------------------------ DATA DIRECTORY
@pytest.mark.parametrize("d, want", [
    ("/srv/fast", "DATA DIRECTORY='/srv/fast'"),
    ("/srv/o'brien", "DATA DIRECTORY='/srv/o\\'brien'"),
    ("/srv/a\\b", "DATA DIRECTORY='/srv/a\\\\b'"),
])
def test_data_directory_clause_quotes_the_path(d, want):
    assert data_directory_clause(d) == want
    assert sql_string("x") == "'x'"


def test_wrapper_lua_sets_the_global_then_requires_the_stock_test():
    for workload, test in WORKLOADS.items():
        lua = table_options_script(workload, "DATA DIRECTORY='/srv/x'")
        lines = [x for x in lua.splitlines() if not x.startswith("--")]
        # the global first: oltp_common's create_table reads it when prepare runs
        assert lines == ["mysql_table_options = \"DATA DIRECTORY='/srv/x'\"", f'require("{test}")']
    with pytest.raises(ValueError):
        table_options_script("tpcb", "x")


def test_lua_string_escapes():
    assert lua_string('a"b\\c') == '"a\\"b\\\\c"'
    assert lua_string("a\nb\x7f") == '"a\\010b\\127"'
    assert lua_string("/srv/é") == '"/srv/é"'     # bytes pass through a Lua string as they are


def test_sysbench_runs_the_wrapper_script_instead_of_the_test_name():
    t = MysqlTarget(user="u", db="d", socket="/s")
    a = sysbench_args("sysbench-rw", "prepare", t, tables=4, table_size=10, script="/w/prep.lua")
    assert a[1] == "/w/prep.lua" and "oltp_read_write" not in a
    assert sysbench_args("sysbench-rw", "prepare", t, tables=4, table_size=10)[1] == "oltp_read_write"


def test_tpcc_schema_gets_the_clause_on_every_table():
    schema = _sql("tpcc_mysql_schema.sql")
    assert with_table_options(schema, "") == schema
    clause = data_directory_clause("/srv/a\\b")
    out = with_table_options(schema, clause)
    creates = re.findall(r"^CREATE TABLE (\w+).*?;", out, re.M | re.S)
    assert set(creates) == set(TABLE_COLUMNS) | {"tpcc_c_last"}
    statements = [s for s in out.split(";") if "CREATE TABLE" in s]
    assert len(statements) == len(creates) and all(clause in s for s in statements)
    with pytest.raises(ValueError):
        with_table_options("CREATE TABLE t (a int);", clause)


def test_a_refused_create_table_is_said_in_words():
    client = ("ERROR 1005 (HY000) at line 1: Can't create table `dbtier_x`.`warehouse` (errno: 168 \"Unknown "
              "(generic) error from engine\")")
    e = data_directory_failure("/srv/ro", client)
    assert "`dbtier_x`.`warehouse`" in e.message and "DATA DIRECTORY /srv/ro" in e.message and "errno 168" in e.message
    assert "mysql" in e.hint and "own /srv/ro" in e.hint and "AppArmor" in e.hint and "SELinux" in e.hint
    sysbench = ("FATAL: mysql_drv_query() returned error 1005 (Can't create table `d`.`sbtest1` (errno: 168 "
                "\"Unknown (generic) error from engine\")) for query 'CREATE TABLE sbtest1(...'")
    assert "`d`.`sbtest1`" in data_directory_failure("/srv/ro", sysbench).message
    assert data_directory_failure("/srv/ro", "ERROR 1045 (28000): Access denied") is None


def test_table_files_read_back_and_checked():
    rows = [["db/a", "/srv/x/db/a.ibd"], ["db/b", "/srv/x/db/b.ibd"], ["other/c", "/srv/x/other/c.ibd"]]
    placed, outside = table_placement(["a", "b"], rows, "/srv/x/", "db")
    assert placed == {"a": "/srv/x/db/a.ibd", "b": "/srv/x/db/b.ibd"} and outside == []
    # one in the datadir, one without a file of its own (innodb_file_per_table off)
    placed, outside = table_placement(["a", "b", "c"], [["db/a", "/var/lib/mysql/db/a.ibd"], rows[1]], "/srv/x", "db")
    assert outside == ["a", "c"] and placed["c"] is None
