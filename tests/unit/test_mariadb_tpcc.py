"""TPC-C-like on MariaDB, its pure parts: the generator's rows as LOAD DATA reads them, the schema's
columns against PostgreSQL's, the sysbench command line, the Lua's per-thread counts, NOPM."""

from __future__ import annotations

import itertools
import random
import re
from datetime import datetime
from importlib import resources

import pytest

from dbtier.workloads.parsers.sysbench import MysqlTarget
from dbtier.workloads import mariadb_tpcc as mt
from dbtier.workloads import tpcc
from dbtier.workloads.pgbench import TPCC_MIX


def _text(*parts: str) -> str:
    return resources.files("dbtier.workloads").joinpath(*parts).read_text()


def _columns(schema: str) -> dict[str, list[str]]:
    """table -> its column names, read from CREATE TABLE statements (keys and options left out)."""
    out = {}
    for m in re.finditer(r"CREATE TABLE (\w+) \((.*?)\)\s*(?:ENGINE[^;]*)?;", schema, re.S):
        body = re.sub(r"PRIMARY KEY \([^)]*\)", "", m.group(2))
        body = re.sub(r"\([\d,]+\)", "", body)         # varchar(10), decimal(4,4)
        out[m.group(1)] = [c.split()[0] for c in body.split(",") if c.split()]
    return out


def test_mysql_schema_has_postgres_columns_in_order():
    pg, my = _columns(_text("sql", "tpcc_schema.sql")), _columns(_text("sql", "tpcc_mysql_schema.sql"))
    assert set(pg) == set(mt.TABLE_COLUMNS)
    for table, cols in pg.items():
        assert my[table] == cols, table
        assert len(cols) == mt.TABLE_COLUMNS[table]
    assert my["tpcc_c_last"] == ["c_load", "c_run"]


def test_every_table_but_history_has_postgres_primary_key():
    keys = dict(re.findall(r"ALTER TABLE (\w+) ADD PRIMARY KEY \(([^)]*)\)", _text("sql", "tpcc_indexes.sql")))
    schema = _text("sql", "tpcc_mysql_schema.sql")
    for table, key in keys.items():
        block = re.search(rf"CREATE TABLE {table} \((.*?)\) ENGINE", schema, re.S).group(1)
        assert f"PRIMARY KEY ({key})" in block, table
    assert "history" not in keys


def _first_chunks(copies):
    """Each table's first chunk of rows (enough to check the format, far quicker than a warehouse)."""
    return [(mt.copy_table(stmt), next(iter(chunks))) for stmt, chunks in copies]


def test_generated_rows_are_load_data_rows_with_the_schema_field_count():
    g = tpcc.Gen(random.Random(7))
    tables = _first_chunks([tpcc.item_copy(g)] + tpcc.warehouse_copies(1, g, 42, datetime(2026, 1, 2, 3, 4, 5)))
    assert [t for t, _ in tables] == ["item", "warehouse", "district", "stock", "customer", "history", "orders",
                                      "new_order", "order_line"]
    for table, chunk in tables:
        text = chunk.decode("ascii")
        assert text.endswith("\n")
        for line in text.splitlines():
            fields = line.split("\t")
            assert len(fields) == mt.TABLE_COLUMNS[table], (table, line)
            # LOAD DATA's escape character is a backslash: only \N (NULL) may hold one
            assert all("\\" not in f or f == "\\N" for f in fields), (table, line)
    orders = dict(tables)["orders"].decode().splitlines()
    assert orders[0].split("\t")[5] != "\\N" and all(r.split("\t")[5] == "\\N" for r in orders[2100:3000])


def test_write_rows_keeps_the_bytes(tmp_path):
    p = tmp_path / "t.tsv"
    assert mt.write_rows([b"1\ta\n", b"2\t\\N\n"], p) == 9
    assert p.read_bytes() == b"1\ta\n2\t\\N\n"


def test_copy_table_and_load_data_sql():
    assert mt.copy_table("COPY order_line FROM STDIN") == "order_line"
    with pytest.raises(ValueError):
        mt.copy_table("DROP TABLE x")
    sql = mt.load_data_sql("stock", "/var/tmp/it's\\here/stock.tsv")
    assert sql.startswith("LOAD DATA LOCAL INFILE '/var/tmp/it\\'s\\\\here/stock.tsv' INTO TABLE stock ")
    assert "FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'" in sql
    with pytest.raises(ValueError):
        mt.load_data_sql("stock; DROP", "/x")


def test_tpcc_args_runs_our_lua_with_the_target_and_no_password():
    t = MysqlTarget(user="dbtier", db="dbtier_bench", socket="/tmp/s/mysqld.sock")
    a = mt.tpcc_args(t, threads=2, seconds=9.2, warehouses=3, rate=150.4)
    assert a[0] == "sysbench" and a[1].endswith("workloads/lua/tpcc.lua") and a[-1] == "run"
    for opt in ("--db-driver=mysql", "--mysql-socket=/tmp/s/mysqld.sock", "--mysql-user=dbtier",
                "--mysql-db=dbtier_bench", "--warehouses=3", "--threads=2", "--time=10", "--rate=150",
                "--histogram=on"):
        assert opt in a
    assert not any("password" in x for x in a)
    closed = mt.tpcc_args(t, threads=0, seconds=1, warehouses=1)
    assert "--threads=1" in closed and not any(x.startswith("--rate") for x in closed)


def test_lua_mix_and_names_match_postgres():
    lua = _text("lua", "tpcc.lua")
    names = re.search(r"NAMES = \{([^}]*)\}", lua).group(1).replace('"', "").replace(" ", "").split(",")
    weights = [int(x) for x in re.search(r"WEIGHTS = \{([^}]*)\}", lua).group(1).split(",")]
    assert [f"tpcc_{n}" for n in names] == [n for n, _ in TPCC_MIX]
    assert weights == [w for _, w in TPCC_MIX] and sum(weights) == 100
    assert tuple(names) == mt.TRANSACTIONS and [mt.MIX_PCT[n] for n in names] == weights
    syl = re.search(r"SYL = \{([^}]*)\}", lua).group(1).replace('"', "").replace(" ", "").split(",")
    assert tuple(syl) == tpcc.SYLLABLES
    assert "100001" in lua and "rnd(1, 100) == 1" in lua     # the 1% rollback by an unused item


def test_parse_mix_adds_up_the_threads():
    text = ("SQL statistics:\n"
            "tpcc-mix: thread=0 new_order=45 payment=43 order_status=4 delivery=4 stock_level=4 new_order_retries=1 "
            "payment_retries=0 order_status_retries=0 delivery_retries=2 stock_level_retries=0 new_order_rollbacks=1\n"
            "tpcc-mix: thread=1 new_order=5 payment=7 order_status=0 delivery=1 stock_level=0 new_order_retries=0 "
            "payment_retries=3 order_status_retries=0 delivery_retries=0 stock_level_retries=0 new_order_rollbacks=0\n")
    got = mt.parse_mix(text)
    assert got["mix"] == {"new_order": 50, "payment": 50, "order_status": 4, "delivery": 5, "stock_level": 4}
    assert got["retries"] == {"new_order": 1, "payment": 3, "order_status": 0, "delivery": 2, "stock_level": 0}
    assert got["rollbacks"] == 1 and got["threads"] == 2
    # two threads' lines run into one another (sysbench threads print at once)
    merged = ("tpcc-mix: thread=0 new_order=4 payment=1 order_status=0 delivery=0 stock_level=0 new_order_retries=0 "
              "payment_retries=0 order_status_retries=0 delivery_retries=0 stock_level_retries=0 new_order_rollbacks=3"
              "tpcc-mix: thread=1 new_order=5 payment=7 order_status=0 delivery=1 stock_level=0 new_order_retries=0 "
              "payment_retries=3 order_status_retries=0 delivery_retries=0 stock_level_retries=0 new_order_rollbacks=0"
              "\n\n")
    got = mt.parse_mix(merged)
    assert got["threads"] == 2 and got["rollbacks"] == 3 and got["mix"]["new_order"] == 9
    empty = mt.parse_mix("no lines")
    assert empty["threads"] == 0 and sum(empty["mix"].values()) == 0


def test_nopm_is_new_orders_per_measured_minute():
    assert mt.nopm_from(450, 30.0) == pytest.approx(900.0)
    assert mt.nopm_from(None, 30.0) is None and mt.nopm_from(10, 0) is None


def test_new_orders_reads_the_district_sum():
    seen = []

    def query(sql):
        seen.append(sql)
        return [["33010"]]
    assert mt.new_orders(query, "dbtier_bench") == 33010.0
    assert seen == ["SELECT SUM(d_next_o_id) FROM `dbtier_bench`.district"]


def test_c_last_constants_obey_the_clause():
    for c_load, c_run in itertools.islice((tpcc.c_last_constants(random.Random(s)) for s in range(200)), 200):
        assert 0 <= c_load <= 255 and 0 <= c_run <= 255 and abs(c_run - c_load) in tpcc.C_LAST_DELTAS


def test_deviations_speak_of_sysbench_not_pgbench():
    assert len(mt.DEVIATIONS) == len(tpcc.DEVIATIONS) + 2
    text = " ".join(mt.DEVIATIONS)
    assert "pgbench" not in text and "PL/pgSQL" not in text and "sysbench" in text and "FOR UPDATE" in text


def _procedures(sql: str) -> dict[str, list[str]]:
    """procedure -> its parameters' names, from CREATE PROCEDURE statements."""
    out = {}
    for m in re.finditer(r"CREATE PROCEDURE (\w+)\((.*?)\)\s*\n", sql, re.S):
        params = re.sub(r"\(\d+(,\d+)?\)", "", m.group(2)).split(",")       # VARCHAR(16), DECIMAL(6,2)
        out[m.group(1)] = [[w for w in p.split() if w not in ("IN", "OUT", "INOUT")][0] for p in params]
    return out


def test_the_lua_calls_each_procedure_with_its_parameters():
    sql = _text("sql", "tpcc_mysql_procedures.sql")
    procs = _procedures(sql)
    assert set(procs) == {f"tpcc_{n}" for n in mt.TRANSACTIONS} | {"tpcc_customer_by_name"}
    lua = _text("lua", "tpcc.lua")
    calls = dict(re.findall(r'"CALL (tpcc_\w+)\((.*?)\)"', lua))
    assert set(calls) == {f"tpcc_{n}" for n in mt.TRANSACTIONS}
    for name, args in calls.items():
        assert len(args.split(",")) == len(procs[name]), name
    assert procs["tpcc_new_order"][-1] == "p_o" and "@tpcc_o" in calls["tpcc_new_order"]
    # each transaction is its own: begun and ended in the procedure, any error rolled back and raised again
    bodies = re.split(r"CREATE PROCEDURE ", sql)[1:]
    for body in bodies:
        if body.startswith("tpcc_customer_by_name"):
            continue
        assert "START TRANSACTION;" in body and "COMMIT;" in body, body[:30]
        assert "DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;" in body, body[:30]
    # no result set from any procedure (sysbench 1.0.20 would leave the CALL's status unread): every
    # SELECT reads INTO variables or is a subquery
    for sel in re.findall(r"SELECT .*?(?:;|\))", sql, re.S):
        assert " INTO " in sel or sel.endswith(")") or "OVER" in sel, sel


@pytest.mark.skipif(not __import__("shutil").which("sysbench"), reason="sysbench is not installed")
def test_new_order_lines_are_sorted_lists_with_the_unused_item_last(tmp_path):
    """tpcc.lua's order_lines, run by sysbench's LuaJIT (no database): 2,000 orders of 15 lines."""
    import subprocess
    lua = str(resources.files("dbtier.workloads").joinpath("lua", "tpcc.lua"))
    script = tmp_path / "t.lua"
    script.write_text(f'dofile("{lua}")\nsysbench.cmdline.commands = {{ lines = {{ function()\n'
                      "  W = 3\n  for i = 1, 2000 do print(order_lines(2, 15, i % 100 == 0)) end\nend } }\n")
    out = subprocess.run(["sysbench", str(script), "lines"], capture_output=True, text=True, timeout=60).stdout
    rows = [line.split("\t") for line in out.splitlines() if "\t" in line]
    assert len(rows) == 2000
    remote = lines = 0
    for i, (items, supply, qty) in enumerate(rows, 1):
        it, sw, q = ([int(x) for x in s.split(",")] for s in (items, supply, qty))
        assert len(it) == len(sw) == len(q) == 15
        assert all(1 <= x <= 10 for x in q) and all(1 <= x <= 3 for x in sw)
        if i % 100 == 0:
            assert it[-1] == 100001 and all(x <= 100000 for x in it[:-1])
            it, sw = it[:-1], sw[:-1]
        else:
            assert all(1 <= x <= 100000 for x in it)
        assert list(zip(sw, it)) == sorted(zip(sw, it))       # stock locked in (supply warehouse, item) order
        remote += sum(x != 2 for x in sw)
        lines += len(sw)
    assert 0.005 < remote / lines < 0.015                      # 1% of lines from another warehouse
