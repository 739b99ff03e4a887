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



# The loop device of a throttled tier (blkio write_iops 500) before and after 5 s of fio's sequential 4 KiB
# direct writes at queue depth 16, as /proc/diskstats read them on this project's VM.
LOOP_A = "   7       0 loop0 404603 20449 15169882 134272 609528 226359 51579601 264964 0 88876 437172 2056 0 302673312 2901 100267 35033\n"
LOOP_B = "   7       0 loop0 404608 20449 15169922 134273 611285 227118 51624241 265427 0 88876 437637 2056 0 302673312 2901 100270 35034\n"


def test_merged_ios_count_toward_a_throttle():
    from dbtier.workloads.parsers.oltp import throttles_of
    d = disk_between(parse_diskstats(LOOP_A)["loop0"], parse_diskstats(LOOP_B)["loop0"], 5.0)
    # 1,757 writes completed and 759 merged into them in 5 s: 351.4 + 151.8 = 503.2 a second, the throttle's 500
    assert d["write_iops"] == pytest.approx(1757 / 5) and d["write_merged_iops"] == pytest.approx(759 / 5)
    assert d["read_merged_iops"] == 0
    [t] = throttles_of([{"device": "loop0", **d}], {"loop0": {"read_iops": 1000, "write_iops": 500}})
    assert t.write_iops == pytest.approx(2516 / 5) and t.at_limit() == [("writes", pytest.approx(503.2), 500)]

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
