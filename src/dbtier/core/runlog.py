"""The run registry: where every run directory this user's dbtier made lives, wherever `--out` put it, so
that `dbtier runs` lists them all and not only those under its runs directories.

One line of JSON per run, appended as its directory is made ({path, command, name, created_at}), in
`runs.jsonl` in the state directory (DBTIER_STATE_DIR, else $XDG_STATE_HOME/dbtier, else
~/.local/state/dbtier; the debris registry of dbtier.core.debris lives there too). An append of one short
line is one write() under an exclusive lock, so concurrent commands never interleave; `prune` rewrites the
file in place under the same lock, dropping the runs deleted since. A registry that cannot be written
costs a run nothing but its line (that run is listed from its runs directory only).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from dbtier.core.debris import STATE_ENV

REGISTRY_FILE = "runs.jsonl"


def state_dir() -> Path:
    """dbtier's per-user state directory (DBTIER_STATE_DIR, else $XDG_STATE_HOME/dbtier)."""
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV])
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "dbtier"


def registry_path() -> Path:
    return state_dir() / REGISTRY_FILE


@contextlib.contextmanager
def _locked(mode: str) -> Iterator[IO[bytes]]:
    p = registry_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, mode) as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield f
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def record(path: str | os.PathLike, command: str, name: str | None) -> bool:
    """Add a run directory just made (its absolute path); False when the registry cannot be written."""
    line = json.dumps({"path": os.path.abspath(path), "command": command, "name": name,
                       "created_at": time.time()}) + "\n"
    try:
        with _locked("ab") as f:
            f.write(line.encode("utf-8", "surrogateescape"))
            f.flush()
    except OSError:
        return False
    return True


def _parse(data: bytes) -> list[dict[str, Any]]:
    """The entries, one per path (the latest wins: a run replaced with --force is recorded again); a line
    that is not an entry (a write cut short by a full disk) is dropped."""
    out: dict[str, dict[str, Any]] = {}
    for raw in data.splitlines():
        try:
            e = json.loads(raw.decode("utf-8", "surrogateescape"))
        except ValueError:
            continue
        if isinstance(e, dict) and isinstance(e.get("path"), str) and os.path.isabs(e["path"]):
            out.pop(e["path"], None)
            out[e["path"]] = e
    return list(out.values())


def entries() -> list[dict[str, Any]]:
    """Every recorded run, oldest first (an absent or unreadable registry: none)."""
    try:
        return _parse(registry_path().read_bytes())
    except OSError:
        return []


def prune(keep: Callable[[dict[str, Any]], bool]) -> tuple[list[dict[str, Any]], int]:
    """(the entries `keep` accepts, how many were dropped), the registry rewritten without the others.
    A registry that cannot be rewritten is read as it is (nothing dropped on disk)."""
    try:
        with _locked("r+b") as f:
            found = _parse(f.read())
            kept = [e for e in found if keep(e)]
            if len(kept) != len(found) or f.tell() != sum(len(_line(e)) for e in kept):
                f.seek(0)
                f.write(b"".join(_line(e) for e in kept))
                f.truncate()
                f.flush()
            return kept, len(found) - len(kept)
    except FileNotFoundError:
        return [], 0
    except OSError:
        found = entries()
        kept = [e for e in found if keep(e)]
        return kept, len(found) - len(kept)


def _line(e: dict[str, Any]) -> bytes:
    return (json.dumps(e) + "\n").encode("utf-8", "surrogateescape")
