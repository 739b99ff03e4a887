"""core/malloc: glibc takes the fixed mmap threshold, trim threshold and arena bound (their effect on a replay's memory is measured in
bench/simulate_scale.py, not here); populate makes a range's pages, and only those."""

import mmap
import platform

import numpy as np
import pytest

from dbtier.core.malloc import populate, tune_for_chunks


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_takes_the_threshold():
    assert tune_for_chunks(16 << 20) is True



def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(platform.system() != "Linux" or tuple(map(int, platform.release().split(".")[:2])) < (5, 14),
                    reason="MADV_POPULATE_WRITE is Linux 5.14's")
def test_populate_makes_the_pages_of_the_range_asked_and_keeps_what_they_hold():
    # 64 MiB of an anonymous mapping of its own: no page made yet (np.zeros could reuse heap pages an earlier
    # test in this worker freed and glibc kept, already resident)
    a = np.frombuffer(mmap.mmap(-1, 64 << 20), dtype=np.float64)
    a[:8] = 7.0
    before = _rss_bytes()
    assert populate(a, 0, a.size // 2) is True
    grew = _rss_bytes() - before
    assert 30 << 20 <= grew <= 40 << 20, grew  # the first half's pages (32 MiB), not the rest
    assert (a[:8] == 7.0).all() and not a[8:].any()
    assert populate(a) is True


def test_populate_leaves_what_it_cannot_or_need_not_make():
    a = np.zeros(1 << 20)
    assert populate(a[::2]) is False            # not contiguous
    assert populate(a, 0, 1000) is False        # under a megabyte: left to fault in
