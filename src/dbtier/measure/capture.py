"""`dbtier simulate capture`, the side effects: gather the facts, mount debugfs, run blktrace and blkparse.

The pure part (which obstacle stops blktrace, its command lines, how its
failure reads) is `dbtier.sim.trace.capture`; this module reads the machine (/sys,
/proc, PATH, uid, dmesg) and runs the processes through the executor. blktrace
runs in the background, in its own process group, while the workload (or the
timer) runs; every path out (the workload's end, an error, Ctrl-C) stops it
with SIGINT first, on which it flushes its buffers and exits.

`run(CaptureRequest, start, save, say) -> SimulateCapture` is the library call (here, not in sim/: it
reads the machine and runs processes, and sim/ is the pure simulator, which imports no measure/).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RunDir
from dbtier.sim.trace import capture as cap

STARTUP_CHECK_S = 1.0       # blktrace still running this long after its start: it has set up its tracing


def _lockdown() -> str | None:
    try:
        text = Path("/sys/kernel/security/lockdown").read_text()
    except OSError:
        return None
    m = re.search(r"\[(\w+)\]", text)
    return None if not m or m.group(1) == "none" else m.group(1)


def _debugfs_mounted() -> bool:
    try:
        return any(line.split()[1] == "/sys/kernel/debug" and line.split()[2] == "debugfs"
                   for line in Path("/proc/mounts").read_text().splitlines() if len(line.split()) > 2)
    except OSError:
        return False


def facts(target: str) -> tuple[cap.Facts, dict[str, Any]]:
    """What a capture of `target` (a block device or a directory) depends on here, and the target's
    machine metadata (`device_info` or `path_info`)."""
    from dbtier.measure.machine import device_info, path_info
    p = Path(target)
    if not p.exists():
        raise DbtierError(f"{target} does not exist", "give a block device (/dev/NAME) or a directory")
    if p.is_block_device():
        info = device_info(str(p))
        fs = None
    elif p.is_dir():
        info = path_info(str(p))
        fs = info.get("filesystem")
    else:
        raise DbtierError(f"{target} is neither a block device nor a directory",
                          "give a block device (/dev/NAME) or a directory on the disk to trace")
    bd = info.get("block_device")
    dev = f"/dev/{bd['name']}" if bd else None
    trace_sysfs = False
    if bd:
        trace_sysfs = (Path("/sys/block") / bd["disk"] / "trace").exists() or \
            (Path("/sys/block") / bd["disk"] / bd["name"] / "trace").exists()
    found = cap.Facts(target=target, block_device=dev, filesystem=fs, blktrace=shutil.which("blktrace"),
                      blkparse=shutil.which("blkparse"), root=os.geteuid() == 0, trace_sysfs=trace_sysfs,
                      debugfs_mounted=_debugfs_mounted(), lockdown=_lockdown())
    return found, info


@contextmanager
def debugfs(found: cap.Facts, mount: bool) -> Iterator[cap.Facts]:
    """With mount (--mount-debugfs), as root, and debugfs not mounted: mount it at /sys/kernel/debug
    for the block and unmount it after; yields the facts as they then stand."""
    mounted_here = False
    if mount and not found.debugfs_mounted and found.root:
        r = executor.run(["mount", "-t", "debugfs", "debugfs", "/sys/kernel/debug"], timeout_s=30)
        if r.returncode != 0:
            raise DbtierError(f"cannot mount debugfs: {r.stderr.strip() or r.returncode}",
                              "mount it by hand: mount -t debugfs debugfs /sys/kernel/debug")
        mounted_here = True
        found = cap.Facts(**{**found.__dict__, "debugfs_mounted": True})
    try:
        yield found
    finally:
        if mounted_here:
            executor.run(["umount", "/sys/kernel/debug"], timeout_s=30)


def _dmesg() -> str:
    try:
        return executor.run(["dmesg"], timeout_s=30).stdout[-200_000:]
    except (DbtierError, OSError):
        return ""


def record(found: cap.Facts, raw: Path, trace_file: Path, cmd: list[str], duration_s: float | None,
           command_timeout_s: float | None, say: Callable[[str], None]) -> executor.Completed | None:
    """Trace found.block_device while `cmd` runs (up to command_timeout_s), or for duration_s when
    there is no command; blktrace's and the command's output go to files in `raw`, blkparse's text
    to trace_file. Returns the command's result (None without a command). `say` tells the user what
    is being traced. The facts must have passed `cap.obstacle`."""
    assert found.block_device and found.blktrace and found.blkparse
    argv = cap.blktrace_argv(found.blktrace, found.block_device, str(raw), seconds=duration_s if not cmd else None)
    proc = executor.start(argv)
    workload = None
    try:
        time.sleep(STARTUP_CHECK_S)
        if proc.poll() is not None and proc.returncode != 0:
            _, err = proc.communicate()
            raise cap.blktrace_failure(err, _dmesg(), found.block_device)
        if cmd:
            say(f"tracing {found.block_device} while running: {' '.join(cmd)}")
            workload = executor.run(cmd, timeout_s=command_timeout_s)
            (raw / "command.stdout").write_text(workload.stdout)
            (raw / "command.stderr").write_text(workload.stderr)
            executor.stop_group(proc)           # SIGINT: blktrace flushes and exits
        else:
            say(f"tracing {found.block_device} for {duration_s:g} s")
        out, err = proc.communicate(timeout_s=(duration_s or 0) + 60)
    except BaseException:
        executor.stop_group(proc)       # the lifecycle (cli/common.py) records how the run ended
        raise
    (raw / "blktrace.stdout").write_text(out)
    (raw / "blktrace.stderr").write_text(err)
    parsed = executor.run(cap.blkparse_argv(found.blkparse, str(raw), str(trace_file)), timeout_s=600)
    if parsed.returncode != 0 or not trace_file.exists():
        raise DbtierError(f"blkparse could not read the capture: {parsed.stderr.strip()[:300]}",
                          f"the raw files are in {raw}")
    return workload


# ---------------------------------------------------------------- the library call


@dataclass(frozen=True, kw_only=True)
class CaptureRequest:
    """`dbtier simulate capture`: trace the block device of `target` (a block device, or a directory on the
    disk to trace) while `command` runs (its argv; up to `duration_s` when given), or for `duration_s`
    without one (cap.DEFAULT_SECONDS when neither); `mount_debugfs`: mount debugfs for the capture, as
    root, when it is not."""
    target: str
    duration_s: float | None = None
    command: tuple[str, ...] = ()
    mount_debugfs: bool = False

    def __post_init__(self) -> None:
        if self.duration_s is not None and not (self.duration_s > 0):
            raise DbtierError(f"--duration must be positive, got {self.duration_s:g}", "e.g. --duration 60")

    @classmethod
    def checked(cls, *, target: str, duration_s: float | None = None, run: str | None = None,
                mount_debugfs: bool = False) -> CaptureRequest:
        """The request from the options: `run`, the --run command line, split as a shell would."""
        try:
            cmd = shlex.split(run) if run else []
        except ValueError as exc:
            raise DbtierError(f"--run: cannot split '{run}': {exc}", "quote the command line once") from None
        return cls(target=target, duration_s=duration_s, command=tuple(cmd), mount_debugfs=mount_debugfs)


@dataclass(frozen=True, kw_only=True)
class SimulateCapture(Result):
    """`run`'s answer: the document's section (`capture`: the block device, the trace file, the command's
    exit code and what the trace holds, None when it holds no read or write request), the command's exit
    code (`returncode`, None without a command) and the document's errors ({message, hint}: a trace with
    nothing to replay)."""
    kind: str = "simulate.capture"
    returncode: int | None = None
    errors: tuple[Mapping[str, Any], ...] = ()


def run(req: CaptureRequest, start: Callable[[dict[str, Any]], RunDir],
        save: Callable[[dict[str, Any], list[dict[str, Any]]], None],
        say: Callable[[str], None] = lambda _text: None) -> SimulateCapture:
    """The capture: the first reason this machine cannot take it refused before anything is made; then
    `start(params)` makes the run's directory (blktrace's raw files go to its raw/, blkparse's text next to
    the document), the device is traced (`say` tells what), and `save(section, errors)` gets the section
    once the trace is read. debugfs mounted for the capture is unmounted whatever happens."""
    found, _info = facts(req.target)
    with debugfs(found, req.mount_debugfs) as found:
        problem = cap.obstacle(found)
        if problem is not None:
            raise problem
        assert found.block_device and found.blktrace and found.blkparse
        cmd = list(req.command)
        duration = cap.capture_seconds(req.duration_s, bool(cmd))
        params = {"action": "capture", "target": req.target, "block_device": found.block_device,
                  "duration_s": duration, "command": cmd or None}
        run_dir = start(params)
        raw = run_dir.path / "raw"
        raw.mkdir(exist_ok=True)
        trace_file = run_dir.path / cap.CAPTURE_TRACE
        workload = record(found, raw, trace_file, cmd, duration, req.duration_s, say)
        from dbtier.sim.trace.traces import read_trace
        errors: list[dict[str, Any]] = []
        try:
            trace = read_trace(trace_file, "blkparse")
            summary: dict[str, Any] | None = trace.summary()
        except DbtierError as exc:          # an idle device: nothing to replay, but the capture itself worked
            summary = None
            errors.append({"message": exc.message, "hint": exc.hint})
        returncode = None if workload is None else workload.returncode
        section = {"capture": {"block_device": found.block_device, "trace_file": str(trace_file),
                               "command_returncode": returncode, "trace": summary}}
        save(section, errors)
    return SimulateCapture(section=Frozen(section), returncode=returncode, errors=tuple(Frozen(e) for e in errors))
