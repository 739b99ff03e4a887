"""The result document: one JSON file per run, versioned.

A document is a plain dict so that it serialises as-is; the keys every command
shares are made here, each command adds its own section. `upgrade` brings an
older stored document to the current version (asv-style upgrade steps).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from dbtier import __version__
from dbtier.core.errors import DbtierError

SCHEMA_VERSION = 1


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_document(command: str, params: dict[str, Any], machine: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
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


# Each step takes a document of version N and returns version N+1.
_UPGRADES: dict[int, Any] = {}


def upgrade(doc: dict[str, Any], source: str = "result.json") -> dict[str, Any]:
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise DbtierError(f"{source}: not a dbtier result (no schema_version)",
                          "pass a run directory written by dbtier")
    if version > SCHEMA_VERSION:
        raise DbtierError(
            f"{source}: schema_version {version} is newer than this dbtier understands ({SCHEMA_VERSION})",
            "upgrade dbtier to read it")
    while version < SCHEMA_VERSION:
        doc = _UPGRADES[version](doc)
        version = doc["schema_version"]
    return doc
