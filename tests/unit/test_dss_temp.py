"""TPC-H temp accounting: spill is the engine's files only, whether it reached the temp device, the
per-query figures from one run, the `not judged` advice, and bench dss / lab option refusals."""

from __future__ import annotations

import argparse

import pytest

from dbtier.core.debris import MARKER
from dbtier.core.errors import DbtierError
from dbtier.model.dss import (combine_query_runs, dss_advice, dss_scale_advice, dss_totals, needed_scale,
                              temp_tier)
from dbtier.workloads.dss import TempWatch, dir_bytes, spill_bytes


def test_spill_leaves_out_dbtiers_owner_marker(tmp_path):
    """A spill directory holding the clean-up registry's marker (164 bytes, as claim_dir writes it) and one
    spill file of 1,000 bytes in a subdirectory: the spill is 1,000 bytes; all files are 1,164."""
    (tmp_path / MARKER).write_bytes(b"m" * 164)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "duckdb_temp_storage-0.tmp").write_bytes(b"x" * 1000)
    assert spill_bytes(tmp_path) == 1000
    assert dir_bytes(tmp_path) == 1164


def test_a_marker_alone_is_no_spill(tmp_path):
    """The peak the query's watcher records over a directory holding only dbtier's marker: 0."""
    (tmp_path / MARKER).write_bytes(b"m" * 164)
    with TempWatch(tmp_path, interval_s=0.001) as w:
        pass
    assert w.peak_bytes == 0


def _rec(q, seconds, temp=0, dev=None, cold=False, run=1):
    return {"query": q, "run": run, "cold": cold, "caches_dropped": False, "seconds": seconds, "rows": 1,
            "temp_bytes": temp, "temp_device_write_bytes": dev, "read_bytes": 0, "write_bytes": 0,
            "cpu_util": 96.0, "devices": {}, "answer_ok": True}


def test_two_spilling_queries_are_two_of_22_and_the_tier_was_not_exercised():
    """The issue's run: Q9 spilled 21.9 MB and Q18 88.1 MB, the fast device wrote 0 and 86 KB meanwhile.
    Spill 110.0 MB, device 0.086 MB < 50% of it: stayed in memory; the verdict counts 2 of 22."""
    from dbtier.report.figures.core import dss_stats
    recs = [_rec(q, 0.3, dev=0) for q in range(1, 23)]
    recs[8] = _rec(9, 1.0, temp=21_900_000, dev=0)
    recs[17] = _rec(18, 1.5, temp=88_100_000, dev=86_000)
    doc = {"runs": [recs], "load": {"database_bytes": 1}, "temp_tier": {"device": "vda"}}
    dss_totals(doc)
    tt = doc["temp_tier"]
    assert tt["runs"][0]["spill_bytes"] == 110_000_000 and tt["runs"][0]["device_write_bytes"] == 86_000
    assert tt["runs"][0]["queries_spilled"] == [9, 18]
    assert tt["runs"][0]["temp_tier_exercised"] is False and tt["temp_tier_exercised"] is False
    guard = [g for g in doc["guards"] if g["kind"] == "temp-in-memory"][0]
    assert "run 1 spilled 110.0 MB (Q9, Q18) and vda wrote 0.1 MB" in guard["message"]
    assert "stayed in memory" in guard["message"] and "not exercised" in guard["message"]
    s = dss_stats(doc)
    assert [q for q, _ in s["spilled"]] == [9, 18] and s["queries"] == 22
    # the verdict counts them: (1.0 + 1.5) s of 2.5 + 20 x 0.3 = 8.5 s is 29% of the time
    from dbtier.report.verdict.topics import verdict
    doc.update(command="bench", bench="dss", engine="duckdb", scale=1.0, params={"temp": "/t", "scale": 1.0})
    [text] = [t for t in verdict([doc])["sentences"] if "spilled" in t]
    assert "2 of 22 queries spilled to temp (peak 88.1 MB in Q18, 29% of the time)" in text


def test_spill_that_reached_the_device_exercised_the_tier():
    """100 MB spilled and the device wrote 80 MB (>= 50 MB): exercised, no guard; no spill: None."""
    got = temp_tier([[_rec(9, 1.0, temp=100_000_000, dev=80_000_000), _rec(6, 0.1, dev=5)]], "loop3")
    assert got["runs"][0]["temp_tier_exercised"] is True and got["temp_tier_exercised"] is True
    assert got["guard"] is None
    none = temp_tier([[_rec(6, 0.1, dev=5)]], "loop3")
    assert none["temp_tier_exercised"] is None and none["runs"][0]["spill_bytes"] == 0 and none["guard"] is None


def test_another_writer_on_a_shared_device_does_not_count_as_spill():
    """100 MB spilled; the shared device wrote 400 MB but the query's process only 10 MB (its writes not
    cancelled): 10 MB reached the device, under 50 MB: stayed in memory, and the guard says whose."""
    rec = {**_rec(9, 1.0, temp=100_000_000, dev=400_000_000), "query_written_bytes": 10_000_000}
    got = temp_tier([[rec]], "vda")
    run = got["runs"][0]
    assert run["reached_bytes"] == 10_000_000 and run["temp_tier_exercised"] is False
    assert "vda wrote 400.0 MB while those queries ran (10.0 MB of them the queries' own)" in got["guard"]["message"]
    own = {**rec, "query_written_bytes": 90_000_000}
    assert temp_tier([[own]], "vda")["runs"][0]["temp_tier_exercised"] is True


def test_proc_io_counts_a_process_own_writes_and_cancels_deleted_ones(tmp_path):
    """This process writes 4 MiB and fsyncs it (reaches the device: counted), then writes 4 MiB more and
    deletes the file before writeback (cancelled): written_between is 4 MiB give or take other writes
    of this process (none here), not 8."""
    import os
    from dbtier.workloads.dss import proc_io, written_between
    a = proc_io(os.getpid())
    if a is None:
        pytest.skip("/proc/PID/io is not readable here")
    kept = tmp_path / "kept"
    with open(kept, "wb") as f:
        f.write(b"k" * 4 * 2**20)
        f.flush()
        os.fsync(f.fileno())
    gone = tmp_path / "gone"
    gone.write_bytes(b"g" * 4 * 2**20)
    gone.unlink()
    got = written_between(a, proc_io(os.getpid()))
    assert 4 * 2**20 <= got < 5 * 2**20
    assert proc_io(2**31) is None and written_between(None, a) is None


def test_a_querys_spill_and_time_come_from_the_same_run():
    """Cold run 5.0 s spilling 50 MB; warm runs 1.0 s / 10 MB, 3.0 s / 30 MB, 2.0 s / 20 MB: the median
    warm run is the 2.0 s one, so the query shows 2.0 s and 20 MB (not the 50 MB maximum of the cold run)."""
    recs = [_rec(9, 5.0, temp=50e6, dev=1, cold=True, run=1), _rec(9, 1.0, temp=10e6, dev=2, run=2),
            _rec(9, 3.0, temp=30e6, dev=3, run=3), _rec(9, 2.0, temp=20e6, dev=4, run=4)]
    q = combine_query_runs(recs)
    assert q["seconds"] == 2.0 and q["temp_bytes"] == 20e6 and q["temp_device_write_bytes"] == 4
    assert q["temp_bytes_runs"] == [50e6, 10e6, 30e6, 20e6]


@pytest.mark.parametrize("scale, total_s, want", [
    (3, 2.4, 7),        # 0.8 s per SF: 5 s needs SF 6.25, up to one significant figure: 7
    (0.1, 2.29, 0.3),   # 22.9 s per SF: SF 0.218 -> 0.3
    (1, 0.4, 20),       # 0.4 s per SF: SF 12.5 -> 20
    (1, 5.0, 1),        # exactly the threshold: SF 1
])
def test_needed_scale_by_hand(scale, total_s, want):
    assert needed_scale(scale, total_s, 5.0) == pytest.approx(want)


def test_not_judged_advice_names_the_scale_and_the_repeat_count():
    """SF 3 in 2.4 s with one warm run, MIN_DSS_RUN_S 5 and MIN_RUNS 2: --scale 7 and --repeat 3."""
    stats = [{"scale": 3.0, "total_s": 2.4, "warm_totals": {"n": 1}}]
    text = dss_advice(stats, 5.0, 2)
    assert text.startswith("run --scale 7 or more (lab: --dss-scale 7; 0.8 s per scale factor measured at SF 3: 5 s needs "
                           "SF 6.25")
    assert "--repeat 3 or more" in text and text.endswith(" to judge")
    assert "--repeat" not in dss_advice(stats, 5.0)
    # two runs: the faster per scale factor (SF 1 in 0.5 s: 10 -> 10) sets it, not SF 3's 7
    assert dss_scale_advice(stats + [{"scale": 1.0, "total_s": 0.5}], 5.0).startswith("run --scale 10 or more")
    assert dss_scale_advice([{"scale": 3.0, "total_s": 6.0}], 5.0) is None


def _dss_args(**kw):
    base = {"temp": None, "data": "/data", "engine": "duckdb", "emulate": None, "memory": None,
            "memory_limit": None}
    return argparse.Namespace(**{**base, **kw})


def test_bench_dss_emulate_and_temp_refusals(tmp_path):
    from dbtier.cli.bench.dss import _temp_arg
    from dbtier.workloads.dss import emulated_tier, memory_budget

    def _emulation(a):
        return emulated_tier(a.emulate, a.temp, a.data)

    def _budget(a):
        return memory_budget(a.engine, a.memory, a.memory_limit)
    bad = [(_dss_args(temp=str(tmp_path), emulate=f"{tmp_path}=fast"), "cannot read the rate 'fast'"),
           (_dss_args(temp=str(tmp_path), emulate=f"{tmp_path}=0iops"), "0 IOPS is outside"),
           (_dss_args(temp=str(tmp_path), emulate="150iops"), "expected DIR=RATE"),
           (_dss_args(temp=str(tmp_path), emulate="/elsewhere=150iops"), "neither the --temp nor the --data")]
    for args, needle in bad:
        with pytest.raises(DbtierError) as e:
            _emulation(args)
        assert needle in e.value.message and e.value.exit_code == 2 and e.value.hint
    emu = _emulation(_dss_args(temp=str(tmp_path), emulate=f"{tmp_path}=150riops,300wiops"))
    assert (emu.read_iops, emu.write_iops) == (150, 300)
    emu = _emulation(_dss_args(temp=str(tmp_path), engine="postgres", emulate=f"{tmp_path}=150iops"))
    assert (emu.read_iops, emu.write_iops) == (150, 150)      # PostgreSQL's temp tablespace goes there too
    twice = _dss_args(temp=["/a", "/b"])
    with pytest.raises(DbtierError, match="given 2 times"):
        _temp_arg(twice)
    once = _dss_args(temp=["/a"])
    _temp_arg(once)
    assert once.temp == "/a"
    # the budget: --memory-limit 60MB (62,914,560 bytes as PostgreSQL reads MB) + 128 MiB; none: unbounded
    assert _budget(_dss_args(memory_limit="60MB")) == 60 * 2**20 + 128 * 2**20
    assert _budget(_dss_args(memory_limit="60MB", memory="none")) is None
    assert _budget(_dss_args()) is None
    with pytest.raises(DbtierError, match="duckdb only"):
        _budget(_dss_args(engine="postgres", memory=512 * 2**20))


def test_lab_emulate_refusals(tmp_path):
    from dbtier.cli.lab import _emulation
    with pytest.raises(DbtierError, match="not one of the lab's directories") as e:
        _emulation("/elsewhere=150iops", [str(tmp_path)])
    assert e.value.exit_code == 2
    with pytest.raises(DbtierError, match="cannot read the rate"):
        _emulation(f"{tmp_path}=slow", [str(tmp_path)])
    assert _emulation(None, [str(tmp_path)]) is None


def test_two_tier_table_names_each_tier_and_marks_the_spills():
    from dbtier.report.sections.dss import dss_tiers_html, temp_tier_name

    def doc(temp, secs, spill, emulated=False):
        d = {"command": "bench", "bench": "dss", "engine": "duckdb", "scale": 1, "params": {"temp": temp},
             "queries": [{"query": q, "seconds": s, "temp_bytes": b} for q, s, b in zip((9, 18), secs, spill)],
             "total_seconds": sum(secs),
             "machine": {"targets": [{"path": temp, "block_device": {"name": "nvme0n1", "model": "Samsung 980"}}]}}
        if emulated:
            d.update(emulated={"dir": temp, "read_iops": 150, "write_iops": 150}, emulated_roles=["temp"])
        return d
    fast, slow = doc("/fast", (1.0, 2.0), (21_900_000, 0)), doc("/slow", (3.0, 2.0), (22_000_000, 0), True)
    assert temp_tier_name(fast) == "Samsung 980" and temp_tier_name(slow) == "emulated: 150 IOPS"
    html = dss_tiers_html([fast, slow])
    assert "Q9 <b>spilled</b>" in html and "Q18 <b>spilled</b>" not in html
    assert "3.00×" in html and "1.67×" in html    # Q9 3.0 / 1.0; total 5.0 / 3.0
    assert dss_tiers_html([fast]) == ""


def test_lab_dss_memory_limit_is_parsed_and_refused_without_a_unit(capsys):
    from dbtier.cli.main import build_parser
    ns = build_parser().parse_args(["lab", "/a", "--dss-memory-limit", "80MB"])
    assert ns.dss_memory_limit == "80MB"
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["lab", "/a", "--dss-memory-limit", "80"])
    assert e.value.code == 2 and "needs a unit" in capsys.readouterr().err
