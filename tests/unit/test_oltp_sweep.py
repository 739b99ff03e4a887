"""The OLTP sweep loop (dbtier.workloads.engine.run_sweep), over an engine whose runs are faked: runs per
client count, the point's medians, the knee so far, and the callbacks in order."""

from pathlib import Path

from dbtier.workloads.engine import run_sweep

# TPS per (clients, run): the medians are 110 (1 client), 205 (2) and 210 (4)
TPS = {(1, 1): 100.0, (1, 2): 130.0, (1, 3): 110.0, (2, 1): 200.0, (2, 2): 210.0, (2, 3): 205.0,
       (4, 1): 215.0, (4, 2): 210.0, (4, 3): 190.0}


class FakeEngine:
    """Only what the sweep calls: run_point, with TPS from the table above."""

    def __init__(self, calls):
        self.run_point = _fake_run_point(calls)


def _fake_run_point(calls):
    def run_point(workload, clients, duration_s, warmup_s, warehouses, rate, raw_dir, devices, tag):
        calls.append(tag)
        r = int(tag.rsplit("-r", 1)[1])
        tps = TPS[(clients, r)]
        return {"clients": clients, "tps": tps, "nopm": tps * 10, "lat_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0,
                                                                           "mean": 1.5, "max": 9.0 + r},
                "duration_s": duration_s, "raw": f"raw/{tag}.txt"}
    return run_point


def test_the_sweep_takes_medians_and_reports_each_point():
    calls: list[str] = []
    events: list[tuple] = []
    pts = run_sweep(FakeEngine(calls), "tpcb", [1, 2, 4], 3, 10.0, 0.0, 1, None, Path("raw"), [], "single",
                         on_clients=lambda c: events.append(("clients", c)),
                         on_run=lambda: events.append(("run",)),
                         on_point=lambda p, k: events.append(("point", p["clients"], p["tps"], k and k["clients"])))
    assert calls == [f"single-c{c}-r{r}" for c in (1, 2, 4) for r in (1, 2, 3)]
    assert [p["tps"] for p in pts] == [110.0, 205.0, 210.0]
    assert [p["nopm"] for p in pts] == [1100.0, 2050.0, 2100.0]
    assert pts[0]["tps_runs"] == [100.0, 130.0, 110.0] and pts[0]["repeats"] == 3
    assert pts[0]["lat_ms"]["max"] == 12.0            # the largest of the runs
    # 2 clients beat 1 by far; 4 clients gain 2.4% (< 3%): the knee stays at 2
    assert events == [("clients", 1), ("run",), ("run",), ("run",), ("point", 1, 110.0, 1),
                      ("clients", 2), ("run",), ("run",), ("run",), ("point", 2, 205.0, 2),
                      ("clients", 4), ("run",), ("run",), ("run",), ("point", 4, 210.0, 2)]


def test_one_run_per_point_keeps_the_run():
    got = []
    pts = run_sweep(FakeEngine([]), "tpcb", [2], 1, 10.0, 0.0, 1, None, Path("raw"), [], "all-fast",
                         on_clients=lambda c: None, on_run=lambda: None, on_point=lambda p, k: got.append(k))
    assert pts[0]["tps"] == 200.0 and pts[0]["tps_spread"]["n"] == 1 and "runs" not in pts[0]
    assert got[0]["clients"] == 2 and got[0]["still_rising"] is True
