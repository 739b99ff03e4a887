"""Cache policies as numba kernels over dense block ids.

A request (offset, length) covers the fixed blocks offset // B .. (offset +
length - 1) // B of its volume. `prepare` maps every (volume, block) pair the
trace touches to a dense id 0..nids-1 once, so the kernels index plain arrays
(no hashing on the hot path) and each policy keeps its lists as prev/next
arrays: O(1) work per block.

Policies (`POLICIES`):
- `lru`: least recently used; a hit moves the block to the head.
- `fifo`: first in, first out; a hit changes nothing.
- `s3fifo`: S3-FIFO (Yang et al., SOSP 2023, Algorithm 1): a small FIFO S of
  10% of the blocks, a main FIFO M of the rest, a ghost FIFO G of as many ids
  as M holds blocks. A miss enters S (or M when its id is in G); a hit raises a
  2-bit frequency (at most 3). Evicting from S moves a block hit at least twice
  to M, else drops it and remembers its id in G; evicting from M re-inserts a
  block with frequency > 0 at the head with frequency - 1, else drops it. S
  is evicted while it holds at least its 10%. One eviction frees exactly one
  block: when a move from S overfills M, M evicts and the eviction is done.
  One-hit wonders (a scan) pass through S without displacing M.

Write modes (`WRITE_MODES`), what a write does to the cache:
- `write-around` (default): the blocks it touches are invalidated; the write
  goes to the backing device only. Read misses are admitted.
- `write-through`: the blocks are written to the cache too (admitted if
  absent, refreshed if present) and to the backing device.
- `write-back`: the blocks land in the cache, dirty; a dirty block is written
  to the backing device (destaged) when it is evicted, at a restart, and the
  ones still dirty at the end are counted.

Sequential cutoff (bcache's `sequential_cutoff`): the 64 most recent streams
are remembered by where they ended; a request that starts where one ended
continues it. When a stream's run (this request included) reaches the cutoff,
the request bypasses the cache: its read misses are not admitted (hits are
still served) and a write is written around whatever the mode.

Restart: before the first request at or after each restart time the cache is
emptied (dirty blocks are destaged first), as a database host's flash cache
is lost when the host restarts.

Counts are per block unless named `_reqs`. A read request is a request hit
when all its blocks hit.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from dbtier.core.errors import DbtierError
from dbtier.sim.names import POLICIES, WRITE_MODES
from dbtier.sim.traces import Trace

_MODE = {"write-around": 0, "write-through": 1, "write-back": 2}
VOLUME_SHIFT = 42            # block key = volume << 42 | block number
RECENT_STREAMS = 64          # bcache's RECENT_IO

# Counter slots of the kernels' result array.
C_READ_REQS, C_READ_REQ_HITS, C_READ_BLOCKS, C_READ_HITS, C_WRITE_BLOCKS, C_WRITE_HITS, C_ADMITTED, \
    C_EVICTED, C_DESTAGED, C_INVALIDATED, C_BYPASSED_REQS, C_DIRTY_AT_END, C_RESTART_DESTAGED, C_WRITE_REQS, \
    C_GHOST_HITS = range(15)
_NCOUNT = 16
COUNTER_NAMES = ("read_reqs", "read_req_hits", "read_blocks", "read_block_hits", "write_blocks", "write_block_hits",
                 "admitted_blocks", "evicted_blocks", "destaged_blocks", "invalidated_blocks", "bypassed_reqs",
                 "dirty_blocks_at_end", "restart_destaged_blocks", "write_reqs", "ghost_hits")


@dataclass
class Prepared:
    """A trace cut into blocks: per request the block count, and the dense ids of all blocks in order."""
    block_size: int
    nblk: np.ndarray          # int32 per request
    ids: np.ndarray           # int32 per block, request after request
    nids: int                 # distinct blocks (the working set, reads and writes)
    read_nids: int            # distinct blocks read
    op: np.ndarray            # uint8 per request (0 read, 1 write)

    @property
    def working_set_bytes(self) -> int:
        return self.nids * self.block_size

    @property
    def read_working_set_bytes(self) -> int:
        return self.read_nids * self.block_size


BYTES_PER_BLOCK = 64          # prepare's peak working memory per block: keys, their sort, ids, temporaries


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _check_expansion(trace: Trace, total_blocks: int, block_size: int) -> None:
    """Refuse a block expansion that cannot fit in half of this machine's memory, before allocating it
    (the readers cap one request at 1 GiB, but many large requests in small blocks still add up)."""
    need = total_blocks * BYTES_PER_BLOCK
    have = _memory_bytes()
    if need > have // 2:
        raise DbtierError(
            f"{trace.path}: {len(trace):,} requests cut into {block_size:,}-byte blocks make {total_blocks:,} "
            f"blocks, about {need / 1e9:,.1f} GB of working memory; this machine has {have / 1e9:,.1f} GB",
            "use a larger --block-size (e.g. --block-size 64K), or replay one volume (--volume NAME)")


def prepare(trace: Trace, block_size: int) -> Prepared:
    """Cut each request into blocks of `block_size` bytes and number the distinct blocks densely."""
    if block_size <= 0 or block_size & (block_size - 1):
        raise DbtierError(f"--block-size {block_size} must be a power of two bytes", "e.g. --block-size 8K")
    first = trace.offset_bytes // block_size
    last = (trace.offset_bytes + trace.length_bytes - 1) // block_size
    nblk = (last - first + 1).astype(np.int64)
    if first.size and int(last.max()) >= (1 << VOLUME_SHIFT):
        raise DbtierError(f"{trace.path}: offsets beyond {(1 << VOLUME_SHIFT) * block_size} bytes",
                          "use a larger --block-size")
    base = (trace.volume.astype(np.int64) << VOLUME_SHIFT) | first
    total = int(nblk.sum())
    _check_expansion(trace, total, block_size)
    starts = np.cumsum(nblk) - nblk
    keys = np.repeat(base - starts, nblk) + np.arange(total, dtype=np.int64)
    uniq, inv = np.unique(keys, return_inverse=True)
    ids = inv.astype(np.int32).ravel()
    is_read = np.repeat(trace.op == 0, nblk)
    read_nids = int(np.unique(ids[is_read]).size) if is_read.any() else 0
    return Prepared(block_size, nblk.astype(np.int32), ids, int(uniq.size), read_nids, trace.op)


# -- sequential cutoff ------------------------------------------------------------------

@numba.njit(nogil=True, cache=True)
def sequential_bypass(offset, length, volume, cutoff_bytes):
    """Per request: True when it bypasses the cache under bcache's sequential cutoff."""
    n = offset.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    end = np.full(RECENT_STREAMS, -1, dtype=np.int64)
    vol = np.full(RECENT_STREAMS, -1, dtype=np.int32)
    run = np.zeros(RECENT_STREAMS, dtype=np.int64)
    age = np.zeros(RECENT_STREAMS, dtype=np.int64)
    clock = 0
    for i in range(n):
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
        clock += 1
        age[slot] = clock
        out[i] = r >= cutoff_bytes
    return out


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Hint the CPU to fetch arr[idx]'s cache line (llvm.prefetch; read, high locality). No effect on results."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen


PREFETCH = 12        # blocks ahead: the next requests' rows are on their way while this one is replayed


# -- list helpers (inlined by LLVM) -----------------------------------------------------------

@numba.njit(inline="always")
def _unlink(x, prev, nxt, ht):
    p = prev[x]
    q = nxt[x]
    if p >= 0:
        nxt[p] = q
    else:
        ht[0] = q
    if q >= 0:
        prev[q] = p
    else:
        ht[1] = p
    prev[x] = -1
    nxt[x] = -1


@numba.njit(inline="always")
def _push_head(x, prev, nxt, ht):
    h = ht[0]
    prev[x] = -1
    nxt[x] = h
    if h >= 0:
        prev[h] = x
    else:
        ht[1] = x
    ht[0] = x


# -- LRU and FIFO ----------------------------------------------------------------------------------

@numba.njit(nogil=True, cache=True)
def lru_kernel(nblk, ids, op, bypass, restart_req, nids, capacity, promote, mode, record,
               out_hits, out_admit, out_destage, out_first_miss):
    """LRU (promote=True) or FIFO (promote=False). Returns the counters; fills out_* when record."""
    c = np.zeros(_NCOUNT, dtype=np.int64)
    # One 16-byte row per block (prev, next, state): a block's fields share a cache line, which is
    # what bounds the speed once the working set outgrows the CPU caches.
    node = np.zeros((nids, 4), dtype=np.int32)
    node[:, 0] = -1
    node[:, 1] = -1
    prev = node[:, 0]
    nxt = node[:, 1]
    state = node[:, 2]                             # 0 absent, 1 clean, 2 dirty
    ht = np.full(2, -1, dtype=np.int64)            # head (most recent), tail
    size = 0
    # Counters live in locals (registers) on the hot path and go to `c` at the end.
    n_read_reqs = n_read_req_hits = n_read_blocks = n_read_hits = 0
    n_write_reqs = n_write_blocks = n_write_hits = 0
    n_admitted = n_evicted = n_destaged = n_invalidated = n_bypassed = n_restart_destaged = 0
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    nb = ids.shape[0]
    r = 0
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        while r < nrestart and restart_req[r] <= i:
            x = ht[0]
            while x >= 0:
                if state[x] == 2:
                    destage += 1
                    n_restart_destaged += 1
                state[x] = 0
                y = nxt[x]
                prev[x] = -1
                nxt[x] = -1
                x = y
            ht[0] = -1
            ht[1] = -1
            size = 0
            r += 1
        k = nblk[i]
        byp = has_bypass and bypass[i]
        if byp:
            n_bypassed += 1
        hits = 0
        admit = 0
        first_miss = -1
        if op[i] == 0:
            for j in range(pos, pos + k):
                if j + PREFETCH < nb:
                    _prefetch(state, ids[j + PREFETCH])
                x = ids[j]
                if state[x] != 0:
                    hits += 1
                    if promote and ht[0] != x:
                        _unlink(x, prev, nxt, ht)
                        _push_head(x, prev, nxt, ht)
                    continue
                if first_miss < 0:
                    first_miss = j - pos
                if not byp and capacity > 0:
                    if size >= capacity:
                        t = ht[1]
                        _unlink(t, prev, nxt, ht)
                        if state[t] == 2:
                            destage += 1
                        state[t] = 0
                        size -= 1
                        n_evicted += 1
                    _push_head(x, prev, nxt, ht)
                    state[x] = 1
                    size += 1
                    admit += 1
            n_read_reqs += 1
            n_read_blocks += k
            n_read_hits += hits
            if hits == k:
                n_read_req_hits += 1
        else:
            n_write_reqs += 1
            n_write_blocks += k
            if mode == 0 or byp:
                for j in range(pos, pos + k):
                    if j + PREFETCH < nb:
                        _prefetch(state, ids[j + PREFETCH])
                    x = ids[j]
                    if state[x] != 0:
                        hits += 1
                        _unlink(x, prev, nxt, ht)
                        state[x] = 0
                        size -= 1
                        n_invalidated += 1
            else:
                new_state = 2 if mode == 2 else 1
                for j in range(pos, pos + k):
                    if j + PREFETCH < nb:
                        _prefetch(state, ids[j + PREFETCH])
                    x = ids[j]
                    if state[x] != 0:
                        hits += 1
                        if promote and ht[0] != x:
                            _unlink(x, prev, nxt, ht)
                            _push_head(x, prev, nxt, ht)
                        if new_state == 2:
                            state[x] = 2
                    elif capacity > 0:
                        if size >= capacity:
                            t = ht[1]
                            _unlink(t, prev, nxt, ht)
                            if state[t] == 2:
                                destage += 1
                            state[t] = 0
                            size -= 1
                            n_evicted += 1
                        _push_head(x, prev, nxt, ht)
                        state[x] = new_state
                        size += 1
                        admit += 1
            n_write_hits += hits
        n_admitted += admit
        n_destaged += destage
        if record:
            out_hits[i] = hits
            out_admit[i] = admit
            out_destage[i] = destage
            out_first_miss[i] = first_miss
        pos += k
    c[C_READ_REQS] = n_read_reqs
    c[C_READ_REQ_HITS] = n_read_req_hits
    c[C_READ_BLOCKS] = n_read_blocks
    c[C_READ_HITS] = n_read_hits
    c[C_WRITE_REQS] = n_write_reqs
    c[C_WRITE_BLOCKS] = n_write_blocks
    c[C_WRITE_HITS] = n_write_hits
    c[C_ADMITTED] = n_admitted
    c[C_EVICTED] = n_evicted
    c[C_DESTAGED] = n_destaged
    c[C_INVALIDATED] = n_invalidated
    c[C_BYPASSED_REQS] = n_bypassed
    c[C_RESTART_DESTAGED] = n_restart_destaged
    x = ht[0]
    while x >= 0:
        if state[x] == 2:
            c[C_DIRTY_AT_END] += 1
        x = nxt[x]
    return c


# -- S3-FIFO ------------------------------------------------------------------------------------------

@numba.njit(inline="always")
def _s3_evict_main(where, freq, dirty, prev, nxt, htm, sizes, c):
    """Evict one block from M; returns 1 if it was dirty (destaged)."""
    while sizes[1] > 0:
        t = htm[1]
        if freq[t] > 0:
            freq[t] -= 1
            if htm[0] != t:
                _unlink(t, prev, nxt, htm)
                _push_head(t, prev, nxt, htm)
        else:
            _unlink(t, prev, nxt, htm)
            where[t] = 0
            sizes[1] -= 1
            c[C_EVICTED] += 1
            d = dirty[t]
            dirty[t] = 0
            return d
    return 0


@numba.njit(inline="always")
def _s3_evict(where, freq, dirty, prev, nxt, hts, htm, htg, sizes, small_cap, main_cap, ghost_cap, c):
    """Free exactly one block. Returns 1 if a dirty block left the cache (destaged)."""
    if sizes[0] >= small_cap or sizes[1] == 0:
        while sizes[0] > 0:
            t = hts[1]
            _unlink(t, prev, nxt, hts)
            sizes[0] -= 1
            if freq[t] > 1:
                _push_head(t, prev, nxt, htm)
                where[t] = 2
                sizes[1] += 1
                if sizes[1] > main_cap:
                    return _s3_evict_main(where, freq, dirty, prev, nxt, htm, sizes, c)
            else:
                c[C_EVICTED] += 1
                d = dirty[t]
                dirty[t] = 0
                if ghost_cap > 0:
                    if sizes[2] >= ghost_cap:
                        g = htg[1]
                        _unlink(g, prev, nxt, htg)
                        where[g] = 0
                        sizes[2] -= 1
                    _push_head(t, prev, nxt, htg)
                    where[t] = 3
                    sizes[2] += 1
                else:
                    where[t] = 0
                return d
        return 0
    return _s3_evict_main(where, freq, dirty, prev, nxt, htm, sizes, c)


@numba.njit(nogil=True, cache=True)
def s3fifo_kernel(nblk, ids, op, bypass, restart_req, nids, capacity, mode, record,
                  out_hits, out_admit, out_destage, out_first_miss):
    c = np.zeros(_NCOUNT, dtype=np.int64)
    node = np.zeros((nids, 8), dtype=np.int32)     # one 32-byte row per block (see lru_kernel)
    node[:, 0] = -1
    node[:, 1] = -1
    prev = node[:, 0]
    nxt = node[:, 1]
    where = node[:, 2]                             # 0 none, 1 S, 2 M, 3 G (ghost)
    freq = node[:, 3]
    dirty = node[:, 4]
    hts = np.full(2, -1, dtype=np.int64)
    htm = np.full(2, -1, dtype=np.int64)
    htg = np.full(2, -1, dtype=np.int64)
    sizes = np.zeros(3, dtype=np.int64)            # S, M, G
    small_cap = max(1, capacity // 10)
    main_cap = capacity - small_cap
    ghost_cap = main_cap
    nb = ids.shape[0]
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    r = 0
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        while r < nrestart and restart_req[r] <= i:
            for ht in (hts, htm, htg):
                x = ht[0]
                while x >= 0:
                    if dirty[x] == 1:
                        destage += 1
                        c[C_RESTART_DESTAGED] += 1
                    dirty[x] = 0
                    where[x] = 0
                    freq[x] = 0
                    y = nxt[x]
                    prev[x] = -1
                    nxt[x] = -1
                    x = y
                ht[0] = -1
                ht[1] = -1
            sizes[:] = 0
            r += 1
        k = nblk[i]
        byp = has_bypass and bypass[i]
        if byp:
            c[C_BYPASSED_REQS] += 1
        hits = 0
        admit = 0
        first_miss = -1
        is_read = op[i] == 0
        if is_read:
            c[C_READ_REQS] += 1
            c[C_READ_BLOCKS] += k
        else:
            c[C_WRITE_REQS] += 1
            c[C_WRITE_BLOCKS] += k
        around = (not is_read) and (mode == 0 or byp)
        for j in range(pos, pos + k):
            if j + PREFETCH < nb:
                _prefetch(where, ids[j + PREFETCH])
            x = ids[j]
            w = where[x]
            if w == 1 or w == 2:
                hits += 1
                if around:
                    _unlink(x, prev, nxt, hts if w == 1 else htm)
                    sizes[w - 1] -= 1
                    where[x] = 0
                    freq[x] = 0
                    dirty[x] = 0
                    c[C_INVALIDATED] += 1
                else:
                    if freq[x] < 3:
                        freq[x] += 1
                    if (not is_read) and mode == 2:
                        dirty[x] = 1
                continue
            if first_miss < 0:
                first_miss = j - pos
            if not around and capacity > 0 and not (is_read and byp):
                while sizes[0] + sizes[1] >= capacity:
                    destage += _s3_evict(where, freq, dirty, prev, nxt, hts, htm, htg, sizes,
                                         small_cap, main_cap, ghost_cap, c)
                w = where[x]                       # an eviction may have pushed x out of the ghost
                if w == 3:
                    _unlink(x, prev, nxt, htg)
                    sizes[2] -= 1
                    _push_head(x, prev, nxt, htm)
                    where[x] = 2
                    sizes[1] += 1
                    c[C_GHOST_HITS] += 1
                else:
                    _push_head(x, prev, nxt, hts)
                    where[x] = 1
                    sizes[0] += 1
                freq[x] = 0
                dirty[x] = 1 if ((not is_read) and mode == 2) else 0
                admit += 1
        if is_read:
            c[C_READ_HITS] += hits
            if hits == k:
                c[C_READ_REQ_HITS] += 1
        else:
            c[C_WRITE_HITS] += hits
        c[C_ADMITTED] += admit
        c[C_DESTAGED] += destage
        if record:
            out_hits[i] = hits
            out_admit[i] = admit
            out_destage[i] = destage
            out_first_miss[i] = first_miss
        pos += k
    for ht in (hts, htm):
        x = ht[0]
        while x >= 0:
            if dirty[x] == 1:
                c[C_DIRTY_AT_END] += 1
            x = nxt[x]
    return c


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


def run_cache(prep: Prepared, capacity: int, policy: str = "lru", write_mode: str = "write-around",
              bypass: np.ndarray | None = None, restart_req: np.ndarray | None = None,
              record: bool = True) -> CacheResult:
    """Replay the prepared trace through one cache of `capacity` blocks."""
    if policy not in POLICIES:
        raise DbtierError(f"unknown cache policy '{policy}' (known: {', '.join(POLICIES)})",
                          "choose one with --policy")
    if write_mode not in WRITE_MODES:
        raise DbtierError(f"unknown write mode '{write_mode}' (known: {', '.join(WRITE_MODES)})",
                          "choose one with --write-mode")
    n = prep.nblk.shape[0]
    if record:
        hits, adm, dst, fm = (np.zeros(n, dtype=np.int32) for _ in range(4))
    else:
        hits = adm = dst = fm = _EMPTY_I32
    byp = _EMPTY_BOOL if bypass is None else np.ascontiguousarray(bypass, dtype=np.bool_)
    rr = _EMPTY_I64 if restart_req is None else np.ascontiguousarray(restart_req, dtype=np.int64)
    mode = _MODE[write_mode]
    if policy == "s3fifo":
        c = s3fifo_kernel(prep.nblk, prep.ids, prep.op, byp, rr, prep.nids, int(capacity), mode, record,
                          hits, adm, dst, fm)
    else:
        c = lru_kernel(prep.nblk, prep.ids, prep.op, byp, rr, prep.nids, int(capacity), policy == "lru", mode,
                       record, hits, adm, dst, fm)
    counters = {name: int(c[i]) for i, name in enumerate(COUNTER_NAMES)}
    return CacheResult(policy, write_mode, int(capacity), prep.block_size, counters,
                       hits if record else None, adm if record else None, dst if record else None,
                       fm if record else None)


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


def default_sweep_gb(working_set_bytes: int, block_size: int, points: int = 10) -> list[float]:
    """Cache sizes for a hit-ratio curve: halvings of the working set, smallest first (GB, 10^9 bytes)."""
    ws_gb = working_set_bytes / 1e9
    sizes = []
    for k in range(points - 1, -1, -1):
        gb = ws_gb / (2 ** k)
        if gb * 1e9 >= block_size:
            sizes.append(gb)
    return sizes
