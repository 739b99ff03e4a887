"""TPC-C-like on a real managed MariaDB (run as the mysql OS user): one warehouse loaded with LOAD DATA
has TPC-C's cardinalities and the five stored procedures (a new order checked by hand); sysbench with dbtier's Lua at 1 and 2 clients keeps the 45/43/4/4/4 mix and
the 1% new-order rollback; NOPM agrees with the new-order share of TPM and with SUM(d_next_o_id); and
nothing is left running or on disk after the server closes."""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import have
from dbtier.core.errors import DbtierError
from dbtier.workloads.parsers.sysbench import MysqlTarget
from dbtier.workloads import mariadb_tpcc as mt
from dbtier.workloads.mariadb import USER, Server

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"),
                                 reason="MariaDB or sysbench is not installed")]

DB = "dbtier_tpcc"


def _sigmas(count: int, total: int, p: float) -> float:
    """How many standard deviations of a binomial(total, p) count lies from its mean."""
    return abs(count - total * p) / math.sqrt(total * p * (1 - p))


@pytest.fixture(scope="module")
def loaded():
    d = Path(tempfile.mkdtemp(prefix="dbtier-test-", dir="/var/tmp"))
    d.chmod(0o755)
    raw = d / "raw"
    raw.mkdir()
    server = Server(d)
    try:
        with server:
            server.query(f"CREATE DATABASE {DB}")
            target = MysqlTarget(user=USER, db=DB, socket=str(server.socket))
            info = mt.load(target, server.client_args(), server.client_env(), 1, raw, lambda m: None)
            yield server, target, info, raw
        out = subprocess.run(["pgrep", "-a", "-f", server.id], capture_output=True, text=True).stdout
        assert [x for x in out.splitlines() if "mariadbd" in x] == []
        assert not server.alive()
        assert [p for p in d.iterdir() if server.id in p.name] == []
        assert [p for p in Path(tempfile.gettempdir()).iterdir() if server.id in p.name] == []
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_load_has_tpcc_cardinalities(loaded):
    server, target, info, raw = loaded
    counts = server.query(
        "SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {DB}.{t})" for t in
                              ("warehouse", "district", "customer", "stock", "item", "orders", "new_order",
                               "history")))[0]
    assert [int(x) for x in counts] == [1, 10, 30_000, 100_000, 100_000, 30_000, 9_000, 30_000]
    # order lines: 5..15 a order (10 on average), the sum of the orders' counts
    ol, olcnt = server.query(f"SELECT (SELECT COUNT(*) FROM {DB}.order_line), (SELECT SUM(o_ol_cnt) FROM {DB}.orders)")[0]
    assert ol == olcnt and 280_000 < int(ol) < 320_000
    assert server.query(f"SELECT MIN(d_next_o_id), MAX(d_next_o_id) FROM {DB}.district") == [["3001", "3001"]]
    # undelivered orders (2101..3000) have no carrier and are the new orders
    assert server.query(f"SELECT COUNT(*) FROM {DB}.orders WHERE o_carrier_id IS NULL") == [["9000"]]
    # the C_LAST constants the Lua reads, as the load record says
    c = info["c_last"]
    assert server.query(f"SELECT c_load, c_run FROM {DB}.tpcc_c_last") == [[str(c["c_load"]), str(c["c_run"])]]
    assert 65 <= abs(c["c_run"] - c["c_load"]) <= 119
    # the secondary indexes exist; InnoDB tables; NULL loaded as NULL, not as text
    idx = server.query(f"SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = '{DB}' "
                       "AND index_name <> 'PRIMARY' ORDER BY 1")
    assert idx == [["customer_name"], ["orders_customer"]]
    assert server.query(f"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{DB}' "
                        "AND engine <> 'InnoDB'") == [["0"]]
    assert server.query(f"SELECT COUNT(*) FROM {DB}.order_line WHERE ol_delivery_d IS NULL") == \
        server.query(f"SELECT SUM(o_ol_cnt) FROM {DB}.orders WHERE o_carrier_id IS NULL")
    assert info["database_bytes"] > 50e6 and info["warehouses"] == 1 and info["scale"] is None
    assert [p.name for p in raw.iterdir() if p.name.startswith("tpcc-load-")] == []   # staged files removed


def test_procedures_exist_and_a_new_order_does_what_tpcc_says(loaded):
    """One hand-checked new order (TPC-C clause 2.4.2.2) and one rollback, called as the Lua calls them."""
    server, *_ = loaded
    procs = server.query(f"SELECT routine_name FROM information_schema.routines WHERE routine_schema = '{DB}' "
                         "AND routine_type = 'PROCEDURE' ORDER BY 1")
    assert [r[0] for r in procs] == sorted(["tpcc_customer_by_name", *(f"tpcc_{t}" for t in mt.TRANSACTIONS)])
    w, d, c, lines = 1, 4, 7, [(11, 3), (12, 9)]

    def stock():
        return {int(r[0]): [int(x) for x in r[1:5]] + [r[5]] for r in server.query(
            f"SELECT s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt, s_dist_04 FROM {DB}.stock "
            f"WHERE s_w_id = {w} AND s_i_id IN (11, 12)")}

    def next_o():
        return int(server.query(f"SELECT d_next_o_id FROM {DB}.district WHERE d_w_id = {w} AND d_id = {d}")[0][0])

    s0, o = stock(), next_o()
    price = {int(r[0]): float(r[1]) for r in server.query(f"SELECT i_id, i_price FROM {DB}.item WHERE i_id IN (11, 12)")}
    got = server.query(f"CALL {DB}.tpcc_new_order({w}, {d}, {c}, '11,12', '1,1', '3,9', @o); SELECT @o")
    assert got == [[str(o)]] and next_o() == o + 1
    assert server.query(f"SELECT o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM {DB}.orders "
                        f"WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o}") == [[str(c), "NULL", "2", "1"]]
    assert server.query(f"SELECT COUNT(*) FROM {DB}.new_order WHERE no_w_id = {w} AND no_d_id = {d} "
                        f"AND no_o_id = {o}") == [["1"]]
    ol = server.query(f"SELECT ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, "
                      f"ol_dist_info FROM {DB}.order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o} "
                      "ORDER BY ol_number")
    s1 = stock()
    for k, ((item, qty), row) in enumerate(zip(lines, ol), 1):
        assert row[:5] == [str(k), str(item), str(w), "NULL", str(qty)]
        assert float(row[5]) == pytest.approx(qty * price[item]) and row[6] == s0[item][4]   # S_DIST_04
        q = s0[item][0]
        assert s1[item][:4] == [q - qty if q - qty >= 10 else q - qty + 91, s0[item][1] + qty, s0[item][2] + 1,
                                s0[item][3]]
    assert len(ol) == 2
    # the unused item: the whole order undone (d_next_o_id, stock, rows), reported as -1
    got = server.query(f"CALL {DB}.tpcc_new_order({w}, {d}, {c}, '11,100001', '1,1', '3,9', @o); SELECT @o")
    assert got == [["-1"]] and next_o() == o + 1 and stock() == s1
    assert server.query(f"SELECT COUNT(*) FROM {DB}.orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_id > {o}") \
        == [["0"]]


def test_runs_keep_the_mix_rollbacks_and_nopm(loaded):
    server, target, _, raw = loaded
    points = [mt.run_point(target, c, 8, 1, 1, None, raw, f"tpcc-c{c}", alive=server.alive,
                           log_tail=server.log_tail, query=server.query) for c in (1, 2)]
    mix = {k: sum(p["mix"][k] for p in points) for k in mt.TRANSACTIONS}
    total = sum(mix.values())
    assert total >= 1500, mix            # enough for the proportions below to mean something
    for name, pct in mt.MIX_PCT.items():
        assert _sigmas(mix[name], total, pct / 100) < 4.5, (name, mix)
    rollbacks = sum(p["new_order_rollbacks"] for p in points)
    assert rollbacks >= 1 and _sigmas(rollbacks, mix["new_order"], 0.01) < 4.5, (rollbacks, mix)
    for p in points:
        # the Lua's counts are sysbench's transactions, type by type
        assert sum(p["mix"].values()) == p["transactions"] > 0
        assert p["tps"] > 0 and p["tpm"] == pytest.approx(60 * p["tps"])
        assert p["nopm_source"] == "SUM(d_next_o_id)" and (Path(raw) / f"tpcc-c{p['clients']}.txt").is_file()
        # NOPM = committed new orders a minute = TPM x (new-order share - rolled back share); the
        # d_next_o_id delta and the Lua's count differ by at most the transactions in flight at the end
        committed = p["mix"]["new_order"] - p["new_order_rollbacks"]
        expected = p["tpm"] * committed / p["transactions"]
        assert p["nopm"] == pytest.approx(expected, abs=60.0 * p["clients"] / p["duration_s"] + 1e-9)
        # and about 0.45 x 0.99 of TPM: within 4.5 standard deviations of the binomial share
        share_sd = math.sqrt(0.4455 * 0.5545 / p["transactions"])
        assert abs(p["nopm"] / p["tpm"] - 0.4455) < 4.5 * share_sd + 0.01, p
        assert p["overhead"]["client_cpu_cores"] >= 0 and p["lat_ms"]["p95"] is not None
    print({p["clients"]: (round(p["tps"], 1), round(p["nopm"])) for p in points})


def test_a_database_without_tpcc_fails_in_words(loaded):
    server, target, _, raw = loaded
    server.query("CREATE DATABASE IF NOT EXISTS dbtier_empty")
    empty = MysqlTarget(user=USER, db="dbtier_empty", socket=str(server.socket))
    with pytest.raises(DbtierError) as err:
        mt.run_point(empty, 1, 1, 0, 1, None, raw, "empty", alive=server.alive, log_tail=server.log_tail)
    assert "sysbench failed at 1 clients" in str(err.value) and "tpcc_c_last" in str(err.value)
    assert (raw / "empty.txt").is_file()
