"""Probe figures a write-back cache gave rather than the media (pure).

A write acknowledged from a cache (the host's page cache behind a virtual disk, a RAID controller's or
a drive's volatile buffer) returns before the media has it, so a short test of a small file measures the
cache. No storage medium writes faster than it reads -- flash programs a page several times slower than
it reads one, and a disk's head moves no faster for writes -- so a write figure above the read figure of
the same target, or above what its device class can sustain, is a cache's. Such figures are named with
the test that would measure the media, and the verdict does not judge by them.

The rules, each stated once:

- sequential: write MB/s above read MB/s by more than SEQ_WRITE_OVER_READ (any device);
- sequential: write MB/s above HDD_MAX_SEQ_WRITE_MBPS on a single hard disk (class known);
- random: 4 KiB random write IOPS above RANDOM_WRITE_OVER_READ times the random read peak, at the read
  peak's outstanding I/O, on flash or a virtual disk. A hard disk is left out: its own write cache
  reorders queued writes, and its datasheet figures say so (Seagate Exos X20: 168 read / 550 write IOPS
  at QD16); a device whose class is unknown is left out too.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from dbtier.core.stats import median
from dbtier.core.units import human_bytes
from dbtier.results.probe import READ_4K, WRITE_4K, point_config

# Sequential writes this much above sequential reads (20%: beyond the run-to-run noise of a quick probe,
# whose sequential figures rarely differ by more between repeats) are a cache's.
SEQ_WRITE_OVER_READ = 1.20
# Random writes at least this many times the random read peak, at the same outstanding I/O.
RANDOM_WRITE_OVER_READ = 2.0
# No single hard disk sustains more: a 7,200 RPM drive's outer tracks give ~285 MB/s (Seagate Exos X20
# datasheet), a dual-actuator drive ~550 MB/s (Seagate Exos 2X18).
HDD_MAX_SEQ_WRITE_MBPS = 560.0
# A block device that is an array of disks (md, device-mapper, a RAID controller's logical drive) stripes
# over several: its rate is not one disk's. Models RAID controllers give their logical drives.
RAID_MODELS = ("perc", "megaraid", "mr9", "logical volume", "smart array", "raid", "avago", "lsi ")
ARRAY_NAMES = ("md", "dm-")


def _num(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def device_class(bd: Any) -> str | None:
    """'virtual', 'hdd', 'flash' or None (unknown, or an array of disks) from a machine target's
    block_device (measure.machine.block_device_info)."""
    if not isinstance(bd, dict):
        return None
    if bd.get("virtual") is True:
        return "virtual"
    name = str(bd.get("disk") or bd.get("name") or "")
    model = str(bd.get("model") or "").lower()
    if name.startswith(ARRAY_NAMES) or any(m in model for m in RAID_MODELS):
        return None
    rot = bd.get("rotational")
    return "hdd" if rot is True else "flash" if rot is False else None


def _iops_at(points: list[dict[str, Any]], test: str, outstanding: Any) -> float | None:
    """The best median IOPS of `test`'s points at that outstanding I/O (each point's runs give their median)."""
    groups: dict[tuple[Any, ...], list[float]] = {}
    for p in points:
        if isinstance(p, dict) and p.get("test") == test and p.get("outstanding") == outstanding \
                and _num(p.get("iops")):
            groups.setdefault(point_config(p), []).append(p["iops"])
    return max((median(v) for v in groups.values()), default=None)


def _read_peak_outstanding(points: list[dict[str, Any]]) -> Any:
    """The outstanding I/O of the random read peak (the point whose median IOPS is highest)."""
    best, at = None, None
    for o in {p.get("outstanding") for p in points if isinstance(p, dict) and p.get("test") == READ_4K}:
        v = _iops_at(points, READ_4K, o)
        if v is not None and (best is None or v > best):
            best, at = v, o
    return at


def media_test(file_bytes: Any = None, memory_bytes: Any = None) -> str:
    """What would measure the media rather than the cache."""
    size = ""
    if _num(file_bytes) and file_bytes > 0:
        size = f" (the test file was {human_bytes(file_bytes)}"
        if _num(memory_bytes) and memory_bytes > 0:
            size += f"; this machine has {human_bytes(memory_bytes)} of RAM, a virtual disk's host may have more"
        size += ")"
    return ("repeat with --size larger than the RAM that can cache it" + size + ", with longer points (--profile full), "
            "or on a blank raw device (--device DEV --destroy-data) to measure the media")


def cache_suspect(summary: Any, points: Any, bd: Any, file_bytes: Any = None,
                  memory_bytes: Any = None) -> dict[str, Any] | None:
    """The target's figures a write-back cache gave (see the module's rules):
    {figures: [summary keys], why, test, device_class}; None when none is suspect.

    summary: the target's summary; points: its points (for the random rule's same-depth comparison);
    bd: its machine block_device (None: unknown; the class-free rule still applies)."""
    s = summary if isinstance(summary, dict) else {}
    pts = [p for p in points if isinstance(p, dict)] if isinstance(points, list) else []
    cls = device_class(bd)
    dev = str((bd or {}).get("name") or (bd or {}).get("disk") or "") if isinstance(bd, dict) else ""
    on = f" on {dev}" if dev else ""
    figures: list[str] = []
    whys: list[str] = []
    rm, wm = s.get("read_mbps_seq"), s.get("write_mbps_seq")
    if _num(rm) and _num(wm) and rm > 0 and wm > rm * SEQ_WRITE_OVER_READ:
        figures.append("write_mbps_seq")
        whys.append(f"writes {wm:,.0f} MB/s > reads {rm:,.0f} MB/s{on}")
    if cls == "hdd" and _num(wm) and wm > HDD_MAX_SEQ_WRITE_MBPS:
        if "write_mbps_seq" not in figures:
            figures.append("write_mbps_seq")
        whys.append(f"{wm:,.0f} MB/s sequential write{on}, above the {HDD_MAX_SEQ_WRITE_MBPS:,.0f} MB/s a hard "
                    "disk sustains")
    if cls in ("virtual", "flash"):
        at = _read_peak_outstanding(pts)
        r, w = _iops_at(pts, READ_4K, at), _iops_at(pts, WRITE_4K, at)
        if r and w and w > RANDOM_WRITE_OVER_READ * r:
            figures.append("write_iops_4k")
            whys.append(f"4 KiB random writes {w:,.0f} IOPS > {RANDOM_WRITE_OVER_READ:g}x reads {r:,.0f} IOPS at "
                        f"{at:g} outstanding I/Os{on}")
    if not figures:
        return None
    return {"figures": figures, "why": "; ".join(whys), "test": media_test(file_bytes, memory_bytes),
            "device_class": cls}


def of_target(target: dict[str, Any], bd: Any = None, memory_bytes: Any = None) -> dict[str, Any] | None:
    """A probe target's cache_suspect: as the probe stored it, else (a document that predates the check) the
    rule over its summary and points, with bd its machine block device."""
    if "cache_suspect" in target:
        c = target["cache_suspect"]
        return c if isinstance(c, dict) and isinstance(c.get("figures"), list) else None
    return cache_suspect(target.get("summary"), target.get("points"), bd, target.get("file_bytes"), memory_bytes)
