"""S3-FIFO's rules (Yang et al., SOSP '23): its two admission rules, the original and libCacheSim's since
December 2024, and its evictions from S, M and the ghost.
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.sim.jit import prefetch
from dbtier.sim.policy.lists import held_bytes, push_head, unlink


# S3-FIFO as libCacheSim's S3FIFO.c runs it, for objects (sim/mrc/kernels.py's replays) and for blocks (the block
# cache, with its write modes) alike: where[x] 0 out, 1 S, 2 M, 3 G; fd[x] its frequency (bits 0-1, counted
# to 3: the rules only ask >= 1, >= 2 and min(freq, 3)) | dirty (bit 2, the block cache's write-back); ht the
# three lists' heads and tails (S, M, G); qb their bytes; an object's bytes held[x], or `unit` each when
# unit > 0 (blocks). c[C_EVICTED] counts what leaves the cache. A dirty object leaving returns 1 (destaged).
S3_EVICTED = 7       # = sim/cache/kernels.py's C_EVICTED


@numba.njit(inline="always")
def s3_hit(fd, x, dirty):
    f = fd[x]
    if (f & 3) < 3:
        f += 1
    if dirty:
        f |= 4
    fd[x] = f


@numba.njit(inline="always")
def s3_unghost(x, where, prev, nxt, ht, qb, held, unit):
    """A request found in the ghost: out of it first, as libCacheSim does (the eviction to come cannot push
    it out)."""
    unlink(x, prev, nxt, ht, 4)
    qb[2] -= held_bytes(x, held, unit)
    where[x] = 0


@numba.njit(inline="always")
def _s3_evict_main(where, fd, prev, nxt, ht, qb, held, unit, c):
    """M's oldest goes back to its head with min(freq, 3) - 1 while its freq is 1 or more, else leaves."""
    while qb[1] > 0:
        t = ht[3]
        f = fd[t] & 3
        unlink(t, prev, nxt, ht, 2)
        if f >= 1:
            push_head(t, prev, nxt, ht, 2)
            fd[t] = (fd[t] & 4) | (f - 1)
        else:
            where[t] = 0
            qb[1] -= held_bytes(t, held, unit)
            c[S3_EVICTED] += 1
            d = fd[t] >> 2
            fd[t] = 0
            return d
    return 0


@numba.njit(inline="always")
def _s3_evict(where, fd, prev, nxt, ht, qb, held, unit, main_cap, ghost_cap, c):
    """One eviction: from M when it holds more than its share or S is empty; else from S, whose oldest moves
    to M with its freq reset to 0 when it was hit twice or more (and the next oldest is tried), or leaves,
    its id remembered in the ghost (trimmed to its share, oldest first)."""
    if qb[1] > main_cap or qb[0] == 0:
        return _s3_evict_main(where, fd, prev, nxt, ht, qb, held, unit, c)
    while qb[0] > 0:
        t = ht[1]
        unlink(t, prev, nxt, ht, 0)
        s = held_bytes(t, held, unit)
        qb[0] -= s
        if ht[1] >= 0:
            prefetch(where, prev[ht[1]])         # the next eviction from S unlinks its neighbour
        if (fd[t] & 3) >= 2:
            push_head(t, prev, nxt, ht, 2)
            where[t] = 2
            qb[1] += s
            fd[t] &= 4
            continue
        c[S3_EVICTED] += 1
        d = fd[t] >> 2
        fd[t] = 0
        where[t] = 0
        if s <= ghost_cap:
            while qb[2] + s > ghost_cap:
                g = ht[5]
                unlink(g, prev, nxt, ht, 4)
                where[g] = 0
                qb[2] -= held_bytes(g, held, unit)
            push_head(t, prev, nxt, ht, 4)
            where[t] = 3
            qb[2] += s
        return d
    return 0


@numba.njit(inline="always")
def s3_caps(cap_bytes):
    """(S's, M's, the ghost's shares) in bytes: 10%, the rest, 90%."""
    small = np.int64(cap_bytes * 0.1)
    return small, cap_bytes - small, np.int64(cap_bytes * 0.9)


@numba.njit(inline="always")
def s3_admit(x, s, ghost_hit, dirty, where, fd, prev, nxt, ht, qb, held, unit, cap, small_cap, main_cap, ghost_cap,
             c):
    """The original S3-FIFO (SOSP '23; libCacheSim's S3FIFOv0.c, its test suite's figures; dbtier's
    `s3fifo-2023`). A miss of s bytes (after s3_unghost for a ghost hit): nothing larger than S's share is
    admitted; evict until it fits; then into M (a ghost hit) or S, unless as large as S's share.
    (admitted, destaged)."""
    return s3_admit_either(x, s, ghost_hit, dirty, where, fd, prev, nxt, ht, qb, held, unit, cap, small_cap,
                           main_cap, ghost_cap, c, False)


@numba.njit(inline="always")
def s3_admit_current(x, s, ghost_hit, dirty, where, fd, prev, nxt, ht, qb, held, unit, cap, small_cap, main_cap,
                     ghost_cap, c):
    """S3-FIFO as libCacheSim's S3FIFO.c runs it since December 2024 (libcachesim 0.3.5; dbtier's `s3fifo`):
    s3_admit, except that until the cache has first had to evict, a miss that finds S full (S's bytes at its
    share or over) goes to M instead. qb[3] remembers whether it has evicted (qb: four slots, not three)."""
    return s3_admit_either(x, s, ghost_hit, dirty, where, fd, prev, nxt, ht, qb, held, unit, cap, small_cap,
                           main_cap, ghost_cap, c, True)


@numba.njit(inline="always")
def s3_admit_either(x, s, ghost_hit, dirty, where, fd, prev, nxt, ht, qb, held, unit, cap, small_cap, main_cap,
                    ghost_cap, c, current):
    """s3_admit (current False) or s3_admit_current (True), the rule a flag: a replay that takes either
    inlines one copy, not both."""
    if s > small_cap:
        return False, 0
    d = 0
    while qb[0] + qb[1] + s > cap:
        if current:
            qb[3] = 1
        d += _s3_evict(where, fd, prev, nxt, ht, qb, held, unit, main_cap, ghost_cap, c)
    if not ghost_hit and s >= small_cap:
        return False, d
    q = 2 if ghost_hit else 1
    if current and not ghost_hit and qb[3] == 0 and qb[0] >= small_cap:
        q = 2             # S full before the first eviction: straight to M
    push_head(x, prev, nxt, ht, 2 * q - 2)
    if unit == 0:
        held[x] = s
    qb[q - 1] += s
    where[x] = q
    fd[x] = 4 if dirty else 0
    return True, d
