"""The memory budget's pure part (measure/cgroup.py: locate, build, the default budget rule) and, as root
where a memory controller is writable, one real cgroup made, filled and removed."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest

from dbtier.cli import options
from dbtier.measure import cgroup
from dbtier.measure.cgroup import Place
from dbtier.workloads.settings import pg_memory_bytes

DATA = Path(__file__).parent.parent / "data" / "cgroup"
MIB = 1024 * 1024

# A systemd machine with only the unified hierarchy (cgroup v2), as /proc/self/* show it.
V2_CGROUP = "0::/user.slice/user-1000.slice/session-2.scope\n"
V2_MOUNTINFO = ("24 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
                "rw,nsdelegate,memory_recursiveprot\n")


def test_locate_on_this_machines_hybrid_layout():
    """Saved from the dev machine: v2 mounted at /sys/fs/cgroup/unified (no memory controller there, which
    open() finds out), v1 memory at /sys/fs/cgroup/memory with our cgroup /process_api/<id>."""
    places = cgroup.locate((DATA / "v1-hybrid.proc-cgroup").read_text(), (DATA / "v1-hybrid.mountinfo").read_text())
    assert places == [Place(2, "/sys/fs/cgroup/unified"),
                      Place(1, "/sys/fs/cgroup/memory/process_api/547522e90de05726ec8412cbe907746d")]


def test_locate_v2_only_and_a_mount_whose_root_is_not_slash():
    assert cgroup.locate(V2_CGROUP, V2_MOUNTINFO) == [
        Place(2, "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope")]
    # a container's bind mount of /docker/abc: our path /docker/abc/app is /sys/fs/cgroup/app there
    mi = "40 30 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    assert cgroup.locate("0::/docker/abc/app\n", mi) == [Place(2, "/sys/fs/cgroup/app")]
    # a cgroup outside what the mount shows is not a place
    assert cgroup.locate("0::/elsewhere\n", mi) == []
    assert cgroup.locate("0::/\n", "") == []


def test_build_v1_writes_limit_in_bytes():
    p = cgroup.build(Place(1, "/sys/fs/cgroup/memory/a/"), 256 * MIB, "dbtier-x1")
    assert p.mechanism == "cgroup1" and p.dir == "/sys/fs/cgroup/memory/a/dbtier-x1"
    assert p.writes == (("memory.limit_in_bytes", "268435456"),)   # 256 * 1048576, memory only (no memsw)
    assert p.procs == "/sys/fs/cgroup/memory/a/dbtier-x1/cgroup.procs"
    assert p.parent_procs == "/sys/fs/cgroup/memory/a/cgroup.procs"


def test_build_v2_writes_memory_max():
    p = cgroup.build(Place(2, "/sys/fs/cgroup/u.slice"), 300_000_000, "dbtier-x2")
    assert p.mechanism == "cgroup2" and p.dir == "/sys/fs/cgroup/u.slice/dbtier-x2"
    assert p.writes == (("memory.max", "300000000"),)
    assert p.procs == "/sys/fs/cgroup/u.slice/dbtier-x2/cgroup.procs"


def test_build_refuses_a_name_dbtier_did_not_make():
    for bad in ("user.slice", "dbtier-../x", ""):
        with pytest.raises(ValueError):
            cgroup.build(Place(1, "/sys/fs/cgroup/memory"), MIB, bad)
    assert cgroup.new_name().startswith("dbtier-") and cgroup.new_name() != cgroup.new_name()


def test_default_budget_worked_by_hand():
    """A 1.2 GB database: budget 1.2e9 / 4 = 300 MB; shared_buffers (128 MiB asked) capped at 300 MB / 4 =
    75 MB, rounded down to 8 kB pages: 9155 pages = 74,997,760 bytes."""
    assert cgroup.default_budget(1_200_000_000) == 300_000_000
    assert cgroup.shared_buffers_bytes(300_000_000, 128 * MIB) == 9155 * 8192 == 74_997_760


def test_default_budget_floor_clients_and_small_asks():
    """A 100 MB database: a quarter is 25 MB, below the 128 MiB floor, so 128 MiB; shared_buffers 32 MiB.
    With a sweep up to 16 clients, 16 x 6 MiB = 96 MiB more: 224 MiB. A smaller ask than a quarter is
    kept; PostgreSQL's minimum is 16 pages (128 kB)."""
    assert cgroup.default_budget(100_000_000) == 128 * MIB
    assert cgroup.default_budget(100_000_000, clients=16) == 224 * MIB
    assert cgroup.default_budget(1_200_000_000, clients=2) == 300_000_000 + 12 * MIB
    assert cgroup.shared_buffers_bytes(128 * MIB, 128 * MIB) == 32 * MIB
    assert cgroup.shared_buffers_bytes(1024 * MIB, 16 * MIB) == 16 * MIB
    assert cgroup.shared_buffers_bytes(64 * MIB, 1) == 128 * 1024


def test_memory_option():
    conv = options.size_or(("none",), lo=64 * MIB)
    assert conv("256MiB") == 256 * MIB and conv("1g") == 1024 * MIB and conv(" None ") == "none"
    for bad in ("1k", "nan", "-1G", "lots", "0"):
        with pytest.raises(argparse.ArgumentTypeError):
            conv(bad)
    assert pg_memory_bytes("128MB") == 128 * MIB
    assert pg_memory_bytes("16384", plain_kb=8) == 128 * MIB   # a bare shared_buffers is 8 kB pages


def _writable_memory_controller() -> bool:
    mc = cgroup.MemoryCgroup(64 * MIB).open()
    ok = mc.created
    mc.close()
    return ok and not mc.created


@pytest.mark.skipif(os.geteuid() != 0 or not _writable_memory_controller(),
                    reason="needs root and a writable memory controller")
def test_real_cgroup_is_made_limited_and_removed_with_a_process_inside():
    mc = cgroup.MemoryCgroup(96 * MIB).open()
    child = None
    try:
        d = Path(mc.plan.dir)
        assert d.name.startswith("dbtier-") and d.parent == Path(mc.plan.parent)
        f, v = mc.plan.writes[0]
        assert int((d / f).read_text()) == 96 * MIB      # 96 MiB is page-aligned: read back as written
        child = subprocess.Popen(["sh", "-c", 'echo $$ > "$0" && exec sleep 30', mc.plan.procs])
        for _ in range(50):
            if child.pid in mc.pids():
                break
            subprocess.run(["sleep", "0.1"])
        assert mc.pids() == [child.pid]
        mc.close()
        assert not d.exists() and not mc.created     # the sleeper was moved back to the parent first
        assert str(child.pid) in Path(mc.plan.parent_procs).read_text().split()
    finally:
        mc.close()
        if child:
            child.kill()
            child.wait()


def test_no_usable_controller_says_why_and_makes_nothing(tmp_path):
    """A v2 hierarchy (a plain directory standing in for it) whose memory controller is not delegated, and
    no v1 memory hierarchy: nothing is made, mechanism none, the reason names the directory."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "cgroup.subtree_control").write_text("cpu io\n")
    mi = f"41 23 0:38 / {tmp_path} rw,relatime - cgroup2 cgroup2 rw\n"
    mc = cgroup.MemoryCgroup(256 * MIB, proc_cgroup="0::/app\n", mountinfo=mi).open()
    assert mc.mechanism == "none" and not mc.created and mc.plan is None
    assert "memory controller is not delegated" in mc.reason and str(tmp_path / "app") in mc.reason
    assert sorted(p.name for p in (tmp_path / "app").iterdir()) == ["cgroup.subtree_control"]
    mc.close()   # nothing to remove: a no-op
    nothing = cgroup.MemoryCgroup(256 * MIB, proc_cgroup="0::/\n", mountinfo="").open()
    assert nothing.mechanism == "none" and "no cgroup memory controller is mounted" in nothing.reason


# -- where no cgroup can be made: the data set sized past free memory (the `size` mechanism)

def test_size_past_memory_hand_worked():
    # 24 GiB available, 110 MB a warehouse: 1.5 x 25,769,803,776 / 110e6 = 351.4 -> 352 warehouses, and the
    # disk must hold twice the 38.72 GB: 77.44 GB.
    units, why = cgroup.size_past_memory(24 * 2**30, 110e6, 100_000, 80 * 10**9)
    assert units == 352 and "352 x 110 MB = 38.7 GB, 1.5x the 24.0 GiB available" in why
    units, why = cgroup.size_past_memory(24 * 2**30, 110e6, 100_000, 77 * 10**9)
    assert units is None and "needs 77.4 GB on disk and 77.0 GB is spare" in why
    # pgbench, 256 MiB available: 1.5 x 268,435,456 / 16e6 = 25.17 -> 26
    assert cgroup.size_past_memory(256 * 2**20, 16e6, 1_000_000, 10**12)[0] == 26
    units, why = cgroup.size_past_memory(256 * 2**20, 16e6, 20, 10**12)
    assert units is None and "26 units, more than the workload's 20" in why


def test_mem_available_from_meminfo_text():
    text = "MemTotal:       24551220 kB\nMemFree:        1000 kB\nMemAvailable:   24100500 kB\n"
    assert cgroup.mem_available_bytes(text) == 24100500 * 1024
    assert cgroup.mem_available_bytes("MemTotal: 5 kB\n") is None
    assert cgroup.mem_available_bytes("MemAvailable: lots kB\n") is None


def test_can_make_says_why_not_on_v2_without_the_memory_controller():
    proc = "0::/user.slice/session-1.scope\n"
    mountinfo = "30 23 0:26 / /nonexistent/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    assert "does not exist" in cgroup.can_make(proc, mountinfo)
    assert cgroup.can_make("0::/\n", "") == "no cgroup memory controller is mounted"


def test_no_cgroup_decides_size_or_none_with_the_reason():
    # 256 MiB available, 16 MB a pgbench scale unit: ceil(1.5 x 268,435,456 / 16e6) = 26, 832 MB of disk
    mech, reason, units = cgroup.no_cgroup("ro", True, 256 * 2**20, 16e6, 1_000_000, 10**9, "/d")
    assert (mech, units) == ("size", 26)
    assert reason == ("no memory cgroup can be made (ro); the data set is sized past free memory: 26 x 16 MB = "
                      "0.4 GB, 1.5x the 0.2 GiB available on /d")
    mech, reason, units = cgroup.no_cgroup("ro", True, 256 * 2**20, 16e6, 1_000_000, 800 * 10**6, "/d")
    assert (mech, units) == ("none", None) and reason.endswith("needs 0.8 GB on disk and 0.8 GB is spare: reads "
                                                               "will come from memory")
    assert cgroup.no_cgroup("ro", False, 256 * 2**20, 16e6, 10, 10**12, "/d")[0:3:2] == ("none", None)
    assert "no MemAvailable" in cgroup.no_cgroup("ro", True, None, 16e6, 10, 10**12, "/d")[1]
