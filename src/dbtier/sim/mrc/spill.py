"""An object trace read once and kept on disk as dense codes (`scan`), for the miss-ratio curves to read a
chunk at a time as often as they need (`Spill`): memory is the id table, one chunk and the running replays'
state, never the trace. 16 bytes a request (code and size; 8 more for next accesses, Belady only) in a work
directory of its own, free space kept; a SHARDS sample spills only the requests it keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.core.workdir import room
from dbtier.sim.mrc import kernels as K
from dbtier.sim.trace.blocks import VOLUME_SHIFT, check_expansion
from dbtier.sim.trace.chunks import Chunk
from dbtier.sim.trace import objects
from dbtier.sim.mrc.curves import CHUNK, Coded, sample
from dbtier.sim.names import FORMATS
from dbtier.sim.trace.objects import ObjectChunk
from dbtier.sim.trace.files import open_text
from dbtier.sim.trace.formats import detect_format

_FILES = ("code.i64", "size.i64", "next.i64")


@dataclass
class Spill(Coded):
    work: Path = Path(".")
    has_next: bool = False
    total_requests: int = 0      # of the whole trace (with a sample: more than `requests`)
    total_bytes: int = 0
    chunk: int = CHUNK
    ids: np.ndarray | None = None     # each code's id (8 bytes an object, from the id table)

    def object_ids(self) -> np.ndarray:
        assert self.ids is not None
        return self.ids

    def chunks(self, with_next: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        names = _FILES if with_next else _FILES[:2]
        files = [open(self.work / n, "rb") for n in names]
        try:
            for i in range(0, self.requests, self.chunk):
                m = min(self.chunk, self.requests - i)
                arrs = [np.fromfile(f, np.int64, m) for f in files]
                yield arrs[0], arrs[1], arrs[2] if with_next else None
        finally:
            for f in files:
                f.close()

    def ensure_next(self) -> None:
        """The trace's own next accesses were kept; else a backward pass over the codes, last chunk first."""
        if self.has_next:
            return
        room(self.work, 8 * self.requests, "the next accesses Belady needs")
        after = np.full(self.n_objects, -1, np.int64)
        with open(self.work / _FILES[0], "rb") as fc, open(self.work / _FILES[2], "wb") as fn:
            fn.truncate(8 * self.requests)
            for i in reversed(range(0, self.requests, self.chunk)):
                m = min(self.chunk, self.requests - i)
                fc.seek(8 * i)
                out = np.empty(m, np.int64)
                K.next_back(np.fromfile(fc, np.int64, m), i, after, out)
                fn.seek(8 * i)
                out.tofile(fn)
        self.has_next = True


class _Coder:
    """Object ids to dense codes 0, 1, ... as they first appear (an open-addressing table kept at most half
    full), with each object's largest and smallest size."""

    def __init__(self) -> None:
        self.keys = np.zeros(1 << 16, np.uint64)
        self.vals = np.full(1 << 16, -1, np.int64)
        self.largest = np.zeros(1 << 15, np.int64)
        self.smallest = np.zeros(1 << 15, np.int64)
        self.sc = np.zeros(1, np.int64)

    @property
    def n(self) -> int:
        return int(self.sc[0])

    def ids(self) -> np.ndarray:
        """Each code's id."""
        out = np.zeros(self.n, np.uint64)
        used = self.vals >= 0
        out[self.vals[used]] = self.keys[used]
        return out

    def code(self, ids: np.ndarray, size: np.ndarray) -> np.ndarray:
        need = self.n + len(ids)
        if 2 * need > len(self.keys):
            cap = len(self.keys)
            while 2 * need > cap:
                cap *= 2
            keys, vals = np.zeros(cap, np.uint64), np.full(cap, -1, np.int64)
            K.rehash(self.keys, self.vals, keys, vals)
            self.keys, self.vals = keys, vals
        if need > len(self.largest):
            grow = max(need, 2 * len(self.largest)) - len(self.largest)
            self.largest = np.concatenate([self.largest, np.zeros(grow, np.int64)])
            self.smallest = np.concatenate([self.smallest, np.zeros(grow, np.int64)])
        return K.code_ids(np.ascontiguousarray(ids, np.uint64), np.ascontiguousarray(size, np.int64),
                          self.keys, self.vals, self.largest, self.smallest, self.sc)


def scan(chunks: Iterable[ObjectChunk], work: Path, source: str, rate: float | None = None,
         keep_next: bool = False, progress: Callable[[int], None] | None = None) -> Spill:
    """Read the trace once into `work`: each request's object code and size (of the sampled objects only,
    at a SHARDS `rate`), the trace's next accesses too when `keep_next` and it has them (not under a sample:
    they count the whole trace's requests). `progress(requests read)` after each chunk."""
    coder = _Coder()
    n = n_bytes = total = total_bytes = 0
    has_next = keep_next and rate is None
    with open(work / _FILES[0], "wb") as fc, open(work / _FILES[1], "wb") as fs, \
            open(work / _FILES[2], "wb") as fn:
        for ch in chunks:
            total += len(ch.obj_id)
            total_bytes += int(ch.size.sum())
            ids, size, nxt = ch.obj_id, ch.size, ch.next_access
            if rate is not None:
                keep = sample(ids, rate)
                ids, size = ids[keep], size[keep]
            has_next = has_next and nxt is not None
            room(work, 24 * len(ids), f"the spilled codes of {source}")
            coder.code(ids, size).tofile(fc)
            np.asarray(size, np.int64).tofile(fs)
            if has_next:
                np.asarray(nxt, np.int64).tofile(fn)
            n += len(ids)
            n_bytes += int(size.sum())
            if progress:
                progress(total)
    if total == 0:
        raise DbtierError(f"{source}: no requests", "pass a trace with at least one request")
    if n == 0:
        raise DbtierError(f"--sample {rate}: no object of {source} falls in a {rate:g} sample",
                          "take a larger rate (or no --sample)")
    k = coder.n
    largest, smallest = coder.largest[:k], coder.smallest[:k]
    return Spill(n, n_bytes, k,
                 int(largest.max()), bool((largest == smallest).all()), int(largest.sum()), work, has_next,
                 total, total_bytes, ids=coder.ids())


class BlockObjects:
    """A block trace's requests cut into the blocks they cover (offset // B .. (offset + length - 1) // B of
    their volume, as the block cache does), each block an object of B bytes keyed volume << 42 | block:
    block traces stay at block granularity. `reads_only`: writes left out (a read cache's own curve);
    otherwise every request counts, as libCacheSim reads a block trace. Vectorised (numpy repeat)."""

    def __init__(self, chunks: Iterable[Chunk], block_size: int, source: str, reads_only: bool = False):
        if block_size <= 0 or block_size & (block_size - 1):
            raise DbtierError(f"--block-size {block_size} must be a power of two bytes", "e.g. --block-size 8K")
        self.chunks, self.block_size, self.source, self.reads_only = chunks, block_size, source, reads_only
        self.requests = 0          # the trace's requests counted (reads only with reads_only)
        self.accesses = 0          # the blocks they cover

    def __iter__(self) -> Iterator[ObjectChunk]:
        b = self.block_size
        for ch in self.chunks:
            off, ln, vol = ch.offset_bytes, ch.length_bytes, ch.volume
            if self.reads_only:
                keep = ch.op == 0
                off, ln, vol = off[keep], ln[keep], vol[keep]
            first = off // b
            nb = (off + np.maximum(ln, 1) - 1) // b - first + 1
            total = int(nb.sum())
            check_expansion(self.source, len(off), total, total, b)
            starts = np.repeat(np.cumsum(nb) - nb, nb)
            keys = np.repeat((vol.astype(np.uint64) << np.uint64(VOLUME_SHIFT)) | first.astype(np.uint64), nb)
            keys += (np.arange(total, dtype=np.int64) - starts).astype(np.uint64)
            self.requests += len(off)
            self.accesses += total
            yield ObjectChunk(self.accesses - total, np.zeros(total, np.int64), keys, np.full(total, b, np.int64),
                              None)


def trace_mode(path: Path, fmt: str, columns: str | None) -> tuple[str, str, object]:
    """("object" or "block", format, parsed --columns): a block layout named or seen in the first lines, or a
    CSV whose --columns map no object id, is a block trace; everything else an object trace (objects.resolve,
    whose refusal stands when the text is no block trace either)."""
    keys = {item.split("=", 1)[0].strip() for item in (columns or "").split(",")}
    if (fmt in FORMATS and fmt != "csv") or (columns is not None and "id" not in keys and fmt in ("auto", "csv")):
        return "block", "csv" if fmt == "auto" else fmt, columns
    try:
        return ("object", *objects.resolve(path, fmt, columns)[::2])
    except DbtierError:
        found = _block_layout(path) if fmt == "auto" and columns is None else None
        if found is None:
            raise
        return "block", found, None


def _block_layout(path: Path) -> str | None:
    """The block trace layout the first lines show (sim/trace/formats.py detect_format), or None."""
    try:
        text, raw, _, _ = open_text(path)
    except DbtierError:
        return None
    try:
        head = [line for _, line in zip(range(50), text)]
    except (UnicodeDecodeError, OSError, EOFError):
        return None
    finally:
        text.close()
        raw.close()
    return detect_format(head)
