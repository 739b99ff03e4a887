"""Who made a thing, and is that process still alive: the owner marker every run and every piece of
debris carries (the run id, the pid, the boot id, the process's start time, the host).

A pid alone is not an owner: pids are reused. The kernel's boot id (a new one every boot) and the
process's start time in clock ticks since boot (field 22 of /proc/PID/stat) make it one: the owner is
alive exactly when this machine has the same boot id and a process with that pid and that start time.
A marker from another host cannot be judged here (None).
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
from dataclasses import asdict, dataclass
from typing import Any

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"


def boot_id() -> str:
    try:
        with open(BOOT_ID_PATH) as f:
            return f.read().strip()
    except OSError:
        return ""


def _stat(pid: int) -> list[bytes] | None:
    """/proc/PID/stat's fields after the command name (state first), or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'
    return stat[stat.rfind(b")") + 2:].split()


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when there is no such process."""
    rest = _stat(pid)
    try:
        return int(rest[19]) if rest else None       # field 22 overall: fields 3.. start at rest[0]
    except (IndexError, ValueError):
        return None


def running(pid: int, ticks: int) -> bool:
    """That process (pid and start time) exists and has not exited: a zombie, exited but not yet reaped by
    its parent, is dead (a watchdog woken by the exit sees it so before the parent's wait)."""
    rest = _stat(pid)
    try:
        return rest is not None and int(rest[19]) == ticks and rest[0] not in (b"Z", b"X")
    except (IndexError, ValueError):
        return False


@dataclass(frozen=True)
class Owner:
    pid: int
    boot_id: str
    start_ticks: int
    host: str
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> "Owner | None":
        """The marker of a document or a registry entry; None when it is not one."""
        if not isinstance(d, dict):
            return None
        try:
            pid, boot, ticks, host = d["pid"], d["boot_id"], d["start_ticks"], d["host"]
        except KeyError:
            return None
        if not (isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and isinstance(boot, str)
                and isinstance(ticks, int) and not isinstance(ticks, bool) and isinstance(host, str)):
            return None
        run_id = d.get("run_id")
        return cls(pid, boot, ticks, host, run_id if isinstance(run_id, str) else None)


_ME: Owner | None = None
# the run this process is making (its run directory's name): every marker it writes names it
current_run: str | None = None


def me(run_id: str | None = None) -> Owner:
    """This process as an owner (its start time read once), naming `run_id` or else the current run."""
    global _ME
    pid = os.getpid()
    if _ME is None or _ME.pid != pid:       # a forked child is another owner
        _ME = Owner(pid, boot_id(), start_ticks(pid) or 0, socket.gethostname())
    rid = run_id or current_run
    return Owner(_ME.pid, _ME.boot_id, _ME.start_ticks, _ME.host, rid) if rid else _ME


def alive(o: Owner) -> bool | None:
    """Is the owner still running? None when it is another host's (it cannot be told from here)."""
    if o.host != socket.gethostname():
        return None
    if o.boot_id != boot_id():
        return False                 # the machine restarted since: every process of then is gone
    return running(o.pid, o.start_ticks)


def abandoned_note(owner: Owner, mtime: float) -> dict[str, Any]:
    when = _dt.datetime.fromtimestamp(mtime, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"last_written_at": when, "pid": owner.pid,
            "message": f"abandoned: the dbtier process that ran it (pid {owner.pid}) died without finishing; "
                       f"last written {when}"}
