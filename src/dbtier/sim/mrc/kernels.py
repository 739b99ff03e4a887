"""The numba kernels of the miss-ratio curves (curves.py), each resumable: a trace is fed to it a chunk at a
time, its state (arrays by object code, scalars in `sc`) kept between chunks, so memory is the cache state
and one chunk, whatever the trace's length.

LRU's, FIFO's and S3-FIFO's rules (what a hit does, what a miss admits and evicts) are sim/policy's
(lru.py, s3fifo.py), which the block cache's kernels (sim/cache/) inline too: one implementation per policy.
S3-FIFO has two admission rules: `s3_admit`, the original (`s3fifo-2023`, the one the block cache takes
today), and `s3_admit_current`, libCacheSim's since December 2024 (`s3fifo`; it needs a fourth slot in
`qb`). CLOCK, ARC and Belady are this module's only; SIEVE, 2Q, SLRU and LFU are in queues.py, LIRS in
lirs.py, W-TinyLFU in tinylfu.py. The replays and the LRU pass are `@hot` (sim/jit.py: no numba runtime,
so handing arrays to these helpers costs no reference counts): they allocate nothing, their arrays come from
`new_state` and `new_lru_pass`.

Every replay kernel has one calling convention, `kernel(code, size, na, cap, sc, *state)`: a chunk's object
codes, sizes (bytes) and next accesses (`na`, Belady only), the cache's bytes, then `sc` (int64: misses,
byte misses, bytes used, then the policy's own scalars) and the policy's arrays, from `new_state`.
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.sim.jit import hot
from dbtier.sim.policy.lists import push_head, unlink
from dbtier.sim.policy.lru import lru_admit, lru_hit
from dbtier.sim.policy.s3fifo import s3_admit_either, s3_caps, s3_hit, s3_unghost

_SMALL, _MAIN, _GHOST = 1, 2, 3   # S3-FIFO's queues


def new_state(policy: str, n_objects: int) -> tuple[np.ndarray, tuple]:
    """(sc, arrays) of an empty cache of `policy` over `n_objects` object codes."""
    sc = np.zeros(5, np.int64)
    n = n_objects

    def links() -> tuple:
        return np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    if policy in ("lru", "fifo"):   # nxt, prv, state, held, the list's head and tail
        return sc, (*links(), np.zeros(n, np.int8), np.zeros(n, np.int64), np.full(2, -1, np.int64))
    if policy == "clock":
        return sc, (*links(), np.zeros(n, np.int64), np.zeros(n, np.bool_), np.full(2, -1, np.int64))
    if policy == "belady":
        sc[3] = 1
        return sc, (np.zeros(n + 1, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64))
    if policy in ("s3fifo", "s3fifo-2023"):   # nxt, prv, where, fd, held, the lists' heads and tails, their
        # bytes (and whether the cache has evicted yet), counters
        return sc, (*links(), np.zeros(n, np.int8), np.zeros(n, np.int64), np.zeros(n, np.int64),
                    np.full(6, -1, np.int64), np.zeros(4, np.int64), np.zeros(16, np.int64))
    if policy == "arc":        # T1, T2, B1, B2: heads and tails at 0, 2, 4, 6
        return sc, (*links(), np.full(n, -1, np.int8), np.zeros(n, np.int64), np.full(8, -1, np.int64),
                    np.zeros(4, np.int64), np.zeros(1, np.float64))
    raise ValueError(policy)


# -- LRU's whole curve in one pass ---------------------------------------------------------------------------

def new_lru_pass(n_objects: int, n_caches: int, positions: int | None = None) -> tuple:
    """State of `lru_pass`: a Fenwick tree over `positions` request positions (at least one more than the
    objects: a full tree is compacted to the live objects' positions), each position's object, each object's
    position and bytes, the hits binned by cache, and sc = [next position, bytes of the live objects]."""
    t = max(positions or 2 * n_objects + 1024, n_objects + 1)
    return (np.zeros(t + 1, np.int64), np.full(t, -1, np.int64), np.full(n_objects, -1, np.int64),
            np.zeros(n_objects, np.int64), np.zeros(n_caches + 1, np.int64), np.zeros(n_caches + 1, np.int64),
            np.zeros(2, np.int64))


@hot
def lru_pass(code, size, caches, tree, obj_at, last, osz, hit_n, hit_b, sc):
    """Byte stack distances (Mattson et al., 1970, with sizes): a request's distance is the bytes of the
    distinct objects used since its object's previous request plus its own; it hits every cache (sorted
    `caches`) of at least that many bytes. Counted, not kept: hit_n[k] / hit_b[k] are the requests / bytes
    whose distance is over caches[k-1] and at most caches[k] (the last bin: first requests and misses at
    every size). An object's bytes sit at its latest request's position in the tree."""
    t_max = obj_at.shape[0]
    nc = caches.shape[0]
    t, tot = sc[0], sc[1]
    for i in range(code.shape[0]):
        if t == t_max:
            t = _compact(tree, obj_at, last, osz)
        x, s = code[i], size[i]
        p = last[x]
        k = nc
        if p >= 0:
            before = 0                       # bytes at positions 0..p
            j = p + 1
            while j > 0:
                before += tree[j]
                j -= j & -j
            d = tot - before + osz[x]
            j = p + 1
            while j <= t_max:                # the object's bytes leave position p ...
                tree[j] -= osz[x]
                j += j & -j
            tot -= osz[x]
            obj_at[p] = -1
            lo, hi = 0, nc
            while lo < hi:
                mid = (lo + hi) // 2
                if caches[mid] >= d:
                    hi = mid
                else:
                    lo = mid + 1
            k = lo
        hit_n[k] += 1
        hit_b[k] += s
        j = t + 1
        while j <= t_max:                    # ... for position t
            tree[j] += s
            j += j & -j
        tot += s
        osz[x] = s
        last[x] = t
        obj_at[t] = x
        t += 1
    sc[0], sc[1] = t, tot


@hot
def _compact(tree, obj_at, last, osz):
    """The live objects' positions renumbered 0..k-1 in order and the tree rebuilt (linear): returns k."""
    t_max = obj_at.shape[0]
    k = 0
    for p in range(t_max):
        o = obj_at[p]
        if o >= 0:
            obj_at[k] = o
            last[o] = k
            k += 1
    obj_at[k:] = -1
    tree[:] = 0
    for i in range(1, t_max + 1):
        if i <= k:
            tree[i] += osz[obj_at[i - 1]]
        up = i + (i & -i)
        if up <= t_max:
            tree[up] += tree[i]
    return k


# -- next accesses (a backward pass) and ids to codes --------------------------------------------------------

@hot
def next_back(code, first, after, out):
    """A chunk's next accesses, walked backward (chunks last to first): each request's object's next request
    as a 1-based index of the whole trace, -1 never; `after` carries each object's from chunk to chunk."""
    for i in range(code.shape[0] - 1, -1, -1):
        out[i] = after[code[i]]
        after[code[i]] = first + i + 1


@numba.njit(nogil=True, cache=True)
def _mix(x):
    """MurmurHash3's 64-bit finaliser: neighbouring ids land far apart."""
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


@numba.njit(nogil=True, cache=True)
def mix_all(ids):
    out = np.empty(ids.shape[0], np.uint64)
    for i in range(ids.shape[0]):
        out[i] = _mix(ids[i])
    return out


@numba.njit(nogil=True, cache=True)
def code_ids(ids, size, keys, vals, largest, smallest, sc):
    """Dense codes for a chunk's ids (an open-addressing table of ids -> codes, vals -1 empty, at most half
    full: the caller grows it first), a new id taking the next code (sc[0] codes so far); each object's
    largest and smallest size kept by code."""
    mask = np.uint64(keys.shape[0] - 1)
    out = np.empty(ids.shape[0], np.int64)
    n = sc[0]
    for i in range(ids.shape[0]):
        k = ids[i]
        h = _mix(k) & mask
        while vals[h] >= 0 and keys[h] != k:
            h = (h + np.uint64(1)) & mask
        c = vals[h]
        if c < 0:
            c = n
            n += 1
            keys[h] = k
            vals[h] = c
            largest[c] = size[i]
            smallest[c] = size[i]
        else:
            largest[c] = max(largest[c], size[i])
            smallest[c] = min(smallest[c], size[i])
        out[i] = c
    sc[0] = n
    return out


@hot
def rehash(keys, vals, new_keys, new_vals):
    mask = np.uint64(new_keys.shape[0] - 1)
    for i in range(keys.shape[0]):
        if vals[i] >= 0:
            h = _mix(keys[i]) & mask
            while new_vals[h] >= 0:
                h = (h + np.uint64(1)) & mask
            new_keys[h] = keys[i]
            new_vals[h] = vals[i]


# -- the replays ---------------------------------------------------------------------------------------------


@hot
def lru_replay(code, size, na, cap, sc, nxt, prv, state, held, ht):
    """LRU, request by request, on the rules shared with the block cache (lru_hit, lru_admit)."""
    return _list_replay(code, size, cap, sc, nxt, prv, state, held, ht, True)


@hot
def fifo_replay(code, size, na, cap, sc, nxt, prv, state, held, ht):
    """FIFO: LRU's list without the move to the head on a hit."""
    return _list_replay(code, size, cap, sc, nxt, prv, state, held, ht, False)


@numba.njit(inline="always")
def _list_replay(code, size, cap, sc, nxt, prv, state, held, ht, promote):
    misses, byte_misses, used = sc[0], sc[1], sc[2]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if state[x] != 0:
            lru_hit(x, promote, prv, nxt, ht)
            continue
        misses += 1
        byte_misses += s
        _, _, _, used = lru_admit(x, s, False, state, prv, nxt, ht, used, held, 0, cap)
    sc[0], sc[1], sc[2] = misses, byte_misses, used


@hot
def clock_replay(code, size, na, cap, sc, nxt, prv, held, bit, ht):
    """CLOCK (FIFO with a second chance, libCacheSim's one-bit Clock): an admitted
    object enters at the head with its bit clear; a hit sets it; eviction takes the tail, unless its bit is
    set: then the bit is cleared and the object goes back to the head."""
    misses, byte_misses, used = sc[0], sc[1], sc[2]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if held[x] > 0:
            bit[x] = True
            continue
        misses += 1
        byte_misses += s
        if s > cap:
            continue
        while used + s > cap:
            y = ht[1]
            unlink(y, prv, nxt, ht, 0)
            if bit[y]:                         # back to the head with its bit cleared
                bit[y] = False
                push_head(y, prv, nxt, ht, 0)
                continue
            used -= held[y]
            held[y] = 0
        held[x] = s
        bit[x] = False
        used += s
        push_head(x, prv, nxt, ht, 0)
    sc[0], sc[1], sc[2] = misses, byte_misses, used


@hot
def _sift_up(heap, pri, pos, i):
    """A binary max-heap of object codes (1-based, heap[0] unused) by pri[code]; a node rises past its parent
    only when strictly higher (libCacheSim's pqueue rule, which decides among equals)."""
    x = heap[i]
    while i > 1 and pri[heap[i // 2]] < pri[x]:
        heap[i] = heap[i // 2]
        pos[heap[i]] = i
        i //= 2
    heap[i] = x
    pos[x] = i


@hot
def _sift_down(heap, pri, pos, n, i):
    x = heap[i]
    while True:
        c = 2 * i
        if c >= n:
            break
        if c + 1 < n and pri[heap[c]] < pri[heap[c + 1]]:
            c += 1
        if not pri[x] < pri[heap[c]]:
            break
        heap[i] = heap[c]
        pos[heap[i]] = i
        i = c
    heap[i] = x
    pos[x] = i


@hot
def belady_replay(code, size, na, cap, sc, heap, pos, pri, held):
    """Belady's MIN: evict the object whose next request (`na`) is farthest (never again counts as farthest
    of all), a max-heap on next access updated at every hit; sc[3]: the heap's size + 1."""
    never = np.iinfo(np.int64).max
    misses, byte_misses, used, n = sc[0], sc[1], sc[2], sc[3]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        a = na[i] if na[i] >= 0 else never
        if held[x] > 0:
            old = pri[x]
            pri[x] = a
            if old < a:
                _sift_up(heap, pri, pos, pos[x])
            else:
                _sift_down(heap, pri, pos, n, pos[x])
            continue
        misses += 1
        byte_misses += s
        if s > cap:
            continue
        while used + s > cap:
            y = heap[1]
            n -= 1
            heap[1] = heap[n]
            if n > 1:
                _sift_down(heap, pri, pos, n, 1)
            used -= held[y]
            held[y] = 0
        held[x] = s
        used += s
        pri[x] = a
        heap[n] = x
        n += 1
        _sift_up(heap, pri, pos, n - 1)
    sc[0], sc[1], sc[2], sc[3] = misses, byte_misses, used, n


@hot
def s3fifo_replay(code, size, na, cap, sc, nxt, prv, where, fd, held, ht, qb, c):
    """S3-FIFO as libCacheSim's current S3FIFO.c runs it (since December 2024; libcachesim 0.3.5): the
    original below, except that until the cache first has to evict, a miss that finds the small queue full
    goes to main (s3_admit_current)."""
    _s3fifo(code, size, cap, sc, nxt, prv, where, fd, held, ht, qb, c, True)


@hot
def s3fifo2023_replay(code, size, na, cap, sc, nxt, prv, where, fd, held, ht, qb, c):
    """The original S3-FIFO (Yang et al., SOSP '23) as libCacheSim ran it until December 2024 (its
    S3FIFOv0.c; the figures its test suite asserts), on the rules shared with the block cache (s3_hit,
    s3_unghost, s3_admit above): a small FIFO of 10% of the bytes, a main FIFO of the rest, a ghost FIFO of
    ids over 90%. A miss goes to the small queue, or to main when its id was in the ghost. A hit adds one to
    the object's count. Evicting (from main when it holds more than its share or small is empty, else from
    small): small's oldest moves to main with its count reset to 0 when it was hit twice or more, else leaves
    for the ghost; main's oldest goes back to main's head with min(count, 3) - 1 while its count is 1 or
    more, else leaves. An object over the small queue's size is not admitted."""
    _s3fifo(code, size, cap, sc, nxt, prv, where, fd, held, ht, qb, c, False)


@numba.njit(inline="always")
def _s3fifo(code, size, cap, sc, nxt, prv, where, fd, held, ht, qb, c, current):
    small_cap, main_cap, ghost_cap = s3_caps(cap)
    misses, byte_misses = sc[0], sc[1]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        w = where[x]
        if w == _SMALL or w == _MAIN:
            s3_hit(fd, x, False)
            continue
        ghost_hit = w == _GHOST
        if ghost_hit:
            s3_unghost(x, where, prv, nxt, ht, qb, held, 0)
        misses += 1
        byte_misses += s
        s3_admit_either(x, s, ghost_hit, False, where, fd, prv, nxt, ht, qb, held, 0, cap, small_cap, main_cap,
                        ghost_cap, c, current)          # (s3_admit_current or s3_admit: one copy inlined, not both)
    sc[0], sc[1] = misses, byte_misses


_T1, _T2, _B1, _B2 = 0, 1, 2, 3


@hot
def _arc_move(a, b, ht, qb, nxt, prv, where, held):
    """The oldest of queue a to the head of queue b (b = -1: out of every queue)."""
    y = ht[2 * a + 1]
    unlink(y, prv, nxt, ht, 2 * a)
    qb[a] -= held[y]
    where[y] = b
    if b >= 0:
        push_head(y, prv, nxt, ht, 2 * b)
        qb[b] += held[y]


@hot
def _arc_replace(in_b2, p, ht, qb, nxt, prv, where, held):
    """ARC's REPLACE: T1's oldest to B1 when T1 holds more than its target p (or exactly p and the request
    was in B2), or T2 is empty; else T2's oldest to B2."""
    if (qb[_T1] > 0 and (qb[_T1] > p or (qb[_T1] == p and in_b2))) or qb[_T2] == 0:
        _arc_move(_T1, _B1, ht, qb, nxt, prv, where, held)
    else:
        _arc_move(_T2, _B2, ht, qb, nxt, prv, where, held)


@hot
def arc_replay(code, size, na, cap, sc, nxt, prv, where, held, ht, qb, pf):
    """ARC (Megiddo and Modha, FAST '03) in bytes, as libCacheSim's ARC.c runs it:
    T1 (seen once) and T2 (seen again) hold data, B1 and B2 their ghosts; a hit in T1 moves to T2. A request
    found in B1 raises the target p by max(|B2| / |B1|, 1) bytes (up to the cache), one in B2 lowers it by
    max(|B1| / |B2|, 1); it then enters T2, each eviction for it a REPLACE. Any other miss enters T1, and each
    eviction first trims the ghosts: when T1 + B1 would pass the cache, B1's oldest goes (then REPLACE), or T1's
    oldest when B1 is empty; otherwise B2's oldest when all four hold twice the cache, then REPLACE. (p, a
    float, in pf[0].)"""
    misses, byte_misses, p = sc[0], sc[1], pf[0]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        w = where[x]
        if w == _T1 or w == _T2:
            unlink(x, prv, nxt, ht, 2 * w)
            qb[w] -= held[x]
            push_head(x, prv, nxt, ht, 2 * _T2)
            qb[_T2] += held[x]
            where[x] = _T2
            continue
        misses += 1
        byte_misses += s
        ghost = w == _B1 or w == _B2
        if ghost:
            if w == _B1:
                p = min(p + max(qb[_B2] / qb[_B1], 1.0), float(cap))
            else:
                p = max(p - max(qb[_B1] / qb[_B2], 1.0), 0.0)
            unlink(x, prv, nxt, ht, 2 * w)
            qb[w] -= held[x]
            where[x] = -1
        if s > cap:
            continue
        in_b2 = w == _B2
        while qb[_T1] + qb[_T2] + s > cap:
            if ghost:
                _arc_replace(in_b2, p, ht, qb, nxt, prv, where, held)
            elif qb[_T1] + qb[_B1] + s > cap:
                if qb[_B1] > 0:
                    _arc_move(_B1, -1, ht, qb, nxt, prv, where, held)
                    _arc_replace(in_b2, p, ht, qb, nxt, prv, where, held)
                else:
                    _arc_move(_T1, -1, ht, qb, nxt, prv, where, held)
            else:
                if qb[_T1] + qb[_B1] + qb[_T2] + qb[_B2] >= 2 * cap and qb[_B2] > 0:
                    _arc_move(_B2, -1, ht, qb, nxt, prv, where, held)
                _arc_replace(in_b2, p, ht, qb, nxt, prv, where, held)
        q = _T2 if ghost else _T1
        push_head(x, prv, nxt, ht, 2 * q)
        held[x] = s
        qb[q] += s
        where[x] = q
    sc[0], sc[1], pf[0] = misses, byte_misses, p


