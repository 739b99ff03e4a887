"""Object traces in the formats the cache-research field passes around (libCacheSim's): requests for whole
objects (an id and a size), not byte ranges of a volume. Pure reading: a file in, numpy chunks out, no
Python loop per record.

- `oracleGeneral`: packed little-endian 24-byte records `u32 time (s), u64 object id, u32 object size
  (bytes), i64 next access` (the 1-based index of the object's next request, -1 when it is never asked for
  again), plain (`.bin`) or zstd-compressed (`.zst`), the way the public Twitter, Meta, CloudPhysics, MSR,
  Alibaba and Tencent traces are published.
- `vscsi` (CloudPhysics' VMware traces), version 1 (32-byte records `u32 sn, u32 len, u32 nSG, u16 cmd,
  u16 ver, u64 lbn, u64 ts`) and 2 (40 bytes: `u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts,
  u64 rt`), the version in the high byte of `ver`, as libCacheSim tells them apart (its first two records);
  as libCacheSim reads it: the object is the LBN, its size the length, the time ts / 10^6 s.
- `txt`: one object id per line, each of size 1 (libCacheSim's plain text); ids that are not integers are
  numbered in order of first appearance.

A file whose size is not a whole number of records is refused naming the file and the cut record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.core.files import regular_file

OBJECT_FORMATS = ("oracleGeneral", "vscsi", "txt")

ORACLE_GENERAL = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])     # 24 bytes
VSCSI1 = np.dtype([("sn", "<u4"), ("len", "<u4"), ("nsg", "<u4"), ("cmd", "<u2"), ("ver", "<u2"),
                   ("lbn", "<u8"), ("ts", "<u8")])                                                     # 32 bytes
VSCSI2 = np.dtype([("cmd", "<u2"), ("ver", "<u2"), ("sn", "<u4"), ("len", "<u4"), ("nsg", "<u4"),
                   ("lbn", "<u8"), ("ts", "<u8"), ("rt", "<u8")])                                      # 40 bytes
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
CHUNK_RECORDS = 1 << 20
_HINT = "pass the trace as its publisher wrote it (a download cut short is the usual cause)"


@dataclass
class ObjectChunk:
    """Requests `first` .. `first + len(obj_id) - 1` of a trace (0-based)."""
    first: int
    time_s: np.ndarray             # int64, whole seconds as the trace has them
    obj_id: np.ndarray             # uint64
    size: np.ndarray               # int64 bytes (1 for txt)
    next_access: np.ndarray | None  # int64: 1-based index of the object's next request, -1 never (oracleGeneral)


def detect(path: str | os.PathLike) -> tuple[str, bool]:
    """(format, zstd-compressed) from the name (`.oracleGeneral`, `.bin`, `.vscsi`, `.txt`, each maybe
    `.zst`) and, for vscsi, the first records. Unknown: a DbtierError naming the formats."""
    p = Path(path)
    with open(p, "rb") as f:
        head = f.read(2 * VSCSI2.itemsize)
    zst = head.startswith(ZSTD_MAGIC)
    name = p.name.lower()
    if name.endswith(".zst"):
        name = name[:-4]
    if "oraclegeneral" in name or name.endswith(".bin"):
        return "oracleGeneral", zst
    if name.endswith(".vscsi") or (not zst and _vscsi_version(head) is not None):
        return "vscsi", zst
    if name.endswith(".txt"):
        return "txt", zst
    raise DbtierError(f"{p}: not an object trace dbtier knows by its name ({', '.join(OBJECT_FORMATS)})",
                      "name it NAME.oracleGeneral.bin[.zst], NAME.vscsi or NAME.txt, or give --format")


def _vscsi_version(head: bytes) -> int | None:
    """libCacheSim's test: the version byte of the first two records read as v2, else as v1."""
    if len(head) >= 2 * VSCSI2.itemsize and all(v >> 8 == 2 for v in np.frombuffer(head, VSCSI2, 2)["ver"]):
        return 2
    if len(head) >= 2 * VSCSI1.itemsize and all(v >> 8 == 1 for v in np.frombuffer(head[:64], VSCSI1, 2)["ver"]):
        return 1
    return None


def read_objects(path: str | os.PathLike, fmt: str = "auto", chunk: int = CHUNK_RECORDS) -> Iterator[ObjectChunk]:
    """The trace's requests, `chunk` records at a time (memory: one chunk, whatever the trace's size)."""
    p = regular_file(path, "trace", "pass the trace file itself")
    found, zst = detect(p)
    if fmt != "auto" and fmt not in OBJECT_FORMATS:
        raise DbtierError(f"--format {fmt}: not an object trace format ({', '.join(OBJECT_FORMATS)})",
                          "e.g. --format oracleGeneral")
    fmt = found if fmt == "auto" else fmt
    if fmt == "txt":
        yield from _read_txt(p, zst)
        return
    if fmt == "oracleGeneral":
        dtype = ORACLE_GENERAL
    else:
        with _open(p, zst) as f:
            ver = _vscsi_version(f.read(2 * VSCSI2.itemsize))
        if ver is None:
            raise DbtierError(f"{p}: not a vscsi trace (the first two records carry no version 1 or 2 in the "
                              "high byte of their version field)", "check that this is a CloudPhysics vscsi file")
        dtype = VSCSI1 if ver == 1 else VSCSI2
    first = 0
    for rec in _records(p, zst, dtype, chunk, fmt):
        if fmt == "oracleGeneral":
            yield ObjectChunk(first, rec["time"].astype(np.int64), rec["id"].copy(), rec["size"].astype(np.int64),
                              rec["next"].copy())
        else:
            yield ObjectChunk(first, (rec["ts"] // 1_000_000).astype(np.int64), rec["lbn"].copy(),
                              rec["len"].astype(np.int64), None)
        first += len(rec)


def _open(p: Path, zst: bool):
    if not zst:
        return open(p, "rb")
    import pyarrow as pa      # its zstd stream (no other package needed)
    return pa.input_stream(str(p), compression="zstd")


def _records(p: Path, zst: bool, dtype: np.dtype, chunk: int, fmt: str) -> Iterator[np.ndarray]:
    size = dtype.itemsize
    done = 0
    with _open(p, zst) as f:
        while True:
            try:
                buf = f.read(chunk * size)
            except (OSError, ValueError) as exc:      # pyarrow's zstd errors are OSError (ArrowIOError)
                raise DbtierError(f"{p}: damaged zstd data after record {done:,} ({str(exc).splitlines()[0][:120]})",
                                  _HINT) from None
            if not buf:
                return
            whole = len(buf) // size
            if len(buf) % size:
                raise DbtierError(f"{p}: record {done + whole + 1:,} is cut off ({len(buf) % size} of its {size} "
                                  f"bytes): not a whole number of {size}-byte {fmt} records", _HINT)
            done += whole
            yield np.frombuffer(buf, dtype, whole)


def _read_txt(p: Path, zst: bool) -> Iterator[ObjectChunk]:
    """4 MB of text a block (pyarrow's CSV reader, one column)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names: dict[str, int] = {}
    opts = pacsv.ReadOptions(column_names=["id"], block_size=1 << 22)
    conv = pacsv.ConvertOptions(column_types={"id": pa.string()})
    with _open(p, zst) as src:
        yield from _txt_chunks(p, src, opts, conv, names)


def _txt_chunks(p: Path, src, opts, conv, names: dict[str, int]) -> Iterator[ObjectChunk]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    first = 0
    try:
        reader = pacsv.open_csv(src, read_options=opts, parse_options=pacsv.ParseOptions(delimiter="\x01"),
                                convert_options=conv)
        for batch in reader:
            col = batch.column(0)
            ids = _numeric(col)
            if ids is None:   # string ids: numbered in order of first appearance (a loop per distinct id)
                enc = col.dictionary_encode()
                codes = np.array([names.setdefault(s, len(names)) for s in enc.dictionary.to_pylist()], np.uint64)
                ids = codes[enc.indices.to_numpy(zero_copy_only=False)]
            n = len(ids)
            yield ObjectChunk(first, np.zeros(n, np.int64), ids, np.ones(n, np.int64), None)
            first += n
    except pa.ArrowInvalid as exc:
        raise DbtierError(f"{p}: not one object id per line ({str(exc).splitlines()[0][:160]})",
                          "give one id per line, or another format") from None


def _numeric(col) -> np.ndarray | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    try:
        return pc.cast(pc.utf8_trim_whitespace(col), pa.uint64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None        # not all integers: the caller numbers the ids as strings (tested: keys.txt)


def load_objects(path: str | os.PathLike, fmt: str = "auto") -> ObjectChunk:
    """The whole trace as one chunk (for traces that fit in memory: tests, small files)."""
    parts = list(read_objects(path, fmt))
    if not parts:
        raise DbtierError(f"{path}: no requests", "pass a trace with at least one request")
    nxt = None if parts[0].next_access is None else np.concatenate([c.next_access for c in parts])
    return ObjectChunk(0, np.concatenate([c.time_s for c in parts]), np.concatenate([c.obj_id for c in parts]),
                       np.concatenate([c.size for c in parts]), nxt)
