"""The emulated slow tier's pure part (dbtier.measure.slowtier): the --emulate text, where the throttle
goes, what is written, how large the backing file is. The tier itself is made for real in
tests/e2e/test_bench_oltp_emulate.py."""

from __future__ import annotations

import pytest

from dbtier.core.errors import DbtierError
from dbtier.measure import slowtier
from samples import DATA

MIB = 2**20


def test_parse_one_rate_for_reads_and_writes():
    e = slowtier.parse("/srv/slow=150iops")
    assert (e.dir, e.read_iops, e.write_iops) == ("/srv/slow", 150, 150)


def test_parse_separate_rates_and_a_dir_with_an_equals_sign():
    e = slowtier.parse("/srv/a=b=120riops,300wiops")
    assert (e.dir, e.read_iops, e.write_iops) == ("/srv/a=b", 120, 300)


@pytest.mark.parametrize("text, words", [
    ("/srv/slow", "expected DIR=RATE"),
    ("=150iops", "expected DIR=RATE"),
    ("/srv/slow=", "expected DIR=RATE"),
    ("/srv/slow=150", "cannot read the rate"),
    ("/srv/slow=fast", "cannot read the rate"),
    ("/srv/slow=0iops", "outside 1..1,000,000"),
    ("/srv/slow=2000000iops", "outside 1..1,000,000"),
    ("/srv/slow=-5iops", "cannot read the rate"),
])
def test_parse_refuses_with_the_culprit(text, words):
    with pytest.raises(DbtierError) as e:
        slowtier.parse(text)
    assert words in str(e.value) and text in str(e.value)


def test_throttle_lines_and_their_undo():
    w = slowtier.throttle_writes("/sys/fs/cgroup/blkio", 7, 3, 150, 300)
    assert w == [("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device", "7:3 150"),
                 ("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device", "7:3 300")]
    assert slowtier.throttle_writes("/b", 7, 3, 0, 0)[0][1] == "7:3 0"


def test_blkio_root_on_this_machines_saved_mountinfo():
    text = (DATA / "cgroup" / "v1-hybrid.mountinfo").read_text()
    assert slowtier.blkio_root(text) == "/sys/fs/cgroup/blkio"


def test_blkio_root_absent_on_pure_v2_and_inside_a_delegated_subtree():
    v2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    assert slowtier.blkio_root(v2) is None
    # a container seeing only its own part of the hierarchy: its root is not the hierarchy's
    sub = "38 31 0:35 /docker/abc /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    assert slowtier.blkio_root(sub) is None
    # blkio mounted together with another controller still counts
    both = "38 31 0:35 / /sys/fs/cgroup/blkio,io rw - cgroup cgroup rw,cpu,blkio\n"
    assert slowtier.blkio_root(both) == "/sys/fs/cgroup/blkio,io"


def test_backing_file_takes_what_is_wanted_at_most_what_is_spare_in_whole_mib():
    assert slowtier.backing_bytes(3 * 2**30, 10 * 2**30) == 3 * 2**30
    assert slowtier.backing_bytes(3 * 2**30, 2**30 + 123) == 2**30
    assert slowtier.backing_bytes(5 * MIB + 7, 100 * MIB) == 5 * MIB
    assert slowtier.backing_bytes(2**30, -5) == 0
