"""The numba kernels of the miss-ratio curves (mrc.py), each resumable: a trace is fed to it a chunk at a
time, its state (arrays by object code, scalars in `sc`) kept between chunks, so memory is the cache state
and one chunk, whatever the trace's length.

Every replay kernel has one calling convention, `kernel(code, size, na, cap, sc, *state)`: a chunk's object
codes, sizes (bytes) and next accesses (`na`, Belady only), the cache's bytes, then `sc` (int64: misses,
byte misses, bytes used, then the policy's own scalars) and the policy's arrays, from `new_state`.
"""

from __future__ import annotations

import numba
import numpy as np

_SMALL, _MAIN, _GHOST = 1, 2, 3   # S3-FIFO's queues


def new_state(policy: str, n_objects: int) -> tuple[np.ndarray, tuple]:
    """(sc, arrays) of an empty cache of `policy` over `n_objects` object codes."""
    sc = np.zeros(5, np.int64)
    n = n_objects

    def links() -> tuple:
        return np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    def queues(k: int) -> tuple:
        return np.full(k, -1, np.int64), np.full(k, -1, np.int64)

    if policy == "lru":
        return sc, (*links(), np.zeros(n, np.int64), *queues(1))
    if policy == "fifo":
        return sc, (np.empty(n + 1, np.int64), np.zeros(n, np.int64))
    if policy == "clock":
        return sc, (*links(), np.zeros(n, np.int64), np.zeros(n, np.bool_), *queues(1))
    if policy == "belady":
        sc[3] = 1
        return sc, (np.zeros(n + 1, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64))
    if policy == "s3fifo":
        return sc, (*links(), np.zeros(n, np.int8), np.zeros(n, np.int64), np.zeros(n, np.int64), *queues(4),
                    np.zeros(4, np.int64))
    if policy == "arc":
        return sc, (*links(), np.full(n, -1, np.int8), np.zeros(n, np.int64), *queues(4), np.zeros(4, np.int64),
                    np.zeros(1, np.float64))
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


@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
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

@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
def _push(q, x, nxt, prv, qh, qt):
    """Object x to the head (newest end) of queue q (linked lists over object codes: an object is in one
    queue at most)."""
    prv[x] = -1
    nxt[x] = qh[q]
    if qh[q] >= 0:
        prv[qh[q]] = x
    qh[q] = x
    if qt[q] < 0:
        qt[q] = x


@numba.njit(nogil=True, cache=True)
def _unlink(q, x, nxt, prv, qh, qt):
    p, n = prv[x], nxt[x]
    if p >= 0:
        nxt[p] = n
    else:
        qh[q] = n
    if n >= 0:
        prv[n] = p
    else:
        qt[q] = p
    prv[x] = -1
    nxt[x] = -1


@numba.njit(nogil=True, cache=True)
def lru_replay(code, size, na, cap, sc, nxt, prv, held, qh, qt):
    """LRU, request by request (a doubly linked list; `held`: an object's bytes in the cache, 0 when out)."""
    misses, byte_misses, used = sc[0], sc[1], sc[2]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if held[x] > 0:              # to the front
            _unlink(0, x, nxt, prv, qh, qt)
            _push(0, x, nxt, prv, qh, qt)
            continue
        misses += 1
        byte_misses += s
        if s > cap:
            continue
        while used + s > cap:       # evict from the tail
            y = qt[0]
            _unlink(0, y, nxt, prv, qh, qt)
            used -= held[y]
            held[y] = 0
        held[x] = s
        used += s
        _push(0, x, nxt, prv, qh, qt)
    sc[0], sc[1], sc[2] = misses, byte_misses, used


@numba.njit(nogil=True, cache=True)
def fifo_replay(code, size, na, cap, sc, ring, held):
    """FIFO (a ring of the admitted objects, oldest first; its start and length in sc[3], sc[4])."""
    misses, byte_misses, used, first, count = sc[0], sc[1], sc[2], sc[3], sc[4]
    m = ring.shape[0]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if held[x] > 0:
            continue
        misses += 1
        byte_misses += s
        if s > cap:
            continue
        while used + s > cap:
            y = ring[first]
            first = (first + 1) % m
            count -= 1
            used -= held[y]
            held[y] = 0
        ring[(first + count) % m] = x
        count += 1
        held[x] = s
        used += s
    sc[0], sc[1], sc[2], sc[3], sc[4] = misses, byte_misses, used, first, count


@numba.njit(nogil=True, cache=True)
def clock_replay(code, size, na, cap, sc, nxt, prv, held, bit, qh, qt):
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
            y = qt[0]
            _unlink(0, y, nxt, prv, qh, qt)
            if bit[y]:                         # back to the head with its bit cleared
                bit[y] = False
                _push(0, y, nxt, prv, qh, qt)
                continue
            used -= held[y]
            held[y] = 0
        held[x] = s
        bit[x] = False
        used += s
        _push(0, x, nxt, prv, qh, qt)
    sc[0], sc[1], sc[2] = misses, byte_misses, used


@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
def s3fifo_replay(code, size, na, cap, sc, nxt, prv, where, freq, held, qh, qt, qb):
    """S3-FIFO as libCacheSim's S3FIFO.c runs it (the version its test suite's
    figures come from): a small FIFO of 10% of the bytes, a main FIFO of the rest, a ghost FIFO of ids
    over 90%. A miss goes to the small queue, or to main when its id was in the ghost. A hit adds one to the
    object's count. Evicting (from main when it holds more than its share or small is empty, else from
    small): small's oldest moves to main with its count reset to 0 when it was hit twice or more, else leaves
    for the ghost; main's oldest goes back to main's head with min(count, 3) - 1 while its count is 1 or
    more, else leaves. An object over the small queue's size is not admitted."""
    small_cap = np.int64(cap * 0.1)
    main_cap = cap - small_cap
    ghost_cap = np.int64(cap * 0.9)
    misses, byte_misses = sc[0], sc[1]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        w = where[x]
        if w == _SMALL or w == _MAIN:
            freq[x] += 1
            continue
        ghost_hit = w == _GHOST
        if ghost_hit:
            _unlink(_GHOST, x, nxt, prv, qh, qt)
            qb[_GHOST] -= held[x]
            where[x] = 0
        misses += 1
        byte_misses += s
        if s > small_cap:
            continue
        while qb[_SMALL] + qb[_MAIN] + s > cap:
            if qb[_MAIN] > main_cap or qb[_SMALL] == 0:
                while qb[_MAIN] > 0:
                    y = qt[_MAIN]
                    f = freq[y]
                    _unlink(_MAIN, y, nxt, prv, qh, qt)
                    if f >= 1:
                        _push(_MAIN, y, nxt, prv, qh, qt)
                        freq[y] = min(f, 3) - 1
                    else:
                        qb[_MAIN] -= held[y]
                        where[y] = 0
                        break
            else:
                while qb[_SMALL] > 0:
                    y = qt[_SMALL]
                    _unlink(_SMALL, y, nxt, prv, qh, qt)
                    qb[_SMALL] -= held[y]
                    if freq[y] >= 2:
                        _push(_MAIN, y, nxt, prv, qh, qt)
                        qb[_MAIN] += held[y]
                        where[y] = _MAIN
                        freq[y] = 0
                        continue
                    where[y] = 0
                    if held[y] <= ghost_cap:
                        while qb[_GHOST] + held[y] > ghost_cap:
                            z = qt[_GHOST]
                            _unlink(_GHOST, z, nxt, prv, qh, qt)
                            qb[_GHOST] -= held[z]
                            where[z] = 0
                        _push(_GHOST, y, nxt, prv, qh, qt)
                        qb[_GHOST] += held[y]
                        where[y] = _GHOST
                    break
        if not ghost_hit and s >= small_cap:
            continue             # (libCacheSim evicts, then does not insert one the size of the small queue)
        q = _MAIN if ghost_hit else _SMALL
        _push(q, x, nxt, prv, qh, qt)
        held[x] = s
        qb[q] += s
        where[x] = q
        freq[x] = 0
    sc[0], sc[1] = misses, byte_misses


_T1, _T2, _B1, _B2 = 0, 1, 2, 3


@numba.njit(nogil=True, cache=True)
def _arc_move(a, b, qh, qt, qb, nxt, prv, where, held):
    """The oldest of queue a to the head of queue b (b = -1: out of every queue)."""
    y = qt[a]
    _unlink(a, y, nxt, prv, qh, qt)
    qb[a] -= held[y]
    where[y] = b
    if b >= 0:
        _push(b, y, nxt, prv, qh, qt)
        qb[b] += held[y]


@numba.njit(nogil=True, cache=True)
def _arc_replace(in_b2, p, qh, qt, qb, nxt, prv, where, held):
    """ARC's REPLACE: T1's oldest to B1 when T1 holds more than its target p (or exactly p and the request
    was in B2), or T2 is empty; else T2's oldest to B2."""
    if (qb[_T1] > 0 and (qb[_T1] > p or (qb[_T1] == p and in_b2))) or qb[_T2] == 0:
        _arc_move(_T1, _B1, qh, qt, qb, nxt, prv, where, held)
    else:
        _arc_move(_T2, _B2, qh, qt, qb, nxt, prv, where, held)


@numba.njit(nogil=True, cache=True)
def arc_replay(code, size, na, cap, sc, nxt, prv, where, held, qh, qt, qb, pf):
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
            _unlink(w, x, nxt, prv, qh, qt)
            qb[w] -= held[x]
            _push(_T2, x, nxt, prv, qh, qt)
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
            _unlink(w, x, nxt, prv, qh, qt)
            qb[w] -= held[x]
            where[x] = -1
        if s > cap:
            continue
        in_b2 = w == _B2
        while qb[_T1] + qb[_T2] + s > cap:
            if ghost:
                _arc_replace(in_b2, p, qh, qt, qb, nxt, prv, where, held)
            elif qb[_T1] + qb[_B1] + s > cap:
                if qb[_B1] > 0:
                    _arc_move(_B1, -1, qh, qt, qb, nxt, prv, where, held)
                    _arc_replace(in_b2, p, qh, qt, qb, nxt, prv, where, held)
                else:
                    _arc_move(_T1, -1, qh, qt, qb, nxt, prv, where, held)
            else:
                if qb[_T1] + qb[_B1] + qb[_T2] + qb[_B2] >= 2 * cap and qb[_B2] > 0:
                    _arc_move(_B2, -1, qh, qt, qb, nxt, prv, where, held)
                _arc_replace(in_b2, p, qh, qt, qb, nxt, prv, where, held)
        q = _T2 if ghost else _T1
        _push(q, x, nxt, prv, qh, qt)
        held[x] = s
        qb[q] += s
        where[x] = q
    sc[0], sc[1], pf[0] = misses, byte_misses, p


