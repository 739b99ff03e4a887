"""Machine metadata recorded with every run (pyperf-style).

Reads /proc and /sys; the parsers are pure functions so they can be tested on
saved files.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import threading
from concurrent.futures import Future
from importlib import metadata
from pathlib import Path
from typing import Any

from dbtier import __version__
from dbtier.measure import executor

# Virtual disks report whatever their driver defaults to: virtio_blk says
# "rotational" for every disk, so the flag tells nothing about the media.
VIRTUAL_DRIVERS = ("virtio", "xen", "vmw_pvscsi", "hv_storvsc", "nbd", "loop", "zram", "rbd")
# Disk names the virtual drivers give: vda (virtio_blk), xvda (Xen blkfront).
VIRTUAL_NAMES = ("vd", "xvd")
# The PCI vendor of virtio devices (Red Hat, Inc.): /sys/block/vdX/device/vendor.
VIRTIO_VENDOR = "0x1af4"
# Models an emulated disk reports (QEMU's "QEMU HARDDISK", VMware's "Virtual disk", Hyper-V's "Virtual Disk").
VIRTUAL_MODELS = ("qemu", "vmware", "virtual disk", "vbox")
ROTATIONAL_NOTE = "the kernel's flag is the hypervisor's default for a virtual disk"


def parse_mountinfo(text: str) -> list[dict[str, Any]]:
    """/proc/self/mountinfo lines -> mounts (see proc(5))."""
    mounts = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        f = left.split()
        r = right.split()
        if len(f) < 6 or len(r) < 2:
            continue
        major, minor = (int(x) for x in f[2].split(":"))
        mounts.append({
            "mount_point": _unescape(f[4]),
            "major": major,
            "minor": minor,
            "mount_options": f[5],
            "fs_type": r[0],
            "source": _unescape(r[1]),
            "super_options": r[2] if len(r) > 2 else "",
        })
    return mounts


def _unescape(s: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)


def mount_for(path: str, mounts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The mount a path lives on: the longest mount point that prefixes it (last one wins on ties)."""
    real = os.path.realpath(path)
    best = None
    for m in mounts:
        mp = m["mount_point"]
        if real == mp or real.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best["mount_point"]):
                best = m
    return best


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def block_device_info(major: int, minor: int, sys_root: str = "/sys") -> dict[str, Any] | None:
    """Facts about the whole disk behind major:minor (a partition resolves to its disk)."""
    if major == 0:
        return None
    node = Path(sys_root) / "dev" / "block" / f"{major}:{minor}"
    if not node.exists():
        return None
    real = node.resolve()
    name = real.name
    disk = real.parent if (real / "partition").exists() else real
    q = disk / "queue"
    sched = _read(q / "scheduler")
    active = re.search(r"\[([^\]]+)\]", sched or "")
    driver = None
    drv = disk / "device" / "driver"
    if drv.exists():
        driver = drv.resolve().name
    model = _read(disk / "device" / "model")
    vendor = _read(disk / "device" / "vendor")
    size = _read(disk / "size")
    virtual = is_virtual_disk(disk.name, driver, vendor, model)
    return {
        "name": name,
        "disk": disk.name,
        "model": " ".join(x for x in (vendor, model) if x) or None,
        "driver": driver,
        "virtual": virtual,
        **rotational_fields(_read(q / "rotational"), virtual),
        "scheduler": active.group(1) if active else sched,
        "write_cache": _read(q / "write_cache"),
        "logical_block_bytes": _int(_read(q / "logical_block_size")),
        "physical_block_bytes": _int(_read(q / "physical_block_size")),
        "size_bytes": None if size is None else int(size) * 512,
    }


def is_virtual_disk(disk: str, driver: str | None, vendor: str | None, model: str | None) -> bool:
    """A disk a hypervisor (or a kernel driver standing in for one: loop, zram, nbd, rbd) presents, from its
    sysfs facts: the driver (/sys/block/X/device/driver), the disk's name, the virtio PCI vendor, or an
    emulated disk's model."""
    low = (model or "").lower()
    return (bool(driver and driver.startswith(VIRTUAL_DRIVERS)) or disk.startswith(VIRTUAL_DRIVERS)
            or (disk.startswith(VIRTUAL_NAMES) and disk.rstrip("0123456789").isalpha())
            or (vendor or "").strip().lower() == VIRTIO_VENDOR
            or any(m in low for m in VIRTUAL_MODELS))


def rotational_fields(flag: str | None, virtual: bool) -> dict[str, Any]:
    """`rotational` from the kernel's queue/rotational flag ("1", "0", None: unreadable). A virtual disk's flag
    is its driver's default (virtio_blk says 1 for every disk), so there `rotational` is null (unknown) with
    the reason; `rotational_flag` keeps the kernel's value either way."""
    raw = None if flag is None else flag.strip() == "1"
    if virtual:
        return {"rotational": None, "rotational_flag": raw, "rotational_note": ROTATIONAL_NOTE}
    return {"rotational": raw, "rotational_flag": raw}


def _int(s: str | None) -> int | None:
    return None if s is None or not s.isdigit() else int(s)


def path_info(path: str) -> dict[str, Any]:
    mounts = parse_mountinfo(_read("/proc/self/mountinfo") or "")
    m = mount_for(path, mounts)
    info: dict[str, Any] = {"path": os.path.realpath(path)}
    if m is None:
        return info
    info.update({
        "mount_point": m["mount_point"],
        "filesystem": m["fs_type"],
        "mount_options": m["mount_options"] + ("," + m["super_options"] if m["super_options"] else ""),
        "source": m["source"],
    })
    dev = block_device_info(m["major"], m["minor"])
    if dev is None and m["source"].startswith("/dev/"):
        try:
            st = os.stat(m["source"])
            dev = block_device_info(os.major(st.st_rdev), os.minor(st.st_rdev))
        except OSError:
            dev = None
    info["block_device"] = dev
    return info


def devices_for(dirs: list[str]) -> list[str]:
    """The block devices (as /proc/diskstats names them) behind directories, each once."""
    out: list[str] = []
    for d in dirs:
        name = (path_info(d).get("block_device") or {}).get("name")
        if name and name not in out:
            out.append(name)
    return out


def device_info(dev: str) -> dict[str, Any]:
    st = os.stat(dev)
    return {"path": dev, "filesystem": None, "mount_options": None,
            "block_device": block_device_info(os.major(st.st_rdev), os.minor(st.st_rdev))}


# Versions asked in this process, by the program file (path, mtime, size) and the question: a process that
# runs several commands (lab, a test run's in-process commands) starts each program once, not per command.
_asked: dict[tuple[Any, ...], str | None] = {}


def _cmd_version(argv: list[str], pattern: str) -> str | None:
    exe = shutil.which(argv[0])
    if exe is None:
        return None
    try:
        st = os.stat(exe)
    except OSError:
        return None
    key = (exe, st.st_mtime_ns, st.st_size, tuple(argv), pattern)
    if key in _asked:
        return _asked[key]
    try:
        out = executor.run(argv, timeout_s=10).stdout
    except (OSError, executor.TimedOut):
        return None
    m = re.search(pattern, out)
    _asked[key] = version = m.group(1) if m else out.strip() or None
    return version


def _pkg_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


_warmed: list[Future] = []


def tool_versions() -> dict[str, str | None]:
    """The tools' versions (those asked ahead by warm_tool_versions, once, else asked now)."""
    if _warmed:
        return _warmed.pop().result()
    return _ask_versions()


def warm_tool_versions() -> None:
    """Ask the tools for their versions now, on a thread, for the next tool_versions(): starting programs
    from a process that holds a replay's gigabyte takes a tenth of a second at the end of the command."""
    fut: Future = Future()

    def ask() -> None:
        try:
            fut.set_result(_ask_versions())
        except BaseException as exc:          # noqa: BLE001 - handed to the caller of tool_versions
            fut.set_exception(exc)
    _warmed[:] = [fut]
    threading.Thread(target=ask, name="dbtier-versions", daemon=True).start()


def _ask_versions() -> dict[str, str | None]:
    return {
        "dbtier": __version__,
        "python": platform.python_version(),
        "fio": _cmd_version(["fio", "--version"], r"fio-(\S+)"),
        "postgresql": _cmd_version(["postgres", "--version"], r"\(PostgreSQL\) (\S+)")
        or _cmd_version(["pg_config", "--version"], r"PostgreSQL (\S+)"),
        "duckdb": _pkg_version("duckdb"),
    }


def parse_meminfo_total(text: str) -> int | None:
    m = re.search(r"^MemTotal:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def parse_cpu_model(text: str) -> str | None:
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return m.group(1).strip() if m else None


def os_release() -> str | None:
    text = _read("/etc/os-release") or ""
    m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.M)
    return m.group(1) if m else None


def machine_info(paths: list[str] | None = None, devices: list[str] | None = None) -> dict[str, Any]:
    targets = [path_info(p) for p in (paths or [])] + [device_info(d) for d in (devices or [])]
    return {
        "hostname": socket.gethostname(),
        "os": os_release(),
        "kernel": platform.release(),
        "arch": platform.machine(),
        "cpu_model": parse_cpu_model(_read("/proc/cpuinfo") or ""),
        "cpu_count": os.cpu_count(),
        "memory_bytes": parse_meminfo_total(_read("/proc/meminfo") or ""),
        "targets": targets,
        "versions": tool_versions(),
    }


def light_machine_info() -> dict[str, Any]:
    """What a read-only command records of the machine: files only, no program started (fio and
    PostgreSQL are not asked for their versions: null)."""
    return {"hostname": socket.gethostname(), "os": os_release(), "kernel": platform.release(),
            "arch": platform.machine(), "cpu_model": parse_cpu_model(_read("/proc/cpuinfo") or ""),
            "cpu_count": os.cpu_count(), "memory_bytes": parse_meminfo_total(_read("/proc/meminfo") or ""),
            "targets": [], "versions": {"dbtier": __version__, "python": platform.python_version(), "fio": None,
                                        "postgresql": None, "duckdb": _pkg_version("duckdb")}}
