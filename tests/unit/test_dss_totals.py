"""DSS totals and scan figures of a `bench dss` document (dbtier.model.dss.dss_totals, dss_scan),
with the expected values worked out by hand."""

import math

import pytest

from dbtier.model.dss import dss_scan, dss_totals


def _rec(q, secs, cold, read=1e6, ok=True, dev_read=None):
    return {"query": q, "seconds": secs, "rows": 4, "temp_bytes": 0, "read_bytes": read, "write_bytes": 0,
            "cpu_util": {"busy_pct": 50.0}, "cold": cold, "answer_ok": ok,
            "devices": {"vda": {"read_bytes": dev_read if dev_read is not None else read}}}


def _doc():
    # run 1 cold; runs 2 and 3 warm: Q1 warm 2.0, 3.0 -> 2.5 s; Q2 warm 1.0, 4.0 -> 2.5 s
    runs = [[_rec(1, 10.0, True, 400e6), _rec(2, 6.0, True, 100e6)],
            [_rec(1, 2.0, False), _rec(2, 1.0, False, ok=None)],
            [_rec(1, 3.0, False), _rec(2, 4.0, False)]]
    return {"runs": runs, "load": {"database_bytes": 1e9}}


def test_totals_are_sums_of_per_query_medians():
    doc = _doc()
    dss_totals(doc)
    assert [q["seconds"] for q in doc["queries"]] == [2.5, 2.5]
    assert doc["total_seconds"] == 5.0
    assert doc["geomean_seconds"] == pytest.approx(2.5)
    # the warm power runs' totals: 3.0 s and 7.0 s
    assert doc["warm_totals"]["runs"] == [3.0, 7.0]
    assert doc["warm_totals"]["median"] == 5.0 and doc["warm_totals"]["n"] == 2
    assert doc["answers_ok"] is True                  # the unchecked answer (None) does not count
    # runs 2 and 3 read 2 MB of a 1 GB database: served from memory; the cold run read 500 MB
    assert [g["runs"] for g in doc["guards"]] == [[2, 3]]


def test_a_wrong_answer_and_the_cold_run_alone():
    doc = {"runs": [[_rec(1, 4.0, True, ok=False), _rec(3, 9.0, True)]], "load": None}
    dss_totals(doc)
    assert [q["seconds"] for q in doc["queries"]] == [4.0, 9.0]
    assert doc["total_seconds"] == 13.0
    assert doc["geomean_seconds"] == pytest.approx(6.0)
    assert doc["answers_ok"] is False
    assert doc["guards"] == []                        # no database size: nothing to judge
    assert doc["warm_totals"]["runs"] == []


def _probe(name, seq):
    return {"machine": {"targets": [{"block_device": {"name": "sdz"}}, {"block_device": {"name": name}}]},
            "targets": [{"summary": {"read_mbps_seq": 1.0}}, {"summary": {"read_mbps_seq": seq}}]}


def test_scan_is_cold_bytes_over_summed_time_against_the_probe():
    doc = _doc()
    dss_scan(doc, _probe("vda", 250.0), ["vda", "vdb"])
    # 500 MB from vda in 16 s: 31.25 MB/s, an eighth of the probe's 250 MB/s
    assert doc["scan"]["device"] == "vda"
    assert doc["scan"]["achieved_mbps"] == pytest.approx(31.25)
    assert doc["scan"]["probe_read_mbps_seq"] == 250.0
    assert doc["scan"]["ratio"] == pytest.approx(0.125)
    assert doc["scan"]["note"].startswith("cold run")


def test_scan_without_a_matching_probe_target():
    doc = _doc()
    dss_scan(doc, _probe("nvme0n1", 250.0), ["vda"])
    assert doc["scan"]["probe_read_mbps_seq"] is None and doc["scan"]["ratio"] is None
    assert math.isclose(doc["scan"]["achieved_mbps"], 31.25)
    assert doc["scan"]["note"] == "no probe target on the data device"
    bare = _doc()
    dss_scan(bare, None, ["vda"])
    assert "scan" not in bare
