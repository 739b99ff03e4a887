"""The one place dbtier starts processes (hyperfine-style executor).

Children run in their own session so a Ctrl-C reaches dbtier first; dbtier
then stops the whole child process group and cleans up, instead of leaving an
engine running.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from dbtier.core.errors import DbtierError

INSTALL_HINTS = {
    "fio": "install fio: `apt-get install fio` (Debian/Ubuntu), `dnf install fio` (Fedora/RHEL); or run `make lab`, which installs it",
    "eatmydata": "install eatmydata: `apt-get install eatmydata`",
}


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise DbtierError(f"{tool} is not installed (not found on PATH)",
                          INSTALL_HINTS.get(tool, f"install {tool}"))
    return path


def _stop_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
        timeout_s: float | None = None, discard_stdout: bool = False, grace_s: float = 10.0) -> Completed:
    """Run argv to completion; on Ctrl-C/SIGTERM or timeout stop its process group first.
    discard_stdout sends stdout to /dev/null (a null sink for large outputs)."""
    start = time.monotonic()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL if discard_stdout else subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop_group(proc)
        out, err = proc.communicate()
        raise DbtierError(f"{argv[0]} did not finish within {timeout_s:.0f} s and was stopped",
                          "the device may be hung or far slower than expected; check `dmesg`")
    except BaseException:
        _stop_group(proc, grace_s)
        try:
            proc.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ValueError):
            pass
        raise
    return Completed(tuple(argv), proc.returncode, out or "", err or "", time.monotonic() - start)
