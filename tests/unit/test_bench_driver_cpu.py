"""bench/oltp_driver_cpu.py's pure part: the driver's figures at the knee of a bench oltp document."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

import oltp_driver_cpu as B  # noqa: E402


def point(clients: int, tps: float, cores: float, bottleneck: str) -> dict:
    # 2 CPUs: pct of machine = cores / 2 x 100, written by hand below
    return {"clients": clients, "tps": tps, "tpm": tps * 60, "cpu_util": {"busy_pct": 90.0},
            "overhead": {"client_cpu_cores": cores, "client_cpu_pct_of_machine": cores * 50},
            "bottleneck": bottleneck}


def test_the_knee_point_is_the_one_at_the_knees_client_count():
    doc = {"points": [point(1, 1000, 0.2, "cpu"), point(4, 3000, 0.46, "cpu"), point(8, 3050, 0.5, "cpu")],
           "knee": {"clients": 4, "tps": 3000}}
    k = B.at_knee(doc)
    assert k == {"knee_clients": 4, "tps": 3000, "tpm": 180000, "client_cpu_cores": 0.46,
                 "client_cpu_pct_of_machine": 23.0, "machine_busy_pct": 90.0, "bottleneck": "cpu",
                 "driver_is_limit": False}


def test_a_client_verdict_says_the_driver_is_the_limit():
    doc = {"points": [point(2, 500, 1.8, "client")], "knee": {"clients": 2, "tps": 500}}
    assert B.at_knee(doc)["driver_is_limit"] is True


def test_no_knee_gives_no_figures():
    for doc in ({"points": [], "knee": None}, {"points": [point(1, 10, 0.1, "cpu")], "knee": None}, {}):
        k = B.at_knee(doc)
        assert k["knee_clients"] is None and k["client_cpu_cores"] is None and k["driver_is_limit"] is None


def test_pgbench_counterparts_of_the_sysbench_workloads():
    assert B.PG_WORKLOADS["sysbench-point"] == "select-only" and B.PG_WORKLOADS["tpcc"] == "tpcc"
