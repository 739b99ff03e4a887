"""A memory budget for the managed server: a child memory cgroup with a limit, removed on exit.

The server and all its processes run inside it, so the kernel's page cache for the files they read
is charged to the group and bounded with their own memory: the reads of a data set larger than the
budget reach the device instead of the page cache.

Two parts. The pure part (`locate`, `build`, `default_budget`, `budget_parts`, `shared_buffers_bytes`) decides which
mechanism, which directory and which files get which values, from the text of /proc/self/cgroup and
/proc/self/mountinfo. `MemoryCgroup` applies a plan: creates `dbtier-<random>` under the current
process's cgroup, writes the limit, and on close moves any remaining process back to the parent and
removes the directory. It never touches a cgroup it did not create.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dbtier.core.debris import Claim
from dbtier.core.errors import expect

MIB = 1024 * 1024
FLOOR_BYTES = 128 * MIB       # the cache part's floor: shared_buffers of 32 MiB and some page cache
DATA_PER_BUDGET = 4           # the default keeps the loaded data set at least 4x larger than the cache part
# Each connection's own memory (not cache) on top: a tpcc backend holds ~3.5 MiB (112 MB for 32 clients
# measured in the group's memory.stat rss here); 128 MiB with nothing on top lost a backend to the
# OOM killer at 32 clients.
PER_CLIENT_BYTES = 6 * MIB
SHARED_BUFFERS_SHARE = 4      # shared_buffers is at most a quarter of the budget (the rest: backends, page cache)
PAGE = 8192                   # PostgreSQL's block: shared_buffers is a whole number of them
MIN_SHARED_BUFFERS = 16 * PAGE
# Where the buffer pool is all the cache (reads bypass the page cache) its floor is PostgreSQL's shared_buffers
# at the floor, not the whole floor: with 128 MiB a 95-177 MiB TPC-C database sat in InnoDB's pool (99.6% hits).
DIRECT_FLOOR_BYTES = FLOOR_BYTES // SHARED_BUFFERS_SHARE
RULE = (f"budget = max({FLOOR_BYTES // MIB} MiB, database size after load / {DATA_PER_BUDGET}) "
        f"+ {PER_CLIENT_BYTES // MIB} MiB per client; the buffer pool at most a quarter of the part before the "
        "clients' (all of a --memory given), or, where the engine's reads bypass the page cache (InnoDB with "
        f"O_DIRECT), all of a part of max({DIRECT_FLOOR_BYTES // MIB} MiB, database size / {DATA_PER_BUDGET}), "
        f"so the data set stays {DATA_PER_BUDGET}x the cache")


def default_budget(data_bytes: int, clients: int = 0, floor_bytes: int = FLOOR_BYTES) -> int:
    """The managed server's default budget: for cache, a quarter of the loaded data set, at least the
    floor; plus each client's backend's own memory."""
    return max(floor_bytes, int(data_bytes) // DATA_PER_BUDGET) + int(clients) * PER_CLIENT_BYTES


def shared_buffers_bytes(budget_bytes: int, requested_bytes: int, share: int = SHARED_BUFFERS_SHARE) -> int:
    """The buffer pool inside the budget: the requested size, capped at 1/share of the budget (a quarter
    for PostgreSQL, which reads through the page cache), rounded down to whole 8 kB pages (at least
    PostgreSQL's 16 pages)."""
    b = min(int(requested_bytes), int(budget_bytes) // share)
    return max(MIN_SHARED_BUFFERS, b // PAGE * PAGE)


def budget_parts(memory_bytes: int | None, data_bytes: int, max_clients: int,
                 requested_sb_bytes: int, share: int = SHARED_BUFFERS_SHARE) -> tuple[int, int, int]:
    """(budget, cache part, buffer pool) of the managed server. A --memory given is the budget and all
    of it is the cache part; the default is default_budget() with the clients' own memory on top, which
    the cache part leaves out. The buffer pool comes out of the cache part (shared_buffers_bytes): 1/share
    of it at most -- a quarter for an engine that reads through the page cache (the rest is that cache),
    all of it (share 1) for one whose reads bypass it (InnoDB with O_DIRECT), so both have the same memory
    to cache the data set in. The default's floor for share 1 is DIRECT_FLOOR_BYTES: the whole 128 MiB floor as
    the pool would hold a small data set whole (177 MiB of TPC-C: 44 MiB of pool, not 128)."""
    floor = FLOOR_BYTES if share > 1 else DIRECT_FLOOR_BYTES
    budget = memory_bytes if memory_bytes is not None else default_budget(data_bytes, max_clients, floor)
    cache = budget if memory_bytes is not None else budget - max_clients * PER_CLIENT_BYTES
    return budget, cache, shared_buffers_bytes(cache, requested_sb_bytes, share)


def small_data(data_bytes: int, cache_bytes: int) -> bool:
    """The loaded data set is less than DATA_PER_BUDGET x the budget's cache part: much of it is read from memory."""
    return data_bytes < DATA_PER_BUDGET * cache_bytes


# Where no cgroup can be made: a data set this many times the machine's available memory, so that at
# least a third of it cannot be cached and its reads reach the device (the `size` mechanism).
PAST_MEMORY = 1.5
# The disk holds the loaded database and its growth over the run (WAL, new rows): this many times its size.
DISK_PER_DATA = 2


def size_past_memory(mem_available_bytes: int, unit_bytes: float, max_units: int,
                     disk_spare_bytes: int) -> tuple[int | None, str]:
    """Without a cgroup: the units (warehouses, pgbench scale) whose data set is PAST_MEMORY x the
    available memory, with why; None when the disk cannot hold it or the workload cannot be that large.
    24 GiB available, 110 MB a warehouse: ceil(1.5 x 25.77e9 / 110e6) = 352 warehouses (38.7 GB),
    which needs 77.4 GB spare on disk."""
    units = int(-(-PAST_MEMORY * mem_available_bytes // unit_bytes))
    need = units * unit_bytes * DISK_PER_DATA
    if units > max_units:
        return None, (f"a data set past free memory ({mem_available_bytes / 2**30:,.1f} GiB) needs {units:,} units, "
                      f"more than the workload's {max_units:,}")
    if need > disk_spare_bytes:
        return None, (f"a data set past free memory ({mem_available_bytes / 2**30:,.1f} GiB) needs "
                      f"{need / 1e9:,.1f} GB on disk and {max(disk_spare_bytes, 0) / 1e9:,.1f} GB is spare")
    return units, (f"sized past free memory: {units:,} x {unit_bytes / 1e6:,.0f} MB = "
                   f"{units * unit_bytes / 1e9:,.1f} GB, {PAST_MEMORY:g}x the {mem_available_bytes / 2**30:,.1f} GiB "
                   "available")


def no_cgroup(why: str, sized: bool, mem_available: int | None, unit_bytes: float, max_units: int,
              disk_spare_bytes: int, data_dir: str) -> tuple[str, str, int | None]:
    """What a run does where no memory cgroup can be made (pure): (mechanism, reason, units). With the
    data set's size left to dbtier and the disk able to hold it: `size`, the units past free memory;
    otherwise `none`, and the reason says reads will come from memory."""
    head = f"no memory cgroup can be made ({why})"
    if not sized:
        return "none", (f"{head}: the server runs unbounded with the data set asked for, so reads will come from "
                        "memory wherever it fits there"), None
    if mem_available is None:
        return "none", f"{head}, and /proc/meminfo gives no MemAvailable: reads will come from memory", None
    units, why_size = size_past_memory(mem_available, unit_bytes, max_units, disk_spare_bytes)
    if units is None:
        return "none", f"{head}; {why_size}: reads will come from memory", None
    return "size", f"{head}; the data set is {why_size} on {data_dir}", units


def mem_available_bytes(meminfo: str) -> int | None:
    """MemAvailable from the text of /proc/meminfo, in bytes."""
    for line in meminfo.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def can_make(proc_cgroup: str | None = None, mountinfo: str | None = None) -> str | None:
    """Why no memory cgroup can be made here (None: one can): made and removed at once."""
    probe = MemoryCgroup(64 * MIB, proc_cgroup, mountinfo).open()
    made = probe.created
    probe.close()
    return None if made else (probe.reason or "unknown")


@dataclass(frozen=True)
class Place:
    """Where a child cgroup can go: the controller's version and the current process's cgroup directory."""
    version: int          # 1 or 2
    parent: str           # e.g. /sys/fs/cgroup/memory/user.slice


@dataclass(frozen=True)
class Plan:
    mechanism: str                        # cgroup1 or cgroup2
    parent: str
    dir: str                              # the child dbtier creates
    writes: tuple[tuple[str, str], ...]   # (file in dir, value), in order
    procs: str                            # write a pid here to move the process in (children inherit)
    parent_procs: str                     # where remaining pids go back before rmdir
    oom_file: str                         # its `oom_kill N` line counts kills inside the group
    limit_bytes: int = 0
    extra: dict = field(default_factory=dict)


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fstype, super options) of each cgroup mount in /proc/self/mountinfo."""
    out = []
    for line in mountinfo.splitlines():
        pre, sep, post = line.partition(" - ")
        f, p = pre.split(), post.split()
        if not sep or len(f) < 5 or len(p) < 3 or p[0] not in ("cgroup", "cgroup2"):
            continue
        point = f[4].replace("\\040", " ")
        out.append((f[3], point, p[0], set(p[2].split(","))))
    return out


def _join(point: str, root: str, path: str) -> str | None:
    """The directory of cgroup `path` (as /proc/self/cgroup gives it) under a mount of `root`."""
    if root != "/":
        if path != root and not path.startswith(root.rstrip("/") + "/"):
            return None   # our cgroup is outside what this mount shows
        path = path[len(root.rstrip("/")):] or "/"
    return point.rstrip("/") + ("" if path == "/" else path)


def locate(proc_cgroup: str, mountinfo: str) -> list[Place]:
    """Where a memory cgroup can be made, best first (pure): v2 when its hierarchy is mounted (the caller
    checks that the memory controller is delegated), then v1's memory hierarchy."""
    paths: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        hid, _, rest = line.partition(":")
        ctrls, _, path = rest.partition(":")
        if hid == "0" and ctrls == "":
            paths["v2"] = path.strip()
        for c in ctrls.split(","):
            if c:
                paths[c] = path.strip()
    out: list[Place] = []
    for root, point, fstype, _opts in _mounts(mountinfo):
        if fstype == "cgroup2" and "v2" in paths:
            d = _join(point, root, paths["v2"])
            if d:
                out.append(Place(2, d))
    for root, point, fstype, opts in _mounts(mountinfo):
        if fstype == "cgroup" and "memory" in opts and "memory" in paths:
            d = _join(point, root, paths["memory"])
            if d:
                out.append(Place(1, d))
    return out


def build(place: Place, limit_bytes: int, name: str) -> Plan:
    """Which files get which values for a `limit_bytes` child called `name` (pure)."""
    if not name.startswith("dbtier-") or "/" in name:
        raise ValueError(f"not a dbtier cgroup name: {name!r}")
    d = f"{place.parent.rstrip('/')}/{name}"
    limit = str(int(limit_bytes))
    if place.version == 2:
        return Plan("cgroup2", place.parent, d, (("memory.max", limit),), f"{d}/cgroup.procs",
                    f"{place.parent.rstrip('/')}/cgroup.procs", f"{d}/memory.events", int(limit_bytes))
    return Plan("cgroup1", place.parent, d, (("memory.limit_in_bytes", limit),), f"{d}/cgroup.procs",
                f"{place.parent.rstrip('/')}/cgroup.procs", f"{d}/memory.oom_control", int(limit_bytes))


def new_name() -> str:
    return f"dbtier-{uuid.uuid4().hex[:12]}"


# ------------------------------------------------------------------------------------------- apply


def _usable(place: Place) -> str | None:
    """Why a child cannot be made at place (None: it can)."""
    if not os.path.isdir(place.parent):
        return f"{place.parent} does not exist"
    if place.version == 2:
        try:
            ctl = Path(place.parent, "cgroup.subtree_control").read_text().split()
        except OSError as exc:
            return f"cannot read {place.parent}/cgroup.subtree_control ({exc.strerror})"
        if "memory" not in ctl:
            return f"the cgroup v2 memory controller is not delegated to {place.parent}"
    if not os.access(place.parent, os.W_OK):
        return f"{place.parent} is not writable (not root, or no delegation)"
    return None


class MemoryCgroup:
    """A `dbtier-<random>` memory cgroup with a limit. `open()` makes it (or says why not, in `reason`);
    `close()` removes it (idempotent). Use as a context manager."""

    claim: Claim | None = None

    def __init__(self, limit_bytes: int, proc_cgroup: str | None = None, mountinfo: str | None = None):
        self.limit_bytes = int(limit_bytes)
        self._texts = (proc_cgroup, mountinfo)
        self.plan: Plan | None = None
        self.reason: str | None = None
        self.created = False
        self.oom_kills: int | None = None

    @property
    def mechanism(self) -> str:
        return self.plan.mechanism if self.plan and self.created else "none"

    @property
    def made(self) -> Plan:
        """The plan of the group open() made (`plan`, kept after close); a RuntimeError, a fault in the
        caller, when open() made none."""
        return expect(self.plan, "the memory cgroup was not made: open() failed or was not called")

    def open(self) -> "MemoryCgroup":
        proc_cgroup, mountinfo = self._texts
        try:
            proc_cgroup = proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text()
            mountinfo = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
        except OSError as exc:
            self.reason = f"cannot read /proc/self/cgroup or mountinfo ({exc.strerror})"
            return self
        places = locate(proc_cgroup, mountinfo)
        if not places:
            self.reason = "no cgroup memory controller is mounted"
            return self
        why = []
        for place in places:
            problem = _usable(place)
            if problem:
                why.append(problem)
                continue
            plan = build(place, self.limit_bytes, new_name())
            try:
                os.mkdir(plan.dir)
            except OSError as exc:
                why.append(f"cannot create {plan.dir} ({exc.strerror})")
                continue
            self.plan, self.created = plan, True
            # a cgroup directory holds no marker file: the registry entry is its mark
            self.claim = Claim("memory cgroup", {"cgroups": [plan.dir]})
            try:
                for f, v in plan.writes:
                    Path(plan.dir, f).write_text(v)
                return self
            except OSError as exc:
                why.append(f"cannot write {plan.dir}/{f} ({exc.strerror})")
                self.close()
                self.plan = None
        self.reason = "; ".join(why)
        return self

    def pids(self) -> list[int]:
        if not (self.plan and self.created):
            return []
        try:
            return [int(x) for x in Path(self.plan.procs).read_text().split()]
        except (OSError, ValueError):
            return []

    def oom_count(self) -> int:
        """Processes the kernel killed inside the group for want of memory (0 when none or unknown)."""
        if self.plan and self.created:
            self._read_oom()
        return self.oom_kills or 0

    def _read_oom(self) -> None:
        try:
            for line in Path(self.made.oom_file).read_text().splitlines():
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    self.oom_kills = int(v)
        except (OSError, ValueError):
            pass

    def close(self, wait_s: float = 30.0) -> None:
        """Move any process still inside back to the parent, then remove the directory (only ours)."""
        if not (self.plan and self.created):
            return
        self._read_oom()
        deadline = time.monotonic() + wait_s
        while True:
            for pid in self.pids():
                try:
                    Path(self.plan.parent_procs).write_text(str(pid))
                except OSError:
                    pass   # exited meanwhile
            try:
                os.rmdir(self.plan.dir)
                self.created = False
                self._release()
                return
            except FileNotFoundError:
                self.created = False
                self._release()
                return
            except OSError:
                if time.monotonic() > deadline:
                    return   # the caller reports the leftover directory
                time.sleep(0.2)

    def _release(self) -> None:
        if self.claim is not None:
            self.claim.release()
            self.claim = None

    def __enter__(self) -> "MemoryCgroup":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def drop_cached(paths: list[str]) -> int:
    """Drop the page cache of every file under paths (posix_fadvise DONTNEED; the server is stopped and its
    files clean), so measured points start cold and nothing cached before is charged elsewhere. Returns
    how many files were advised."""
    n = 0
    for top in paths:
        for dirpath, _, files in os.walk(top):
            for f in files:
                try:
                    fd = os.open(os.path.join(dirpath, f), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue
                try:
                    os.fdatasync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    n += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)
    return n
