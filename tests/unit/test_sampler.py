"""/proc parsers and utilisation maths on saved text and hand-worked numbers."""

import pytest

from dbtier.measure.sampler import cpu_between, disk_between, parse_diskstats, parse_proc_stat

STAT_A = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\nintr 1\n"
STAT_B = "cpu  160 0 70 900 70 0 0 0 0 0\n"
# /proc/diskstats: major minor name reads merged sectors ms writes merged sectors ms inflight io_ms weighted_ms ...
DISK_A = " 254       0 vda 1000 0 8000 500 2000 0 32000 1500 0 1000 2000 0 0 0 0 0 0\n"
DISK_B = " 254       0 vda 1100 0 8800 600 2400 0 48000 2300 0 1500 3400 0 0 0 0 0 0\n"


def test_cpu_between():
    u = cpu_between(parse_proc_stat(STAT_A), parse_proc_stat(STAT_B))
    # deltas: user 60, system 20, idle 100, iowait 20 -> total 200
    assert u["user_pct"] == 30 and u["system_pct"] == 10 and u["iowait_pct"] == 10
    assert u["busy_pct"] == 40


def test_disk_between_is_iostat_x():
    a, b = parse_diskstats(DISK_A)["vda"], parse_diskstats(DISK_B)["vda"]
    d = disk_between(a, b, 2.0)
    assert d["iops"] == 250                  # (100 + 400) / 2 s
    assert d["read_iops"] == 50 and d["write_iops"] == 200
    assert d["read_ios"] == 100              # 1100 - 1000 reads: the raw count the cache guard compares
    assert d["mbps"] == pytest.approx((800 + 16000) * 512 / 2 / 1e6)
    assert d["await_ms"] == pytest.approx((100 + 800) / 500)   # wait ms per I/O
    assert d["busy_pct"] == 25               # 500 ms busy of 2000
    assert d["queue"] == pytest.approx(0.7)  # 1400 weighted ms / 2000 ms


def test_no_cpu_line_is_an_error():
    with pytest.raises(ValueError):
        parse_proc_stat("intr 1\n")


def test_a_failed_wait_query_is_kept_and_not_asked_again():
    """The sampling callback raises once: its first line is stored (for the verdict to read), the
    sample carries no wait figures, and /proc keeps being sampled without calling it again."""
    from dbtier.measure.sampler import Sampler
    calls = []

    def boom():
        calls.append(1)
        raise RuntimeError("server closed the connection unexpectedly\n\tThis probably means ...")
    s = Sampler([], extra=boom)
    a, b = s.take(), s.take()
    assert s.extra_error == "server closed the connection unexpectedly"
    assert a.extra is None and b.extra is None and len(calls) == 1 and b.cpu
