"""`simulate convert` as a library call: `convert(ConvertRequest, into) -> SimulateConvert`.

The trace read once (chunk after chunk, or whole when it must be sorted) and written as Parquet, one file per
volume, with the source's size and SHA-256 (trace/columnar.py), into `into`/converted.parquet: the command's
run directory, which `simulate run RUN_DIR` then replays without parsing text again. A copy the disk cannot
take with the 10% margin every writer keeps is refused before it is written; a copy that fails part-way
(a bad line, a full disk) is removed.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dbtier.core.errors import DbtierError
from dbtier.results.result import Frozen, Result
from dbtier.sim.trace import columnar
from dbtier.sim.trace.traces import Trace, read_chunks, read_trace


@dataclass(frozen=True, kw_only=True)
class ConvertRequest:
    """The trace to copy, how to read it (as `simulate run` reads text: format, --columns, bad lines skipped
    and counted, sorted by time)."""
    trace: Path
    format: str = "auto"
    columns: str | None = None
    skip_bad: bool = False
    sort: bool = False


@dataclass(frozen=True, kw_only=True)
class SimulateConvert(Result):
    """`simulate convert`'s answer: the document's section (`trace`: what was read; `convert`: the source's
    key, the copy's path, format, requests, volumes, bytes) and where the copy is."""
    kind: str = "simulate.convert"
    path: Path


def check(req: ConvertRequest) -> None:
    """What can be refused before anything is made: a directory, a missing or odd path."""
    if req.trace.is_dir():
        raise DbtierError(f"{req.trace} is a directory: convert reads a trace file", "pass the trace file itself")
    if not req.trace.is_file():
        read_trace(req.trace, req.format, req.columns)     # read_trace's own message for a missing or odd path


def convert(req: ConvertRequest, into: Path,
            progress: Callable[[str, float], None] = lambda _what, _frac: None) -> SimulateConvert:
    check(req)
    path, out = req.trace, into / columnar.CONVERTED
    key = columnar.source_key(path, lambda f: progress("hashing the source", f))
    progress("converting", 0.0)
    try:
        _room(into, key["bytes"])
        if req.sort:               # sorting needs the whole trace in memory
            trace = read_trace(path, req.format, req.columns, skip_bad=req.skip_bad, sort=True)
            m = columnar.write(trace, out, key)
        else:                      # one chunk in memory at a time, whatever the trace's size
            chunks = read_chunks(path, req.format, req.columns, skip_bad=req.skip_bad)

            def meta() -> Trace:
                assert chunks.meta is not None      # set once the chunks are exhausted, when write_chunks asks
                return chunks.meta
            m = columnar.write_chunks(chunks, meta, out, key)
    except DbtierError:
        shutil.rmtree(out, ignore_errors=True)        # a bad line part-way: the copy so far is no copy
        raise
    except OSError as exc:
        shutil.rmtree(out, ignore_errors=True)        # ours, half written
        raise DbtierError(f"{out}: writing the converted copy failed ({exc.strerror or exc})",
                          "free some space, or write the run elsewhere with --out") from None
    section = {"trace": m["summary"],
               "convert": {"source": key, "path": str(out), "format": m["format"], "requests": m["requests"],
                           "volumes": len(m["volumes"]), "bytes_written": m["bytes_written"],
                           "lines": m["lines"], "skipped_bad_lines": m["skipped"]}}
    return SimulateConvert(section=Frozen(section), path=out)


def _room(into: Path, source_bytes: int) -> None:
    """Refuse a copy the disk cannot take with the 10% margin every writer keeps. The Parquet copy is smaller
    than its text (about 10 bytes a request against 50 or more) and near its gzip: the source's size bounds it."""
    free = shutil.disk_usage(into).free
    if source_bytes > free * 0.9:
        raise DbtierError(f"{into}: the converted copy may take up to {source_bytes / 1e9:,.2f} GB and "
                          f"{free / 1e9:,.2f} GB is free (a 10% margin kept)",
                          "free some space, or write the run elsewhere with --out")
