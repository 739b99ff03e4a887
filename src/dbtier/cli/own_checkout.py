"""The directory a benchmark writes to when none is given: the current one, except inside a git checkout
of dbtier itself. There the default would fill the source tree with a database cluster or fio's test files
and measure whatever disk the checkout happens to sit on, which is rarely the storage meant; the run is
refused with what to pass instead."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from dbtier.core.errors import DbtierError


def dbtier_checkout(start: str | Path | None = None) -> Path | None:
    """The root of the git checkout of dbtier that holds `start` (default the current directory): the
    nearest ancestor with a `.git` (a directory, or a worktree's file) whose pyproject.toml names the
    project dbtier. None elsewhere."""
    here = Path(os.path.abspath(start if start is not None else os.getcwd()))
    for d in (here, *here.parents):
        if (d / ".git").exists():
            try:
                project = tomllib.loads((d / "pyproject.toml").read_text()).get("project") or {}
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
                return None
            return d if project.get("name") == "dbtier" else None
    return None


def default_dir(given: str | None, flag: str, example: str, cwd: str | Path | None = None) -> str:
    """`given` when the option was passed; else "." (the current directory), refused inside dbtier's own
    checkout with one DbtierError naming the option and what to pass."""
    if given is not None:
        return given
    root = dbtier_checkout(cwd)
    if root is not None:
        raise DbtierError(f"{flag}: give the directory to test; the current directory is dbtier's own checkout "
                          f"({root}), and the run would write its files there and measure that disk",
                          f"pass a directory on the storage to measure, e.g. {example}")
    return "."
