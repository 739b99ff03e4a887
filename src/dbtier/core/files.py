"""Input files are checked before they are opened.

Opening a FIFO blocks until a writer comes; /dev/zero never ends; a directory
is not a file. So every input path a user names is stat-ed first and refused
by name unless it is a regular file (after following links).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dbtier.core.errors import DbtierError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def regular_file(path: str | os.PathLike, what: str = "input file",
                 hint: str = "pass a regular file") -> Path:
    """`path` as a Path if it names a regular file (links followed); otherwise one DbtierError
    naming it and what it is. Never opens the path."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise DbtierError(f"{what} {p}: no such file", hint) from None
    except PermissionError:
        raise DbtierError(f"{what} {p}: permission denied", "check its permissions") from None
    except OSError as exc:
        raise DbtierError(f"{what} {p}: {exc.strerror or exc}", hint) from None
    if not stat.S_ISREG(st.st_mode):
        raise DbtierError(f"{what} {p}: {kind_of(st.st_mode)}, not a regular file", hint)
    return p


def read_small_text(path: str | os.PathLike, what: str, hint: str, max_bytes: int, too_big: str,
                    encoding: str = "utf-8") -> str:
    """A user's small text file (a catalog, a price list) read whole: a regular file, opened without blocking
    (a path swapped for a FIFO after the check cannot hang), at most `max_bytes`, decoded; one DbtierError
    naming `what` and the path otherwise (`too_big`: what a larger file is not)."""
    p = regular_file(path, what, hint)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise DbtierError(f"{what} {p}: not a regular file", hint)
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise DbtierError(f"cannot read {what} {p}: {exc.strerror or exc}", "check its permissions") from exc
    if len(raw) > max_bytes:
        raise DbtierError(f"{what} {p} is larger than {max_bytes // (1024 * 1024)} MiB: {too_big}", hint)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DbtierError(f"{p}: not UTF-8 text (byte {exc.start})", f"save the {what} as UTF-8") from exc


def is_regular(path: str | os.PathLike) -> bool:
    """True for a regular file (links followed); False for anything else, missing included."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def duck_path(path: str | os.PathLike) -> str:
    """A path as DuckDB must be given it to read (or write) that very file. DuckDB reads a path with * ? or
    [ as a glob, and ~ as the home directory: this is the absolute path with those characters escaped
    as one-character classes, so awr[1].csv is that file, never awr1.csv. (Its `filename` column
    then holds the absolute, unescaped path.)"""
    return "".join(f"[{c}]" if c in "*?[" else c for c in os.path.abspath(os.fspath(path)))


def sql_str(s: str) -> str:
    """A SQL string literal (a quote in a directory name must not end it)."""
    return "'" + s.replace("'", "''") + "'"


def write_bytes_atomic(path: Path, data: bytes, tmp: Path | None = None) -> None:
    """`data` to `path` through a temp file (synced, then renamed over it): a reader sees the old file or the
    new, never part of one. An interrupt or a full disk on the way leaves the old file and no temp file."""
    tmp = tmp if tmp is not None else path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


# -- a full filesystem ---------------------------------------------------------------------------------

FULL_ERRNOS = (28, 122)     # ENOSPC, EDQUOT


def is_full(exc: BaseException) -> bool:
    """A write refused for want of space (or quota)."""
    return isinstance(exc, OSError) and exc.errno in FULL_ERRNOS


def full_path(exc: OSError) -> str:
    """Of the paths a failed write names (a copy names its source and its destination), the one on the
    fullest filesystem."""
    best, least = ".", None
    for p in (getattr(exc, "filename2", None), getattr(exc, "filename", None)):
        if not p:
            continue
        p = os.fspath(p)
        q = p if os.path.exists(p) else os.path.dirname(p) or "."
        try:
            st = os.statvfs(q)
        except OSError:
            continue
        free = st.f_bavail * st.f_frsize
        if least is None or free < least:
            best, least = p, free
    return best


def mount_point(path: str | os.PathLike) -> str:
    p = os.path.abspath(path)
    while not os.path.ismount(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def full_error(path: str | os.PathLike, need_bytes: int | None = None, what: str = "the run") -> DbtierError:
    """One message for a full filesystem: which one, how much is free, and (when known) how much more the
    write needed."""
    from dbtier.core.units import human_bytes
    where = Path(path)
    probe = where if where.exists() else where.parent
    try:
        st = os.statvfs(probe)
        free = st.f_bavail * st.f_frsize
        fs = f"the filesystem at {mount_point(probe)}"
    except OSError:
        free, fs = None, "its filesystem"
    more = ""
    if need_bytes is not None:
        more = f"; writing it needs {human_bytes(need_bytes)}" + (
            f", {human_bytes(max(0, need_bytes - free))} more than is free" if free is not None else "")
    return DbtierError(f"{path}: {fs} is full" + (f" ({human_bytes(free)} free)" if free is not None else "")
                       + f" while writing {what}{more}",
                       "free space there, or write the run directory elsewhere with --out DIR "
                       "(what was measured before is in the document)")
