"""The verdict's sentences for simulate runs (report/verdict/sim.py), on hand-made documents: the figures each
sentence cites, the call on whether a cache helps (the 5% floor by hand), and the mirror's resync and time
without redundancy."""

from __future__ import annotations

import pytest

from dbtier.report.verdict.sim import sentences

MIB = 1 << 20


def _lat(p50: float, p99: float) -> dict:
    return {"read": {"p50": p50, "p95": p50, "p99": p99, "p999": p99},
            "write": {"p50": 1.0, "p95": 1.0, "p99": 1.0, "p999": 1.0}}


def _cache_doc(p50: float, p99: float, base_p50: float = 11_520.0, base_p99: float = 9_260_000.0) -> dict:
    return {"command": "simulate", "design": "read-cache", "policy": "lru", "read_hit_ratio": 0.083,
            "request_hit_ratio": 0.008, "latency_us": _lat(p50, p99), "resync": None,
            "simulation": {"trace_info": {"path": "/data/cloudPhysicsIO.csv"}, "cache": {"cache_gb": 1e-5},
                           "devices": {"cache": {"id": "fusionio-iodrive-320gb"}, "backing": {"id": "sas-15k-73gb"}},
                           "baseline": {"device": "sas-15k-73gb", "latency_us": _lat(base_p50, base_p99)}}}


def test_a_cache_slower_at_the_median_is_called_slower_with_its_figures():
    """The figures of the issue's run: 20.02 ms against 11.52 ms is +73.8% (20.02 / 11.52 - 1), p99 9.41 s against
    9.26 s +1.6% (under 5%: unchanged)."""
    [s] = sentences([_cache_doc(20_020.0, 9_410_000.0)])
    assert s["helps"] == "slower"
    assert s["read_p50_change_pct"] == pytest.approx(73.785, abs=1e-3)
    assert s["read_p99_change_pct"] == pytest.approx(1.620, abs=1e-3)
    t = s["text"]
    assert t.startswith("read cache on cloudPhysicsIO.csv (simulated): a 10 kB lru cache on "
                        "fusionio-iodrive-320gb in front of sas-15k-73gb gains a read hit ratio of 8.3% of blocks, "
                        "0.8% of requests whole (sas-15k-73gb alone: none); ")
    assert "read p50 20.02 ms against 11.52 ms for sas-15k-73gb alone (+74%)" in t
    assert "read p99 9.41 s against 9.26 s for sas-15k-73gb alone (+1.6%)" in t
    assert t.endswith("the cache makes reads slower: p50 5% or more slower.")


@pytest.mark.parametrize("p50, p99, call, tail", [
    # 9.93 / 11.52 - 1 = -13.8%; p99 equal: helps at p50
    (9_930.0, 9_260_000.0, "helps", "the cache helps: p50 5% or more faster, no percentile slower."),
    # -4.9% and +4.9%: both under the floor
    (11_520.0 * 0.951, 9_260_000.0 * 1.049, "unchanged",
     "the cache does not change read latency (p50 and p99 within 5% of sas-15k-73gb alone)."),
    # exactly -5% counts as faster (the floor is inclusive), +6% at p99 slower: mixed
    (11_520.0 * 0.95, 9_260_000.0 * 1.06, "mixed", "mixed: p50 faster, p99 slower, each by 5% or more."),
])
def test_whether_the_cache_helps(p50, p99, call, tail):
    [s] = sentences([_cache_doc(p50, p99)])
    assert s["helps"] == call and s["text"].endswith(tail)


def test_a_cache_run_without_a_baseline_says_so():
    doc = _cache_doc(1.0, 1.0)
    doc["simulation"]["baseline"] = None
    [s] = sentences([doc])
    assert s["helps"] is None and s["text"].endswith("no baseline latency in the result to judge it by.")


def _mirror_doc(resync: dict | None, failure: dict | None) -> dict:
    return {"command": "simulate", "design": "preferred-read-mirror", "policy": None, "read_hit_ratio": None,
            "request_hit_ratio": None, "latency_us": _lat(26.0, 40.0), "resync": resync,
            "simulation": {"trace_info": {"path": "trace.csv"},
                           "devices": {"fast": {"id": "fusionio-iodrive-320gb"}, "slow": {"id": "sas-15k-73gb"}},
                           "baseline": {"device": "sas-15k-73gb", "latency_us": _lat(5_500.0, 40_000.0)},
                           "mirror": {"failure": failure, "region_size": MIB,
                                      "tracking": {"model": "asm-au", "region_size": MIB}}}}


def test_mirror_resync_and_time_without_redundancy():
    """30 minutes down (1,800 s to 3,600 s); 781 regions of 1 MiB = 818,937,856 B = 819 MB copied in 8.3 s;
    without redundancy 1,800 + 8.3 = 1,808.3 s."""
    rs = {"regions": 781, "bytes": 781 * MIB, "seconds": 8.3, "unprotected_seconds": 1808.3}
    lat, res = sentences([_mirror_doc(rs, {"side": "slow", "fail_at_s": 1800.0, "return_at_s": 3600.0})])
    # reads from the flash: 26 us against 5.5 ms (-100%), 40 us against 40 ms
    assert lat["helps"] == "helps" and "read p50 26 µs against 5.50 ms for sas-15k-73gb alone (-100%)" in lat["text"]
    assert res["text"] == ("preferred-read mirror on trace.csv (simulated): with the slow side down from 1,800 s "
                           "to 3,600 s (1,800 s), the writes dirtied 781 regions of 1.0 MiB (asm-au tracking): "
                           "the resync copies 819 MB in 8.3 s; without redundancy for 1,808 s (the failure's "
                           "1,800 s plus the resync).")
    assert res["resync_bytes"] == 781 * MIB and res["unprotected_seconds"] == 1808.3 and res["tracking"] == "asm-au"


def test_mirror_side_that_never_returns():
    rs = {"regions": 5, "bytes": 5 * MIB, "seconds": None, "unprotected_seconds": 750.0}
    [_, res] = sentences([_mirror_doc(rs, {"side": "fast", "fail_at_s": 250.0, "return_at_s": None})])
    assert res["text"].endswith("the fast side fails at 250.0 s and does not return within the trace: no resync; "
                                "without redundancy for 750.0 s, to the trace's end.")


def test_no_sentence_for_other_runs():
    single = {**_cache_doc(1.0, 1.0), "design": "single"}
    assert sentences([single, {"command": "probe"}, "not a doc"]) == []
    # a mirror without a failure: the latency sentence only
    assert len(sentences([_mirror_doc(None, None)])) == 1
