"""The registry of what dbtier makes on this machine, each entry with its owner, so that nothing is left
behind when dbtier itself dies (SIGKILL, the OOM killer, a closed SSH session's cleanup).

Every thing a command makes outside its run directory (a probe's test directory, a throw-away server and
its directories, a cgroup, a loop device and its mount, a blkio throttle line, a spill or working
directory) is claimed here before or as it is made, and released once it is removed. An entry is one
small JSON file in the registry directory (DBTIER_STATE_DIR, else $XDG_STATE_HOME/dbtier/owned, else
~/.local/state/dbtier/owned): {id, kind, owner, what, created_at}. Directories dbtier makes also carry a
marker file (MARKER) naming the same owner, so that a directory is removed only when both agree.

An entry whose owner is dead (`dbtier.core.owner.alive`) is debris: the owner's watchdog removes it
within seconds of the death (`dbtier.measure.watchdog`), and failing that every later dbtier command
and `dbtier cleanup` do (`dbtier.measure.debris.reap`). An entry of a live owner is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from dbtier.core.files import write_bytes_atomic
from dbtier.core.owner import Owner, me

STATE_ENV = "DBTIER_STATE_DIR"
MARKER = ".dbtier-owner"


def registry_dir() -> Path:
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV])
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "dbtier" / "owned"


def _write_atomic(path: Path, data: bytes) -> None:
    write_bytes_atomic(path, data, path.with_name(f".{path.name}.{os.getpid()}.tmp"))


class Claim:
    """One registry entry: what was made, by whom. `update` adds to what (a server's pids once it runs);
    `release` forgets it once the thing is gone (idempotent)."""

    def __init__(self, kind: str, what: dict[str, Any], owner: Owner | None = None, watch: bool = True):
        self.kind = kind
        self.owner = owner or me()
        self.id = f"{kind.replace(' ', '_').replace('/', '_')}-{self.owner.pid}-{secrets.token_hex(4)}"
        self.what = dict(what)
        self.path = registry_dir() / f"{self.id}.json"
        self.released = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._save()
        except OSError:
            # no room for a registry entry: the thing is still cleaned up by its own code on every
            # path out; only a SIGKILL would leave it, unseen
            self.path = None            # type: ignore[assignment]
        if watch:                       # a run directory alone needs none: its readers see the owner is gone
            _ensure_watchdog()

    def _save(self) -> None:
        doc = {"id": self.id, "kind": self.kind, "owner": self.owner.to_dict(), "what": self.what,
               "created_at": time.time()}
        _write_atomic(self.path, json.dumps(doc, indent=1).encode())

    def update(self, **what: Any) -> None:
        self.what.update(what)
        if self.path is not None and not self.released:
            try:
                self._save()
            except OSError:
                pass

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self.path is not None:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass


def mark_dir(path: str | os.PathLike, kind: str, owner: Owner | None = None) -> None:
    """Put the owner marker in a directory dbtier made."""
    o = owner or me()
    _write_atomic(Path(path) / MARKER, json.dumps({"kind": kind, "owner": o.to_dict()}).encode())


def claim_dir(path: str | os.PathLike, kind: str, marker: bool = True) -> Claim:
    """Claim a directory dbtier just made (its marker first, so that even a death before the registry
    entry is written leaves a directory that says whose it was). `marker=False` for a directory that
    must stay empty (a tablespace): its dbtier- name and the registry entry are its marks."""
    p = Path(path).resolve()
    if marker:
        mark_dir(p, kind)
    return Claim(kind, {"dirs": [str(p)]})


def new_dir(path: str | os.PathLike, kind: str, mode: int = 0o777) -> Claim:
    """Make the directory `path` (its name must start with dbtier- or .dbtier-), claimed before it exists:
    the registry entry and the watchdog come first, then the directory, then its marker, so that a SIGKILL
    at any moment leaves nothing the watchdog does not remove (a directory killed before its marker is
    written is known by its name). FileExistsError and other OSErrors come back with the claim released."""
    p = Path(path).resolve()
    claim = Claim(kind, {"dirs": [str(p)]})
    made = False
    try:
        p.mkdir(mode)
        made = True
        mark_dir(p, kind, claim.owner)
    except BaseException:
        if made:                        # ours and still empty but for a marker, if that was written
            with contextlib.suppress(OSError):
                (p / MARKER).unlink(missing_ok=True)
                p.rmdir()
        claim.release()
        raise
    return claim


def temp_dir(prefix: str, kind: str, dir: str | os.PathLike | None = None) -> tuple[Path, Claim]:
    """A new directory `prefix` + random under `dir` (else TMPDIR), claimed before it exists (`new_dir`):
    the caller removes it and releases the claim."""
    parent = Path(dir if dir is not None else tempfile.gettempdir())
    for _ in range(100):
        p = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            return p, new_dir(p, kind, 0o700)
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: no free name for {prefix}*")


def temp_file(prefix: str, suffix: str, kind: str) -> tuple[str, Claim]:
    """tempfile.mkstemp (closed), claimed: the caller removes it and releases the claim."""
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    os.close(fd)
    return name, Claim(kind, {"files": [name]})


def dir_marker(path: str | os.PathLike) -> Owner | None:
    """The owner a directory's marker names, or None when it has no (readable) marker."""
    try:
        doc = json.loads((Path(path) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return Owner.from_dict(doc.get("owner")) if isinstance(doc, dict) else None


def entries() -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every registry entry (a damaged one is yielded as {} so that it can be named and removed)."""
    d = registry_dir()
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        p = d / name
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            doc = {}
        yield p, doc if isinstance(doc, dict) else {}


# -- the watchdog hook ---------------------------------------------------------------------------------------

# Called on every claim: the CLI sets it to start this process's watchdog once
# (dbtier.measure.watchdog.ensure); a library caller without it gets no watchdog, and what a
# SIGKILL leaves is removed by the next dbtier command or `dbtier cleanup` instead.
on_claim: Callable[[], None] | None = None


def _ensure_watchdog() -> None:
    if on_claim is not None:
        on_claim()
