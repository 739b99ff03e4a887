"""Removing what a dead dbtier left behind: the registry entries (dbtier.core.debris) whose owner is gone.

An entry's `what` says what was made, and each kind of thing is undone in this order (a throttle
before the device it throttles, processes before their directories, a mount before its loop device):

    throttle  [[file, reset value], ...]     a blkio throttle line written back to 0
    pids      [{pid, start_ticks, group}]    processes (a server's leader: its process group) stopped,
                                             SIGTERM then SIGKILL, only while the pid's start time
                                             still matches (a reused pid is someone else's)
    cgroups   [path]                         its processes killed, the group removed
    mounts    [mount point]                  unmounted (lazily when busy)
    loops     [{device, backing}]            detached, only while it still maps that backing file
    dirs      [path]                         removed when its marker names the same owner, or, for a
                                             directory that cannot hold one (a tablespace must be
                                             empty), when its name starts with dbtier-
    files     [path]                         removed
    run       run directory                  never removed: its document, still `running`, says
                                             `abandoned` with when it was last written
    remote    {host, paths}                  named only: the next fleet probe of that host removes them

An entry is forgotten once everything it names is gone; what could not be undone is kept and said.
An entry whose owner is alive, or of another host, is never touched.

`cleanup(dry_run) -> Cleanup` is `dbtier cleanup` as a library call: `reap` over every entry, its answer
typed and immutable (the section the command writes: dry_run, registry, removed, live, damaged).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from dbtier.core.debris import MARKER, dir_marker, entries, registry_dir
from dbtier.core.owner import Owner, abandoned_note, alive, start_ticks
from dbtier.measure import executor
from dbtier.core.parts import dict_at
from dbtier.results.result import Frozen, Result

DIR_PREFIXES = ("dbtier-", ".dbtier-")


def _dbtier_name(path: str) -> bool:
    return os.path.basename(os.path.normpath(path)).startswith(DIR_PREFIXES)


def _kill(pids: Iterable[dict[str, Any]], removed: list[str], left: list[str]) -> None:
    todo = []
    for p in pids:
        pid, ticks = p.get("pid"), p.get("start_ticks")
        if not isinstance(pid, int) or pid <= 1 or start_ticks(pid) != ticks:
            continue                       # gone already, or the pid is now someone else's
        todo.append((pid, bool(p.get("group")), p.get("name") or "process"))
    for sig, wait_s in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
        live = []
        for pid, group, name in todo:
            try:
                os.killpg(pid, sig) if group else os.kill(pid, sig)
            except ProcessLookupError:
                continue
            except PermissionError as exc:
                left.append(f"{name} {pid}: {exc.strerror}")
                continue
            live.append((pid, group, name))
        end = time.monotonic() + wait_s
        while live and time.monotonic() < end:
            live = [t for t in live if _exists(t[0], t[1])]
            if live:
                time.sleep(0.05)
        removed.extend(f"stopped {name} {pid}" for pid, _group, name in todo if (pid, _group, name) not in live)
        todo = live
        if not todo:
            return
    left.extend(f"{name} {pid} did not stop" for pid, _, name in todo)


def _exists(pid: int, group: bool) -> bool:
    """A process (or any process of the group) that is still running; a zombie counts as gone (its
    parent, not us, reaps it)."""
    if not group:
        return _state(pid) not in (None, b"Z")
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat_fields(int(name))
            if st is not None and st[2] == str(pid).encode() and st[0] != b"Z":
                return True
    return False


def _stat_fields(pid: int) -> list[bytes] | None:
    """/proc/PID/stat's fields after the command name: [state, ppid, pgrp, ...]."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _state(pid: int) -> bytes | None:
    st = _stat_fields(pid)
    return st[0] if st else None


def _mounted(path: str) -> bool:
    try:
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4] == path for line in f if len(line.split()) > 4)
    except OSError:
        return False


def _loop_backing(device: str) -> str | None:
    try:
        return Path(f"/sys/block/{os.path.basename(device)}/loop/backing_file").read_text().strip()
    except OSError:
        return None


def _stop(what: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The first pass, over every dead entry before anything is removed: processes and cgroups (a server
    on an emulated tier must be down before its mount goes)."""
    removed: list[str] = []
    left: list[str] = []
    _kill([p for p in what.get("pids") or [] if isinstance(p, dict)], removed, left)
    for cg in what.get("cgroups") or []:
        if not os.path.isdir(cg):
            continue
        try:
            for pid in Path(cg, "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            for _ in range(50):
                try:
                    os.rmdir(cg)
                    removed.append(f"removed cgroup {cg}")
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                left.append(f"cgroup {cg} could not be removed")
        except OSError as exc:
            left.append(f"cgroup {cg}: {exc.strerror}")
    return removed, left


def _undo(owner: Owner, what: dict[str, Any], dry_run: bool) -> tuple[list[str], list[str]]:
    """(what was removed, what is left) for one entry, its processes already stopped (`_stop`)."""
    removed: list[str] = []
    left: list[str] = []
    if dry_run:
        for f, _ in what.get("throttle") or []:
            removed.append(f"would reset the throttle line in {f}")
        for p in what.get("pids") or []:
            if isinstance(p, dict) and isinstance(p.get("pid"), int) and start_ticks(p["pid"]) == p.get("start_ticks"):
                removed.append(f"would stop {p.get('name') or 'process'} {p['pid']}")
        for key, verb in (("cgroups", "remove cgroup"), ("mounts", "unmount"), ("dirs", "remove"),
                          ("files", "remove")):
            for x in what.get(key) or []:
                if os.path.lexists(x):
                    removed.append(f"would {verb} {x}")
        for lo in what.get("loops") or []:
            if isinstance(lo, dict) and _loop_backing(str(lo.get("device"))) == lo.get("backing"):
                removed.append(f"would detach {lo.get('device')}")
        if isinstance(what.get("run"), str):
            removed.append(f"would mark {what['run']} abandoned (if still running)")
        left.extend(_remote_lines(what))
        return removed, left
    for f, reset in what.get("throttle") or []:
        try:
            Path(f).write_text(reset)
            removed.append(f"reset the throttle line {reset!r} in {f}")
        except OSError as exc:
            left.append(f"{f}: {exc.strerror}")
    for m in what.get("mounts") or []:
        if not _mounted(m):
            continue
        r = executor.run(["umount", m])
        if r.returncode != 0:
            r = executor.run(["umount", "-l", m])
        (removed if r.returncode == 0 else left).append(
            f"unmounted {m}" if r.returncode == 0 else f"{m} is still mounted: {r.stderr.strip()}")
    for lo in what.get("loops") or []:
        if not isinstance(lo, dict) or _loop_backing(str(lo.get("device"))) != lo.get("backing"):
            continue
        r = executor.run(["losetup", "-d", str(lo["device"])])
        (removed if r.returncode == 0 else left).append(
            f"detached {lo['device']}" if r.returncode == 0 else f"{lo['device']}: {r.stderr.strip()}")
    for d in what.get("dirs") or []:
        if not os.path.lexists(d):
            continue
        mark = dir_marker(d)
        ours = (mark is not None and (mark.pid, mark.start_ticks, mark.boot_id)
                == (owner.pid, owner.start_ticks, owner.boot_id)) or \
            (mark is None and not os.path.exists(os.path.join(d, MARKER)) and _dbtier_name(d))
        if not ours:
            left.append(f"{d}: its marker names another owner: left alone")
            continue
        shutil.rmtree(d, ignore_errors=True)
        (left.append(f"{d} could not be removed") if os.path.lexists(d) else removed.append(f"removed {d}"))
    for f in what.get("files") or []:
        try:
            os.unlink(f)
            removed.append(f"removed {f}")
        except FileNotFoundError:
            pass
        except OSError as exc:
            left.append(f"{f}: {exc.strerror}")
    run = what.get("run")
    if isinstance(run, str):
        note = mark_abandoned(run, owner)
        if note:
            removed.append(note)
    left.extend(_remote_lines(what))
    return removed, left


def _remote_lines(what: dict[str, Any]) -> list[str]:
    return [f"on {r.get('host')}: {', '.join(map(str, r.get('paths') or []))} (the next fleet probe of that host "
            "removes them)" for r in what.get("remote") or [] if isinstance(r, dict)]


def mark_abandoned(run_dir: str, owner: Owner) -> str | None:
    """A run whose dbtier died: its document, still `running`, is rewritten `abandoned` (never removed)."""
    path = Path(run_dir) / "result.json"
    try:
        doc = json.loads(path.read_bytes())
        mtime = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("status") != "running":
        return None
    from dbtier.results.store import write_json_atomic
    doc["status"] = "abandoned"
    doc["abandoned"] = abandoned_note(owner, mtime)
    doc.setdefault("errors", []).append({"message": doc["abandoned"]["message"]})
    try:
        write_json_atomic(path, doc)
    except OSError:
        return None
    return f"marked {run_dir} abandoned"


def reap(dry_run: bool = False, owner_pid: int | None = None) -> dict[str, Any]:
    """Undo every entry whose owner is dead (only `owner_pid`'s when given). Returns {removed: [{id, kind,
    owner, removed, left}], live: n (entries of live owners, untouched)}."""
    out: dict[str, Any] = {"removed": [], "live": 0, "damaged": []}
    dead: list[tuple[Path, dict[str, Any], Owner]] = []
    for path, doc in entries():
        owner = Owner.from_dict(doc.get("owner"))
        if owner is None:
            out["damaged"].append(str(path))
            if not dry_run:
                try:
                    path.unlink()
                except OSError:
                    pass
            continue
        if owner_pid is not None and owner.pid != owner_pid:
            continue
        state = alive(owner)
        if state is not False:
            out["live"] += 1
            continue
        dead.append((path, doc, owner))
    stopped = [_stop(_what(doc)) if not dry_run else ([], []) for _, doc, _ in dead]
    for (path, doc, owner), (r0, l0) in zip(dead, stopped):
        removed, left = _undo(owner, _what(doc), dry_run)
        out["removed"].append({"id": doc.get("id"), "kind": doc.get("kind"), "owner": owner.to_dict(),
                               "removed": r0 + removed, "left": l0 + left})
        if not dry_run and not (l0 or left):
            try:
                path.unlink()
            except OSError:
                pass
    return out


@dataclass(frozen=True, kw_only=True)
class Cleanup(Result):
    """`dbtier cleanup`'s answer: the section its document adds (dry_run; registry: the registry's
    directory; removed: an entry per dead owner's registry entry, what was, or with dry_run would be,
    removed and what is left; live: how many entries of running owners were left alone; damaged: registry
    files that were not entries, removed unless dry_run)."""
    kind: str = "cleanup"

    @property
    def dry_run(self) -> bool:
        return bool(self.section["dry_run"])

    @property
    def registry(self) -> str:
        return str(self.section["registry"])

    @property
    def removed(self) -> tuple[Mapping[str, Any], ...]:
        out: tuple[Mapping[str, Any], ...] = self.section["removed"]
        return out

    @property
    def live(self) -> int:
        return int(self.section["live"])

    @property
    def damaged(self) -> tuple[str, ...]:
        out: tuple[str, ...] = self.section["damaged"]
        return out


def cleanup(dry_run: bool = False) -> Cleanup:
    """Undo what every dead dbtier process left on this machine (`reap`); with dry_run, say what would go
    and change nothing."""
    out = reap(dry_run=dry_run)
    return Cleanup(section=Frozen({"dry_run": dry_run, "registry": str(registry_dir()), **out}))


def _what(doc: dict[str, Any]) -> dict[str, Any]:
    return dict_at(doc, "what")


def sweep_dir(parent: str | os.PathLike[str]) -> list[str]:
    """Remove the dbtier- directories right under `parent` whose marker names a dead owner (debris whose
    registry entry was lost: another user's registry, a deleted state directory). Returns what went."""
    out: list[str] = []
    try:
        names = [n for n in os.listdir(parent) if n.startswith(DIR_PREFIXES)]
    except OSError:
        return out
    for n in names:
        d = os.path.join(parent, n)
        mark = dir_marker(d)
        if mark is None or alive(mark) is not False or not os.path.isdir(d) or os.path.islink(d):
            continue
        shutil.rmtree(d, ignore_errors=True)
        if not os.path.lexists(d):
            out.append(f"removed {d} (its dbtier, pid {mark.pid}, died)")
    return out
