"""`bench backup`'s emulated tier, its limiting side against the throttle, and one run's figures: the pure
parts (the bytes-per-second --emulate text, the blkio lines, the rate through the tier, the terminal line)
and the refusals, which come before anything is built. The tier itself is made for real in
tests/e2e/test_bench_dss_backup.py."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from conftest import call_main

from dbtier.cli.bench.backup import line
from dbtier.core.errors import DbtierError
from dbtier.measure import slowtier
from dbtier.workloads import backup

MIB = 2**20


@pytest.mark.parametrize("rate, bps", [("40MiBps", 40 * MIB), ("40MiB/s", 40 * MIB), ("200MBps", 200_000_000),
                                       ("1.5GiBps", 3 * 2**29), ("40miBps", 40 * MIB)])
def test_parse_bytes_per_second(rate, bps):
    e = slowtier.parse(f"/srv/b={rate}", allow_bps=True)
    assert (e.dir, e.read_bps, e.write_bps, e.read_iops, e.write_iops) == ("/srv/b", bps, bps, 0, 0)


@pytest.mark.parametrize("text, allow, words", [
    ("/srv/b=40MiBps", False, "a bytes-per-second throttle is not offered here"),   # bench oltp's tier: IOPS only
    ("/srv/b=512KiBps", True, "0.50 MiB/s is outside 1 MiB/s..1,000 GiB/s"),
    ("/srv/b=2000GiBps", True, "2,048,000.00 MiB/s is outside"),
    ("/srv/b=40MiB", True, "cannot read the rate"),
    ("/srv/b=40Mbps", True, "cannot read the rate"),        # megabits: not a unit offered
    ("/srv/b=40mibps", True, "cannot read the rate"),
])
def test_parse_bytes_refuses_with_the_culprit(text, allow, words):
    with pytest.raises(DbtierError) as e:
        slowtier.parse(text, allow_bps=allow)
    assert words in str(e.value) and text in str(e.value)


def test_bps_lines_and_the_limits_said():
    assert slowtier.throttle_bps_writes("/sys/fs/cgroup/blkio", 7, 3, 40 * MIB, 0) == [
        ("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", "7:3 41943040"),
        ("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device", "7:3 0")]
    assert slowtier.limits_text(slowtier.parse("/s=40MiBps", True)) == "40 MiB/s of reads and of writes"
    assert slowtier.limits_text(slowtier.parse("/s=150riops,300wiops")) == "150 read and 300 write I/Os per second"


def _rec(**kw) -> dict:
    rec = {"target": "dir", "method": "pg_basebackup tar", "compressed": False, "proc_cpu_cores": 0.2,
           "bytes": 200_000_000, "output_bytes": 200_100_000, "seconds": 5.0, "mbps": 40.0, "runs": 1,
           "null_mbps": 41.0, "devices": {"loop0": {"busy_pct": 1.0, "read_bytes": 0, "write_bytes": 204_000_000,
                                                    "read_iops": 0.0, "write_iops": 50.0}}}
    rec.update(kw)
    return rec


def test_a_target_at_its_throttle_is_the_throttle():
    # the loop device wrote 204,000,000 bytes in 5 s = 40.8 MB/s of 40 MiB/s = 41.94 MB/s: 97%, within 10%
    limit = {"read_bps": 40 * MIB, "write_bps": 40 * MIB, "read_iops": 0, "write_iops": 0}
    rec = _rec()
    backup.judge(rec, "vda", "loop0", None, limit)
    assert rec["bottleneck"] == "target" and "wrote 40.8 MB/s" in rec["bottleneck_evidence"]
    assert "97% of its throttle's 41.9 MB/s" in rec["bottleneck_evidence"]
    # the same run judged without the throttle: null 41 against 40 is not 1.25 times: the source
    rec = _rec()
    backup.judge(rec, "vda", "loop0")
    assert rec["bottleneck"] == "source"
    # an IOPS tier: 50 write IOPS against 500 is far from it; against 52 (96%) it is the throttle
    rec = _rec()
    backup.judge(rec, "vda", "loop0", None, {"read_bps": 0, "write_bps": 0, "read_iops": 52, "write_iops": 52})
    assert rec["bottleneck"] == "target" and "50.0 IOPS" in rec["bottleneck_evidence"]


def test_one_runs_bytes_seconds_and_mbps(monkeypatch):
    """Two runs of 200 MB: 2.0 s (100 MB/s) and 1.5 s (133.3 MB/s). The record is the slower (the lower middle
    of two): 200 MB, 2.0 s, 100 MB/s; the median (100 + 133.3) / 2 = 116.7 MB/s is in mbps_spread and said as
    the median."""
    monkeypatch.setattr(backup, "drop_caches", lambda: False)
    clock = iter([0.0, 2.0, 10.0, 11.5])
    monkeypatch.setattr(backup, "time", SimpleNamespace(monotonic=lambda: next(clock), process_time=time.process_time))
    rec = backup._measure_runs(lambda: (200_000_000, None, "out"), lambda: None, [], 2)
    assert (rec["bytes"], rec["seconds"], rec["mbps"], rec["run"], rec["runs"]) == (200_000_000, 2.0, 100.0, 1, 2)
    assert rec["mbps_runs"] == pytest.approx([100.0, 200 / 1.5]) and rec["seconds_runs"] == pytest.approx([2.0, 1.5])
    assert rec["mbps_spread"]["median"] == pytest.approx(350 / 3)
    rec.update({"target": "dir", "method": "pg_basebackup tar", "bottleneck": "target"})
    text = line(rec)
    assert "200 MB    2.00 s     100 MB/s" in text
    assert "run 1 of 2, the middle one; median 117 MB/s, runs 100–133)" in text



def test_the_first_backup_of_a_series_warms_up_unmeasured(monkeypatch):
    """A warm-up run of 4.0 s (the slow first backup) then two of 2.0 s and 1.5 s: only the two are measured;
    the warm-up's output is cleaned up as every run's is."""
    monkeypatch.setattr(backup, "drop_caches", lambda: False)
    clock = iter([0.0, 4.0, 10.0, 12.0, 20.0, 21.5])
    monkeypatch.setattr(backup, "time", SimpleNamespace(monotonic=lambda: next(clock), process_time=time.process_time))
    calls, cleaned = [], []
    rec = backup._measure_runs(lambda: calls.append(1) or (200_000_000, None, "out"), lambda: cleaned.append(1), [],
                               2, warmup=True)
    assert len(calls) == 3 and len(cleaned) == 3
    assert rec["warmup_runs"] == 1 and rec["runs"] == 2
    assert rec["seconds_runs"] == pytest.approx([2.0, 1.5])        # the 4.0 s warm-up is in neither figure

@pytest.mark.parametrize("emulate, words", [
    ("{elsewhere}=40MiBps", "is neither --to"),
    ("{to}=40MiB", "cannot read the rate"),
    ("{to}=0iops", "outside 1..1,000,000"),
])
def test_emulate_refusals_come_before_anything_is_built(tmp_path, emulate, words):
    to, elsewhere = tmp_path / "to", tmp_path / "elsewhere"
    to.mkdir()
    elsewhere.mkdir()
    r = call_main("bench", "backup", "--to", str(to), "--emulate", emulate.format(to=to, elsewhere=elsewhere),
                  "--out", "run", cwd=tmp_path)
    assert r.returncode != 0 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "run").exists() and list(to.iterdir()) == []
