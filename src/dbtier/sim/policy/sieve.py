"""SIEVE's rules (Zhang et al., NSDI '24) as libCacheSim's Sieve.c runs them: a FIFO queue and a hand.
"""

from __future__ import annotations

import numba

from dbtier.sim.policy.lists import held_bytes, push_head, unlink


@numba.njit(inline="always")
def sieve_hit(x, vis):
    """A hit marks the object visited."""
    vis[x] = 1


@numba.njit(inline="always")
def sieve_admit(x, s, dirty, state, vis, prev, nxt, ht, hand, used, held, unit, cap):
    """A miss of s bytes (state[x]: 0 out, 1 clean, 2 dirty): not admitted when larger than the cache. To
    evict, the hand (from the tail at first, or when it has passed the head) walks toward the head clearing
    the visited marks it passes (wrapping to the tail) and evicts the first unvisited object, then rests on
    that object's newer neighbour. x enters at the head unvisited. (admitted, destaged, evicted, used, hand)."""
    if s > cap:
        return False, 0, 0, used, hand
    d = 0
    e = 0
    while used + s > cap:
        o = hand if hand >= 0 else ht[1]
        while vis[o]:
            vis[o] = 0
            o = prev[o] if prev[o] >= 0 else ht[1]
        hand = prev[o]
        unlink(o, prev, nxt, ht, 0)
        if state[o] == 2:
            d += 1
        state[o] = 0
        used -= held_bytes(o, held, unit)
        e += 1
    push_head(x, prev, nxt, ht, 0)
    state[x] = 2 if dirty else 1
    vis[x] = 0
    if unit == 0:
        held[x] = s
    return True, d, e, used + s, hand
