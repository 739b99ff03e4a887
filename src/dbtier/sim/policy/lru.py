"""LRU and FIFO's rules: what a hit does, what a miss admits and evicts (libCacheSim's LRU.c and FIFO.c).
"""

from __future__ import annotations

import numba

from dbtier.sim.jit import prefetch
from dbtier.sim.policy.lists import held_bytes, push_head, unlink


# LRU and FIFO, for objects and blocks alike: state[x] 0 out, 1 clean, 2 dirty (the block cache's
# write-back); one list, head = newest; `used` bytes (or blocks, unit 1) carried by the caller.
@numba.njit(inline="always")
def lru_hit(x, promote, prev, nxt, ht):
    """A hit: LRU moves the object to the head (promote); FIFO changes nothing."""
    if promote and ht[0] != x:
        unlink(x, prev, nxt, ht, 0)
        push_head(x, prev, nxt, ht, 0)


@numba.njit(inline="always")
def lru_admit(x, s, dirty, state, prev, nxt, ht, used, held, unit, cap):
    """A miss of s bytes: not admitted when larger than the cache; else the tail evicted until it fits and x
    in at the head. (admitted, destaged, evicted, used)."""
    if s > cap:
        return False, 0, 0, used
    d = 0
    e = 0
    while used + s > cap:
        t = ht[1]
        unlink(t, prev, nxt, ht, 0)
        if ht[1] >= 0:
            prefetch(state, prev[ht[1]])      # the next eviction's neighbour
        if state[t] == 2:
            d += 1
        state[t] = 0
        used -= held_bytes(t, held, unit)
        e += 1
    push_head(x, prev, nxt, ht, 0)
    state[x] = 2 if dirty else 1
    if unit == 0:
        held[x] = s
    return True, d, e, used + s
