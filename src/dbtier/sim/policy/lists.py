"""The lists every policy keeps, over prev/next arrays of object codes (or of the block cache's rows): a
list's head and tail are ht[o], ht[o + 1] (head = newest, -1 when empty). And an object's bytes: held[x], or
`unit` each when unit > 0 (the block cache's blocks).
"""

from __future__ import annotations

import numba


@numba.njit(inline="always")
def unlink(x, prev, nxt, ht, o):
    """x out of the list whose head and tail are ht[o], ht[o + 1] (prev/next arrays over object codes; an
    offset, not a slice: a slice in the hot loop costs a reference count each time)."""
    p = prev[x]
    q = nxt[x]
    if p >= 0:
        nxt[p] = q
    else:
        ht[o] = q
    if q >= 0:
        prev[q] = p
    else:
        ht[o + 1] = p
    prev[x] = -1
    nxt[x] = -1


@numba.njit(inline="always")
def push_head(x, prev, nxt, ht, o):
    h = ht[o]
    prev[x] = -1
    nxt[x] = h
    if h >= 0:
        prev[h] = x
    else:
        ht[o + 1] = x
    ht[o] = x


@numba.njit(inline="always")
def held_bytes(x, held, unit):
    return unit if unit > 0 else held[x]
