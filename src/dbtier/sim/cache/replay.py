"""Running the block cache (policies and write modes: kernels.py) over a trace, whole or chunk by chunk.

A request (offset, length) covers the fixed blocks offset // B .. (offset + length - 1) // B of its volume;
each chunk is cut into blocks (blocks.cut: every block's key) and replayed through the kernels, which give
each block the cache holds a row (slots.Rows): memory follows the cache, not the trace.

Streaming: `Replay` feeds a trace chunk after chunk (`chunks.Chunk`): the cache's rows, lists and counters,
the sequential-cutoff streams and the next restart carry over, so any chunking gives the whole-trace
answers. Memory per replay (`Replay.state_bytes`): rows for the most blocks the policy holds at once (LRU,
FIFO, SIEVE: the cache's blocks; S3-FIFO, both variants: its blocks and its ghost's, 1.9 times; 2Q: its
blocks and Aout's, 1.5 times) and a quarter more as spares, 24 bytes each (the policy's 16, the key's 8),
and the table from key to row (8 bytes a slot, a power of two at most half full): `state_bytes`, 64 bytes
per cached block for LRU, FIFO and SIEVE, 79 for 2Q and 126 for S3-FIFO at 16, 32, ..., 256 GB of 8 KiB blocks
(82, 131 and 140 at 2 GB, where the spare rows are as many as the held ones; 50 to 108, 75 to 131 and 95 to 140
between, as the table's power of two falls); the rows grow with the
blocks seen, so a cache larger than the trace's footprint costs what the footprint does. Plus the chunk's
keys (8 bytes a block). The working set (how many distinct blocks the trace touches) is counted apart, in
bounded memory (workingset.py).

Counts are per block unless named `_reqs`. A read request is a request hit when all its blocks hit.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numba
import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.trace.blocks import VOLUME_SHIFT, Prepared, cut, cut_chunk  # noqa: F401 (callers' names)
from dbtier.sim.cache.kernels import (C_DIRTY_AT_END, COUNTER_NAMES, MODE_CODES, NCOUNT, RING,  # noqa: F401
                                      lru_kernel, s3fifo_kernel)
from dbtier.sim.cache.queues import SIEVE_STATE, TWOQ_STATE, queue_kernel
from dbtier.sim.trace.chunks import Chunk
from dbtier.sim.trace.traces import Trace
from dbtier.sim.names import POLICIES, WRITE_MODES  # noqa: F401 (callers' names)
from dbtier.sim.cache.slots import Rows, SLOT_BYTES, bytes_per_row, table_slots
from dbtier.sim.cache.workingset import WorkingSet

RECENT_STREAMS = 64          # bcache's RECENT_IO
LRU_STATE = 4      # st: head (most recent), tail, size, next restart to apply
S3_STATE = 11      # st: S head, tail, M head, tail, G head, tail, S, M, G bytes, evicted yet, next restart
S3_POLICIES = ("s3fifo", "s3fifo-2023")
_STATE = {"lru": (LRU_STATE, 2), "fifo": (LRU_STATE, 2), "s3fifo": (S3_STATE, 6), "s3fifo-2023": (S3_STATE, 6),
          "sieve": (SIEVE_STATE, 2), "twoq": (TWOQ_STATE, 6)}     # (st's length, its list ends: -1 when empty)
SPARE_SHARE = 4    # spare rows: a quarter of the most the policy holds (a sweep per that many new blocks)
SPARE_MIN = 64
# ... and as many as it holds up to this many (12 MB at most): a small cache under a large footprint swept a
# quarter of its rows at a time, each sweep reading all of them (a 2 GB cache: 408 sweeps, 1.85 s of replay;
# 102 and 1.46 s with as many spare rows as blocks)
SPARE_FULL = 1 << 18


# -- sequential cutoff ------------------------------------------------------------------

@numba.njit(nogil=True, cache=True)
def _seq_bypass(offset, length, volume, cutoff_bytes, end, vol, run, age, clock, out):
    """bcache's sequential cutoff over the next requests; the streams (end, vol, run, age, clock[0]) carry."""
    t = clock[0]
    for i in range(offset.shape[0]):
        slot = -1
        for s in range(RECENT_STREAMS):
            if end[s] == offset[i] and vol[s] == volume[i]:
                slot = s
                break
        if slot >= 0:
            r = run[slot] + length[i]
        else:
            r = length[i]
            slot = 0
            for s in range(1, RECENT_STREAMS):   # the least recently used stream slot
                if age[s] < age[slot]:
                    slot = s
        end[slot] = offset[i] + length[i]
        vol[slot] = volume[i]
        run[slot] = r
        t += 1
        age[slot] = t
        out[i] = r >= cutoff_bytes
    clock[0] = t


class SequentialCutoff:
    """The sequential-cutoff streams, fed the trace in order (whole or chunk after chunk)."""

    def __init__(self, cutoff_bytes: int):
        self.cutoff_bytes = int(cutoff_bytes)
        self.end = np.full(RECENT_STREAMS, -1, dtype=np.int64)
        self.vol = np.full(RECENT_STREAMS, -1, dtype=np.int32)
        self.run = np.zeros(RECENT_STREAMS, dtype=np.int64)
        self.age = np.zeros(RECENT_STREAMS, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)

    def feed(self, offset: np.ndarray, length: np.ndarray, volume: np.ndarray) -> np.ndarray:
        """Per request: True when it bypasses the cache."""
        out = np.zeros(len(offset), dtype=np.bool_)
        _seq_bypass(np.ascontiguousarray(offset, dtype=np.int64), np.ascontiguousarray(length, dtype=np.int64),
                    np.ascontiguousarray(volume, dtype=np.int32), self.cutoff_bytes, self.end, self.vol, self.run,
                    self.age, self.clock, out)
        return out


def sequential_bypass(offset, length, volume, cutoff_bytes):
    """Per request: True when it bypasses the cache under bcache's sequential cutoff."""
    return SequentialCutoff(cutoff_bytes).feed(offset, length, volume)


# -- running a policy ---------------------------------------------------------------------------------

@dataclass
class CacheResult:
    policy: str
    write_mode: str
    capacity_blocks: int
    block_size: int
    counters: dict[str, int]
    hits: np.ndarray | None = None         # per request: blocks found in the cache
    admitted: np.ndarray | None = None     # per request: blocks written into the cache (fills)
    destaged: np.ndarray | None = None     # per request: dirty blocks written back to the backing device
    first_miss: np.ndarray | None = None   # per request: index of its first block not in the cache (-1: none)

    @property
    def read_hit_ratio(self) -> float | None:
        n = self.counters["read_blocks"]
        return self.counters["read_block_hits"] / n if n else None

    @property
    def request_hit_ratio(self) -> float | None:
        n = self.counters["read_reqs"]
        return self.counters["read_req_hits"] / n if n else None

    @property
    def cache_gb(self) -> float:
        return self.capacity_blocks * self.block_size / 1e9

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "write_mode": self.write_mode, "capacity_blocks": self.capacity_blocks,
                "cache_gb": self.cache_gb, "read_hit_ratio": self.read_hit_ratio,
                "request_hit_ratio": self.request_hit_ratio, **self.counters}


def capacity_blocks(cache_gb: float, block_size: int) -> int:
    """Blocks in a cache of `cache_gb` GB (10^9 bytes), rounded down."""
    return int(cache_gb * 1e9 // block_size)


def restart_requests(time_s: np.ndarray, restart_at_s: Sequence[float]) -> np.ndarray:
    """Index of the first request at or after each restart time (sorted)."""
    return np.searchsorted(time_s, np.sort(np.asarray(restart_at_s, dtype=np.float64)), side="left").astype(np.int64)


_EMPTY_BOOL = np.zeros(0, dtype=np.bool_)
_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I32 = np.zeros(0, dtype=np.int32)


def _check_policy(policy: str, write_mode: str) -> None:
    if policy not in POLICIES:
        raise DbtierError(f"unknown cache policy '{policy}' (known: {', '.join(POLICIES)})",
                          "choose one with --policy")
    if write_mode not in WRITE_MODES:
        raise DbtierError(f"unknown write mode '{write_mode}' (known: {', '.join(WRITE_MODES)})",
                          "choose one with --write-mode")


class Restarts:
    """Restart times resolved chunk by chunk into whole-trace request indexes: the first request at or after
    each (as `restart_requests` on the whole trace, the trace being in time order)."""

    def __init__(self, restart_at_s: Sequence[float]):
        self.times = np.sort(np.asarray(restart_at_s, dtype=np.float64))
        self.req = _EMPTY_I64

    def feed(self, time_s: np.ndarray, first_request: int) -> np.ndarray:
        """The indexes resolved so far, this chunk's included."""
        n = len(time_s)
        done = self.req.shape[0]
        if n and done < self.times.size:
            at = np.searchsorted(time_s, self.times[done:], side="left")
            at = at[at < n]                      # sorted times: the ones in this chunk come first
            if at.size:
                self.req = np.concatenate([self.req, first_request + at.astype(np.int64)])
        return self.req


def most_held(capacity: int, policy: str, block_size: int) -> int:
    """The most blocks the policy holds a row for at once: the cache's, and S3-FIFO's ghost or 2Q's Aout
    (its share in bytes, as sim/policy's s3_caps and twoq_caps take it)."""
    ghost = {"s3fifo": 0.9, "s3fifo-2023": 0.9, "twoq": 0.5}.get(policy)
    if ghost is None:
        return capacity
    return capacity + int(capacity * block_size * ghost) // block_size + 1


def state_bytes(capacity: int, policy: str, block_size: int, spare_rows: int | None = None) -> int:
    """A replay's largest state (rows and table), whatever the trace: what `Replay` allocates at most."""
    rows = _rows_max(capacity, policy, block_size, spare_rows)
    return int(rows * bytes_per_row() + table_slots(rows) * SLOT_BYTES)


def _rows_max(capacity: int, policy: str, block_size: int, spare_rows: int | None) -> int:
    held = most_held(capacity, policy, block_size)
    spare = max(SPARE_MIN, held // SPARE_SHARE, min(held, SPARE_FULL)) if spare_rows is None else max(1, spare_rows)
    return held + spare


class Replay:
    """One cache of `capacity` blocks replayed over a trace fed in order, whole or chunk after chunk: the
    cache's rows, lists, frequencies, dirty bits, counters, the sequential-cutoff streams and the next
    restart carry from one chunk to the next, so any chunking gives the counters (and per-request outputs)
    of the whole-trace replay.

        rp = Replay(capacity, "s3fifo", "write-back", 8192, seq_cutoff_bytes=4 << 20, restart_at_s=[3600])
        for chunk in chunks:
            hits, admitted, destaged, first_miss = rp.feed(chunk)    # this chunk's requests (record=True)
        result = rp.result()                                         # a CacheResult

    `feed` cuts the chunk into blocks and counts the working set (`working_set`); several replays of one
    trace take each chunk cut once instead, through `feed_prepared`. Restart times are resolved chunk by
    chunk (the first request at or after each; the trace in time order). spare_rows: rows beyond the most
    the policy holds (default a quarter of it, at least SPARE_MIN, and as many as it holds up to SPARE_FULL):
    fewer recycle more often, same answers."""

    def __init__(self, capacity: int, policy: str = "lru", write_mode: str = "write-around", block_size: int = 8192,
                 *, record: bool = True, keep_records: bool = True, seq_cutoff_bytes: int | None = None,
                 restart_at_s: Sequence[float] = (), spare_rows: int | None = None):
        _check_policy(policy, write_mode)
        self.capacity = int(capacity)
        self.policy = policy
        self.write_mode = write_mode
        self.block_size = block_size
        self.record = record
        self.keep_records = keep_records
        self.working_set = WorkingSet(block_size)
        self.cutoff = SequentialCutoff(seq_cutoff_bytes) if seq_cutoff_bytes else None
        self._restarts = Restarts(restart_at_s)
        self.rows = Rows(_rows_max(self.capacity, policy, block_size, spare_rows),
                         f"a {self.capacity:,}-block {policy} cache")
        nst, lists = _STATE[policy]
        self.st = np.zeros(nst, dtype=np.int64)
        self.st[:lists] = -1                              # empty lists
        if policy == "sieve":
            self.st[3] = -1                               # the hand: none yet
        self.c = np.zeros(NCOUNT, dtype=np.int64)
        self.ring = np.zeros(RING, dtype=np.int64)
        self.requests = 0
        self._records: list[tuple[np.ndarray, ...]] = []

    @property
    def covers_working_set(self) -> bool:
        """Exactly whether the cache holds at least every distinct block fed so far: until rows are recycled
        each block seen has its own row (more blocks seen than rows_max > capacity once they are)."""
        return not self.rows.recycled and self.capacity >= self.rows.hiwater

    def state_bytes(self) -> int:
        """The bytes the cache's state holds now (rows and table)."""
        return self.rows.allocated_bytes()

    def feed(self, chunk: Chunk, path: Any = "trace") -> tuple[np.ndarray, ...] | None:
        """Replay the trace's next requests; per request (hits, admitted, destaged, first_miss) when record."""
        prep = cut_chunk(chunk, self.block_size, path)
        self.working_set.feed_chunk(chunk, path)
        byp = self.cutoff.feed(chunk.offset_bytes, chunk.length_bytes, chunk.volume) if self.cutoff else None
        return self.feed_prepared(prep, byp, self._restarts.feed(chunk.time_s, prep.first_request))

    def feed_prepared(self, prep: Prepared, bypass: np.ndarray | None = None,
                      restart_req: np.ndarray | None = None) -> tuple[np.ndarray, ...] | None:
        """Replay requests already cut into blocks (prep.first_request must be the next request);
        restart_req: whole-trace request indexes, sorted (as `restart_requests` gives)."""
        if prep.first_request != self.requests:
            raise ValueError(f"requests fed out of order: {prep.first_request} after {self.requests}")
        n = prep.nblk.shape[0]
        rows = self.rows
        rows.reserve(prep.keys.shape[0])
        if self.record:
            hits, adm, dst, fm = (np.zeros(n, dtype=np.int32) for _ in range(4))
        else:
            hits = adm = dst = fm = _EMPTY_I32
        byp = _EMPTY_BOOL if bypass is None else np.ascontiguousarray(bypass, dtype=np.bool_)
        rr = _EMPTY_I64 if restart_req is None else np.ascontiguousarray(restart_req, dtype=np.int64)
        mode = MODE_CODES[self.write_mode]
        args = (prep.nblk, prep.keys, prep.op, byp, rr, prep.first_request, rows.node, rows.rowkey, rows.table,
                rows.st, self.ring, self.st, self.c, self.capacity)
        if self.policy in S3_POLICIES:
            s3fifo_kernel(*args, self.block_size, mode, self.record, hits, adm, dst, fm, _EMPTY_I64,
                          self.policy == "s3fifo")
        elif self.policy in ("sieve", "twoq"):
            queue_kernel(*args, self.block_size, self.policy == "twoq", mode, self.record, hits, adm, dst, fm,
                         _EMPTY_I64)
        else:
            lru_kernel(*args, self.policy == "lru", mode, self.record, hits, adm, dst, fm, _EMPTY_I64)
        self.requests += n
        if not self.record:
            return None
        out = (hits, adm, dst, fm)
        if self.keep_records:
            self._records.append(out)
        return out

    def dirty_blocks(self) -> int:
        """Dirty blocks in the cache now (every dirty block is in a list: S3-FIFO's ghost and 2Q's Aout hold
        none)."""
        node = self.rows.node[:self.rows.hiwater]
        if self.policy in S3_POLICIES:
            return int(np.count_nonzero(node[:, 3] & 4))
        if self.policy == "twoq":
            return int(np.count_nonzero(node[:, 2] & 4))
        return int(np.count_nonzero(node[:, 2] == 2))

    def result(self) -> CacheResult:
        """The counters so far (dirty blocks at the end: those dirty now), with the per-request outputs of
        all requests fed when record and keep_records."""
        c = self.c.copy()
        c[C_DIRTY_AT_END] = self.dirty_blocks()
        counters = {name: int(c[i]) for i, name in enumerate(COUNTER_NAMES)}
        rec: list[np.ndarray | None] = [None] * 4
        if self.record and self.keep_records:
            if len(self._records) == 1:
                rec = list(self._records[0])
            else:
                rec = [np.concatenate([r[k] for r in self._records]) if self._records else _EMPTY_I32.copy()
                       for k in range(4)]
        return CacheResult(self.policy, self.write_mode, self.capacity, self.block_size, counters, *rec)


def prepare(trace: Trace, block_size: int) -> Prepared:
    """A whole trace cut into blocks, with its distinct blocks counted exactly."""
    prep = cut(trace.offset_bytes, trace.length_bytes, trace.volume, trace.op, block_size, trace.path)
    ws = WorkingSet(block_size, exact_max=None)
    ws.feed(trace.offset_bytes, trace.length_bytes, trace.volume, trace.op, trace.path)
    prep.nids, prep.read_nids = ws.nids, ws.read_nids
    return prep


def run_cache(prep: Prepared, capacity: int, policy: str = "lru", write_mode: str = "write-around",
              bypass: np.ndarray | None = None, restart_req: np.ndarray | None = None,
              record: bool = True, spare_rows: int | None = None) -> CacheResult:
    """Replay the prepared trace through one cache of `capacity` blocks."""
    rp = Replay(capacity, policy, write_mode, prep.block_size, record=record, spare_rows=spare_rows)
    rp.requests = prep.first_request
    rp.feed_prepared(prep, bypass, restart_req)
    return rp.result()


def sweep(prep: Prepared, capacities: Sequence[int], policy: str = "lru", write_mode: str = "write-around",
          bypass: np.ndarray | None = None, restart_req: np.ndarray | None = None,
          jobs: int | None = None) -> list[CacheResult]:
    """One replay per capacity, in parallel threads (the kernels release the GIL): the hit-ratio curve."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(capacities) or 1))

    def one(cap: int) -> CacheResult:
        return run_cache(prep, cap, policy, write_mode, bypass, restart_req, record=False)

    if jobs == 1:
        return [one(c) for c in capacities]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, capacities))


def sweep_chunks(chunks: Iterable[Chunk], capacities: Sequence[int], policy: str = "lru",
                 write_mode: str = "write-around", block_size: int = 8192, *, seq_cutoff_bytes: int | None = None,
                 restart_at_s: Sequence[float] = (), jobs: int | None = None,
                 path: Any = "trace") -> tuple[list[CacheResult], WorkingSet]:
    """`sweep` over a trace read once as chunks: each chunk is cut into blocks and checked against the
    sequential cutoff once, then replayed through every size (in parallel threads). Returns the results and
    the working set counted on the way."""
    ws = WorkingSet(block_size)
    replays = [Replay(c, policy, write_mode, block_size, record=False) for c in capacities]
    cutoff = SequentialCutoff(seq_cutoff_bytes) if seq_cutoff_bytes else None
    restarts = Restarts(restart_at_s)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(replays) or 1))
    pool = ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        for chunk in chunks:
            prep = cut_chunk(chunk, block_size, path)
            ws.feed_chunk(chunk, path)
            byp = cutoff.feed(chunk.offset_bytes, chunk.length_bytes, chunk.volume) if cutoff else None
            rr = restarts.feed(chunk.time_s, prep.first_request)
            if pool is None:
                for rp in replays:
                    rp.feed_prepared(prep, byp, rr)
            else:
                list(pool.map(lambda rp: rp.feed_prepared(prep, byp, rr), replays))
    finally:
        if pool is not None:
            pool.shutdown()
    return [rp.result() for rp in replays], ws


def default_sweep_gb(working_set_bytes: int, block_size: int, points: int = 10) -> list[float]:
    """Cache sizes for a hit-ratio curve: halvings of the working set, smallest first (GB, 10^9 bytes)."""
    ws_gb = working_set_bytes / 1e9
    sizes = []
    for k in range(points - 1, -1, -1):
        gb = ws_gb / (2 ** k)
        if gb * 1e9 >= block_size:
            sizes.append(gb)
    return sizes
