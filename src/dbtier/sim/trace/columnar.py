"""A trace's compact columnar copy (`dbtier simulate convert`): read a text trace once, replay it often.

The copy is a Parquet dataset in the convert run's directory (`trace.parquet/`), one file per volume
(`volume=<index>/part-0.parquet`: time_s float64, op uint8, offset_bytes int64, length_bytes int64, and
`seq`, the request's place in the whole trace, int64 delta-encoded), plus `manifest.json`: the volumes'
names, what the reader found (format, lines, skipped and ignored lines, notes, time origin) and the source's
key -- its path, size in bytes, modification time and SHA-256 -- so a run on the copy can say when the source
has changed since. `simulate run CONVERT_RUN_DIR` reads the copy straight into arrays: the whole trace put
back in its order from `seq` (a scatter, not a sort), or with --volume NAME only that volume's file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.trace.traces import Trace

CONVERTED = "trace.parquet"
MANIFEST = "manifest.json"
FORMAT_VERSION = 1
_COLUMNS = ("seq", "time_s", "op", "offset_bytes", "length_bytes")


def source_key(path: Path, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    """The source file's identity: path, size, mtime and SHA-256 (read once, 4 MiB at a time)."""
    st = path.stat()
    h = hashlib.sha256()
    done = 0
    with open(path, "rb") as f:
        while block := f.read(4 << 20):
            h.update(block)
            done += len(block)
            if progress and st.st_size:
                progress(done / st.st_size)
    return {"path": str(path.resolve()), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": h.hexdigest()}


def write(trace: Trace, out: Path, source: dict[str, Any]) -> dict[str, Any]:
    """Write an in-memory `trace` as the columnar copy under `out` (created; must not exist) -> the manifest."""
    from dbtier.sim.trace.chunks import chunks_of
    return write_chunks(chunks_of(trace, 1 << 20), lambda: trace, out, source)


def write_chunks(chunks: Iterable[Any], meta: Callable[[], Trace], out: Path,
                 source: dict[str, Any]) -> dict[str, Any]:
    """Write a trace arriving as chunks (in order) as the columnar copy under `out` (created; must not exist),
    one chunk in memory at a time: each volume's rows are appended to its own file as they come. `meta()`,
    called after the last chunk: the reader's account (a Trace whose arrays may be empty)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    out.mkdir()
    writers: dict[int, Any] = {}
    counts: dict[int, int] = {}
    n = reads = nbytes = 0
    last_t = first_t = None
    try:
        for c in chunks:
            k = len(c)
            if k == 0:
                continue
            seq = np.arange(c.first_request, c.first_request + k, dtype=np.int64)
            n += k
            reads += int(np.count_nonzero(c.op == 0))
            nbytes += int(c.length_bytes.sum())
            first_t = float(c.time_s[0]) if first_t is None else first_t
            last_t = float(c.time_s[-1])
            for i in np.unique(c.volume).tolist():
                rows = np.flatnonzero(c.volume == i)
                table = pa.table({"seq": seq[rows], "time_s": c.time_s[rows], "op": c.op[rows],
                                  "offset_bytes": c.offset_bytes[rows], "length_bytes": c.length_bytes[rows]})
                if i not in writers:
                    (out / f"volume={i}").mkdir()
                    writers[i] = pq.ParquetWriter(out / f"volume={i}" / "part-0.parquet", table.schema,
                                                  compression="zstd", use_dictionary=["op"],
                                                  column_encoding={"seq": "DELTA_BINARY_PACKED"})
                writers[i].write_table(table)
                counts[i] = counts.get(i, 0) + int(rows.size)
    finally:
        for w in writers.values():
            w.close()
    m = meta()
    duration = None
    if m.timed and n:
        assert first_t is not None and last_t is not None      # set by every chunk with requests
        duration = last_t - first_t
    files = [{"volume": m.volumes[i], "index": i, "requests": counts[i], "file": f"volume={i}/part-0.parquet"}
             for i in sorted(counts)]
    summary = {"requests": n, "reads": reads, "writes": n - reads, "bytes": nbytes,
               "duration_s": duration}
    manifest = {"version": FORMAT_VERSION, "source": source, "format": m.format, "timed": m.timed,
                "time_origin_s": m.time_origin, "lines": m.lines, "skipped": m.skipped,
                "skipped_lines": [list(x) for x in m.skipped_lines], "ignored": dict(m.ignored),
                "sorted": m.sorted, "notes": list(m.notes), "volumes": list(m.volumes),
                "requests": n, "summary": summary, "files": files}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    manifest["bytes_written"] = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return manifest


def is_converted(path: Path) -> bool:
    return (path / CONVERTED / MANIFEST).is_file()


def manifest(run_dir: Path) -> dict[str, Any]:
    m = run_dir / CONVERTED / MANIFEST
    try:
        doc = json.loads(m.read_text())
    except (OSError, ValueError) as exc:
        raise DbtierError(f"{m}: not a readable converted trace ({exc})",
                          "convert the trace again with `dbtier simulate convert TRACE`") from None
    if not isinstance(doc, dict) or doc.get("version") != FORMAT_VERSION or not isinstance(doc.get("files"), list):
        raise DbtierError(f"{m}: written by another dbtier (format {doc.get('version') if isinstance(doc, dict) else '?'}"
                          f", this one reads {FORMAT_VERSION})", "convert the trace again with `dbtier simulate convert`")
    return doc


def source_changed(doc: dict[str, Any]) -> str | None:
    """A note when the source is no longer what was converted (size or mtime differ; hashing it again would
    cost the read the copy saves), or None."""
    src = doc.get("source") or {}
    try:
        st = os.stat(src.get("path", ""))
    except OSError:
        return None                 # moved or deleted: the copy stands on its own
    if st.st_size != src.get("bytes") or st.st_mtime_ns != src.get("mtime_ns"):
        return (f"the source {src.get('path')} has changed since it was converted ({src.get('bytes'):,} bytes "
                f"then, {st.st_size:,} now): these figures are the converted copy's")
    return None


def read(run_dir: Path, volume: str | None = None) -> Trace:
    """The converted trace of a convert run directory, whole or one volume (its file only)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    doc = manifest(run_dir)
    base = run_dir / CONVERTED
    names = tuple(doc["volumes"])
    files = doc["files"]
    if volume is not None:
        if volume not in names:
            shown = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "")
            raise DbtierError(f"{run_dir}: no volume '{volume}' in the trace (volumes: {shown})",
                              "pass one of the volumes listed to --volume, or leave --volume out")
        files = [f for f in files if f["volume"] == volume]
    n = sum(int(f["requests"]) for f in files)
    t = np.empty(n, dtype=np.float64)
    op = np.empty(n, dtype=np.uint8)
    off = np.empty(n, dtype=np.int64)
    ln = np.empty(n, dtype=np.int64)
    vol = np.empty(n, dtype=np.int32)
    seen = np.zeros(n, dtype=bool) if volume is None else None
    at = 0
    for f in files:
        path = base / f["file"]
        k = 0
        try:
            # batch by batch into the arrays made above: the file is never held whole a second time
            for batch in pq.ParquetFile(path).iter_batches(batch_size=1 << 20, columns=list(_COLUMNS)):
                cols = {c: batch.column(c).to_numpy(zero_copy_only=False) for c in _COLUMNS}
                m = len(cols["seq"])
                if volume is None:
                    assert seen is not None       # made for the whole trace
                    where = cols["seq"]           # back in the whole trace's order
                    if m and (where.min() < 0 or where.max() >= n or seen[where].any()):
                        raise DbtierError(f"{path}: request numbers that do not fit the manifest",
                                          "convert the trace again with `dbtier simulate convert TRACE`")
                    seen[where] = True
                else:
                    if at + m > n:
                        break
                    where = np.arange(at, at + m)
                    at += m
                t[where], op[where], off[where], ln[where] = cols["time_s"], cols["op"], cols["offset_bytes"], \
                    cols["length_bytes"]
                vol[where] = 0 if volume is not None else int(f["index"])
                k += m
        except (OSError, ValueError) as exc:
            raise _unreadable(path, exc) from None
        _check_count(path, k, f)
    pa.default_memory_pool().release_unused()     # give Arrow's buffers back before the replay needs the memory
    if volume is not None and n:
        t -= t[0]                     # a volume's replay starts at its first request (as Trace.only_volume)
    return _trace(run_dir, doc, (volume,) if volume is not None else names, t, op, off, ln, vol)


def _unreadable(path: Path, exc: Exception) -> DbtierError:
    return DbtierError(f"{path}: cannot read the converted trace ({exc})",
                       "convert the trace again with `dbtier simulate convert TRACE`")


def _check_count(path: Path, got: int, f: dict[str, Any]) -> None:
    if got != int(f["requests"]):
        raise DbtierError(f"{path}: {got:,} requests where the manifest says {int(f['requests']):,}",
                          "convert the trace again with `dbtier simulate convert TRACE`")


def _trace(run_dir: Path, doc: dict[str, Any], names: tuple[str, ...], t: np.ndarray, op: np.ndarray,
           off: np.ndarray, ln: np.ndarray, vol: np.ndarray) -> Trace:
    notes = list(doc.get("notes") or [])
    changed = source_changed(doc)
    if changed:
        notes.append(changed)
    return Trace(str(run_dir / CONVERTED), str(doc["format"]), t, op, off, ln, vol, names, bool(doc["timed"]),
                 float(doc["time_origin_s"]), int(doc["lines"]), int(doc["skipped"]),
                 [tuple(x) for x in doc.get("skipped_lines") or []], dict(doc.get("ignored") or {}),
                 bool(doc.get("sorted")), notes)


def streamable(run_dir: Path) -> bool:
    """One volume with requests: its file is the trace in order, read batch by batch (`chunks`)."""
    return sum(1 for f in manifest(run_dir)["files"] if int(f["requests"])) == 1


def chunks(run_dir: Path, requests: int) -> tuple[Callable[[], Iterable[Any]], Callable[[], Trace]]:
    """(a function starting a read of the one volume's file as chunks.Chunk of `requests`, the reader's
    account as a Trace without requests) -- what simulate.simulate_stream takes."""
    import pyarrow.parquet as pq
    from dbtier.sim.trace.chunks import Chunk
    doc = manifest(run_dir)
    f = next(f for f in doc["files"] if int(f["requests"]))
    path = run_dir / CONVERTED / f["file"]
    timed = bool(doc["timed"])

    def read() -> Iterable[Chunk]:
        import pyarrow as pa
        done = 0
        try:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=requests, columns=list(_COLUMNS[1:])):
                cols = [batch.column(c).to_numpy(zero_copy_only=False) for c in _COLUMNS[1:]]
                m = len(cols[0])
                del batch
                pa.default_memory_pool().release_unused()     # Arrow's pool keeps freed batches otherwise
                yield Chunk(np.ascontiguousarray(cols[0], dtype=np.float64), cols[1].astype(np.uint8),
                            cols[2].astype(np.int64), cols[3].astype(np.int64), np.zeros(m, dtype=np.int32),
                            done, timed, (done + m) / max(1, int(f["requests"])))
                done += m
        except (OSError, ValueError) as exc:
            raise _unreadable(path, exc) from None
        _check_count(path, done, f)

    e = np.zeros(0)
    meta = _trace(run_dir, doc, tuple(doc["volumes"]), e, e.astype(np.uint8), e.astype(np.int64),
                  e.astype(np.int64), e.astype(np.int32))
    return read, lambda: meta


@dataclass(frozen=True)
class ConvertedVolume:
    """One volume of a converted trace, read where it is replayed (a worker process), not before."""
    run_dir: str
    name: str

    def load(self) -> Trace:
        return read(Path(self.run_dir), self.name)


def volume_source(run_dir: Path) -> Any:
    """`--volume all` over a converted trace: each volume's file read by the process that replays it."""
    from dbtier.sim.volumes import Source
    doc = manifest(run_dir)
    names = [f["volume"] for f in sorted(doc["files"], key=lambda f: int(f["index"])) if int(f["requests"])]
    info = {"path": str(run_dir / CONVERTED), "format": doc["format"], "timed": doc["timed"], "lines": doc["lines"],
            "volumes": list(doc["volumes"][:50]), "volume_count": len(doc["volumes"]),
            "skipped_bad_lines": doc["skipped"],
            "skipped_examples": [{"line": n, "reason": r} for n, r in doc.get("skipped_lines") or []],
            "ignored_lines": dict(doc.get("ignored") or {}), "sorted_by_time": bool(doc.get("sorted")),
            "time_origin_s": doc["time_origin_s"],
            "notes": list(doc.get("notes") or []) + [n for n in [source_changed(doc)] if n]}
    return Source(str(run_dir / CONVERTED), names, info, dict(doc["summary"]),
                  lambda: ((n, ConvertedVolume(str(run_dir), n)) for n in names))
