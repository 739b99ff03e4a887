"""`simulate capture`: every reason blktrace cannot run, judged from facts, and the command lines."""

from __future__ import annotations

import dataclasses

import pytest

from dbtier.sim.trace import capture as cap

OK = cap.Facts(target="/dev/sdb", block_device="/dev/sdb", filesystem=None, blktrace="/usr/sbin/blktrace",
               blkparse="/usr/bin/blkparse", root=True, trace_sysfs=True, debugfs_mounted=True, lockdown=None)


def _with(**kw):
    return dataclasses.replace(OK, **kw)


def test_all_present_is_no_obstacle():
    assert cap.obstacle(OK) is None


@pytest.mark.parametrize("facts, message, hint", [
    (_with(blktrace=None, blkparse=None), "blktrace and blkparse not installed", "apt-get install blktrace"),
    (_with(blkparse=None), "blkparse not installed", "apt-get install blktrace"),
    (_with(root=False), "blktrace needs root (CAP_SYS_ADMIN)", "as root"),
    (_with(target="/dev/shm", block_device=None, filesystem="tmpfs"),
     "/dev/shm is on a filesystem with no block device under it (tmpfs)", "disk-backed filesystem"),
    (_with(trace_sysfs=False), "built without CONFIG_BLK_DEV_IO_TRACE", "fio --write_iolog"),
    (_with(lockdown="integrity"), "the kernel is in lockdown (integrity)", "without kernel lockdown"),
    (_with(debugfs_mounted=False), "debugfs is not mounted at /sys/kernel/debug", "--mount-debugfs"),
])
def test_each_obstacle(facts, message, hint):
    err = cap.obstacle(facts)
    assert err is not None and message in err.message and hint in err.hint
    assert err.message.startswith("cannot capture: ")


def test_missing_tools_come_before_everything_else():
    err = cap.obstacle(_with(blktrace=None, root=False, block_device=None, debugfs_mounted=False))
    assert "not installed" in err.message


def test_blktrace_refused_under_lockdown():
    # what this project's CI VM answers: blktrace exits at once, the kernel logs the lockdown
    err = cap.blktrace_failure("Invalid path /dev/vda specified: 1/Operation not permitted\n",
                               "[ 2058.8] Lockdown: blktrace: debugfs access is restricted; see man kernel_lockdown.7",
                               "/dev/vda")
    assert "the kernel is in lockdown and refuses blktrace access to debugfs for /dev/vda" in err.message
    assert "Invalid path /dev/vda specified" in err.message


def test_blktrace_refused_otherwise():
    err = cap.blktrace_failure("Thread 0 failed open /sys/kernel/debug/block/sdb/trace0: 1/Operation not permitted",
                               "", "/dev/sdb")
    assert "the kernel refused blktrace for /dev/sdb (Operation not permitted" in err.message
    busy = cap.blktrace_failure("BLKTRACESETUP(2) /dev/sdb failed: 16/Device or resource busy", "", "/dev/sdb")
    assert "already being traced" in busy.message


def test_command_lines():
    assert cap.blktrace_argv("blktrace", "/dev/sdb", "/r/raw", seconds=30) == \
        ["blktrace", "-d", "/dev/sdb", "-D", "/r/raw", "-o", "capture", "-w", "30"]
    assert cap.blktrace_argv("blktrace", "/dev/sdb", "/r/raw") == ["blktrace", "-d", "/dev/sdb", "-D", "/r/raw",
                                                                   "-o", "capture"]
    assert cap.blkparse_argv("blkparse", "/r/raw", "/r/trace.blkparse.txt") == \
        ["blkparse", "-i", "capture", "-D", "/r/raw", "-o", "/r/trace.blkparse.txt"]


def test_capture_seconds():
    assert cap.capture_seconds(30.0, True) == 30.0      # --duration wins, command or not
    assert cap.capture_seconds(30.0, False) == 30.0
    assert cap.capture_seconds(None, True) is None       # while the command runs
    assert cap.capture_seconds(None, False) == 10.0      # neither: ten seconds


def test_trace_path(tmp_path):
    f = tmp_path / "t.csv"
    assert cap.trace_path(str(f)) == f                  # a file (even one not there yet: read_trace says so)
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(Exception) as e:
        cap.trace_path(str(run))
    assert e.value.message == f"{run} is a directory without a captured or converted trace"
    (run / "trace.blkparse.txt").write_text("")
    assert cap.trace_path(str(run)) == run / "trace.blkparse.txt"
