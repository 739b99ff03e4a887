"""TPC-C-like fidelity on a real managed PostgreSQL 15 (run as the postgres OS user): the loaded
text's entropy, last names by NURand, order-status and payment by last name 60% of the time, and
delivery without SKIP LOCKED under concurrent deliveries."""

from __future__ import annotations

import math
import re
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from conftest import assert_clean_error, needs_root, postgres_processes, run_dbtier

from dbtier.workloads import tpcc
from dbtier.workloads.pgbench import Database, load, run_point, script_path
from dbtier.workloads.postgres import Cluster, Settings

pytestmark = pytest.mark.engine  # a real managed PostgreSQL


@pytest.fixture(scope="module")
def tpcc_db():
    """One warehouse loaded by `load`, in a cluster that counts PL/pgSQL calls (track_functions)."""
    import shutil
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="dbtier-test-", dir="/var/tmp"))
    d.chmod(0o755)
    cluster = Cluster(d, settings=Settings(extra={"track_functions": "pl"}))
    try:
        with cluster:
            db = Database(cluster)
            db.create()
            info = load(db, "tpcc", 1, 1, lambda m: None)
            yield db, info, d
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert postgres_processes(cluster.id) == []


def sql(db: Database, query: str, *args):
    with db.connect() as c:
        return c.execute(query, args or None).fetchall()


def pgbench(db: Database, script: str, clients: int, transactions: int) -> str:
    """A fixed number of transactions per client (not a timed run)."""
    done = subprocess.run([f"{db.bindir}/pgbench", "-n", "-c", str(clients), "-j", str(clients),
                           "-t", str(transactions), "-D", "warehouses=1", f"--file={script_path(script)}",
                           db.conninfo()], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "actually processed" in done.stdout, done.stderr
    return done.stdout


def function_calls(db: Database, names: tuple[str, ...], at_least: dict[str, int]) -> dict[str, int]:
    """pg_stat_user_functions' calls; backends flush their counts as they exit, so wait for them."""
    deadline = time.monotonic() + 30
    while True:
        with db.connect() as c:
            rows = dict(c.execute("SELECT funcname, calls FROM pg_stat_user_functions WHERE funcname = ANY(%s)",
                                  (list(names),)).fetchall())
        calls = {n: rows.get(n, 0) for n in names}
        if all(calls[k] >= v for k, v in at_least.items()) or time.monotonic() > deadline:
            return calls
        time.sleep(0.2)


def test_load_reports_its_generator_and_c_last(tpcc_db):
    db, info, _ = tpcc_db
    assert info["workload"] == "tpcc" and info["load_seconds"] > 0 and info["database_bytes"] > 100e6
    c = info["c_last"]
    assert 65 <= abs(c["c_run"] - c["c_load"]) <= 119
    assert sql(db, "SELECT tpcc_c_last_run()") == [(c["c_run"],)]


def test_c_data_has_the_entropy_of_random_text(tpcc_db):
    """C_DATA of all 30,000 customers, dumped and compressed with zlib level 6: random alphanumerics
    keep >= 0.744 of their size (log2(62)/8); the old md5 loader's C_DATA compressed to 0.074."""
    db, _, _ = tpcc_db
    rows = sql(db, "SELECT c_data FROM customer ORDER BY c_w_id, c_d_id, c_id")
    assert len(rows) == 30_000
    lengths = [len(r[0]) for r in rows]
    assert min(lengths) >= 300 and max(lengths) <= 500 and 390 < sum(lengths) / len(lengths) < 410
    raw = "\n".join(r[0] for r in rows).encode()
    assert len(zlib.compress(raw, 6)) / len(raw) > 0.74
    for column, table in (("s_dist_01", "stock"), ("s_data", "stock"), ("i_name", "item"), ("c_first", "customer"),
                          ("c_street_1", "customer"), ("ol_dist_info", "order_line"), ("h_data", "history")):
        raw = "\n".join(r[0] for r in sql(db, f"SELECT {column} FROM {table}")).encode()
        assert len(zlib.compress(raw, 6)) / len(raw) > 0.7, column
    share = sql(db, "SELECT avg((i_data LIKE '%ORIGINAL%')::int) FROM item")[0][0]
    assert 0.09 < share < 0.11


def test_last_names_in_sql_and_python_agree(tpcc_db):
    """tpcc_lastname (SQL, run time) and tpcc.lastname (Python, load) for every number; 371 -> PRICALLYOUGHT;
    customers 1..1000 of each district carry the names of 0..999 in order."""
    db, _, _ = tpcc_db
    got = dict(sql(db, "SELECT n, tpcc_lastname(n) FROM generate_series(0, 999) n"))
    assert got == {n: tpcc.lastname(n) for n in range(1000)} and got[371] == "PRICALLYOUGHT"
    wrong = sql(db, "SELECT count(*) FROM customer WHERE c_id <= 1000 AND c_last <> tpcc_lastname(c_id - 1)")
    assert wrong == [(0,)]


def test_customer_by_name_is_the_middle_one(tpcc_db):
    """Clause 2.5.2.2: of the n customers with that last name, ordered by C_FIRST, position ceil(n/2)."""
    db, _, _ = tpcc_db
    for d, last in ((1, "BARBARBAR"), (2, "PRICALLYOUGHT"), (3, "ABLEABLEABLE"), (10, "EINGEINGEING")):
        ids = [r[0] for r in sql(db, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = %s AND c_last = %s "
                                     "ORDER BY c_first", d, last)]
        assert ids, last
        expected = ids[math.ceil(len(ids) / 2) - 1]
        assert sql(db, "SELECT tpcc_customer_by_name(1, %s, %s)", d, last) == [(expected,)]
    assert sql(db, "SELECT tpcc_customer_by_name(1, 1, 'NOSUCHNAME')") == [(None,)]


def test_order_status_and_payment_choose_by_last_name_60_percent(tpcc_db):
    """3,000 order-status and 3,000 payment transactions: tpcc_customer_by_name runs for 60% of each
    (clauses 2.5.1.2 and 2.6.1.2); 4 binomial standard deviations are 0.036 at n = 3000."""
    db, _, _ = tpcc_db
    names = ("tpcc_order_status", "tpcc_payment", "tpcc_customer_by_name")
    before = function_calls(db, names, {})
    pgbench(db, "tpcc_order_status", 2, 1500)
    mid = function_calls(db, names, {"tpcc_order_status": before["tpcc_order_status"] + 3000})
    pgbench(db, "tpcc_payment", 2, 1500)
    after = function_calls(db, names, {"tpcc_payment": mid["tpcc_payment"] + 3000})
    assert mid["tpcc_order_status"] - before["tpcc_order_status"] == 3000
    assert after["tpcc_payment"] - mid["tpcc_payment"] == 3000
    by_name_status = (mid["tpcc_customer_by_name"] - before["tpcc_customer_by_name"]) / 3000
    by_name_payment = (after["tpcc_customer_by_name"] - mid["tpcc_customer_by_name"]) / 3000
    assert 0.56 < by_name_status < 0.64, by_name_status
    assert 0.56 < by_name_payment < 0.64, by_name_payment
    # payment's history row: H_DATA = W_NAME + 4 spaces + D_NAME (clause 2.5.2.2)
    bad = sql(db, "SELECT count(*) FROM history h JOIN warehouse w ON w_id = h_w_id "
                  "JOIN district d ON d_w_id = h_w_id AND d_id = h_d_id "
                  "WHERE h_amount <> 10 AND h_data <> w_name || '    ' || d_name")
    assert bad == [(0,)]


def test_delivery_takes_the_oldest_without_skip_locked(tpcc_db):
    """4 clients x 20 deliveries on the one warehouse: each delivers one order in each of the ten
    districts, the 80 oldest (2101..2180), none twice, none skipped; the source has no SKIP LOCKED."""
    db, _, _ = tpcc_db
    src = sql(db, "SELECT prosrc FROM pg_proc WHERE proname = 'tpcc_delivery'")[0][0]
    assert not re.search(r"skip\s+locked", src, re.I)
    before = dict(sql(db, "SELECT no_d_id, min(no_o_id) FROM new_order WHERE no_w_id = 1 GROUP BY no_d_id"))
    counts = dict(sql(db, "SELECT no_d_id, count(*) FROM new_order WHERE no_w_id = 1 GROUP BY no_d_id"))
    out = pgbench(db, "tpcc_delivery", 4, 20)
    assert re.search(r"number of failed transactions: 0\b", out) or "failed" not in out, out
    after = dict(sql(db, "SELECT no_d_id, min(no_o_id) FROM new_order WHERE no_w_id = 1 GROUP BY no_d_id"))
    left = dict(sql(db, "SELECT no_d_id, count(*) FROM new_order WHERE no_w_id = 1 GROUP BY no_d_id"))
    for d in range(1, 11):
        assert left[d] == counts[d] - 80 and after[d] == before[d] + 80, d
        delivered = sql(db, "SELECT count(*) FROM orders WHERE o_w_id = 1 AND o_d_id = %s AND o_id >= %s "
                            "AND o_id < %s AND o_carrier_id IS NOT NULL", d, before[d], after[d])
        assert delivered == [(80,)]


def test_a_short_tpcc_point_writes_the_stock_dist_info(tpcc_db):
    """A 2-client, 2-second tpcc point runs the five functions without failures; new order lines carry
    S_DIST_xx of their district (clause 2.4.2.2), not a constant."""
    db, _, d = tpcc_db
    raw = d / "raw"
    raw.mkdir(exist_ok=True)
    p = run_point(db, "tpcc", 2, 2, 0, 1, None, raw, [], "t")
    assert p["tps"] > 0 and p["nopm"] > 0 and p["failed"] == 0
    rows = sql(db, "SELECT ol_dist_info, CASE ol_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 "
                   "WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 "
                   "WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END, "
                   "ol_supply_w_id, ol_i_id, ol_d_id "
                   "FROM order_line JOIN stock ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id WHERE ol_o_id > 3000")
    assert rows and all(r[0] == r[1] for r in rows)
    # one distinct text per (stock row, district): NURand repeats popular items, so count pairs, not rows
    assert len({r[0] for r in rows}) == len({r[2:] for r in rows}) > 1


@needs_root
def test_a_load_that_fills_the_disk_is_one_clean_error(pg_dir, loop_device):
    """Tables on a 100 MiB filesystem, WAL elsewhere: the 125 MB warehouse cannot fit, and the COPY's
    'could not extend file' becomes one dbtier error naming the table, with the next step."""
    _, mnt = loop_device(100, fs="ext4", mount=True, where=pg_dir)
    mnt.chmod(0o755)
    wal = pg_dir / "wal"
    wal.mkdir()
    wal.chmod(0o755)
    r = run_dbtier("bench", "oltp", "--workload", "tpcc", "--clients", "1", "--duration", "1", "--warmup", "0",
                   "--place", f"data={mnt},wal={wal}", "--out", "run", cwd=pg_dir)
    err = assert_clean_error(r, "loading the tpcc", "free space")
    assert "table (" in err, err
    assert list(mnt.glob("dbtier-pg-*")) == [] and list(wal.glob("dbtier-pg-*")) == []
