"""SIEVE, 2Q, SLRU and LFU for the miss-ratio curves, each as libCacheSim's Sieve.c, TwoQ.c, SLRU.c and
LFU.c run it (libcachesim 0.3.5), with their default parameters. Same conventions as kernels.py: resumable
`@hot` replays, `kernel(code, size, na, cap, sc, *state)`, sc = [misses, byte misses, ...], the arrays from
`new_state`; a list is heads and tails in `ht` at an offset (sim/policy/lists.py: head = newest). SIEVE's
and 2Q's rules are sim/policy's (sieve.py, twoq.py), shared with the block cache.

Every policy follows libCacheSim's request path (cache_get_base): a hit updates the policy; a miss whose
object the policy cannot admit (can_insert) changes nothing more; otherwise the cache evicts until the
object fits and inserts it.
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.sim.jit import hot
from dbtier.sim.policy.lists import push_head, unlink
from dbtier.sim.policy.sieve import sieve_admit, sieve_hit
from dbtier.sim.policy.twoq import AOUT, twoq_admit, twoq_caps, twoq_hit, twoq_unghost

SLRU_SEGMENTS = 4        # libCacheSim's SLRU.c default


def new_state(policy: str, n_objects: int) -> tuple[np.ndarray, tuple]:
    n = n_objects
    sc = np.zeros(4, np.int64)

    def links() -> tuple:
        return np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    if policy == "sieve":      # nxt, prv, held, state (0 out, 1 in), visited, head and tail; sc[3] the hand
        sc[3] = -1
        return sc, (*links(), np.zeros(n, np.int64), np.zeros(n, np.int8), np.zeros(n, np.int8),
                    np.full(2, -1, np.int64))
    if policy == "twoq":       # nxt, prv, where (1 Ain, 2 Am, 3 Aout), held, heads and tails, bytes
        return sc, (*links(), np.zeros(n, np.int8), np.zeros(n, np.int64), np.full(6, -1, np.int64),
                    np.zeros(3, np.int64))
    if policy == "slru":       # nxt, prv, segment (-1 out), held, heads and tails, bytes and shares by segment
        return sc, (*links(), np.full(n, -1, np.int8), np.zeros(n, np.int64),
                    np.full(2 * SLRU_SEGMENTS, -1, np.int64), np.zeros(SLRU_SEGMENTS, np.int64),
                    np.zeros(SLRU_SEGMENTS, np.int64))
    if policy == "lfu":        # objects: nxt, prv, node, held; nodes: freq, first, last, next, prev, free list
        sc[3] = -1             # the lowest-frequency node (-1: none); sc[2] the bytes held
        m = n + 2
        return sc, (*links(), np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(m, np.int64),
                    np.full(m, -1, np.int64), np.full(m, -1, np.int64), np.full(m, -1, np.int64),
                    np.full(m, -1, np.int64), np.arange(m, dtype=np.int64), np.full(1, m, np.int64))
    raise ValueError(policy)


@hot
def sieve_replay(code, size, na, cap, sc, nxt, prv, held, state, vis, ht):
    """SIEVE as libCacheSim's Sieve.c runs it: a FIFO queue and a hand (sieve_hit, sieve_admit)."""
    misses, byte_misses, used, hand = sc[0], sc[1], sc[2], sc[3]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if state[x]:
            sieve_hit(x, vis)
            continue
        misses += 1
        byte_misses += s
        _, _, _, used, hand = sieve_admit(x, s, False, state, vis, prv, nxt, ht, hand, used, held, 0, cap)
    sc[0], sc[1], sc[2], sc[3] = misses, byte_misses, used, hand


@hot
def twoq_replay(code, size, na, cap, sc, nxt, prv, where, held, ht, qb):
    """2Q as libCacheSim's TwoQ.c runs it (twoq_hit, twoq_unghost, twoq_admit): Ain, a FIFO of 25% of the
    bytes, takes new objects; Aout remembers the ids that left Ain (50%); Am, an LRU of the rest, takes a
    request found in Aout."""
    ain_cap, aout_cap, am_cap = twoq_caps(cap)
    misses, byte_misses = sc[0], sc[1]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if twoq_hit(x, where, prv, nxt, ht):
            continue
        misses += 1
        byte_misses += s
        ghost = (where[x] & 3) == AOUT
        if ghost:
            twoq_unghost(x, where, prv, nxt, ht, qb, held, 0)
        twoq_admit(x, s, ghost, False, where, prv, nxt, ht, qb, held, 0, cap, ain_cap, aout_cap, am_cap)
    sc[0], sc[1] = misses, byte_misses


# -- SLRU, libCacheSim's SLRU.c (also W-TinyLFU's main cache) -------------------------------------------------

@numba.njit(inline="always")
def slru_evict(seg, prv, nxt, ht, qb, held, nseg):
    """The oldest of the lowest segment holding anything leaves the cache."""
    for k in range(nseg):
        if qb[k] > 0:
            t = ht[2 * k + 1]
            unlink(t, prv, nxt, ht, 2 * k)
            qb[k] -= held[t]
            seg[t] = -1
            return t
    return -1


@numba.njit(inline="always")
def slru_victim(qb, ht, nseg):
    """The object slru_evict would take (-1: none)."""
    for k in range(nseg):
        if qb[k] > 0:
            return ht[2 * k + 1]
    return -1


@numba.njit(inline="always")
def slru_hit(x, seg, prv, nxt, ht, qb, held, seg_max, nseg):
    """A hit: in the top segment, to its head; below it, up one segment to its head, and while a segment
    holds more than its share its oldest goes down one, the lowest's oldest leaving the cache (SLRU_cool,
    recursive there, a walk down and back up here)."""
    k = seg[x]
    if k == nseg - 1:
        if ht[2 * k] != x:
            unlink(x, prv, nxt, ht, 2 * k)
            push_head(x, prv, nxt, ht, 2 * k)
        return
    unlink(x, prv, nxt, ht, 2 * k)
    qb[k] -= held[x]
    k += 1
    push_head(x, prv, nxt, ht, 2 * k)
    qb[k] += held[x]
    seg[x] = k
    j = k
    while True:
        if qb[j] > seg_max[j]:
            if j == 0:
                slru_evict(seg, prv, nxt, ht, qb, held, nseg)
            else:
                t = ht[2 * j + 1]
                unlink(t, prv, nxt, ht, 2 * j)
                push_head(t, prv, nxt, ht, 2 * j - 2)
                seg[t] = j - 1
                qb[j] -= held[t]
                qb[j - 1] += held[t]
                j -= 1
        elif j == k:
            break
        else:
            j += 1


@numba.njit(inline="always")
def slru_insert(x, s, seg, prv, nxt, ht, qb, held, seg_max, nseg, cap):
    """Into the lowest segment with room for it (a higher one while the lower are full), else into the
    lowest after evicting until the cache has room (the caller has evicted for it already, except where
    W-TinyLFU moves its window's victim in)."""
    k = -1
    for j in range(nseg):
        if qb[j] + s <= seg_max[j]:
            k = j
            break
    if k < 0:
        tot = 0
        for j in range(nseg):
            tot += qb[j]
        while tot + s > cap:
            t = slru_evict(seg, prv, nxt, ht, qb, held, nseg)
            tot -= held[t]
        k = 0
    push_head(x, prv, nxt, ht, 2 * k)
    seg[x] = k
    held[x] = s
    qb[k] += s


@hot
def slru_replay(code, size, na, cap, sc, nxt, prv, seg, held, ht, qb, seg_max):
    """Segmented LRU, four segments of a quarter of the bytes each (libCacheSim's default, S4LRU): a new
    object enters the lowest segment with room; a hit moves it up one (see slru_hit); eviction takes the
    oldest of the lowest segment holding anything. Nothing larger than a segment is admitted."""
    for k in range(SLRU_SEGMENTS):
        seg_max[k] = cap // SLRU_SEGMENTS
    misses, byte_misses = sc[0], sc[1]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if seg[x] >= 0:
            slru_hit(x, seg, prv, nxt, ht, qb, held, seg_max, SLRU_SEGMENTS)
            continue
        misses += 1
        byte_misses += s
        if s > cap or s > seg_max[0]:
            continue
        tot = 0
        for k in range(SLRU_SEGMENTS):
            tot += qb[k]
        while tot + s > cap:
            tot -= held[slru_evict(seg, prv, nxt, ht, qb, held, SLRU_SEGMENTS)]
        slru_insert(x, s, seg, prv, nxt, ht, qb, held, seg_max, SLRU_SEGMENTS, cap)
    sc[0], sc[1] = misses, byte_misses


# -- LFU, libCacheSim's LFU.c ---------------------------------------------------------------------------------

@numba.njit(inline="always")
def _node_new(f, after, sc, nf, nfirst, nlast, nnext, nprev, free, nfree):
    """A node of frequency f after node `after` (-1: at the front of the node list)."""
    nfree[0] -= 1
    u = free[nfree[0]]
    nf[u] = f
    nfirst[u] = -1
    nlast[u] = -1
    nprev[u] = after
    v = nnext[after] if after >= 0 else sc[3]
    nnext[u] = v
    if v >= 0:
        nprev[v] = u
    if after >= 0:
        nnext[after] = u
    else:
        sc[3] = u
    return u


@numba.njit(inline="always")
def _node_drop(u, sc, nnext, nprev, free, nfree):
    p, q = nprev[u], nnext[u]
    if p >= 0:
        nnext[p] = q
    else:
        sc[3] = q
    if q >= 0:
        nprev[q] = p
    free[nfree[0]] = u
    nfree[0] += 1


@numba.njit(inline="always")
def _obj_out(x, u, nxt, prv, nfirst, nlast):
    p, q = prv[x], nxt[x]
    if p >= 0:
        nxt[p] = q
    else:
        nfirst[u] = q
    if q >= 0:
        prv[q] = p
    else:
        nlast[u] = p


@numba.njit(inline="always")
def _obj_append(x, u, nxt, prv, nfirst, nlast):
    t = nlast[u]
    prv[x] = t
    nxt[x] = -1
    if t >= 0:
        nxt[t] = x
    else:
        nfirst[u] = x
    nlast[u] = x


@hot
def lfu_replay(code, size, na, cap, sc, nxt, prv, node, held, nf, nfirst, nlast, nnext, nprev, free, nfree):
    """Least frequently used, frequency counted from 1 at admission (an evicted object's count is
    forgotten): evict the least frequent; among equals the one that reached that count first (libCacheSim
    keeps a FIFO list per frequency). Objects hang off frequency nodes kept in order, O(1) a request."""
    misses, byte_misses, used = sc[0], sc[1], sc[2]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        u = node[x]
        if u >= 0:
            v = nnext[u]
            if v < 0 or nf[v] != nf[u] + 1:
                v = _node_new(nf[u] + 1, u, sc, nf, nfirst, nlast, nnext, nprev, free, nfree)
            _obj_out(x, u, nxt, prv, nfirst, nlast)
            _obj_append(x, v, nxt, prv, nfirst, nlast)
            node[x] = v
            if nfirst[u] < 0:
                _node_drop(u, sc, nnext, nprev, free, nfree)
            continue
        misses += 1
        byte_misses += s
        if s > cap:
            continue
        while used + s > cap:
            h = sc[3]
            y = nfirst[h]
            _obj_out(y, h, nxt, prv, nfirst, nlast)
            node[y] = -1
            used -= held[y]
            if nfirst[h] < 0:
                _node_drop(h, sc, nnext, nprev, free, nfree)
        h = sc[3]
        if h < 0 or nf[h] != 1:
            h = _node_new(1, -1, sc, nf, nfirst, nlast, nnext, nprev, free, nfree)
        _obj_append(x, h, nxt, prv, nfirst, nlast)
        node[x] = h
        held[x] = s
        used += s
    sc[0], sc[1], sc[2] = misses, byte_misses, used
