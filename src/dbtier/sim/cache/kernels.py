"""The block cache's policies as numba kernels: each request's blocks, by key, through one cache.

Each block the cache holds (or S3-FIFO's ghost remembers) has a row of a plain array (prev, next, state,
freq: 16 bytes), found from its key through `slots.row_of` (a hash table of the rows in use; rows of blocks
that left are recycled), so each policy keeps its lists as prev/next arrays: O(1) work per block, and
memory follows the cache, not the trace. No answer depends on which row a block gets.

Policies (`POLICIES`): one implementation each, shared with `simulate mrc`: what
a hit does, what a miss admits and what it evicts are sim/policy's `lru_hit`,
`lru_admit`, `s3_hit`, `s3_unghost`, `s3_admit` and `s3_admit_current` and
`sieve_*` and `twoq_*` (inlined), each block an object of the
block size; these kernels (SIEVE's and 2Q's in queues.py) add what a
block cache does around them (the write modes, restarts, the sequential
cutoff, the counters and the per-request outputs).
- `lru`: least recently used; a hit moves the block to the head.
- `fifo`: first in, first out; a hit changes nothing.
- `s3fifo`: S3-FIFO exactly as libCacheSim's current S3FIFO.c runs it
  (libcachesim 0.3.5):
  `s3fifo-2023`, except that until the cache first has to evict, a miss that
  is not a ghost hit and finds S at or over its share enters M.
- `s3fifo-2023`: the original S3-FIFO (Yang et al., SOSP 2023) as
  libCacheSim's S3FIFOv0.c runs it (the figures its test suite
  asserts): a small FIFO S of 10% of the blocks, a
  main FIFO M of the rest, a ghost FIFO G of 90% (blocks that
  left S, by key). A miss found in G
  leaves it and enters M, any other enters S; a hit raises a frequency (counted
  to 3). An eviction is from M when M holds more than its share or S is empty:
  M's oldest goes back to its head with min(freq, 3) - 1 while its freq is 1
  or more, else leaves. Otherwise from S: its oldest moves to M with its freq
  reset to 0 when it was hit twice or more (and the next oldest is tried), else
  leaves, remembered in G. The shares are in bytes as libCacheSim takes
  them (S's 10% of a 15-block cache is 1.5 blocks), and as there a block is
  admitted only when smaller than S's share: a cache of 10 blocks or fewer
  admits nothing (both variants). One-hit wonders (a scan) pass through S
  without displacing M.
- `sieve`: SIEVE (Zhang et al., NSDI '24) as libCacheSim's Sieve.c: a FIFO
  and a hand; a hit marks the block visited; to evict, the hand walks from the
  oldest toward the newest clearing marks and evicts the first unmarked block.
- `twoq`: 2Q (Johnson and Shasha, VLDB '94) as libCacheSim's TwoQ.c: Ain, a
  FIFO of 25% of the bytes, takes new blocks; Aout remembers the keys that
  left Ain (50%); Am, an LRU of the rest, takes a miss found in Aout. Nothing
  larger than Ain's share is admitted: with 8 KiB blocks a cache of 3 blocks
  or fewer admits nothing.

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

import numba

from dbtier.sim.cache.slots import S_TSHIFT, peek, prefetch_slot, row_if_kept, row_of
from dbtier.sim.jit import hot
from dbtier.sim.jit import prefetch as _prefetch
from dbtier.sim.policy.lists import unlink as _unlink
from dbtier.sim.policy.lru import lru_admit, lru_hit
from dbtier.sim.policy.s3fifo import S3_EVICTED, s3_admit, s3_admit_current, s3_caps, s3_hit, s3_unghost

MODE_CODES = {"write-around": 0, "write-through": 1, "write-back": 2}

# Counter slots of the kernels' result array.
C_READ_REQS, C_READ_REQ_HITS, C_READ_BLOCKS, C_READ_HITS, C_WRITE_BLOCKS, C_WRITE_HITS, C_ADMITTED, \
    C_EVICTED, C_DESTAGED, C_INVALIDATED, C_BYPASSED_REQS, C_DIRTY_AT_END, C_RESTART_DESTAGED, C_WRITE_REQS, \
    C_GHOST_HITS = range(15)
NCOUNT = 16
assert S3_EVICTED == C_EVICTED        # the shared S3-FIFO rules count evictions into the same slot
COUNTER_NAMES = ("read_reqs", "read_req_hits", "read_blocks", "read_block_hits", "write_blocks", "write_block_hits",
                 "admitted_blocks", "evicted_blocks", "destaged_blocks", "invalidated_blocks", "bypassed_reqs",
                 "dirty_blocks_at_end", "restart_destaged_blocks", "write_reqs", "ghost_hits")

# Blocks ahead, a software pipeline over the next requests' blocks: their table slots are fetched
# (PF_SLOT), then, the slot arrived, their rows (PREFETCH), then, the row arrived, its list neighbours'
# rows (PREFETCH_NEIGHBOURS: a hit that moves a block, or an invalidation, unlinks it). The rows found
# ahead wait in `ring` (hints only: a row may be recycled before its block's turn; the lookup decides).
PF_SLOT = 20
PREFETCH = 12
PREFETCH_NEIGHBOURS = 6
RING = 32                    # > PREFETCH, a power of two
_RING_MASK = RING - 1


@numba.njit(inline="always")
def prefetch_ahead(j, nb, keys, table, rowkey, tshift, live, prev, nxt, ring, neighbours):
    if j + PF_SLOT < nb:
        prefetch_slot(keys[j + PF_SLOT], table, tshift)
    if j + PREFETCH < nb:
        y = peek(keys[j + PREFETCH], table, rowkey, tshift, False)      # a hint
        ring[(j + PREFETCH) & _RING_MASK] = y
        if y >= 0:
            _prefetch(live, y)
            _prefetch(rowkey, y)              # the lookup confirms the row by its key
    if neighbours:
        y = ring[(j + PREFETCH_NEIGHBOURS) & _RING_MASK]
        if y >= 0 and live[y] != 0:
            _prefetch(live, prev[y])
            _prefetch(live, nxt[y])



@numba.njit(inline="always")
def empty_lists(ht, a, b, dirty_bit, prev, nxt):
    """A restart: every list whose head and tail ht holds (at 0, 2, ...) emptied, each row's links and columns
    a and b cleared; returns how many blocks held dirty data (dirty_bit set in a), destaged as they go."""
    dirty = 0
    for q in range(0, ht.shape[0], 2):
        x = ht[q]
        while x >= 0:
            if (a[x] & dirty_bit) != 0:
                dirty += 1
            a[x] = 0
            b[x] = 0
            y = nxt[x]
            prev[x] = -1
            nxt[x] = -1
            x = y
        ht[q] = -1
        ht[q + 1] = -1
    return dirty


@numba.njit(inline="always")
def request_done(i, is_read, k, hits, admit, destage, first_miss, c, record, out_hits, out_admit, out_destage,
                 out_first_miss):
    """A request's counts into c (and its outcome into out_* when record): the same for every policy. Straight
    into c, not kept in locals until the end: as quick (measured on the 10 M-request replay)."""
    if is_read:
        c[C_READ_REQS] += 1
        c[C_READ_BLOCKS] += k
        c[C_READ_HITS] += hits
        if hits == k:
            c[C_READ_REQ_HITS] += 1
    else:
        c[C_WRITE_REQS] += 1
        c[C_WRITE_BLOCKS] += k
        c[C_WRITE_HITS] += hits
    c[C_ADMITTED] += admit
    c[C_DESTAGED] += destage
    if record:
        out_hits[i] = hits
        out_admit[i] = admit
        out_destage[i] = destage
        out_first_miss[i] = first_miss


# -- LRU and FIFO ----------------------------------------------------------------------------------

_NO_RESTART = 1 << 62
LRU_ROW = 4        # int32 per block: prev, next, state (0 absent, 1 clean, 2 dirty), padding
LRU_STATE = 4      # st: head (most recent), tail, size, next restart to apply


@hot
def lru_kernel(nblk, keys, op, bypass, restart_req, first_request, node, rowkey, table, rst, ring, st, c,
               capacity, promote, mode, record, out_hits, out_admit, out_destage, out_first_miss, no_held):
    """LRU (promote=True) or FIFO (promote=False) over the next requests (the first is request
    `first_request` of the trace; restart_req holds whole-trace request indexes). The cache's state (node,
    st) carries from call to call and the counters are added to c; fills out_* when record. no_held: empty
    (the shared rules' object sizes; every block is one unit). Blocks by key: rows from slots.row_of
(rowkey, table, rst: a slots.Rows); ring: RING int64 of scratch."""
    # One 16-byte row per block (prev, next, state): a block's fields share a cache line, which is
    # what bounds the speed once the working set outgrows the CPU caches.
    prev = node[:, 0]
    nxt = node[:, 1]
    state = node[:, 2]
    ht = st[0:2]
    size = st[2]                                   # blocks held (each one unit to the shared rules)
    r = st[3]
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
    nb = keys.shape[0]
    tshift = rst[S_TSHIFT]
    for q in range(RING):
        ring[q] = -1
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        if i >= next_restart:
            while r < nrestart and restart_req[r] - first_request <= i:
                d = empty_lists(ht, state, node[:, 3], 2, prev, nxt)       # state 2: dirty
                destage += d
                c[C_RESTART_DESTAGED] += d
                size = 0
                r += 1
            next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
        k = nblk[i]
        byp = has_bypass and bypass[i]
        if byp:
            c[C_BYPASSED_REQS] += 1
        hits = 0
        admit = 0
        first_miss = -1
        if op[i] == 0:
            for j in range(pos, pos + k):
                # a hit moves its block under LRU: its list neighbours' rows are needed then
                prefetch_ahead(j, nb, keys, table, rowkey, tshift, state, prev, nxt, ring, promote)
                if byp or capacity == 0:
                    x = row_if_kept(keys[j], table, rowkey, prev, nxt, state, rst)
                else:
                    x = row_of(keys[j], table, rowkey, prev, nxt, state, rst)
                if x >= 0 and state[x] != 0:
                    hits += 1
                    lru_hit(x, promote, prev, nxt, ht)
                    continue
                if first_miss < 0:
                    first_miss = j - pos
                if not byp and capacity > 0:
                    ok, d, e, size = lru_admit(x, 1, False, state, prev, nxt, ht, size, no_held, 1, capacity)
                    destage += d
                    c[C_EVICTED] += e
                    admit += ok
        else:
            if mode == 0 or byp:
                for j in range(pos, pos + k):
                    prefetch_ahead(j, nb, keys, table, rowkey, tshift, state, prev, nxt, ring, True)
                    x = row_if_kept(keys[j], table, rowkey, prev, nxt, state, rst)
                    if x >= 0 and state[x] != 0:
                        hits += 1
                        _unlink(x, prev, nxt, ht, 0)
                        state[x] = 0
                        size -= 1
                        c[C_INVALIDATED] += 1
            else:
                new_state = 2 if mode == 2 else 1
                for j in range(pos, pos + k):
                    prefetch_ahead(j, nb, keys, table, rowkey, tshift, state, prev, nxt, ring, promote)
                    if capacity > 0:
                        x = row_of(keys[j], table, rowkey, prev, nxt, state, rst)
                    else:
                        x = row_if_kept(keys[j], table, rowkey, prev, nxt, state, rst)
                    if x >= 0 and state[x] != 0:
                        hits += 1
                        lru_hit(x, promote, prev, nxt, ht)
                        if new_state == 2:
                            state[x] = 2
                    elif capacity > 0:
                        ok, d, e, size = lru_admit(x, 1, new_state == 2, state, prev, nxt, ht, size, no_held, 1,
                                                   capacity)
                        destage += d
                        c[C_EVICTED] += e
                        admit += ok
        request_done(i, op[i] == 0, k, hits, admit, destage, first_miss, c, record, out_hits, out_admit, out_destage,
                     out_first_miss)
        pos += k
    st[2] = size
    st[3] = r


# -- S3-FIFO ------------------------------------------------------------------------------------------

S3_ROW = 4         # int32 per block: prev, next, where, freq (bits 0-1) | dirty (bit 2): 16 bytes
S3_STATE = 11      # st: S head, tail, M head, tail, G head, tail, S, M, G bytes, evicted yet, next restart


@hot
def s3fifo_kernel(nblk, keys, op, bypass, restart_req, first_request, node, rowkey, table, rst, ring, st, c,
                  capacity, block_bytes, mode, record, out_hits, out_admit, out_destage, out_first_miss, no_held,
                  current):
    """S3-FIFO over the next requests; the state (node, st) carries from call to call (see lru_kernel). The
    queues' shares are in bytes, as libCacheSim takes them for objects of `block_bytes` each (a block is one
    row; S's and the ghost's shares are whole bytes, not whole blocks). current: libCacheSim's current rule
    (`s3fifo`, s3_admit_current), else the original (`s3fifo-2023`, s3_admit)."""
    prev = node[:, 0]
    nxt = node[:, 1]
    where = node[:, 2]                             # 0 none, 1 S, 2 M, 3 G (ghost)
    fd = node[:, 3]                                # freq (0..3) | dirty << 2: one row per block stays 16 bytes
    ht = st[0:6]                                   # S, M, G heads and tails (at 0, 2, 4)
    qb = st[6:10]                                  # S, M, G bytes, whether the cache has evicted (current)
    cap_bytes = capacity * block_bytes
    small_cap, main_cap, ghost_cap = s3_caps(cap_bytes)   # libCacheSim's shares, in bytes
    nb = keys.shape[0]
    tshift = rst[S_TSHIFT]
    for q in range(RING):
        ring[q] = -1
    has_bypass = bypass.shape[0] > 0
    nrestart = restart_req.shape[0]
    r = st[10]
    next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
    pos = 0
    for i in range(nblk.shape[0]):
        destage = 0
        while i >= next_restart and r < nrestart and restart_req[r] - first_request <= i:
            d = empty_lists(ht, fd, where, 4, prev, nxt)
            destage += d
            c[C_RESTART_DESTAGED] += d
            qb[:] = 0
            r += 1
            next_restart = restart_req[r] - first_request if r < nrestart else _NO_RESTART
        k = nblk[i]
        byp = has_bypass and bypass[i]
        if byp:
            c[C_BYPASSED_REQS] += 1
        hits = 0
        admit = 0
        first_miss = -1
        is_read = op[i] == 0
        around = (not is_read) and (mode == 0 or byp)
        takes = not around and capacity > 0 and not (is_read and byp)      # a miss may be admitted
        for j in range(pos, pos + k):
            # a ghost hit or an invalidation unlinks a block: its neighbours' rows are needed then
            prefetch_ahead(j, nb, keys, table, rowkey, tshift, where, prev, nxt, ring, True)
            if takes:
                x = row_of(keys[j], table, rowkey, prev, nxt, where, rst)
            else:
                x = row_if_kept(keys[j], table, rowkey, prev, nxt, where, rst)
            w = where[x] if x >= 0 else 0
            if w == 1 or w == 2:
                hits += 1
                if around:
                    _unlink(x, prev, nxt, ht, 2 * w - 2)
                    qb[w - 1] -= block_bytes
                    where[x] = 0
                    fd[x] = 0
                    c[C_INVALIDATED] += 1
                else:
                    s3_hit(fd, x, (not is_read) and mode == 2)
                continue
            if first_miss < 0:
                first_miss = j - pos
            if takes:
                ghost_hit = w == 3
                if ghost_hit:
                    s3_unghost(x, where, prev, nxt, ht, qb, no_held, block_bytes)
                if current:
                    ok, d = s3_admit_current(x, block_bytes, ghost_hit, (not is_read) and mode == 2, where, fd, prev,
                                             nxt, ht, qb, no_held, block_bytes, cap_bytes, small_cap, main_cap,
                                             ghost_cap, c)
                else:
                    ok, d = s3_admit(x, block_bytes, ghost_hit, (not is_read) and mode == 2, where, fd, prev, nxt, ht,
                                     qb, no_held, block_bytes, cap_bytes, small_cap, main_cap, ghost_cap, c)
                destage += d
                if ok:
                    admit += 1
                    c[C_GHOST_HITS] += ghost_hit
        request_done(i, is_read, k, hits, admit, destage, first_miss, c, record, out_hits, out_admit, out_destage,
                     out_first_miss)
        pos += k
    st[10] = r
