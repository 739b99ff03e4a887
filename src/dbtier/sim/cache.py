"""Cache policies as numba kernels over dense block ids.

A request (offset, length) covers the fixed blocks offset // B .. (offset +
length - 1) // B of its volume. `prepare` (a `BlockMap`: an open-addressing
hash table) maps every (volume, block) pair the trace touches to a dense id
0..nids-1 in first-touch order, so the kernels index plain arrays (no hashing
on the hot path) and each policy keeps its lists as prev/next arrays: O(1) work
per block. First-touch order also keeps the hot blocks' rows close together.
No answer depends on the order of the ids.

Streaming: `Replay` feeds a trace chunk after chunk (`chunks.Chunk`): the block
map, the cache's lists and counters, the sequential-cutoff streams and the next
restart carry over, so any chunking gives the whole-trace answers while memory
holds per distinct block the cache's row (16 bytes) and the map's slots (17 to
34 bytes), and one chunk.

Policies (`POLICIES`): one implementation each, shared with `simulate mrc`: what
a hit does, what a miss admits and what it evicts are sim/mrc_kernels' `lru_hit`,
`lru_admit`, `s3_hit`, `s3_unghost` and `s3_admit` (inlined), each block an
object of the block size; these kernels add what a block cache does around
them (the write modes, restarts, the sequential cutoff, the counters and the
per-request outputs).
- `lru`: least recently used; a hit moves the block to the head.
- `fifo`: first in, first out; a hit changes nothing.
- `s3fifo`: S3-FIFO (Yang et al., SOSP 2023) exactly as libCacheSim's S3FIFO.c
  runs it (checked against its test suite's figures through simulate mrc, and
  against a slow reference here): a small FIFO S of 10% of the blocks, a
  main FIFO M of the rest, a ghost FIFO G of ids of 90%. A miss found in G
  leaves it and enters M, any other enters S; a hit raises a frequency (counted
  to 3). An eviction is from M when M holds more than its share or S is empty:
  M's oldest goes back to its head with min(freq, 3) - 1 while its freq is 1
  or more, else leaves. Otherwise from S: its oldest moves to M with its freq
  reset to 0 when it was hit twice or more (and the next oldest is tried), else
  leaves, its id remembered in G. The shares are in bytes as libCacheSim takes
  them (S's 10% of a 15-block cache is 1.5 blocks), and as there a block is
  admitted only when smaller than S's share: a cache of 10 blocks or fewer
  admits nothing. One-hit wonders (a scan) pass through S without displacing M.

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
from typing import Any, Iterable, Sequence

import numba
import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.blocks import VOLUME_SHIFT, BlockMap, Prepared, prepare  # noqa: F401 (prepare, VOLUME_SHIFT: callers' names)
from dbtier.sim.blocks import prefetch as _prefetch
from dbtier.sim.chunks import Chunk
from dbtier.sim.jit import hot
from dbtier.sim.mrc_kernels import S3_EVICTED, lru_admit, lru_hit, s3_admit, s3_caps, s3_hit, s3_unghost
from dbtier.sim.mrc_kernels import unlink as _unlink
from dbtier.sim.names import POLICIES, WRITE_MODES

MODE_CODES = {"write-around": 0, "write-through": 1, "write-back": 2}
RECENT_STREAMS = 64          # bcache's RECENT_IO

# Counter slots of the kernels' result array.
C_READ_REQS, C_READ_REQ_HITS, C_READ_BLOCKS, C_READ_HITS, C_WRITE_BLOCKS, C_WRITE_HITS, C_ADMITTED, \
    C_EVICTED, C_DESTAGED, C_INVALIDATED, C_BYPASSED_REQS, C_DIRTY_AT_END, C_RESTART_DESTAGED, C_WRITE_REQS, \
    C_GHOST_HITS = range(15)
_NCOUNT = 16
assert S3_EVICTED == C_EVICTED        # the shared S3-FIFO rules count evictions into the same slot
COUNTER_NAMES = ("read_reqs", "read_req_hits", "read_blocks", "read_block_hits", "write_blocks", "write_block_hits",
                 "admitted_blocks", "evicted_blocks", "destaged_blocks", "invalidated_blocks", "bypassed_reqs",
                 "dirty_blocks_at_end", "restart_destaged_blocks", "write_reqs", "ghost_hits")


PREFETCH = 12        # blocks ahead: the next requests' rows are on their way while this one is replayed
PREFETCH_NEIGHBOURS = 6   # blocks ahead: their rows have arrived; their list neighbours' rows are fetched


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


# -- list helpers (inlined by LLVM) -----------------------------------------------------------

# -- LRU and FIFO ----------------------------------------------------------------------------------

_NO_RESTART = 1 << 62
LRU_ROW = 4        # int32 per block: prev, next, state (0 absent, 1 clean, 2 dirty), padding
LRU_STATE = 4      # st: head (most recent), tail, size, next restart to apply


@hot
def lru_kernel(nblk, ids, op, bypass, restart_req, first_request, node, st, c, capacity, promote, mode, record,
               out_hits, out_admit, out_destage, out_first_miss, no_held):
    """LRU (promote=True) or FIFO (promote=False) over the next requests (the first is request
    `first_request` of the trace; restart_req holds whole-trace request indexes). The cache's state (node,
    st) carries from call to call and the counters are added to c; fills out_* when record. no_held: empty
    (the shared rules' object sizes; every block is one unit)."""
    # One 16-byte row per block (prev, next, state): a block's fields share a cache line, which is
    # what bounds the speed once the working set outgrows the CPU caches.
    prev = node[:, 0]
    nxt = node[:, 1]
    state = node[:, 2]
    ht = st[0:2]
    size = st[2]                                   # blocks held (each one unit to the shared rules)
    r = st[3]
    # Counters live in locals (registers) on the hot path and go back to `c` at the end.
    n_read_reqs = c[C_READ_REQS]
    n_read_req_hits = c[C_READ_REQ_HITS]
    n_read_blocks = c[C_READ_BLOCKS]
    n_read_hits = c[C_READ_HITS]
    n_write_reqs = c[C_WRITE_REQS]
    n_write_blocks = c[C_WRITE_BLOCKS]
    n_write_hits = c[C_WRITE_HITS]
    n_admitted = c[C_ADMITTED]
    n_evicted = c[C_EVICTED]
    n_destaged = c[C_DESTAGED]
    n_invalidated = c[C_INVALIDATED]
    n_bypassed = c[C_BYPASSED_REQS]
    n_restart_destaged = c[C_RESTART_DESTAGED]
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
    nb = ids.shape[0]
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        if i >= next_restart:
            while r < nrestart and restart_req[r] - first_request <= i:
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
            next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
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
                    if promote:
                        # a hit moves its block: its list neighbours' rows are needed then
                        y = ids[j + PREFETCH_NEIGHBOURS]
                        if state[y] != 0:
                            _prefetch(state, prev[y])
                            _prefetch(state, nxt[y])
                x = ids[j]
                if state[x] != 0:
                    hits += 1
                    lru_hit(x, promote, prev, nxt, ht)
                    continue
                if first_miss < 0:
                    first_miss = j - pos
                if not byp and capacity > 0:
                    ok, d, e, size = lru_admit(x, 1, False, state, prev, nxt, ht, size, no_held, 1, capacity)
                    destage += d
                    n_evicted += e
                    admit += ok
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
                        _unlink(x, prev, nxt, ht, 0)
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
                        lru_hit(x, promote, prev, nxt, ht)
                        if new_state == 2:
                            state[x] = 2
                    elif capacity > 0:
                        ok, d, e, size = lru_admit(x, 1, new_state == 2, state, prev, nxt, ht, size, no_held, 1,
                                                   capacity)
                        destage += d
                        n_evicted += e
                        admit += ok
            n_write_hits += hits
        n_admitted += admit
        n_destaged += destage
        if record:
            out_hits[i] = hits
            out_admit[i] = admit
            out_destage[i] = destage
            out_first_miss[i] = first_miss
        pos += k
    st[2] = size
    st[3] = r
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


# -- S3-FIFO ------------------------------------------------------------------------------------------

S3_ROW = 4         # int32 per block: prev, next, where, freq (bits 0-1) | dirty (bit 2): 16 bytes
S3_STATE = 10      # st: S head, tail, M head, tail, G head, tail, S, M, G bytes, next restart


@hot
def s3fifo_kernel(nblk, ids, op, bypass, restart_req, first_request, node, st, c, capacity, block_bytes, mode,
                  record, out_hits, out_admit, out_destage, out_first_miss, no_held):
    """S3-FIFO over the next requests; the state (node, st) carries from call to call (see lru_kernel). The
    queues' shares are in bytes, as libCacheSim takes them for objects of `block_bytes` each (a block is one
    row; S's and the ghost's shares are whole bytes, not whole blocks)."""
    prev = node[:, 0]
    nxt = node[:, 1]
    where = node[:, 2]                             # 0 none, 1 S, 2 M, 3 G (ghost)
    fd = node[:, 3]                                # freq (0..3) | dirty << 2: one row per block stays 16 bytes
    ht = st[0:6]                                   # S, M, G heads and tails (at 0, 2, 4)
    qb = st[6:9]                                   # S, M, G bytes
    cap_bytes = capacity * block_bytes
    small_cap, main_cap, ghost_cap = s3_caps(cap_bytes)   # libCacheSim's shares, in bytes
    nb = ids.shape[0]
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    r = st[9]
    # Counters in locals on the hot path (see lru_kernel); evictions and restarts count into c directly.
    n_read_reqs = c[C_READ_REQS]
    n_read_req_hits = c[C_READ_REQ_HITS]
    n_read_blocks = c[C_READ_BLOCKS]
    n_read_hits = c[C_READ_HITS]
    n_write_reqs = c[C_WRITE_REQS]
    n_write_blocks = c[C_WRITE_BLOCKS]
    n_write_hits = c[C_WRITE_HITS]
    n_admitted = c[C_ADMITTED]
    n_destaged = c[C_DESTAGED]
    n_invalidated = c[C_INVALIDATED]
    n_bypassed = c[C_BYPASSED_REQS]
    n_ghost_hits = c[C_GHOST_HITS]
    next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        while i >= next_restart and r < nrestart and restart_req[r] - first_request <= i:
            for q in range(0, 6, 2):
                x = ht[q]
                while x >= 0:
                    if fd[x] >= 4:
                        destage += 1
                        c[C_RESTART_DESTAGED] += 1
                    where[x] = 0
                    fd[x] = 0
                    y = nxt[x]
                    prev[x] = -1
                    nxt[x] = -1
                    x = y
                ht[q] = -1
                ht[q + 1] = -1
            qb[:] = 0
            r += 1
            next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
        k = nblk[i]
        byp = has_bypass and bypass[i]
        if byp:
            n_bypassed += 1
        hits = 0
        admit = 0
        first_miss = -1
        is_read = op[i] == 0
        if is_read:
            n_read_reqs += 1
            n_read_blocks += k
        else:
            n_write_reqs += 1
            n_write_blocks += k
        around = (not is_read) and (mode == 0 or byp)
        for j in range(pos, pos + k):
            if j + PREFETCH < nb:
                _prefetch(where, ids[j + PREFETCH])
                y = ids[j + PREFETCH_NEIGHBOURS]
                if where[y] != 0:                  # a ghost hit or an invalidation unlinks it
                    _prefetch(where, prev[y])
                    _prefetch(where, nxt[y])
            x = ids[j]
            w = where[x]
            if w == 1 or w == 2:
                hits += 1
                if around:
                    _unlink(x, prev, nxt, ht, 2 * w - 2)
                    qb[w - 1] -= block_bytes
                    where[x] = 0
                    fd[x] = 0
                    n_invalidated += 1
                else:
                    s3_hit(fd, x, (not is_read) and mode == 2)
                continue
            if first_miss < 0:
                first_miss = j - pos
            if not around and capacity > 0 and not (is_read and byp):
                ghost_hit = w == 3
                if ghost_hit:
                    s3_unghost(x, where, prev, nxt, ht, qb, no_held, block_bytes)
                ok, d = s3_admit(x, block_bytes, ghost_hit, (not is_read) and mode == 2, where, fd, prev, nxt, ht, qb,
                                 no_held, block_bytes, cap_bytes, small_cap, main_cap, ghost_cap, c)
                destage += d
                if ok:
                    admit += 1
                    n_ghost_hits += ghost_hit
        if is_read:
            n_read_hits += hits
            if hits == k:
                n_read_req_hits += 1
        else:
            n_write_hits += hits
        n_admitted += admit
        n_destaged += destage
        if record:
            out_hits[i] = hits
            out_admit[i] = admit
            out_destage[i] = destage
            out_first_miss[i] = first_miss
        pos += k
    st[9] = r
    c[C_READ_REQS] = n_read_reqs
    c[C_READ_REQ_HITS] = n_read_req_hits
    c[C_READ_BLOCKS] = n_read_blocks
    c[C_READ_HITS] = n_read_hits
    c[C_WRITE_REQS] = n_write_reqs
    c[C_WRITE_BLOCKS] = n_write_blocks
    c[C_WRITE_HITS] = n_write_hits
    c[C_ADMITTED] = n_admitted
    c[C_DESTAGED] = n_destaged
    c[C_INVALIDATED] = n_invalidated
    c[C_BYPASSED_REQS] = n_bypassed
    c[C_GHOST_HITS] = n_ghost_hits


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


class Replay:
    """One cache of `capacity` blocks replayed over a trace fed in order, whole or chunk after chunk: the
    cache's lists, frequencies, dirty bits, counters, the sequential-cutoff streams and the next restart
    carry from one chunk to the next, so any chunking gives the counters (and per-request outputs) of the
    whole-trace replay.

        rp = Replay(capacity, "s3fifo", "write-back", 8192, seq_cutoff_bytes=4 << 20, restart_at_s=[3600])
        for chunk in chunks:
            hits, admitted, destaged, first_miss = rp.feed(chunk)    # this chunk's requests (record=True)
        result = rp.result()                                         # a CacheResult

    `feed` numbers the blocks with the replay's own BlockMap (`blocks`, shared if given: several replays of
    one trace then need it fed once, through `feed_prepared`). Restart times are resolved chunk by chunk
    (the first request at or after each; the trace in time order)."""

    def __init__(self, capacity: int, policy: str = "lru", write_mode: str = "write-around", block_size: int = 8192,
                 *, record: bool = True, keep_records: bool = True, seq_cutoff_bytes: int | None = None,
                 restart_at_s: Sequence[float] = (), blocks: BlockMap | None = None):
        _check_policy(policy, write_mode)
        self.capacity = int(capacity)
        self.policy = policy
        self.write_mode = write_mode
        self.block_size = block_size
        self.record = record
        self.keep_records = keep_records
        self._blocks = blocks
        self.cutoff = SequentialCutoff(seq_cutoff_bytes) if seq_cutoff_bytes else None
        self._restarts = Restarts(restart_at_s)
        s3 = policy == "s3fifo"
        self.node = np.zeros((0, S3_ROW if s3 else LRU_ROW), dtype=np.int32)
        self.st = np.zeros(S3_STATE if s3 else LRU_STATE, dtype=np.int64)
        self.st[:6 if s3 else 2] = -1                     # empty lists
        self.c = np.zeros(_NCOUNT, dtype=np.int64)
        self.requests = 0
        self._records: list[tuple[np.ndarray, ...]] = []

    @property
    def blocks(self) -> BlockMap:
        if self._blocks is None:
            self._blocks = BlockMap(self.block_size)
        return self._blocks

    def _rows(self, nids: int, exact: bool) -> None:
        """Room for block ids below nids (new rows absent: prev = next = -1)."""
        have = self.node.shape[0]
        if nids <= have:
            return
        rows = nids if exact else max(nids, 2 * have)
        node = np.zeros((rows, self.node.shape[1]), dtype=np.int32)
        node[:have] = self.node
        node[have:, 0] = -1
        node[have:, 1] = -1
        self.node = node

    def feed(self, chunk: Chunk, path: Any = "trace") -> tuple[np.ndarray, ...] | None:
        """Replay the trace's next requests; per request (hits, admitted, destaged, first_miss) when record."""
        prep = self.blocks.feed_chunk(chunk, path)
        byp = self.cutoff.feed(chunk.offset_bytes, chunk.length_bytes, chunk.volume) if self.cutoff else None
        return self.feed_prepared(prep, byp, self._restarts.feed(chunk.time_s, prep.first_request), exact=False)

    def feed_prepared(self, prep: Prepared, bypass: np.ndarray | None = None, restart_req: np.ndarray | None = None,
                      exact: bool = True) -> tuple[np.ndarray, ...] | None:
        """Replay requests already cut into blocks (prep.first_request must be the next request);
        restart_req: whole-trace request indexes, sorted (as `restart_requests` gives)."""
        if prep.first_request != self.requests:
            raise ValueError(f"requests fed out of order: {prep.first_request} after {self.requests}")
        n = prep.nblk.shape[0]
        self._rows(prep.nids, exact)
        if self.record:
            hits, adm, dst, fm = (np.zeros(n, dtype=np.int32) for _ in range(4))
        else:
            hits = adm = dst = fm = _EMPTY_I32
        byp = _EMPTY_BOOL if bypass is None else np.ascontiguousarray(bypass, dtype=np.bool_)
        rr = _EMPTY_I64 if restart_req is None else np.ascontiguousarray(restart_req, dtype=np.int64)
        mode = MODE_CODES[self.write_mode]
        if self.policy == "s3fifo":
            s3fifo_kernel(prep.nblk, prep.ids, prep.op, byp, rr, prep.first_request, self.node, self.st, self.c,
                          self.capacity, self.block_size, mode, self.record, hits, adm, dst, fm, _EMPTY_I64)
        else:
            lru_kernel(prep.nblk, prep.ids, prep.op, byp, rr, prep.first_request, self.node, self.st, self.c,
                       self.capacity, self.policy == "lru", mode, self.record, hits, adm, dst, fm, _EMPTY_I64)
        self.requests += n
        if not self.record:
            return None
        out = (hits, adm, dst, fm)
        if self.keep_records:
            self._records.append(out)
        return out

    def dirty_blocks(self) -> int:
        """Dirty blocks in the cache now (every dirty block is in a list: S3-FIFO's ghost holds none)."""
        if self.policy == "s3fifo":
            return int(np.count_nonzero(self.node[:, 3] & 4))
        return int(np.count_nonzero(self.node[:, 2] == 2))

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


def run_cache(prep: Prepared, capacity: int, policy: str = "lru", write_mode: str = "write-around",
              bypass: np.ndarray | None = None, restart_req: np.ndarray | None = None,
              record: bool = True) -> CacheResult:
    """Replay the prepared trace through one cache of `capacity` blocks."""
    rp = Replay(capacity, policy, write_mode, prep.block_size, record=record)
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
                 path: Any = "trace") -> tuple[list[CacheResult], BlockMap]:
    """`sweep` over a trace read once as chunks: each chunk is cut into blocks and checked against the
    sequential cutoff once, then replayed through every size (in parallel threads). Returns the results and
    the block map (its nids: the working set)."""
    blocks = BlockMap(block_size)
    replays = [Replay(c, policy, write_mode, block_size, record=False, blocks=blocks) for c in capacities]
    cutoff = SequentialCutoff(seq_cutoff_bytes) if seq_cutoff_bytes else None
    restarts = Restarts(restart_at_s)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(replays) or 1))
    pool = ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        for chunk in chunks:
            prep = blocks.feed_chunk(chunk, path)
            byp = cutoff.feed(chunk.offset_bytes, chunk.length_bytes, chunk.volume) if cutoff else None
            rr = restarts.feed(chunk.time_s, prep.first_request)
            if pool is None:
                for rp in replays:
                    rp.feed_prepared(prep, byp, rr, exact=False)
            else:
                list(pool.map(lambda rp: rp.feed_prepared(prep, byp, rr, exact=False), replays))
    finally:
        if pool is not None:
            pool.shutdown()
    return [rp.result() for rp in replays], blocks


def default_sweep_gb(working_set_bytes: int, block_size: int, points: int = 10) -> list[float]:
    """Cache sizes for a hit-ratio curve: halvings of the working set, smallest first (GB, 10^9 bytes)."""
    ws_gb = working_set_bytes / 1e9
    sizes = []
    for k in range(points - 1, -1, -1):
        gb = ws_gb / (2 ** k)
        if gb * 1e9 >= block_size:
            sizes.append(gb)
    return sizes
