"""LIRS (Jiang and Zhang, SIGMETRICS '02) for the miss-ratio curves, as libCacheSim's LIRS.c runs it
(libcachesim 0.3.5): step for step, since its results depend on the order of its steps.

Three LRU lists over object codes: S (the LIRS stack: LIR objects and the HIR objects seen since the oldest
LIR, resident or not), Q (the resident HIR objects, 1% of the bytes) and NH (the non-resident HIR objects
still in S, oldest first, trimmed when S passes twice the cache). libCacheSim keeps a separate object in
each list, each with its own size and flags, and so does this port (s_*, q_*). Its byte counters are
unsigned, compared as such here (`_gt`). Same conventions as kernels.py: a resumable `@hot` replay,
`kernel(code, size, na, cap, sc, *state)`.
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.sim.jit import hot
from dbtier.sim.policy.lists import push_head, unlink

HIR_RATIO = 0.01          # Q's share of the bytes (LIRS.c's hirs_ratio)

# sc: misses, byte misses, LIR bytes, HIR bytes, the cache's bytes (LIRS.c's occupied_byte), S's bytes
_LIR, _HIR, _OCC, _SB = 2, 3, 4, 5
_SIGN = np.int64(-(1 << 63))


def new_state(n_objects: int) -> tuple[np.ndarray, tuple]:
    n = n_objects

    def links() -> tuple:
        return np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    # S: nxt, prv, in S, LIR, resident, size; Q: nxt, prv, in Q, size; NH: nxt, prv, in NH; heads and tails
    return np.zeros(6, np.int64), (*links(), np.zeros(n, np.int8), np.zeros(n, np.int8), np.zeros(n, np.int8),
                                   np.zeros(n, np.int64), *links(), np.zeros(n, np.int8), np.zeros(n, np.int64),
                                   *links(), np.zeros(n, np.int8), np.full(6, -1, np.int64))


@numba.njit(inline="always")
def _gt(a, b):
    """a > b as LIRS.c compares its counters: unsigned 64-bit."""
    return (a ^ _SIGN) > (b ^ _SIGN)


@numba.njit(inline="always")
def _to_head(x, prv, nxt, ht, o):
    if ht[o] != x:
        unlink(x, prv, nxt, ht, o)
        push_head(x, prv, nxt, ht, o)


@numba.njit(inline="always")
def _s_drop(o, sc, snx, spv, ins, ssz, ht):
    unlink(o, spv, snx, ht, 0)
    ins[o] = 0
    sc[_SB] -= ssz[o]


@numba.njit(inline="always")
def _nh_drop(o, nnx, npv, innh, ht):
    if innh[o]:
        unlink(o, npv, nnx, ht, 4)
        innh[o] = 0


@hot
def _prune(sc, snx, spv, ins, lir, res, ssz, nnx, npv, innh, ht):
    """Stack pruning: S's oldest entries go while they are not LIR (never S's newest)."""
    while ht[1] != ht[0]:
        o = ht[1]
        if lir[o]:
            break
        if not res[o]:
            _nh_drop(o, nnx, npv, innh, ht)
        _s_drop(o, sc, snx, spv, ins, ssz, ht)


@hot
def _evict_hir(sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht):
    """Q's oldest leaves the cache; in S it stays, non-resident, and joins NH. False when Q is empty."""
    o = ht[3]
    if o < 0:
        return False
    sz = qsz[o]
    sc[_HIR] -= sz
    unlink(o, qpv, qnx, ht, 2)
    inq[o] = 0
    if ins[o]:
        res[o] = 0
        if not innh[o]:
            push_head(o, npv, nnx, ht, 4)
            innh[o] = 1
    sc[_OCC] -= sz
    return True


@hot
def _evict_lir(hirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht):
    """S's oldest (an LIR object) leaves S; if it fits Q's share it stays resident as HIR at Q's head
    (Q's oldest evicted to make room); then S is pruned. False when S is empty."""
    o = ht[1]
    if o < 0:
        return False
    sz = ssz[o]
    sc[_LIR] -= sz
    _s_drop(o, sc, snx, spv, ins, ssz, ht)
    sc[_OCC] -= sz
    if not _gt(sz, hirs_limit):
        while _gt(sc[_HIR] + sz, hirs_limit):
            if not _evict_hir(sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht):
                break
        if inq[o]:
            unlink(o, qpv, qnx, ht, 2)
        push_head(o, qpv, qnx, ht, 2)
        inq[o] = 1
        qsz[o] = sz
        sc[_HIR] += sz
        sc[_OCC] += sz
    _prune(sc, snx, spv, ins, lir, res, ssz, nnx, npv, innh, ht)
    return True


@hot
def lirs_replay(code, size, na, cap, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht):
    """LIRS as LIRS.c runs it, request by request: find (both S and Q move the object to their heads; an
    LIR hit prunes S; a resident HIR hit in S becomes LIR, leaving Q, S's oldest LIR objects demoted to make
    room; a resident HIR hit only in Q re-enters S), can_insert (which already evicts: LIR objects for a
    non-resident HIR in S, HIR objects when both sets are full), evict until the cache has room, insert (a
    non-resident HIR in S becomes LIR; a new object is LIR while the LIR set has room, else resident HIR in
    S and Q), then S trimmed to twice the cache. Objects over Q's share (1%, at least one byte) are not
    admitted unless they are non-resident HIR objects in S."""
    hirs_limit = max(np.int64(1), np.int64(HIR_RATIO * cap))
    lirs_limit = cap - hirs_limit
    misses, byte_misses = sc[0], sc[1]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        in_s, in_q = ins[x], inq[x]
        if in_s:
            _to_head(x, spv, snx, ht, 0)
        if in_q:
            _to_head(x, qpv, qnx, ht, 2)
        hit = False
        if in_s:
            if lir[x]:
                _prune(sc, snx, spv, ins, lir, res, ssz, nnx, npv, innh, ht)
                hit = True
            elif res[x]:                            # a resident HIR in S: it becomes LIR
                if in_q:
                    sc[_HIR] -= qsz[x]
                    unlink(x, qpv, qnx, ht, 2)
                    inq[x] = 0
                    sc[_OCC] -= qsz[x]
                sz = ssz[x]
                while _gt(sc[_LIR] + sz, lirs_limit):
                    if not _evict_lir(hirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv,
                                      innh, ht):
                        break
                lir[x] = 1
                sc[_LIR] += sz
                sc[_OCC] += sz
                hit = True
        elif in_q:                                  # a resident HIR only in Q: back into S as HIR
            sz = qsz[x]
            while _gt(sc[_LIR] + sz, lirs_limit):
                if not _evict_lir(hirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv,
                                  innh, ht):
                    break
            if not ins[x]:
                push_head(x, spv, snx, ht, 0)
                ins[x] = 1
                ssz[x] = sz
                sc[_SB] += sz
            lir[x] = 0
            res[x] = 1
            hit = True
        if not hit:
            misses += 1
            byte_misses += s
            if _admit(x, s, cap, hirs_limit, lirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz,
                      nnx, npv, innh, ht):
                _insert(x, s, lirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, ht)
        # limitStack: S at most twice the cache, NH's oldest dropped from S first
        while _gt(sc[_SB], 2 * cap):
            o = ht[5]
            if o < 0:
                break
            if ins[o]:
                _s_drop(o, sc, snx, spv, ins, ssz, ht)
            _nh_drop(o, nnx, npv, innh, ht)
    sc[0], sc[1] = misses, byte_misses


@hot
def _admit(x, s, cap, hirs_limit, lirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv,
           innh, ht):
    """can_insert (with its evictions), then the evictions until the cache has room (LIRS_evict). False:
    not admitted."""
    if s > cap:
        return False
    if ins[x] and not lir[x] and not res[x]:        # a non-resident HIR in S
        while _gt(sc[_LIR] + ssz[x], lirs_limit):
            if not _evict_lir(hirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh,
                              ht):
                break
        _nh_drop(x, nnx, npv, innh, ht)
    elif not ins[x] and not inq[x]:
        if _gt(s, lirs_limit) or _gt(s, hirs_limit):
            return False
        if _gt(sc[_LIR] + s, lirs_limit) and _gt(sc[_HIR] + s, hirs_limit):
            while _gt(sc[_HIR] + s, hirs_limit):
                if not _evict_hir(sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht):
                    break
    while _gt(sc[_OCC] + s, cap):
        before = sc[_OCC]
        if ins[x] and not lir[x] and not res[x]:
            while not _gt(hirs_limit, sc[_HIR]):
                if not _evict_hir(sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht):
                    break
            _evict_lir(hirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht)
        elif not ins[x] and not inq[x]:
            if _gt(sc[_LIR] + s, lirs_limit) and _gt(sc[_HIR] + s, hirs_limit):
                _evict_hir(sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, nnx, npv, innh, ht)
        if sc[_OCC] == before:       # LIRS.c would loop for ever here; never seen on a trace
            break
    return True


@hot
def _insert(x, s, lirs_limit, sc, snx, spv, ins, lir, res, ssz, qnx, qpv, inq, qsz, ht):
    if ins[x] and not lir[x] and not res[x]:        # a non-resident HIR in S becomes LIR (at S's head already)
        lir[x] = 1
        res[x] = 1
        sc[_LIR] += ssz[x]
        sc[_OCC] += ssz[x]
    elif not ins[x] and not inq[x]:
        push_head(x, spv, snx, ht, 0)
        ins[x] = 1
        ssz[x] = s
        sc[_SB] += s
        res[x] = 1
        if not _gt(sc[_LIR] + s, lirs_limit):        # the LIR set has room: LIR
            lir[x] = 1
            sc[_LIR] += s
        else:                                       # else resident HIR, in S and Q
            lir[x] = 0
            push_head(x, qpv, qnx, ht, 2)
            inq[x] = 1
            qsz[x] = s
            sc[_HIR] += s
        sc[_OCC] += s
