"""The one place dbtier starts processes (hyperfine-style executor).

Children run in their own session so a Ctrl-C reaches dbtier first; dbtier
then stops the whole child process group and cleans up, instead of leaving an
engine running.

These calls cover every use:

- `run(argv, timeout_s=...)`: run to completion and capture stdout and stderr
  (a timeout stops the process group and raises `TimedOut`);
- `pipeline([argv1, argv2, ...], stdout_path=...)`: `argv1 | argv2 | ... > file`
  (or > /dev/null) without a shell, one process group, each one's stderr captured;
- `start(argv)`: start a long-running process (a tracer, a server) in its own
  process group and return a `Background` handle;
- `stop_group(process)`: stop a process group, politely first: SIGINT (a tool
  flushes and exits), then SIGTERM, then SIGKILL;
- `spawn_detached(argv)`: start the watchdog, the one process meant to outlive dbtier.

Children die with dbtier: every child gets a parent-death signal (SIGTERM, set with
prctl(PR_SET_PDEATHSIG) between fork and exec), so a SIGKILL of dbtier (the OOM killer,
a CI timeout) takes fio, pgbench and sysbench with it. The kernel sends it when the
*thread* that started the child exits: `run` and `pipeline` block that thread until
the child ends, and `start` sets it only from the main thread (which lives as long as
dbtier). Servers that daemonise (pg_ctl, mariadbd) leave the signal behind with their
parent; their registry entry and the watchdog stop them instead (dbtier.core.debris).

Nothing else in dbtier imports subprocess.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from dbtier.core.errors import DbtierError

_PR_SET_PDEATHSIG = 1
_prctl: Callable[..., int] | None
try:
    import ctypes
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):      # not Linux: no parent-death signal
    _prctl = None


def _die_with(parent: int):
    """A preexec_fn: the child gets SIGTERM when dbtier dies (and exits now if it already has). SIGTERM,
    not SIGKILL: runuser passes it on to the program it runs as another user, and fio flushes its output."""
    prctl = _prctl
    if prctl is None:
        return None

    def set_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:      # dbtier died between fork and prctl
            os._exit(1)
    return set_signal


def _blocking_preexec(ignore_sigpipe: bool = False):
    """For a child its starting thread waits for (run, pipeline): safe from any thread. ignore_sigpipe: the
    child starts with SIGPIPE ignored (Python's own setting, which Popen otherwise restores to the default),
    so a write to a socket its peer closed is an error it handles, not its death."""
    die = _die_with(os.getpid())
    if not ignore_sigpipe:
        return die

    def preexec() -> None:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)      # an ignored signal stays ignored across exec
        if die is not None:
            die()
    return preexec


def _background_preexec():
    """For a child that outlives the call (start): only from the main thread, which lives as long as
    dbtier (a worker thread's exit would kill the child)."""
    import threading
    return _die_with(os.getpid()) if threading.current_thread() is threading.main_thread() else None

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


class TimedOut(DbtierError):
    """`run` stopped a process that did not finish within its timeout. A DbtierError (the user sees
    the message and hint); `argv` and `timeout_s` are kept for callers that word it themselves."""

    def __init__(self, argv: Sequence[str], timeout_s: float):
        super().__init__(f"{argv[0]} did not finish within {timeout_s:.0f} s and was stopped",
                         "the device may be hung or far slower than expected; check `dmesg`")
        self.argv = list(argv)
        self.timeout_s = timeout_s


def require(tool: str) -> str:
    """The path of `tool` on PATH, or a DbtierError that says how to install it."""
    path = shutil.which(tool)
    if path is None:
        raise DbtierError(f"{tool} is not installed (not found on PATH)",
                          INSTALL_HINTS.get(tool, f"install {tool}"))
    return path


class Background:
    """A process started by `start`, the leader of its own process group. Its stdout and stderr are
    captured as text: read them with `communicate` (after it exits or is stopped)."""

    def __init__(self, proc: subprocess.Popen):
        self._proc = proc
        self._pending = b""
        self.argv: tuple[str, ...] = tuple(proc.args)     # type: ignore[arg-type]

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def poll(self) -> int | None:
        """Its exit status if it has exited, else None."""
        return self._proc.poll()

    def communicate(self, timeout_s: float | None = None) -> tuple[str, str]:
        """Wait for it to exit and return (stdout, stderr). Past timeout_s it raises
        subprocess.TimeoutExpired and leaves the process running (the caller stops it)."""
        out, err = self._proc.communicate(timeout=timeout_s)
        return out or "", err or ""

    def stop(self, grace_s: float = 10.0) -> None:
        """`stop_group(self, grace_s)`."""
        stop_group(self, grace_s)

    def exchange(self, text: str, marker: str, timeout_s: float) -> str:
        """For a process started with stdin=True (a SQL client session): write `text` to its stdin and
        return its stdout up to the line `marker` (which the text must make it print). Raises OSError
        when it has exited or its pipes closed, TimeoutError past timeout_s."""
        import select
        proc = self._proc
        if proc.stdin is None or proc.stdout is None or proc.poll() is not None:
            raise OSError("the process has exited")
        proc.stdin.write(text)
        proc.stdin.flush()
        fd = proc.stdout.fileno()       # read raw bytes: the text wrapper's buffer would hide them from select
        buf = self._pending
        end = marker.encode() + b"\n"
        deadline = time.monotonic() + timeout_s
        while True:
            i = buf.find(end)
            if i >= 0 and (i == 0 or buf[i - 1:i] == b"\n"):
                self._pending = buf[i + len(end):]
                return buf[:i].decode(errors="replace")
            left = deadline - time.monotonic()
            if left <= 0:
                self._pending = buf
                raise TimeoutError(f"no answer within {timeout_s:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise OSError("the process closed its output")
                buf += chunk


def start(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
          stdin: bool = False) -> Background:
    """Start argv in the background, in its own session (so its own process group), with stdout and
    stderr captured. A Ctrl-C then reaches dbtier only; the caller stops the process with
    `stop_group` (on every path out: wrap the wait in try/except BaseException). stdin=True gives it a
    pipe for `Background.exchange` (a client session), else it reads nothing."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.PIPE if stdin else None,
                            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
                            preexec_fn=_background_preexec())
    return Background(proc)


def spawn_detached(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """Start argv in its own session with no pipes and no parent-death signal (it is meant to outlive
    dbtier: the watchdog); returns its pid. It is not waited for: it reaps itself when dbtier exits."""
    # cwd /: it must not hold busy a directory it is to remove or a mount it is to undo
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True, cwd="/",
                            env=dict(env) if env is not None else None)
    # never waited for: mark it done so that Popen's __del__ does not warn; the kernel reaps it once
    # dbtier exits (its parent is then init)
    proc.returncode = 0
    return proc.pid


def stop_group(process: Background | subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop the process group that `process` leads and wait for the leader: SIGINT and up to grace_s
    for it to exit (blktrace, pgbench and pg_ctl flush and exit on it), then SIGTERM and SIGKILL, 5 s
    each. Nothing happens if the leader has already exited."""
    proc = process._proc if isinstance(process, Background) else process
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
        timeout_s: float | None = None, discard_stdout: bool = False, grace_s: float = 10.0,
        ignore_sigpipe: bool = False) -> Completed:
    """Run argv to completion in its own session and capture stdout and stderr (text).

    Past timeout_s its process group is stopped (`stop_group`) and `TimedOut` is raised. On Ctrl-C or
    SIGTERM (any exception while waiting) the group is stopped with grace_s for SIGINT and the
    exception goes on. discard_stdout sends stdout to /dev/null (a null sink for large outputs).
    A missing program raises OSError (FileNotFoundError), as subprocess does. ignore_sigpipe: see
    _blocking_preexec."""
    start_s = time.monotonic()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL if discard_stdout else subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
                            preexec_fn=_blocking_preexec(ignore_sigpipe))
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        out, err = proc.communicate()
        assert timeout_s is not None
        raise TimedOut(argv, timeout_s) from None
    except BaseException:
        stop_group(proc, grace_s)
        try:
            proc.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ValueError):
            pass
        raise
    return Completed(tuple(argv), proc.returncode, out or "", err or "", time.monotonic() - start_s)


def pipeline(argvs: Sequence[Sequence[str]], *, stdout_path: str | os.PathLike | None = None,
             env: Mapping[str, str] | None = None, cwd: str | None = None, timeout_s: float | None = None,
             grace_s: float = 10.0) -> list[Completed]:
    """Run `argvs[0] | argvs[1] | ...` to completion without a shell: the last one's stdout to stdout_path
    (created or truncated) or, without one, to /dev/null; each one's stderr captured, into a temporary
    file (so a chatty stage never blocks on a full pipe while another is waited for). All stages run in
    one new process group led by the first (a group joins only a group of its own session, so not a new
    session as `run` uses; a background group all the same: a Ctrl-C at the terminal reaches dbtier only).

    Returns one Completed per stage (stdout ""; a stage killed by SIGPIPE has returncode -13). Past
    timeout_s the whole group is stopped and `TimedOut` (naming the first stage) is raised; on Ctrl-C or
    any exception while waiting the group is stopped (SIGINT with grace_s, then SIGTERM, SIGKILL) and the
    exception goes on. Opening stdout_path can raise OSError, before anything starts."""
    if not argvs:
        raise ValueError("pipeline needs at least one command")
    start_s = time.monotonic()
    procs: list[subprocess.Popen] = []
    errs = [tempfile.TemporaryFile() for _ in argvs]
    try:
        with open(stdout_path if stdout_path is not None else os.devnull, "wb") as out:
            try:
                for i, argv in enumerate(argvs):
                    last = i == len(argvs) - 1
                    p = subprocess.Popen(list(argv), stdin=procs[-1].stdout if procs else None,
                                         stdout=out if last else subprocess.PIPE, stderr=errs[i],
                                         env=dict(env) if env is not None else None, cwd=cwd,
                                         process_group=procs[0].pid if procs else 0,
                                         preexec_fn=_blocking_preexec())
                    if procs:
                        # the next stage owns the read end: a writer whose reader exits gets SIGPIPE
                        procs[-1].stdout.close()   # type: ignore[union-attr]
                    procs.append(p)
                deadline = None if timeout_s is None else start_s + timeout_s
                for p in procs:
                    p.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _stop_pipeline(procs, grace_s=2.0)
                assert timeout_s is not None
                raise TimedOut(argvs[0], timeout_s) from None
            except BaseException:
                _stop_pipeline(procs, grace_s)
                raise
        seconds = time.monotonic() - start_s
        done = []
        for argv, p, e in zip(argvs, procs, errs):
            e.seek(0)
            done.append(Completed(tuple(argv), p.returncode, "", e.read().decode(errors="replace"), seconds))
        return done
    finally:
        for e in errs:
            e.close()


def _stop_pipeline(procs: list[subprocess.Popen], grace_s: float) -> None:
    """Stop a pipeline's process group (led by procs[0], which may have exited before the others):
    SIGINT and up to grace_s, then SIGTERM and SIGKILL, 5 s each, until every stage has exited."""
    if not procs:
        return
    pgid = procs[0].pid
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if all(p.poll() is not None for p in procs):
            return
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        end = time.monotonic() + wait_s
        for p in procs:
            try:
                p.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
    for p in procs:   # reap what is left (SIGKILL was sent)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
