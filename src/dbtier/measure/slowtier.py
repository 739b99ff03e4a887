"""An emulated slow tier: a loop device on a file, throttled to HDD-like I/O rates.

A placement study needs two tiers that differ; one machine often has one disk. `bench oltp --emulate
DIR=150iops` makes, inside DIR, `dbtier-slow-<random>/` holding a sparse backing file and a mount
point; the file becomes a loop device (direct I/O to the file, so its pages are not cached twice),
gets an ext4 filesystem, and is mounted there. The cgroup I/O throttle then caps the loop device's
read and write I/Os per second, and every figure taken through it is labelled emulated: it is the
throttle's rate, not DIR's device.
`bench backup --emulate DIR=40MiBps` caps bytes per second instead (`read_bps_device` /
`write_bps_device`): a backup is a stream of large I/Os, which a bytes limit paces as a slow target does.

Where the throttle goes: on cgroup v1, `blkio.throttle.read_iops_device` / `write_iops_device` at
the root of the blkio hierarchy. The loop device is dbtier's alone, so the root's limit binds every
I/O to it, the kernel's writeback included (v1 charges writeback to the root). On a pure cgroup v2
machine the limit (`io.max`) cannot be set at the root and only binds the processes of a child
group, which is not built yet: dbtier says so and stops.

Pure part: `parse`, `throttle_writes`, `blkio_root`. `SlowTier` applies them (root only) and undoes
everything it did, in reverse, on close; it never touches a loop device, mount or file it did not make.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from dbtier.core.debris import Claim, new_dir
from dbtier.core.errors import DbtierError, expect
from dbtier.measure import executor

MIB = 1024 * 1024
GIB = 1024 * MIB
MAX_IOPS = 1_000_000
LABEL = "emulated"


@dataclass(frozen=True)
class Emulation:
    dir: str           # the directory the user named
    read_iops: int     # 0: no IOPS limit (a bytes-per-second emulation, parse(allow_bps=True))
    write_iops: int
    read_bps: int = 0  # bytes per second; 0: no bytes limit
    write_bps: int = 0


_BPS_UNITS = {"kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "kib": 1024, "mib": MIB, "gib": GIB}
MIN_BPS = MIB          # a throttle under 1 MiB/s makes even a filesystem's creation crawl


def parse(text: str, allow_bps: bool = False) -> Emulation:
    """`DIR=150iops` (reads and writes each 150 I/Os per second) or `DIR=150riops,300wiops`; with allow_bps
    also `DIR=40MiBps` (or `40MiB/s`, `40MBps`: reads and writes each 40 MiB per second, no IOPS limit)."""
    d, sep, rate = text.rpartition("=")
    if not sep or not d or not rate:
        raise DbtierError(f"--emulate {text!r}: expected DIR=RATE", "for example --emulate /srv/slow=150iops")
    bps = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGkmg]i?)B(?:ps|/s)", rate.strip())   # B: bytes, never bits
    if bps and not allow_bps:
        raise DbtierError(f"--emulate {text!r}: a bytes-per-second throttle is not offered here",
                          "give I/Os per second, e.g. DIR=150iops or DIR=150riops,300wiops")
    if bps:
        n = int(float(bps.group(1)) * _BPS_UNITS[bps.group(2).lower() + "b"])
        if not MIN_BPS <= n <= 1000 * GIB:
            raise DbtierError(f"--emulate {text!r}: {n / MIB:,.2f} MiB/s is outside 1 MiB/s..1,000 GiB/s",
                              "an HDD-like tier writes 40 to 200 MiB/s, e.g. DIR=40MiBps")
        return Emulation(d, 0, 0, n, n)
    both = re.fullmatch(r"(\d+)iops", rate.strip(), re.I)
    split = re.fullmatch(r"(\d+)riops,(\d+)wiops", rate.strip().replace(" ", ""), re.I)
    if both:
        r = w = int(both.group(1))
    elif split:
        r, w = int(split.group(1)), int(split.group(2))
    else:
        raise DbtierError(f"--emulate {text!r}: cannot read the rate {rate!r}",
                          "give I/Os per second, e.g. DIR=150iops or DIR=150riops,300wiops")
    for n in (r, w):
        if not 1 <= n <= MAX_IOPS:
            raise DbtierError(f"--emulate {text!r}: {n} IOPS is outside 1..{MAX_IOPS:,}",
                              "an HDD-like tier is 100 to 200 IOPS")
    return Emulation(d, r, w)


def throttle_writes(root: str, major: int, minor: int, read_iops: int, write_iops: int) -> list[tuple[str, str]]:
    """(file, value) to cap device major:minor at the blkio root; 0 removes a limit."""
    dev = f"{major}:{minor}"
    return [(f"{root}/blkio.throttle.read_iops_device", f"{dev} {int(read_iops)}"),
            (f"{root}/blkio.throttle.write_iops_device", f"{dev} {int(write_iops)}")]


def throttle_bps_writes(root: str, major: int, minor: int, read_bps: int, write_bps: int) -> list[tuple[str, str]]:
    """(file, value) to cap device major:minor's bytes per second at the blkio root; 0 removes a limit."""
    dev = f"{major}:{minor}"
    return [(f"{root}/blkio.throttle.read_bps_device", f"{dev} {int(read_bps)}"),
            (f"{root}/blkio.throttle.write_bps_device", f"{dev} {int(write_bps)}")]


def limits_text(emu: Emulation) -> str:
    """'150 read and 300 write I/Os per second', '40 MiB/s of reads and of writes', or both."""
    parts = []
    if emu.read_iops or emu.write_iops:
        parts.append(f"{emu.read_iops} read and {emu.write_iops} write I/Os per second")
    if emu.read_bps or emu.write_bps:
        r, w = emu.read_bps / MIB, emu.write_bps / MIB
        parts.append(f"{r:,.4g} MiB/s of reads and of writes" if r == w else
                     f"{r:,.4g} MiB/s of reads and {w:,.4g} MiB/s of writes")
    return " and ".join(parts)


def blkio_root(mountinfo: str) -> str | None:
    """The mount point of the v1 blkio hierarchy's root (its mount root is /), else None."""
    for line in mountinfo.splitlines():
        pre, sep, post = line.partition(" - ")
        f, p = pre.split(), post.split()
        if sep and len(f) >= 5 and len(p) >= 3 and p[0] == "cgroup" and "blkio" in p[2].split(",") and f[3] == "/":
            return f[4].replace("\\040", " ")
    return None


def backing_bytes(wanted: float, usable: int) -> int:
    """The sparse backing file's size: what the run needs, at most what DIR can spare, whole MiB."""
    return max(0, min(int(wanted), int(usable))) // MIB * MIB


# ------------------------------------------------------------------------------------------- apply


def _run(argv: list[str]) -> str:
    try:
        r = executor.run(argv, timeout_s=300)
    except OSError as exc:
        raise DbtierError(f"--emulate: {argv[0]} failed ({exc})",
                          "check that util-linux and e2fsprogs are installed") from None
    except executor.TimedOut as exc:    # worded as subprocess words a timeout, as before the executor
        raise DbtierError(f"--emulate: {argv[0]} failed (Command '{exc.argv}' timed out after {exc.timeout_s} seconds)",
                          "check that util-linux and e2fsprogs are installed") from None
    if r.returncode != 0:
        raise DbtierError(f"--emulate: {' '.join(argv)} failed: {(r.stderr or r.stdout).strip()[:300]}",
                          "the slow tier needs loop devices (modprobe loop) and root")
    return r.stdout


class SlowTier:
    """The emulated tier inside `emu.dir`; `open(size_bytes)` makes it, `mount` is where files go,
    `close()` undoes every step that was done (idempotent)."""

    def __init__(self, emu: Emulation, mountinfo: str | None = None):
        # absolute: the mount point is handed to servers that run in other directories
        self.emu = dataclasses.replace(emu, dir=os.path.abspath(emu.dir))
        self._mountinfo = mountinfo
        self.base: Path | None = None
        self.mount: str | None = None
        self.loop: str | None = None
        self.majmin: tuple[int, int] | None = None
        self.size_bytes = 0
        self._mounted = False
        self._throttle: list[tuple[str, str]] = []
        self.claim: Claim | None = None

    def describe(self) -> dict:
        """The tier for the result document; its directory absolute, as the placements' are, so the report
        can tell which placed directory it is."""
        return {"dir": self.emu.dir, "mount": self.mount, "device": os.path.basename(self.loop or "") or None,
                "read_iops": self.emu.read_iops, "write_iops": self.emu.write_iops, "size_bytes": self.size_bytes,
                "read_bps": self.emu.read_bps, "write_bps": self.emu.write_bps,
                "mechanism": "loop device, cgroup1 blkio.throttle", "label": LABEL,
                "note": (f"{self.emu.dir} is emulated: a loop device on a file there, throttled to "
                         f"{limits_text(self.emu)}; figures "
                         "through it are the throttle's, not that directory's device")}

    def open_for(self, need_bytes: float) -> "SlowTier":
        """open() with a backing file for need_bytes and a GiB more, within what the directory's filesystem
        has past dbtier's margin (the file is sparse: only what is written takes space)."""
        from dbtier.measure.probe import spare_bytes
        return self.open(backing_bytes(need_bytes + GIB, spare_bytes(self.emu.dir, 10)))

    def place(self, placement: dict[str, str]) -> dict[str, str]:
        """{role: directory} with every directory that is the emulated one replaced by the tier's mount."""
        here = os.path.realpath(self.emu.dir)
        return {r: self._mounted_at if os.path.realpath(d) == here else d for r, d in placement.items()}

    @property
    def _mounted_at(self) -> str:
        """`mount`, set by open(); a RuntimeError, a fault in the caller, before it."""
        return expect(self.mount, "the emulated tier is not open: open() makes its mount")

    def open(self, size_bytes: int) -> "SlowTier":
        if os.geteuid() != 0:
            raise DbtierError("--emulate needs root: it makes a loop device, mounts it and sets an I/O throttle",
                              "run as root, or give --placement-matrix two real tiers")
        for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
            if shutil.which(tool) is None:
                raise DbtierError(f"--emulate: {tool} is not installed", "install util-linux and e2fsprogs")
        mi = self._mountinfo if self._mountinfo is not None else Path("/proc/self/mountinfo").read_text()
        root = blkio_root(mi)
        if root is None or not os.access(f"{root}/blkio.throttle.read_iops_device", os.W_OK):
            raise DbtierError("--emulate needs the cgroup v1 blkio controller at its root (not found or not "
                              "writable here); a throttle through cgroup v2 io.max is not built yet",
                              "give --placement-matrix two real tiers instead")
        if not os.path.isdir(self.emu.dir):
            raise DbtierError(f"--emulate {self.emu.dir}: no such directory", "create it, or name another")
        self.size_bytes = int(size_bytes)
        if self.size_bytes < 256 * MIB:
            raise DbtierError(f"--emulate {self.emu.dir}: only {self.size_bytes / MIB:,.0f} MiB to spare there",
                              "free some space, or emulate on another directory")
        self.base = Path(self.emu.dir, f"dbtier-slow-{uuid.uuid4().hex[:12]}")
        # every step is claimed as it is done: the watchdog undoes them all if dbtier is killed
        self.claim = new_dir(self.base, "emulated slow tier", 0o755)
        backing = self.base / "backing.img"
        with open(backing, "wb") as img:
            img.truncate(self.size_bytes)    # sparse: blocks are used as the tier fills
        self.loop = _run(["losetup", "--find", "--show", "--direct-io=on", str(backing)]).strip()
        self.claim.update(loops=[{"device": self.loop, "backing": str(backing.resolve())}])
        _run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.loop])
        mnt = self.base / "mnt"
        mnt.mkdir(mode=0o755)
        self.claim.update(mounts=[str(mnt.resolve())])
        _run(["mount", "-o", "discard", self.loop, str(mnt)])   # discard: a removed cluster frees the file's blocks
        self._mounted = True
        self.mount = str(mnt)
        mnt.chmod(0o755)
        st = os.stat(self.loop)
        self.majmin = (os.major(st.st_rdev), os.minor(st.st_rdev))
        writes = throttle_writes(root, *self.majmin, self.emu.read_iops, self.emu.write_iops)
        if self.emu.read_bps or self.emu.write_bps:     # a bytes emulation: its limits only (0 sets none)
            writes = [w for w in writes if not w[1].endswith(" 0")]
            writes += [w for w in throttle_bps_writes(root, *self.majmin, self.emu.read_bps, self.emu.write_bps)
                       if not w[1].endswith(" 0")]
        for f, v in writes:
            self._throttle.append((f, v.split()[0] + " 0"))
            self.claim.update(throttle=[list(t) for t in self._throttle])
            Path(f).write_text(v)
        return self

    def close(self) -> list[str]:
        """Undo in reverse; returns what could not be undone (empty when all is gone)."""
        left: list[str] = []
        for f, v in reversed(self._throttle):
            try:
                Path(f).write_text(v)
            except OSError as exc:
                left.append(f"{f}: {exc.strerror}")
        self._throttle = []
        if self._mounted and self.mount:
            r = executor.run(["umount", self.mount])
            if r.returncode != 0:
                r = executor.run(["umount", "-l", self.mount])
            if r.returncode == 0:
                self._mounted = False
            else:
                left.append(f"{self.mount} is still mounted: {r.stderr.strip()}")
        if self.loop and not self._mounted:
            r = executor.run(["losetup", "-d", self.loop])
            if r.returncode == 0:
                self.loop = None
            else:
                left.append(f"{self.loop} is still attached: {r.stderr.strip()}")
        if self.base and not self._mounted and self.loop is None:
            shutil.rmtree(self.base, ignore_errors=True)
            if self.base.exists():
                left.append(f"{self.base} could not be removed")
            else:
                self.base = None
        if not left and self.claim is not None:
            self.claim.release()
            self.claim = None
        return left

    def __enter__(self) -> "SlowTier":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
