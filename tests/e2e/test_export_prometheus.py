"""dbtier export against the real Prometheus stack (tests/promstack.py: Debian's prometheus 2.42,
pushgateway and node_exporter on loopback ports): a pushed run's figure comes back from PromQL, a re-run
replaces its Pushgateway group, the textfile collector serves the file, and a backfilled series is queryable
over the run's own time range. Expected values are read from the documents and the Parquet files here."""

from __future__ import annotations

import json
import socket
import time
from datetime import datetime

import duckdb
import pytest

from conftest import DATA, call_main
from samples import DSS_SPILL, PROBE, TPCC, run_dir

pytestmark = pytest.mark.engine


def export(tmp_path, *args):
    r = call_main("export", *args, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    return r


def _value(result: list) -> float:
    assert len(result) == 1, result
    return float(result[0]["value"][1])


def test_pushed_metrics_come_back_from_promql_and_a_rerun_replaces_the_group(prom_stack, tmp_path):
    probe = run_dir(tmp_path, "probe-run", PROBE)
    summary = json.loads(PROBE.read_text())["targets"][0]["summary"]
    export(tmp_path, "metrics", str(probe), "--push", prom_stack.pushgateway_url, "--group", "scenario=push-test",
           "--out", "e1")
    q = 'dbtier_probe_operations_per_second{run_id="probe-run",test="read_4k",scenario="push-test"}'
    got = prom_stack.wait_for(q, timeout_s=20)
    assert _value(got) == pytest.approx(summary["read_iops_4k"])
    labels = got[0]["metric"]
    assert labels["job"] == "dbtier" and labels["instance"] == socket.gethostname()    # the grouping key
    info = prom_stack.wait_for('dbtier_run_info{run_id="probe-run"}')
    assert info[0]["metric"]["kind"] == "probe" and info[0]["metric"]["command"] == "probe"
    # the same group again, another run: the PUT replaces the group, the probe's series go stale
    dss = run_dir(tmp_path, "dss-run", DSS_SPILL)
    export(tmp_path, "metrics", str(dss), "--push", prom_stack.pushgateway_url, "--group", "scenario=push-test",
           "--out", "e2")
    total = json.loads(DSS_SPILL.read_text())["total_seconds"]
    assert _value(prom_stack.wait_for('dbtier_dss_power_run_seconds{run_id="dss-run"}', timeout_s=20)) == \
        pytest.approx(total)
    deadline = time.monotonic() + 20
    while prom_stack.query('dbtier_run_info{run_id="probe-run"}'):
        assert time.monotonic() < deadline, "the replaced group's series are still there"
        time.sleep(0.2)


def test_textfile_is_served_by_node_exporter(prom_stack, tmp_path):
    oltp = run_dir(tmp_path, "oltp-run", TPCC)
    doc = json.loads(TPCC.read_text())
    knee = next(p for p in doc["points"] if p["clients"] == doc["knee"]["clients"])
    try:
        export(tmp_path, "metrics", str(oltp), "--textfile", str(prom_stack.textfile_dir), "--out", "e")
        got = prom_stack.wait_for('dbtier_oltp_transactions_per_second{run_id="oltp-run",point="knee",job="node"}',
                                  timeout_s=20)
        assert _value(got) == pytest.approx(knee["tps"])
        assert not prom_stack.query('node_textfile_scrape_error == 1')
    finally:
        (prom_stack.textfile_dir / "dbtier.prom").unlink(missing_ok=True)


def test_backfilled_series_are_queryable_over_the_runs_time_range(prom_stack, tmp_path):
    r = call_main("history", "import", "--source", "sqlserver", str(DATA / "history" / "sqlserver" /
                  "file_stats-sql01.csv"), "--out", str(tmp_path / "hist"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    oltp = run_dir(tmp_path, "oltp-series", TPCC)
    out = tmp_path / "series.om"
    export(tmp_path, "series", str(tmp_path / "hist"), str(oltp), "--output", str(out), "--out", "e")
    prom_stack.backfill(out)
    rows = duckdb.sql(f"""SELECT database, epoch_us("end") / 1e6, read_iops
                          FROM '{tmp_path / "hist" / "totals.parquet"}' ORDER BY 1, 2""").fetchall()
    for db, t, read_iops in rows:      # an instant query at each interval's end returns that interval's rate
        got = prom_stack.query(f'dbtier_series_history_operations_per_second{{run_id="hist",database="{db}",'
                               f'op="read"}}', time=t + 0.001)
        assert _value(got) == pytest.approx(read_iops), (db, t)
    doc = json.loads(TPCC.read_text())
    start = datetime.fromisoformat(doc["started_at"].replace("Z", "+00:00")).timestamp()
    got = prom_stack.query_range('dbtier_series_oltp_cpu_busy_ratio{run_id="oltp-series"}', start, start + 10, 0.5)
    assert sorted(int(s["metric"]["clients"]) for s in got) == sorted(p["clients"] for p in doc["points"])
    first = doc["points"][0]["series"][0]
    at = prom_stack.query(f'dbtier_series_oltp_cpu_busy_ratio{{run_id="oltp-series",clients="'
                          f'{doc["points"][0]["clients"]}"}}', time=start + first["t_s"] + 0.001)
    assert _value(at) == pytest.approx(first["cpu"]["busy_pct"] / 100)
