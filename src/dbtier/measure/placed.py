"""Where each placed part of a database went: its directory, the whole disk under it (as /proc/diskstats
names it, e.g. vda: partitions resolve to their disk, so two partitions of one disk count as one device),
the filesystem and the mount point. Recorded in every OLTP and DSS document (`placement_where`) so that
show, compare, the report and the verdict can say where WAL, data, indexes and temp were, and when two
parts a run separates still share one device."""

from __future__ import annotations

import os
from typing import Any

from dbtier.measure.machine import path_info


def where(placement: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """{role: {dir, device, fs, mount}} for each role of `placement` ({role: directory or file}); a file or
    directory not made yet is looked up by its nearest existing parent. A role whose value is not a path
    ("server" under --dsn) keeps it as dir, with the rest null."""
    out: dict[str, dict[str, Any]] = {}
    for role, d in (placement or {}).items():
        if not isinstance(d, str) or not d or (os.sep not in d and not os.path.exists(d)):
            out[role] = {"dir": d, "device": None, "fs": None, "mount": None}
            continue
        full = look = os.path.abspath(d)
        while not os.path.exists(look) and os.path.dirname(look) != look:
            look = os.path.dirname(look)
        info = path_info(look)
        bd = info.get("block_device") or {}
        out[role] = {"dir": full, "device": bd.get("disk") or bd.get("name"), "fs": info.get("filesystem"),
                     "mount": info.get("mount_point")}
    return out
