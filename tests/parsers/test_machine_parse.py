"""/proc parsers on saved text."""

from dbtier.measure.machine import mount_for, parse_cpu_model, parse_meminfo_total, parse_mountinfo

MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard,resv_strict
25 22 0:21 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw,size=24731712k
40 22 259:3 / /var/lib/pg\\040data rw,noatime shared:9 - xfs /dev/nvme0n1p3 rw,attr2,inode64,logbufs=8
41 40 259:4 / /var/lib/pg\\040data/wal rw,noatime,nobarrier shared:10 - ext4 /dev/nvme1n1 rw
"""


def test_parse_mountinfo_fields_and_escapes():
    m = parse_mountinfo(MOUNTINFO)
    assert len(m) == 4
    assert m[0] == {"mount_point": "/", "major": 254, "minor": 0, "mount_options": "rw,relatime",
                    "fs_type": "ext4", "source": "/dev/vda", "super_options": "rw,discard,resv_strict"}
    assert m[2]["mount_point"] == "/var/lib/pg data"  # \040 is a space
    assert m[2]["fs_type"] == "xfs" and (m[2]["major"], m[2]["minor"]) == (259, 3)


def test_mount_for_picks_longest_prefix():
    m = parse_mountinfo(MOUNTINFO)
    assert mount_for("/var/lib/pg data/wal/000001", m)["source"] == "/dev/nvme1n1"
    assert mount_for("/var/lib/pg data/base", m)["fs_type"] == "xfs"
    assert mount_for("/var/lib/pg", m)["mount_point"] == "/"   # a prefix of the name is not a parent
    assert mount_for("/dev/shm/x", m)["fs_type"] == "tmpfs"


def test_meminfo_and_cpuinfo():
    assert parse_meminfo_total("MemTotal:       24731712 kB\nMemFree: 1 kB\n") == 24731712 * 1024
    assert parse_cpu_model("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor @ 2.10GHz\n") == \
        "Intel(R) Xeon(R) Processor @ 2.10GHz"
    assert parse_cpu_model("") is None
