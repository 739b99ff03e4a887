"""Where measured storage stands against catalog devices, on hand-worked ratios."""

import math

import pytest

from dbtier.model.plan.catalog import Device
from dbtier.model.standing import closest, ratios


def dev(id, riops, wiops, rmb, wmb, lat):
    return Device(id, id, "nvme", "pcie4-x4", 1000, 100, riops, wiops, rmb, wmb, lat, lat, "test")


SUMMARY = {"read_iops_4k": 100_000, "write_iops_4k": 50_000, "read_mbps_seq": 1000, "write_mbps_seq": 500,
           "read_lat_us_qd1_p50": 100}


def test_ratios_measured_over_catalog_and_latency_inverted():
    r = ratios(SUMMARY, dev("a", 200_000, 50_000, 500, 500, 50))
    assert r == {"read_iops_4k": 0.5, "write_iops_4k": 1.0, "read_mbps_seq": 2.0, "write_mbps_seq": 1.0,
                 "read_lat_us_qd1_p50": 0.5}


def test_closest_ranks_by_log_distance():
    same = dev("same", 100_000, 50_000, 1000, 500, 100)
    far = dev("far", 1_000, 500, 10, 5, 10_000)
    c = closest(SUMMARY, [far, same])["closest"]
    assert [x["device"] for x in c] == ["same", "far"]
    assert c[0]["distance"] == 0
    assert c[1]["distance"] == pytest.approx(math.log(100), rel=1e-3)


def test_missing_figures_are_left_out():
    assert ratios({"read_iops_4k": None}, dev("a", 1, 1, 1, 1, 1)) == {}
    assert closest({}, [dev("a", 1, 1, 1, 1, 1)]) == {"closest": []}
