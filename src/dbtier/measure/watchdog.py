"""The watchdog: a small process that outlives a SIGKILL of dbtier only to remove what it had made.

dbtier starts one (`ensure`) on its first registry claim (dbtier.core.debris): `python -m
dbtier.measure.watchdog PID REGISTRY START_TICKS`, in a session of its own (a Ctrl-C or a closed terminal does
not reach it), with no parent-death signal. It waits for PID to exit (a pidfd, else polling /proc
every 0.2 s); then it undoes every entry PID still has in REGISTRY (dbtier.measure.reap) and exits.
When dbtier ends normally it has released its entries and the watchdog finds nothing to do.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from dbtier.core import debris
from dbtier.core.owner import running, start_ticks

POLL_S = 0.2

_started_for: int | None = None


def ensure() -> None:
    """Start this process's watchdog once (the hook `dbtier.core.debris.on_claim`)."""
    global _started_for
    if _started_for == os.getpid() or os.environ.get("DBTIER_NO_WATCHDOG"):
        return
    _started_for = os.getpid()
    from dbtier.measure.executor import spawn_detached
    env = dict(os.environ, DBTIER_NO_WATCHDOG="1")
    try:
        spawn_detached([sys.executable, "-m", "dbtier.measure.watchdog", str(os.getpid()),
                        str(debris.registry_dir()), str(start_ticks(os.getpid()))], env)
    except OSError:
        pass    # no watchdog: what a SIGKILL leaves waits for the next dbtier command or `dbtier cleanup`


def wait_for_exit(pid: int, ticks: int | None) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            if ticks is not None and running(pid, ticks):    # still that process (not a reused pid)
                select.select([fd], [], [])
        finally:
            os.close(fd)
        return
    while ticks is not None and running(pid, ticks):
        time.sleep(POLL_S)


def main(argv: list[str]) -> int:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    pid = int(argv[1])
    os.environ[debris.STATE_ENV] = argv[2]
    ticks = int(argv[3]) if len(argv) > 3 and argv[3].isdigit() else start_ticks(pid)
    if ticks is not None and running(pid, ticks):
        wait_for_exit(pid, ticks)
    # else dbtier died before its watchdog was up (a SIGKILL right after its first claim): reap at once
    from dbtier.measure.reap import reap
    reap(owner_pid=pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
