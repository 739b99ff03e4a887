"""The result document: one JSON file per run, versioned.

A document is a plain dict so that it serialises as-is; the keys every command
shares are made here (its kind among them: dbtier.results.kinds), each command
adds its own section. `upgrade` brings an older stored document to the current
version (asv-style upgrade steps), then adds the keys added within that version
that an older document lacks (FILLS).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable

from dbtier import __version__
from dbtier.core.errors import DbtierError
from dbtier.results import kinds

SCHEMA_VERSION = 1


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_document(kind: str, params: dict[str, Any], machine: dict[str, Any]) -> dict[str, Any]:
    """A new run's document: `kind` the command's kind of result (dbtier.results.kinds: `bench.oltp`,
    `probe`), its first word the command."""
    k = kinds.check(kind)
    return {
        "schema_version": SCHEMA_VERSION,
        "command": k.command,
        kinds.KEY: k.name,
        "dbtier_version": __version__,
        "started_at": utc_now(),
        "finished_at": None,
        "status": "running",
        "machine": machine,
        "params": params,
        "errors": [],
    }


def finish(doc: dict[str, Any], status: str = "ok") -> None:
    doc["finished_at"] = utc_now()
    doc["status"] = status


# The oldest schema_version this dbtier reads. Version 0 was the pre-release format (before the first
# published schema): no document of it was ever published as a result, and what its keys meant is not
# recorded anywhere, so it is refused on purpose rather than guessed at.
OLDEST_READABLE = 1

# Each step takes a document of version N (the key) and returns one of version N+1.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

# Keys added within SCHEMA_VERSION: optional in its types (a document without them is still of that version,
# and other tools read it as it is), so they are added, not versioned. Each fill returns the document with
# its key when the document lacks it and holds what the key is derived from (else the document unchanged).
FILLS: list[Callable[[dict[str, Any]], dict[str, Any]]] = [kinds.with_kind]


def upgrade(doc: dict[str, Any], source: str = "result.json") -> dict[str, Any]:
    """Bring a stored document to SCHEMA_VERSION through the upgrade steps, one version at a time, then add
    the keys of that version it lacks (FILLS)."""
    version = doc.get("schema_version")
    if version is None:
        raise DbtierError(f"{source}: not a dbtier result (no schema_version)",
                          "pass a run directory written by dbtier")
    if isinstance(version, bool) or not isinstance(version, int):
        raise DbtierError(f"{source}: not a dbtier result (schema_version is {_show(version)}, not an integer)",
                          "pass a run directory written by dbtier")
    if version > SCHEMA_VERSION:
        raise DbtierError(
            f"{source}: schema_version {version} is newer than this dbtier understands ({SCHEMA_VERSION})",
            "upgrade dbtier to read it")
    if version < 0:
        raise DbtierError(f"{source}: schema_version {version} is not a version dbtier ever wrote",
                          "pass a run directory written by dbtier")
    if version < OLDEST_READABLE:
        raise DbtierError(f"{source}: schema_version {version} is the pre-release format, which this dbtier "
                          f"refuses on purpose (it reads {OLDEST_READABLE} to {SCHEMA_VERSION}; no upgrade "
                          "step exists from it)",
                          "re-run the command with this dbtier to get a current result")
    while version < SCHEMA_VERSION:
        step = UPGRADES.get(version)
        if step is None:
            raise DbtierError(f"{source}: no upgrade step from schema_version {version}",
                              "re-run the command with this dbtier to get a current result")
        doc = step(dict(doc))
        new = doc.get("schema_version")
        if new != version + 1:   # a step must move exactly one version on: never loop, never skip
            raise AssertionError(f"upgrade step from {version} gave schema_version {new!r}")
        version = new
    for fill in FILLS:
        doc = fill(doc)
    return doc


def _show(v: Any) -> str:
    text = repr(v) if not isinstance(v, bool) else str(v).lower()
    return text if len(text) <= 40 else text[:37] + "..."
