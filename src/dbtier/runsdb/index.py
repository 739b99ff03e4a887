"""The cached index of one runs directory: `RUNS_DIR/.dbtier-runs-index.parquet`, one row per run with its
figures nested, so one file replaced atomically is always a whole index (two concurrent refreshes: the
last one wins, both are valid).

A run's row is reused while its result.json keeps its mtime and size (and the run is not `running`: a
running run may be abandoned without its file changing). The file records the index version and a
fingerprint of the code that extracts figures; a mismatch, or a file that cannot be read, is rebuilt.
A runs directory that cannot be written is indexed in memory only (said in the command's document).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from dbtier import __version__
from dbtier.runsdb.views import SCHEMA

INDEX_FILE = ".dbtier-runs-index.parquet"
INDEX_VERSION = "2"


def fingerprint() -> str:
    """The index version, dbtier's and a hash of the modules whose code decides what a row holds (the
    extraction, the kinds' registry and views, and each kind's figures module): an index made by other code
    is rebuilt rather than trusted."""
    import importlib
    from dbtier.report.figures import core as figures
    from dbtier.results import kinds, probe, registry
    from dbtier.runsdb import extract, views
    faces = [importlib.import_module(k.figures.partition(":")[0])
             for k in (*kinds.KINDS, *kinds.UNKNOWN_ACTION.values(), kinds.GENERIC)]
    h = hashlib.sha256(f"{INDEX_VERSION}|{__version__}".encode())
    for m in dict.fromkeys((figures, probe, extract, kinds, registry, views, *faces)):
        try:
            h.update(Path(m.__file__ or m.__name__).read_bytes())
        except OSError:
            h.update(m.__name__.encode())
    return h.hexdigest()[:24]


def path_of(root: str | os.PathLike) -> Path:
    return Path(root) / INDEX_FILE


def load(root: str | os.PathLike, fp: str, file: Path | None = None) -> pa.Table | None:
    """The stored index when it is whole and made by this code; None otherwise (it is rebuilt). `file`: an
    index kept elsewhere than in `root` (the run registry's, in the state directory)."""
    p = file or path_of(root)
    try:
        meta = pq.read_schema(p).metadata or {}
        if meta.get(b"dbtier_index") != fp.encode():
            return None
        t = pq.read_table(p)
    except (OSError, pa.ArrowException):
        return None
    return t if t.schema.remove_metadata().equals(SCHEMA) else None


def table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def save(root: str | os.PathLike, t: pa.Table, fp: str, file: Path | None = None) -> str | None:
    """Write the index atomically; None when written, else why not (a read-only runs directory)."""
    p = file or path_of(root)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    tmp = p.with_name(f".{INDEX_FILE}.{os.getpid()}.tmp")
    try:
        pq.write_table(t.replace_schema_metadata({"dbtier_index": fp}), tmp, compression="zstd")
        os.replace(tmp, p)
    except (OSError, pa.ArrowException) as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return f"{p}: {getattr(exc, 'strerror', None) or exc}"
    return None
