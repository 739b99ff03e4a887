"""Knee, wait classes and the bottleneck rule on hand-made figures."""

import pytest

from dbtier.model.oltp import Evidence, bottleneck, classify_wait, knee, wait_shares


def pt(clients, tps, p95):
    return {"clients": clients, "tps": tps, "lat_ms": {"p95": p95}}


def test_knee_where_throughput_stops_rising_5pct():
    # 1->2: +80%, 2->4: +50%, 4->8: +3% -> knee at 4
    k = knee([pt(1, 100, 10), pt(2, 180, 11), pt(4, 270, 15), pt(8, 278, 30)])
    assert (k["clients"], k["tps"]) == (4, 270)
    assert "rose 3.0%" in k["reason"]


def test_knee_where_latency_outgrows_throughput():
    # 2->4: tps x1.2 but p95 x2.0 -> knee at 2
    k = knee([pt(1, 100, 10), pt(2, 190, 10), pt(4, 228, 20)])
    assert k["clients"] == 2 and "grew 2.00x" in k["reason"]


def test_knee_at_last_point_when_still_rising_and_order_free():
    k = knee([pt(4, 400, 10), pt(1, 100, 10), pt(2, 200, 10)])
    assert k["clients"] == 4 and "still rising" in k["reason"]
    assert knee([]) is None


@pytest.mark.parametrize("state,wtype,event,cls", [
    ("active", None, None, "cpu"),
    ("active", "IO", "DataFileRead", "storage"),
    ("active", "IO", "WALSync", "commit"),
    ("active", "LWLock", "WALWrite", "commit"),
    ("active", "Lock", "transactionid", "lock"),
    ("idle", "Client", "ClientRead", "client"),
    ("active", "Client", "ClientRead", "client"),
    ("active", "Timeout", "PgSleep", "other"),
])
def test_classify_wait(state, wtype, event, cls):
    assert classify_wait(state, wtype, event) == cls


def test_wait_shares():
    assert wait_shares({"cpu": 3, "commit": 1}) == {"commit": 0.25, "cpu": 0.75}
    assert wait_shares({}) == {}


def ev(**kw):
    base = dict(cpu_busy_pct=40, iowait_pct=5, client_cpu_cores=0.05, client_threads=2,
                waits={"commit": 0.1, "cpu": 0.2, "storage": 0.6, "client": 0.1},
                device_await_ms=8.0, device_busy_pct=95, device_queue=6.0)
    base.update(kw)
    return Evidence(**base)


def test_storage_bound():
    kind, why = bottleneck(ev())
    assert kind == "storage" and "storage 60%" in why


def test_pegged_cpu_wins_over_a_busy_looking_device():
    kind, _ = bottleneck(ev(cpu_busy_pct=97, device_busy_pct=100))
    assert kind == "cpu"


def test_io_waits_without_a_queue_are_cpu_scheduling():
    kind, _ = bottleneck(ev(device_await_ms=0.2, device_queue=0.1, device_busy_pct=100))
    assert kind == "cpu"


def test_commit_bound():
    kind, _ = bottleneck(ev(waits={"commit": 0.7, "cpu": 0.2, "client": 0.1}))
    assert kind == "commit"


def test_lock_bound():
    assert bottleneck(ev(waits={"lock": 0.5, "cpu": 0.3, "commit": 0.2}))[0] == "lock"


def test_client_bound_when_pgbench_threads_saturate():
    assert bottleneck(ev(client_cpu_cores=1.9, client_threads=2))[0] == "client"


@pytest.mark.parametrize("dsn,shown", [
    ("host=db port=5432 user=alice password=s3cret dbname=x", "host=db port=5432 user=alice password=*** dbname=x"),
    ("host=db password='a b c' user=x", "host=db password=*** user=x"),
    ("postgresql://alice:s3cret@db:5432/x", "postgresql://alice:***@db:5432/x"),
    ("host=db user=alice", "host=db user=alice"),
])
def test_redact_never_shows_a_password(dsn, shown):
    from dbtier.model.oltp import redact
    assert redact(dsn) == shown
