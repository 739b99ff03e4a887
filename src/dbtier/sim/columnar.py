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
from typing import Any, Callable

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.traces import Trace

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
    """Write `trace` as the columnar copy under `out` (created; must not exist) -> the manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    out.mkdir()
    seq = np.arange(len(trace), dtype=np.int64)
    files = []
    for i, name in enumerate(trace.volumes):
        rows = np.flatnonzero(trace.volume == i)
        if rows.size == 0:
            continue
        d = out / f"volume={i}"
        d.mkdir()
        table = pa.table({"seq": seq[rows], "time_s": trace.time_s[rows], "op": trace.op[rows],
                          "offset_bytes": trace.offset_bytes[rows], "length_bytes": trace.length_bytes[rows]})
        pq.write_table(table, d / "part-0.parquet", compression="zstd", use_dictionary=["op"],
                       column_encoding={"seq": "DELTA_BINARY_PACKED"})
        files.append({"volume": name, "index": i, "requests": int(rows.size),
                      "file": f"volume={i}/part-0.parquet"})
    manifest = {"version": FORMAT_VERSION, "source": source, "format": trace.format, "timed": trace.timed,
                "time_origin_s": trace.time_origin, "lines": trace.lines, "skipped": trace.skipped,
                "skipped_lines": [list(x) for x in trace.skipped_lines], "ignored": dict(trace.ignored),
                "sorted": trace.sorted, "notes": list(trace.notes), "volumes": list(trace.volumes),
                "requests": len(trace), "summary": trace.summary(), "files": files}
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
        try:
            tab = pq.read_table(path, columns=list(_COLUMNS))
        except (OSError, ValueError) as exc:
            raise DbtierError(f"{path}: cannot read the converted trace ({exc})",
                              "convert the trace again with `dbtier simulate convert TRACE`") from None
        cols = {c: tab.column(c).to_numpy() for c in _COLUMNS}
        k = len(cols["seq"])
        if k != int(f["requests"]):
            raise DbtierError(f"{path}: {k:,} requests where the manifest says {int(f['requests']):,}",
                              "convert the trace again with `dbtier simulate convert TRACE`")
        if volume is None:
            where = cols["seq"]           # back in the whole trace's order
            if where.size and (where.min() < 0 or where.max() >= n or seen[where].any()):
                raise DbtierError(f"{path}: request numbers that do not fit the manifest",
                                  "convert the trace again with `dbtier simulate convert TRACE`")
            seen[where] = True
        else:
            where = np.arange(at, at + k)
            at += k
        t[where], op[where], off[where], ln[where] = cols["time_s"], cols["op"], cols["offset_bytes"], \
            cols["length_bytes"]
        vol[where] = 0 if volume is not None else int(f["index"])
    origin = float(doc["time_origin_s"])
    if volume is not None and n:
        t -= t[0]                     # a volume's replay starts at its first request (as Trace.only_volume)
    notes = list(doc.get("notes") or [])
    changed = source_changed(doc)
    if changed:
        notes.append(changed)
    return Trace(str(run_dir / CONVERTED), str(doc["format"]), t, op, off, ln, vol,
                 (volume,) if volume is not None else names, bool(doc["timed"]), origin, int(doc["lines"]),
                 int(doc["skipped"]), [tuple(x) for x in doc.get("skipped_lines") or []],
                 dict(doc.get("ignored") or {}), bool(doc.get("sorted")), notes)


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
