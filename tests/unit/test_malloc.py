"""core/malloc: glibc takes the fixed mmap threshold, trim threshold and arena bound (their effect on a replay's memory is measured in
bench/simulate_scale.py, not here)."""

import platform

import pytest

from dbtier.core.malloc import tune_for_chunks


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_takes_the_threshold():
    assert tune_for_chunks(16 << 20) is True

