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
