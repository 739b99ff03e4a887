"""The vectorised path of the CSV-like trace readers (msr, cloudphysics, alibaba, tencent, csv with --columns):
pyarrow's streaming CSV reader straight into the arrays of a Trace, a batch at a time.

It only vouches for files it reads exactly as the line-by-line reader (reader.py) would: whenever a batch
holds anything that reader would treat specially -- a blank, comment or malformed line, a header other
than on line 1, a zero-length or absurd request, a number pyarrow reads but Python's int() would not
(hex) or the reverse, text that is not UTF-8 -- it raises Reject and the caller reads the file again
line by line, which gives today's answer or today's message (file and line). So it never says anything
of its own about a file.

pyarrow rather than DuckDB's CSV reader: DuckDB reads '1.5' as the BIGINT 2 and takes '1e3', '1_000' and
'0x10' (all malformed for the line reader), and its Python API fetches batches only through pyarrow or
pandas anyway; pyarrow's int64 parse is strict and open_csv streams record batches in bounded memory.

Ahead of pyarrow, csvscan.py's numba kernel parses the blocks it can vouch for (plain digits, the layout's
op words, printable ASCII) at several times pyarrow's speed and hands every other block, the same bytes, to
pyarrow: the same answer either way. KERNEL = False reads with pyarrow alone (the tests compare the two).
"""

from __future__ import annotations

import lzma
import sys
import zlib
from typing import Any, Callable, Iterator

import numpy as np

from dbtier.sim.trace.batch import (MAX_ADDRESS_BYTES, MAX_REQUEST_BYTES, READ, SECTOR, T_LIM_TICKS, WRITE, Batch,
                                     Layout, Reject, Scan, State)

FAST_FORMATS = ("msr", "cloudphysics", "alibaba", "tencent", "csv")
# pyarrow's streaming reader reads up to 32 blocks ahead of the parse: 1 MiB blocks keep that to 32 MiB
# (16 MiB blocks held most of a 520 MB file) at no measurable cost in speed.
BLOCK_BYTES = 1 << 20
KERNEL = True          # csvscan's kernel ahead of pyarrow where it covers the layout


def _spellings(words: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f(w) for w in sorted(words) for f in (str, str.upper, str.capitalize)))


def _msr_op(v: str) -> int | None:
    return {"read": READ, "write": WRITE}.get(v.strip().lower())


_CP_OPS = {"28": READ, "2a": WRITE, "88": READ, "a8": READ, "08": READ, "8a": WRITE, "aa": WRITE, "0a": WRITE}


def layout(fmt: str, cols: Any, index: dict[str, int] | None, first_data: str) -> Layout:
    if fmt == "msr":
        return Layout(7, 0, 3, 4, 5, (1, 2), _msr_op, tokens=_spellings(("read", "write")))
    if fmt == "cloudphysics":
        return Layout(5, 1, 2, 4, 3, (), lambda v: _CP_OPS.get(v.strip().lower()), offset_scale=SECTOR,
                       tokens=_spellings(_CP_OPS))
    if fmt == "alibaba":
        return Layout(5, 4, 1, 2, 3, (0,), lambda v: {"R": READ, "W": WRITE}.get(v.strip().upper()),
                       tokens=_spellings(("r", "w")))
    if fmt == "tencent":
        return Layout(5, 0, 3, 1, 2, (4,), lambda v: {"0": READ, "1": WRITE}.get(v.strip()),
                       offset_scale=SECTOR, length_scale=SECTOR, tokens=("0", "1"))
    assert fmt == "csv" and cols is not None and index is not None
    if cols.delimiter is None or len(cols.delimiter) != 1:
        raise Reject("whitespace-separated")
    rt, wt = cols.read_tokens, cols.write_tokens

    def op_of(v: str) -> int | None:
        c = v.strip().lower()
        return READ if c in rt else WRITE if c in wt else None
    vi = index.get("volume")
    return Layout(len(first_data.split(cols.delimiter)), index.get("time"), index["op"], index["offset"],
                   index["length"], () if vi is None else (vi,), op_of, cols.offset_scale, cols.length_scale,
                   delimiter=cols.delimiter, tokens=_spellings(rt | wt))


def batches(stream: Any, lay: Layout, header_lines: int, state: State) -> Iterator[Batch]:
    """Validated batches of the file after its header; Reject on anything the line reader treats specially."""
    state.header_lines = header_lines
    try:
        p = None
        if KERNEL:
            from dbtier.sim.trace import csvscan
            p = csvscan.plan(lay)
        if p is not None:
            yield from csvscan.batches(stream, lay, p, header_lines, state,
                                       lambda src, skip: _arrow(src, lay, skip, state))
        else:
            import pyarrow as pa
            yield from _arrow(pa.PythonFile(Scan(stream), mode="r"), lay, header_lines, state)
    except Reject:
        raise
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
        raise Reject(str(exc)) from None
    except Exception as exc:
        # pyarrow is imported only if a block needed it (the kernel reads most files alone)
        pa = sys.modules.get("pyarrow")
        if pa is not None and isinstance(exc, pa.ArrowException):
            raise Reject(str(exc)) from None
        raise


def _arrow(source: Any, lay: Layout, skip_rows: int, state: State) -> Iterator[Batch]:
    """pyarrow's streaming reader over `source` (a pyarrow file), `skip_rows` lines skipped first."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    names = [f"c{i}" for i in range(lay.ncols)]
    used = sorted({c for c in (lay.time, lay.op, lay.offset, lay.length, *lay.volume) if c is not None})
    types: dict[str, Any] = {f"c{c}": pa.dictionary(pa.int32(), pa.string()) for c in (lay.op, *lay.volume)}
    for c in (lay.offset, lay.length):
        types[f"c{c}"] = pa.int64()
    if lay.time is not None:
        types[f"c{lay.time}"] = pa.float64() if lay.float_time else pa.int64()
    reader = pcsv.open_csv(
        source,
        read_options=pcsv.ReadOptions(column_names=names, skip_rows=skip_rows, block_size=BLOCK_BYTES,
                                      use_threads=True),
        parse_options=pcsv.ParseOptions(delimiter=lay.delimiter, quote_char=False, double_quote=False,
                                        escape_char=False, newlines_in_values=False, ignore_empty_lines=False),
        convert_options=pcsv.ConvertOptions(column_types=types, include_columns=[f"c{c}" for c in used],
                                            null_values=[], strings_can_be_null=False,
                                            quoted_strings_can_be_null=False, check_utf8=True))
    for rb in reader:
        if rb.num_rows:
            yield _convert(rb, lay, state)


def _codes(col: Any, of: Callable[[str], Any]) -> tuple[np.ndarray, list[Any]]:
    """A dictionary column as (int32 indices, the mapped dictionary values)."""
    idx = col.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return idx, [of(v) for v in col.dictionary.to_pylist()]


def _convert(rb: Any, lay: Layout, state: State) -> Batch:
    import pyarrow as pa

    def col(c: int) -> Any:
        a = rb.column(f"c{c}")
        return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a

    idx, ops = _codes(col(lay.op), lay.op_of)
    if any(o is None for o in ops):
        raise Reject("an op that is not a read or write")
    op = np.asarray(ops, dtype=np.uint8)[idx]
    off = col(lay.offset).to_numpy()
    ln = col(lay.length).to_numpy()
    n = len(op)
    if lay.time is None:
        t = np.zeros(n, dtype=np.int64)
    else:
        t = col(lay.time).to_numpy()
        if lay.float_time and not np.isfinite(t).all():
            raise Reject("a time that is not finite")
    # Python's ints never overflow: scale only what stays inside the caps, else let the line reader say why.
    max_off = MAX_ADDRESS_BYTES // lay.offset_scale
    max_len = MAX_REQUEST_BYTES // lay.length_scale
    ok = (off >= 0) & (off <= max_off) & (ln > 0) & (ln <= max_len) & (t > -T_LIM_TICKS) & (t < T_LIM_TICKS)
    if not ok.all():
        raise Reject("an absurd or zero-length request")
    if lay.offset_scale != 1:
        off = off * lay.offset_scale
    if lay.length_scale != 1:
        ln = ln * lay.length_scale
    if not (off + ln <= MAX_ADDRESS_BYTES).all():
        raise Reject("a request beyond the address cap")
    vol = _volumes(rb, lay, state, n)
    state.rows += n
    return Batch(t, op, off.astype(np.int64, copy=False), ln.astype(np.int64, copy=False), vol)


def _volumes(rb: Any, lay: Layout, state: State, n: int) -> np.ndarray:
    """Volume indices in the order of first appearance in the file, as the line reader numbers them."""
    if not lay.volume:
        names, key = ["0"], np.zeros(n, dtype=np.int64)
    else:
        parts = []
        for c in lay.volume:
            a = rb.column(f"c{c}")
            parts.append(_codes(a.combine_chunks() if hasattr(a, "combine_chunks") else a, lambda v: v.strip()))
        key = parts[0][0].astype(np.int64)
        names = parts[0][1]
        for idx, vals in parts[1:]:
            key = key * len(vals) + idx
            names = [f"{a}_{b}" for a in names for b in vals]
    if n and (key == key[0]).all():
        uniq, first = key[:1], np.zeros(1, dtype=np.int64)
        inv = None
    else:
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    glob = np.empty(len(uniq), dtype=np.int32)
    for j in np.argsort(first, kind="stable"):
        glob[j] = state.number(names[int(uniq[j])])
    return np.full(n, glob[0], dtype=np.int32) if inv is None else glob[inv.reshape(-1)]
