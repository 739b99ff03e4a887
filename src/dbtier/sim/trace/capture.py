"""`dbtier simulate capture`, the pure parts: which obstacle stops blktrace, its command lines, how long
to trace, and where a capture run directory keeps its trace.

`dbtier.measure.capture` gathers the facts (tools on PATH, uid, mounts, /sys,
blktrace's own error, dmesg) and runs the commands; these functions only judge and build, so
every reason a capture can fail is tested without the machine that has it.

blktrace records block-layer events through debugfs (/sys/kernel/debug/block)
and needs: blktrace and blkparse installed, root (CAP_SYS_ADMIN), a kernel
built with CONFIG_BLK_DEV_IO_TRACE (then /sys/block/<disk>/trace exists),
debugfs mounted, a kernel not in lockdown (lockdown restricts debugfs), and a
target with a block device under it (overlay, tmpfs, NFS have none).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dbtier.core.errors import DbtierError

# the text trace a capture run directory holds (what `simulate run RUN_DIR` replays)
CAPTURE_TRACE = "trace.blkparse.txt"
# a capture with neither --duration nor --run traces this long
DEFAULT_SECONDS = 10.0


@dataclass(frozen=True)
class Facts:
    target: str
    block_device: str | None          # /dev/NAME the target resolves to, None if none
    filesystem: str | None            # of a directory target
    blktrace: str | None              # path, None if not installed
    blkparse: str | None
    root: bool
    trace_sysfs: bool                 # /sys/block/<disk>/trace exists
    debugfs_mounted: bool
    lockdown: str | None = None       # e.g. "integrity" or "confidentiality", from securityfs, else None


def obstacle(f: Facts) -> DbtierError | None:
    """The first reason a capture cannot run here, as the error the user sees, or None."""
    missing = [t for t, p in (("blktrace", f.blktrace), ("blkparse", f.blkparse)) if p is None]
    if missing:
        return DbtierError(f"cannot capture: {' and '.join(missing)} not installed",
                           "install it (`apt-get install blktrace`, `dnf install blktrace`), then run again")
    if not f.root:
        return DbtierError("cannot capture: blktrace needs root (CAP_SYS_ADMIN) to open the kernel's block trace "
                           "buffers", "run `dbtier simulate capture` as root (sudo)")
    if f.block_device is None:
        fs = f" ({f.filesystem})" if f.filesystem else ""
        return DbtierError(f"cannot capture: {f.target} is on a filesystem with no block device under it{fs}",
                           "give a block device (/dev/NAME) or a directory on a disk-backed filesystem")
    if not f.trace_sysfs:
        return DbtierError(f"cannot capture: the kernel has no block I/O tracing for {f.block_device} "
                           "(built without CONFIG_BLK_DEV_IO_TRACE: no /sys/block/<disk>/trace)",
                           "use a kernel with block tracing, or take a trace elsewhere (fio --write_iolog)")
    if f.lockdown:
        return DbtierError(f"cannot capture: the kernel is in lockdown ({f.lockdown}), which restricts debugfs "
                           "and so blktrace", "capture on a machine without kernel lockdown, or record the "
                           "workload's I/O with fio --write_iolog instead")
    if not f.debugfs_mounted:
        return DbtierError("cannot capture: debugfs is not mounted at /sys/kernel/debug (blktrace reads the "
                           "kernel's trace buffers there)",
                           "mount it (`mount -t debugfs debugfs /sys/kernel/debug`) or pass --mount-debugfs")
    return None


def blktrace_failure(stderr: str, dmesg: str, device: str) -> DbtierError:
    """Explain blktrace's own failure to start (it exits at once with a message)."""
    text = stderr.strip().splitlines()
    first = next((ln for ln in text if ln.strip()), "no message")
    if "Lockdown: blktrace" in dmesg or ("Operation not permitted" in stderr and "lockdown" in dmesg.lower()):
        return DbtierError(f"cannot capture: the kernel is in lockdown and refuses blktrace access to debugfs "
                           f"for {device} (dmesg: 'Lockdown: blktrace: debugfs access is restricted'); "
                           f"blktrace said: {first}",
                           "capture on a machine without kernel lockdown (this one is probably a locked-down "
                           "VM), or record the workload's I/O with fio --write_iolog instead")
    if "Operation not permitted" in stderr:
        return DbtierError(f"cannot capture: the kernel refused blktrace for {device} (Operation not permitted; "
                           f"a virtual or restricted device, or a security module): {first}",
                           "try another device, or record the workload's I/O with fio --write_iolog instead")
    if "Device or resource busy" in stderr:
        return DbtierError(f"cannot capture: {device} is already being traced ({first})",
                           "stop the other blktrace first")
    return DbtierError(f"cannot capture: blktrace failed for {device}: {first}", "see `blktrace -d DEVICE` by hand")


def blktrace_argv(blktrace: str, device: str, out_dir: str, name: str = "capture",
                  seconds: float | None = None) -> list[str]:
    argv = [blktrace, "-d", device, "-D", out_dir, "-o", name]
    if seconds is not None:
        argv += ["-w", str(max(1, int(round(seconds))))]
    return argv


def blkparse_argv(blkparse: str, in_dir: str, out_file: str, name: str = "capture") -> list[str]:
    return [blkparse, "-i", name, "-D", in_dir, "-o", out_file]


def capture_seconds(duration_s: float | None, has_command: bool) -> float | None:
    """How long to trace: --duration if given, else while the command runs (None), else DEFAULT_SECONDS."""
    if duration_s is not None:
        return duration_s
    return None if has_command else DEFAULT_SECONDS


def trace_path(text: str) -> Path:
    """`simulate run TRACE`: a trace file as given, the captured trace of a capture run directory, or a
    convert run directory as it is (columnar.py reads it)."""
    p = Path(text)
    if p.is_dir():
        candidate = p / CAPTURE_TRACE
        if candidate.exists():
            return candidate
        if (p / "trace.parquet" / "manifest.json").is_file():
            return p
        raise DbtierError(f"{p} is a directory without a captured or converted trace",
                          "pass a trace file, or the run directory of a successful `dbtier simulate capture` or "
                          "`dbtier simulate convert`")
    return p
