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
- `csv`: any delimited text mapped with `--columns id=COL[,size=COL][,time=COL][,op=COL]` (the block traces'
  syntax, columns.parse_object_columns), plain, gzip or zstd, with or without a header; read by pyarrow a block
  at a time. No size: every object is one unit, as libCacheSim's CSV reader has it. Every request counts,
  whatever its op (as libCacheSim's CSV reader: a write or a set asks the cache for the object too); the op
  column's values are only counted (`ObjectChunk.ops`), for the document to show the mix. Line numbers in
  its messages count no blank line (pyarrow skips them).

A name that does not tell the format (`trace.dat`, `x.zst`) is judged by content: the first few hundred
records read as oracleGeneral must be plausible ones (below); a text file is told to use --columns or
--format txt. A file whose size is not a whole number of records is refused naming the file and the cut record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.core.files import regular_file
from dbtier.sim.names import OBJECT_COLUMNS_HELP
from dbtier.sim.trace.columns import ObjectColumns, csv_index, header_first, parse_object_columns

OBJECT_FORMATS = ("oracleGeneral", "vscsi", "txt", "csv")

ORACLE_GENERAL = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])     # 24 bytes
VSCSI1 = np.dtype([("sn", "<u4"), ("len", "<u4"), ("nsg", "<u4"), ("cmd", "<u2"), ("ver", "<u2"),
                   ("lbn", "<u8"), ("ts", "<u8")])                                                     # 32 bytes
VSCSI2 = np.dtype([("cmd", "<u2"), ("ver", "<u2"), ("sn", "<u4"), ("len", "<u4"), ("nsg", "<u4"),
                   ("lbn", "<u8"), ("ts", "<u8"), ("rt", "<u8")])                                      # 40 bytes
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
CHUNK_RECORDS = 1 << 20
TEXT_BLOCK_BYTES = 1 << 22        # pyarrow's CSV block (txt, csv): a batch of requests per 4 MB of text
SNIFF_RECORDS = 512               # records judged when the name does not tell the format
MAX_OBJECT_BYTES = 1 << 40        # a CSV size above 1 TiB is no object's: the sums stay far inside int64
_HEAD_BYTES = 1 << 16             # a CSV's first line (header or not) is looked at in this much
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
MAX_OPS = 64                      # distinct op values: more, and the op column holds something else
_HINT = "pass the trace as its publisher wrote it (a download cut short is the usual cause)"


@dataclass
class ObjectChunk:
    """Requests `first` .. `first + len(obj_id) - 1` of a trace (0-based)."""
    first: int
    time_s: np.ndarray             # int64, whole seconds as the trace has them
    obj_id: np.ndarray             # uint64
    size: np.ndarray               # int64 bytes (1 for txt)
    next_access: np.ndarray | None  # int64: 1-based index of the object's next request, -1 never (oracleGeneral)
    ops: dict[str, int] | None = None   # requests by op value, a csv with op=COL only (all of them counted)


def detect(path: str | os.PathLike) -> tuple[str, bool]:
    """(format, zstd-compressed) from the name (`.oracleGeneral`, `.bin`, `.vscsi`, `.txt`, `.csv`, each maybe
    `.zst` or `.gz`) and, for vscsi, the first records; a name that tells nothing, by content (oracleGeneral
    records that look like ones). Unknown: a DbtierError naming the formats (a CSV: that it needs --columns)."""
    p = Path(path)
    with open(p, "rb") as f:
        head = f.read(2 * VSCSI2.itemsize)
    zst = head.startswith(ZSTD_MAGIC)
    name = p.name.lower()
    for ext in (".zst", ".gz"):
        name = name.removesuffix(ext)
    if "oraclegeneral" in name or name.endswith(".bin"):
        return "oracleGeneral", zst
    if name.endswith(".vscsi") or (not zst and _vscsi_version(head) is not None):
        return "vscsi", zst
    if name.endswith(".txt"):
        return "txt", zst
    if name.endswith(".csv"):
        return "csv", zst
    comp = compression_of(p)
    sample = _sample(p, comp, SNIFF_RECORDS * ORACLE_GENERAL.itemsize)
    whole = p.stat().st_size if comp is None else None
    if sample and looks_oracle_general(sample, whole):
        return "oracleGeneral", zst
    if sample and b"\x00" not in sample:
        first = sample.decode("utf-8-sig", "replace").lstrip("\r\n").split("\n", 1)[0].strip()
        shown = first if len(first) <= 80 else first[:77] + "..."
        if "," in first:
            raise DbtierError(f"{p}: text with commas (first line: '{shown}'): an object CSV is read through "
                              "--columns", OBJECT_COLUMNS_HELP)
        raise DbtierError(f"{p}: text (first line: '{shown}'), not an object trace dbtier knows by its name",
                          "one object id per line: --format txt; delimited columns: " + OBJECT_COLUMNS_HELP)
    raise DbtierError(f"{p}: not an object trace dbtier knows by its name or its first records "
                      f"({', '.join(OBJECT_FORMATS)})",
                      "name it NAME.oracleGeneral.bin[.zst], NAME.vscsi or NAME.txt, or give --format (a CSV: "
                      "--columns)")


def looks_oracle_general(data: bytes, file_bytes: int | None) -> bool:
    """Whether `data` (the start of a trace, `file_bytes` long when known, else all of it when shorter than a
    sniff) reads as plausible oracleGeneral records: a whole number of them, every size above 0, every next
    access -1 (or INT64_MAX: never) or after the record's own 1-based index (below 2^48), and time going back
    at most once in a hundred steps. Random bytes fail the next accesses, text and zeros the sizes or them."""
    size = ORACLE_GENERAL.itemsize
    n = len(data) // size
    whole = file_bytes if file_bytes is not None else len(data) if len(data) < SNIFF_RECORDS * size else 0
    if n == 0 or whole % size:
        return False
    rec = np.frombuffer(data, ORACLE_GENERAL, n)
    nxt = rec["next"]
    own = np.arange(1, n + 1)
    never = (nxt == -1) | (nxt == np.iinfo(np.int64).max)
    later = (nxt > own) & (nxt < 1 << 48)
    back = int(np.count_nonzero(np.diff(rec["time"].astype(np.int64)) < 0))
    return bool((rec["size"] > 0).all() and (never | later).all() and back * 100 <= n)


def compression_of(p: Path) -> str | None:
    """'zstd', 'gzip' or None, from the file's first bytes."""
    with open(p, "rb") as f:
        magic = f.read(4)
    return "zstd" if magic.startswith(ZSTD_MAGIC) else "gzip" if magic.startswith(GZIP_MAGIC) else None


def _sample(p: Path, comp: str | None, n: int) -> bytes:
    """Up to `n` (decompressed) bytes from the start; b"" when the compressed data cannot be read."""
    try:
        with _open(p, comp) as f:
            return f.read(n)
    except (OSError, ValueError):
        return b""


def resolve(path: str | os.PathLike, fmt: str = "auto",
            columns: str | ObjectColumns | None = None) -> tuple[str, str | None, ObjectColumns | None]:
    """(format, compression, parsed --columns) of a trace, or the DbtierError for a format, columns and file
    that do not go together, before anything is read."""
    p = regular_file(path, "trace", "pass the trace file itself")
    if fmt != "auto" and fmt not in OBJECT_FORMATS:
        raise DbtierError(f"--format {fmt}: not an object trace format ({', '.join(OBJECT_FORMATS)})",
                          "e.g. --format oracleGeneral")
    cols = parse_object_columns(columns) if isinstance(columns, str) else columns
    if fmt == "csv" and cols is None:
        raise DbtierError("--format csv needs --columns", OBJECT_COLUMNS_HELP)
    if cols is not None and fmt not in ("auto", "csv"):
        raise DbtierError(f"--columns maps a CSV, but --format is {fmt}", "leave --format out (or pass --format "
                          f"csv) with --columns, or leave --columns out to read the {fmt} layout")
    comp = compression_of(p)
    if cols is not None:
        if b"\x00" in _sample(p, comp, 4096):       # (an oracleGeneral or vscsi record has zero bytes)
            raise DbtierError(f"{p}: --columns maps a CSV, but this file holds binary data",
                              "leave --columns out for a binary trace (its format is read from its name or "
                              "records), or pass the CSV")
        return "csv", comp, cols
    if fmt == "auto":
        fmt = detect(p)[0]
        if fmt == "csv":
            raise DbtierError(f"{p}: an object CSV is read through --columns", OBJECT_COLUMNS_HELP)
    return fmt, comp, None


def _vscsi_version(head: bytes) -> int | None:
    """libCacheSim's test: the version byte of the first two records read as v2, else as v1."""
    if len(head) >= 2 * VSCSI2.itemsize and all(v >> 8 == 2 for v in np.frombuffer(head, VSCSI2, 2)["ver"]):
        return 2
    if len(head) >= 2 * VSCSI1.itemsize and all(v >> 8 == 1 for v in np.frombuffer(head[:64], VSCSI1, 2)["ver"]):
        return 1
    return None


def read_objects(path: str | os.PathLike, fmt: str = "auto", chunk: int = CHUNK_RECORDS,
                 columns: str | ObjectColumns | None = None) -> Iterator[ObjectChunk]:
    """The trace's requests, `chunk` records at a time (memory: one chunk, whatever the trace's size; text: a
    block of pyarrow's at a time, whatever `chunk`)."""
    p = Path(path)
    fmt, comp, cols = resolve(p, fmt, columns)
    if fmt == "txt":
        yield from _read_txt(p, comp)
        return
    if fmt == "csv":
        assert cols is not None
        yield from _read_csv(p, comp, cols)
        return
    if fmt == "oracleGeneral":
        dtype = ORACLE_GENERAL
    else:
        with _open(p, comp) as f:
            ver = _vscsi_version(f.read(2 * VSCSI2.itemsize))
        if ver is None:
            raise DbtierError(f"{p}: not a vscsi trace (the first two records carry no version 1 or 2 in the "
                              "high byte of their version field)", "check that this is a CloudPhysics vscsi file")
        dtype = VSCSI1 if ver == 1 else VSCSI2
    first = 0
    for rec in _records(p, comp, dtype, chunk, fmt):
        if fmt == "oracleGeneral":
            yield ObjectChunk(first, rec["time"].astype(np.int64), rec["id"].copy(), rec["size"].astype(np.int64),
                              rec["next"].copy())
        else:
            yield ObjectChunk(first, (rec["ts"] // 1_000_000).astype(np.int64), rec["lbn"].copy(),
                              rec["len"].astype(np.int64), None)
        first += len(rec)


def _open(p: Path, comp: str | None):
    if comp is None:
        return open(p, "rb")
    import pyarrow as pa      # its zstd and gzip streams (no other package needed)
    return pa.input_stream(str(p), compression=comp)


def _records(p: Path, comp: str | None, dtype: np.dtype, chunk: int, fmt: str) -> Iterator[np.ndarray]:
    size = dtype.itemsize
    done = 0
    with _open(p, comp) as f:
        while True:
            try:
                buf = f.read(chunk * size)
            except (OSError, ValueError) as exc:      # pyarrow's zstd errors are OSError (ArrowIOError)
                raise DbtierError(f"{p}: damaged {comp + ' ' if comp else ''}data after record {done:,} "
                                  f"({str(exc).splitlines()[0][:120]})", _HINT) from None
            if not buf:
                return
            whole = len(buf) // size
            if len(buf) % size:
                raise DbtierError(f"{p}: record {done + whole + 1:,} is cut off ({len(buf) % size} of its {size} "
                                  f"bytes): not a whole number of {size}-byte {fmt} records", _HINT)
            done += whole
            yield np.frombuffer(buf, dtype, whole)


def _read_txt(p: Path, comp: str | None) -> Iterator[ObjectChunk]:
    """4 MB of text a block (pyarrow's CSV reader, one column)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    ids = _Ids(p)
    first = 0
    try:
        with _open(p, comp) as src:
            reader = pacsv.open_csv(src, read_options=pacsv.ReadOptions(column_names=["id"],
                                                                         block_size=TEXT_BLOCK_BYTES),
                                    parse_options=pacsv.ParseOptions(delimiter="\x01"),
                                    convert_options=pacsv.ConvertOptions(column_types={"id": pa.string()}))
            for batch in reader:
                got = ids(batch.column(0), first, 0)
                n = len(got)
                yield ObjectChunk(first, np.zeros(n, np.int64), got, np.ones(n, np.int64), None)
                first += n
    except pa.ArrowInvalid as exc:
        raise DbtierError(f"{p}: not one object id per line ({str(exc).splitlines()[0][:160]})",
                          "give one id per line, or another format") from None
    except OSError as exc:         # pyarrow's decompression errors
        raise DbtierError(f"{p}: damaged {comp + ' ' if comp else ''}data after request {first:,} "
                          f"({str(exc).splitlines()[0][:120]})", _HINT) from None


class _Ids:
    """Object ids from a text column, one object one number across blocks: integer ids as they are; when the
    first block holds an id that is not an integer, every id numbered in order of first appearance (a loop per
    distinct id of a block, not per request). A non-integer id after blocks of integer ones is refused: the
    number it would get could be one of the integers already read."""

    def __init__(self, p: Path):
        self.p = p
        self.names: dict[str, int] = {}
        self.text: bool | None = None        # numbering as text (decided on the first block)

    def __call__(self, col: Any, first: int, skipped_lines: int) -> np.ndarray:
        if not self.text:
            ids = _numeric(col)
            if ids is not None:
                self.text = False
                return ids
            if self.text is False:
                i = _culprit(col, r"^\+?[0-9]{1,20}$")
                raise DbtierError(f"{_Where(self.p, first, skipped_lines).line(i)}: id {_shown(col, i)} is not an "
                                  f"integer, but the {first:,} ids before it were",
                                  "fix that id (a stray header or a damaged line?), or make every id text")
            self.text = True
        enc = col.dictionary_encode()
        codes = np.array([self.names.setdefault(s, len(self.names)) for s in enc.dictionary.to_pylist()], np.uint64)
        return codes[enc.indices.to_numpy(zero_copy_only=False)]


def _numeric(col) -> np.ndarray | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    try:
        return pc.cast(pc.utf8_trim_whitespace(col), pa.uint64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None        # not all integers: the caller numbers the ids as strings (tested: keys.txt)


def _culprit(col: Any, pattern: str) -> int | None:
    """The first value of a text column that does not match `pattern` (a cast of it failed), or None when
    all match (a number out of range: pyarrow's own message names it)."""
    import pyarrow.compute as pc
    ok = np.asarray(pc.match_substring_regex(pc.utf8_trim_whitespace(col), pattern).to_numpy(zero_copy_only=False),
                    bool)
    return None if ok.all() else int(np.argmin(ok))


def _shown(col: Any, i: int | None) -> str:
    if i is None:
        return "(one out of range)"
    s = str(col[i].as_py())
    return repr(s if len(s) <= 40 else f"{s[:20]}...({len(s)} characters)")


def _read_csv(p: Path, comp: str | None, cols: ObjectColumns) -> Iterator[ObjectChunk]:
    """An object CSV a pyarrow block at a time: the mapped columns as text, converted and checked per block
    (no Python loop per row). Every failure names the file and, where a value is wrong, its line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    try:
        with _open(p, comp) as f:
            raw = f.read(_HEAD_BYTES)
    except OSError as exc:
        raise DbtierError(f"{p}: damaged {comp} data at its start ({str(exc).splitlines()[0][:120]})", _HINT) \
            from None
    head = raw.decode("utf-8-sig", "replace")
    lines = head.split("\n")
    lead = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if lead is None and len(raw) < _HEAD_BYTES:
        raise DbtierError(f"{p}: empty file (no lines)", "pass a CSV with one request per line")
    if lead is None or (lead == len(lines) - 1 and len(raw) == _HEAD_BYTES):
        raise DbtierError(f"{p}: no whole line in its first {_HEAD_BYTES:,} bytes: not a CSV of requests",
                          "pass a CSV with one request per line")
    fields = [f.strip().strip('"') for f in lines[lead].rstrip("\r").split(cols.delimiter)]
    header = header_first(cols, fields)
    index = csv_index(cols, fields if header else None, p, OBJECT_COLUMNS_HELP)
    for key, i in index.items():
        if i >= len(fields):
            raise DbtierError(f"{p}: --columns {key}={getattr(cols, key)}: line {lead + 1} has {len(fields)} "
                              f"field{'s' if len(fields) > 1 else ''}", OBJECT_COLUMNS_HELP)
    skip = lead + int(header)          # lines before the first request
    used = {k: f"c{i}" for k, i in index.items()}
    ids = _Ids(p)
    ops: dict[str, int] = {}
    first = 0
    try:
        with _open(p, comp) as src:
            reader = pacsv.open_csv(
                src, read_options=pacsv.ReadOptions(column_names=[f"c{i}" for i in range(len(fields))],
                                                    skip_rows=skip, block_size=TEXT_BLOCK_BYTES),
                parse_options=pacsv.ParseOptions(delimiter=cols.delimiter),
                convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in used.values()},
                                                     include_columns=sorted(set(used.values())), null_values=[],
                                                     strings_can_be_null=False))
            for batch in reader:
                n = batch.num_rows
                col = {k: batch.column(c) for k, c in used.items()}
                where = _Where(p, first, skip)
                obj = ids(col["id"], first, skip)
                size = np.ones(n, np.int64) if "size" not in col else _sizes(col["size"], where)
                time_s = np.zeros(n, np.int64) if "time" not in col else _times(col["time"], cols, where)
                chunk_ops = None
                if "op" in col:
                    vc = pc.value_counts(pc.utf8_trim_whitespace(col["op"]))
                    chunk_ops = dict(zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()))
                    for k, v in chunk_ops.items():
                        ops[k] = ops.get(k, 0) + v
                    if len(ops) > MAX_OPS:
                        raise DbtierError(f"{p}: --columns op={cols.op}: more than {MAX_OPS} distinct values by line "
                                          f"{first + n + skip:,}: not an op column",
                                          "map the column of the request's op (get, set, ...), or leave op out")
                yield ObjectChunk(first, time_s, obj, size, None, chunk_ops)
                first += n
    except pa.ArrowInvalid as exc:
        raise DbtierError(f"{p}: not the CSV --columns maps, at line {first + skip + 1:,} or after "
                          f"({str(exc).splitlines()[0][:160]})",
                          "fix that line (every line needs the same fields), or check --columns' delimiter") \
            from None
    except OSError as exc:         # pyarrow's decompression errors
        raise DbtierError(f"{p}: damaged {comp + ' ' if comp else ''}data after request {first:,} "
                          f"({str(exc).splitlines()[0][:120]})", _HINT) from None
    if first == 0:
        raise DbtierError(f"{p}: no requests (only a header line)", "pass a CSV with one request per line")


@dataclass
class _Where:
    """A block's place in the file, for messages naming a line."""
    p: Path
    first: int        # requests before the block
    skip: int         # lines before the first request

    def line(self, i: int | None) -> str:
        return f"{self.p}: line {self.first + i + 1 + self.skip:,}" if i is not None else \
            f"{self.p}: lines {self.first + 1 + self.skip:,} on"


def _sizes(col: Any, where: _Where) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc
    trimmed = pc.utf8_trim_whitespace(col)
    try:
        size = pc.cast(trimmed, pa.int64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        i = _culprit(col, r"^[+-]?[0-9]{1,19}$")
        raise DbtierError(f"{where.line(i)}: size {_shown(col, i)} is not a whole number of bytes",
                          "map the size column (in bytes), or leave size out for unit sizes") from None
    bad = np.flatnonzero((size < 0) | (size > MAX_OBJECT_BYTES))
    if bad.size:
        i = int(bad[0])
        what = "negative" if size[i] < 0 else \
            f"more than an object can be (the cap is 1 TiB, {MAX_OBJECT_BYTES:,} bytes)"
        raise DbtierError(f"{where.line(i)}: size {int(size[i]):,} bytes is {what}",
                          "map the size column (in bytes), or fix that line")
    return size


def _times(col: Any, cols: ObjectColumns, where: _Where) -> np.ndarray:
    """Whole seconds (floored) from a time column in its unit."""
    import pyarrow as pa
    import pyarrow.compute as pc
    trimmed = pc.utf8_trim_whitespace(col)
    try:
        t = pc.cast(trimmed, pa.float64()).to_numpy(zero_copy_only=False) * cols.time_scale
    except pa.ArrowInvalid:
        t = None
    ok = None if t is None else np.isfinite(t) & (np.abs(t) < 2.0**62)
    if ok is None or not ok.all():
        i = _culprit(col, _NUMBER) if ok is None else int(np.argmin(ok))
        raise DbtierError(f"{where.line(i)}: time {_shown(col, i)} is not a finite number of seconds",
                          "map the time column (and its time_unit), or leave time out")
    return np.floor(t).astype(np.int64)


def load_objects(path: str | os.PathLike, fmt: str = "auto",
                 columns: str | ObjectColumns | None = None) -> ObjectChunk:
    """The whole trace as one chunk (for traces that fit in memory: tests, small files)."""
    parts = list(read_objects(path, fmt, columns=columns))
    if not parts:
        raise DbtierError(f"{path}: no requests", "pass a trace with at least one request")
    nxt = None if parts[0].next_access is None else np.concatenate([c.next_access for c in parts])
    return ObjectChunk(0, np.concatenate([c.time_s for c in parts]), np.concatenate([c.obj_id for c in parts]),
                       np.concatenate([c.size for c in parts]), nxt)
