"""History edges (issue 13 item 8): 32-bit sector wraps, NVMe namespace names, wraps of partitions,
and the two sums of peaks of a consolidation. Expected figures are worked by hand in each docstring."""

from __future__ import annotations

import json

import pytest

from conftest import call_main
from dbtier.history.sources.diskstats import is_partition_of, whole_disks
from dbtier.history.summary import own_sum_of_peaks

T0 = 1_700_000_000


def _snap(t: int, lines: list[str]) -> str:
    return f"# dbtier-diskstats time={t} btime=1699990000 host=db32\n" + "\n".join(lines) + "\n"


def _line(major: int, minor: int, name: str, reads: int, sectors: int, writes: int = 100, wsectors: int = 800) -> str:
    return f"{major:4d} {minor:7d} {name} {reads} 0 {sectors} 500 {writes} 0 {wsectors} 50 0 400 550"


def test_32bit_sector_counter_wrap_is_a_wrap_not_a_restart(tmp_path):
    """A 32-bit kernel: sda's sectors read go 4,294,967,000 -> 200 in 60 s while reads go 1,000 -> 1,600.
    In sectors the wrap is 2^32 - 4,294,967,000 + 200 = 296 + 200 = 496 sectors = 253,952 bytes, so
    read MB/s = 253,952 / 60 / 1e6 = 0.0042325 and read IOPS = 600 / 60 = 10. Before the fix the rule
    saw bytes (4,294,967,000 x 512 >= 2^32) and took a 64-bit counter: a reset, the interval dropped.
    sda1 wraps at the same time and is a partition (detail): wraps = 1, not 2."""
    text = (_snap(T0, [_line(8, 0, "sda", 1000, 4_294_967_000), _line(8, 1, "sda1", 1000, 4_294_967_000)])
            + _snap(T0 + 60, [_line(8, 0, "sda", 1600, 200), _line(8, 1, "sda1", 1600, 200)]))
    (tmp_path / "ds.txt").write_text(text)
    r = call_main("history", "import", "--source", "diskstats", "ds.txt", "--json", "--out", "imp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    db = json.loads(r.stdout)["databases"][0]
    assert db["restarts"] == 0 and db["wraps"] == 1 and db["intervals"] == 1
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(10.0)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(253_952 / 60 / 1e6)


def test_nvme_namespace_ten_is_not_a_partition_of_namespace_one():
    """nvme0n10 follows nvme0n1 in name only: a digit-ending disk's partitions are <disk>p<N>."""
    assert not is_partition_of("nvme0n10", "nvme0n1")
    assert is_partition_of("nvme0n1p2", "nvme0n1") and is_partition_of("sda12", "sda")
    assert not is_partition_of("sdaa", "sda") and not is_partition_of("mmcblk0", "mmcblk0")
    assert whole_disks(["nvme0n1", "nvme0n10", "nvme0n1p1", "nvme0n10p3", "sda", "sda1", "sdaa"]) == \
        {"nvme0n1", "nvme0n10", "sda", "sdaa"}


def _imp(name: str, iops: dict, mbps: dict) -> dict:
    return {"databases": [{"name": name, "total": {"iops": iops, "mbps": mbps}}]}


def test_own_sum_of_peaks_adds_each_databases_own_series_peak():
    """Two imports: A's own intervals peak at 900 IOPS (p95 700), B's at 400 (p95 350); MB/s 9 and 4.
    max: 900 + 400 = 1,300 IOPS, 13 MB/s; p95: 700 + 350 = 1,050. A database without the figure makes the
    sum missing (named), never a silent 0."""
    docs = [_imp("A", {"max": 900.0, "p95": 700.0}, {"max": 9.0, "p95": 7.0}),
            _imp("B", {"max": 400.0, "p95": 350.0}, {"max": 4.0, "p95": 3.0})]
    assert own_sum_of_peaks(docs) == {"percentile": "max", "iops": 1300.0, "mbps": 13.0}
    assert own_sum_of_peaks(docs, "95") == {"percentile": "95", "iops": 1050.0, "mbps": 10.0}
    docs.append(_imp("C", {"max": 10.0}, {}))
    got = own_sum_of_peaks(docs)
    assert got["iops"] == 1310.0 and got["mbps"] is None and got["mbps_missing"] == ["C"]


def test_with_headroom_adds_it_and_keeps_missing_figures_missing():
    from dbtier.history.summary import with_headroom
    req = {"read_iops": 1000.0, "write_iops": 0.0, "read_mbps": None, "write_mbps": 40.0, "capacity_gb": 500.0,
           "percentile": 95.0, "headroom": 0.5}
    # 1000 x 1.5 = 1500; 0 stays 0 (measured none); missing stays missing; 40 x 1.5 = 60; 500 x 1.5 = 750
    assert with_headroom(req) == {"read_iops": 1500.0, "write_iops": 0.0, "read_mbps": None, "write_mbps": 60.0,
                                  "capacity_gb": 750.0}
