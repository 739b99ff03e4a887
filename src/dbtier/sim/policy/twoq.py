"""2Q's rules (Johnson and Shasha, VLDB '94) as libCacheSim's TwoQ.c runs them, with its defaults.
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.sim.policy.lists import held_bytes, push_head, unlink


# where[x] & 3 is the queue (0 out, 1 Ain, 2 Am, 3 Aout: lists at ht[0], ht[2], ht[4], their bytes qb[0..2]);
# bit 2 (4) marks a dirty block
AIN, AM, AOUT = 1, 2, 3
# libCacheSim's TwoQ.c defaults: Ain's and Aout's shares of the cache's bytes
AIN_RATIO, AOUT_RATIO = 0.25, 0.5


@numba.njit(inline="always")
def twoq_caps(cap_bytes):
    """(Ain's, Aout's, Am's shares) in bytes: 25% and 50% truncated, as TwoQ.c takes them, Am the rest."""
    ain = np.int64(cap_bytes * AIN_RATIO)
    return ain, np.int64(cap_bytes * AOUT_RATIO), cap_bytes - ain


@numba.njit(inline="always")
def twoq_hit(x, where, prev, nxt, ht):
    """True on a hit: in Ain nothing moves (a FIFO); in Am the object moves to the head (an LRU)."""
    q = where[x] & 3
    if q == AIN:
        return True
    if q == AM:
        if ht[2] != x:
            unlink(x, prev, nxt, ht, 2)
            push_head(x, prev, nxt, ht, 2)
        return True
    return False


@numba.njit(inline="always")
def twoq_unghost(x, where, prev, nxt, ht, qb, held, unit):
    """A request found in Aout: out of it first (whether or not it is then admitted), as TwoQ.c does."""
    unlink(x, prev, nxt, ht, 4)
    qb[2] -= held_bytes(x, held, unit)
    where[x] = 0


@numba.njit(inline="always")
def _twoq_drop(q, where, prev, nxt, ht, qb, held, unit):
    """Queue q's oldest out of it: (it, whether it was dirty)."""
    t = ht[2 * q - 1]
    unlink(t, prev, nxt, ht, 2 * q - 2)
    qb[q - 1] -= held_bytes(t, held, unit)
    d = (where[t] & 4) != 0
    where[t] = 0
    return t, d


@numba.njit(inline="always")
def twoq_admit(x, s, ghost_hit, dirty, where, prev, nxt, ht, qb, held, unit, cap, ain_cap, aout_cap, am_cap):
    """A miss of s bytes (after twoq_unghost for a request found in Aout): nothing larger than Ain's share is
    admitted. Evict until it fits: Ain's oldest to Aout (a FIFO of ids, trimmed oldest first to its share,
    which must hold it) while Ain holds more than its share, else Am's oldest. Then a request found in Aout
    enters Am (Am evicting its own oldest until x fits its share), any other Ain (which may pass its share
    until the cache is full). (admitted, destaged, evicted)."""
    if s > ain_cap or s > cap:
        return False, 0, 0
    d = 0
    e = 0
    while qb[0] + qb[1] + s > cap:
        e += 1
        if qb[0] > ain_cap:
            t, dt = _twoq_drop(AIN, where, prev, nxt, ht, qb, held, unit)
            d += dt
            st = held_bytes(t, held, unit)
            if st <= aout_cap:
                while qb[2] + st > aout_cap:
                    _twoq_drop(AOUT, where, prev, nxt, ht, qb, held, unit)
                push_head(t, prev, nxt, ht, 4)
                where[t] = AOUT
                qb[2] += st
        else:
            _, dt = _twoq_drop(AM, where, prev, nxt, ht, qb, held, unit)
            d += dt
    q = AIN
    if ghost_hit:
        q = AM
        while qb[1] + s > am_cap:
            _, dt = _twoq_drop(AM, where, prev, nxt, ht, qb, held, unit)
            d += dt
            e += 1
    push_head(x, prev, nxt, ht, 2 * q - 2)
    where[x] = q | (4 if dirty else 0)
    if unit == 0:
        held[x] = s
    qb[q - 1] += s
    return True, d, e

