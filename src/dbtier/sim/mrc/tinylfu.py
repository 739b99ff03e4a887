"""W-TinyLFU (Einziger et al., ACM ToS '17; Caffeine's policy) for the miss-ratio curves, as libCacheSim's
WTinyLFU.c runs it (libcachesim 0.3.5) with its defaults: a window LRU of 1% of the bytes, a main SLRU of the
rest in two segments of 1:4 (queues.py's SLRU rules), and TinyLFU's admission by a counting Bloom filter.

The filter is libCacheSim's minimalIncrementCBF: sized for as many entries as the main cache has bytes (a C
`int`: a main cache of 2 GiB or more wraps, as there) at a 0.001 error, so 10 hashes over up to INT_MAX
counters, each index (a + i b) mod 2^32 mod counters from the two 32-bit halves of XXH64 of the object's
8-byte id under two seeds; adding increments all ten counters, the estimate is their least; all counters
halve after 32 x the main cache's bytes of main-cache hits. libCacheSim allocates the counters whole
(lazily, by calloc); here only the counters some object of the trace hashes to exist (unsigned 32-bit, as
there), numbered densely (`new_state`), each object's ten kept by its code: 80 bytes an object at most.
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np

from dbtier.sim.jit import hot
from dbtier.sim.policy.lists import push_head, unlink
from dbtier.sim.mrc.queues import slru_evict, slru_hit, slru_insert, slru_victim

WINDOW_RATIO = 0.01
MAIN_SEGMENTS = (1, 4)                 # the main SLRU's "seg-size=1:4"
CBF_ERROR = 0.001
_SEEDS = (0x12345678, 0x12344321)     # libCacheSim's HASH_SEED0, HASH_SEED1
_INT_MAX = 2**31 - 1

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)


@numba.njit(inline="always")
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@numba.njit(cache=True)
def xxh64_u64(key, seed):
    """XXH64 of one 8-byte little-endian key (xxHash's short-input path: one 8-byte round, the avalanche)."""
    h = np.uint64(seed) + _P5 + np.uint64(8)
    k = _rotl(key * _P2, 31) * _P1
    h ^= k
    h = _rotl(h, 27) * _P1 + _P4
    h ^= h >> np.uint64(33)
    h *= _P2
    h ^= h >> np.uint64(29)
    h *= _P3
    h ^= h >> np.uint64(32)
    return h


def window_main_bytes(cap_bytes: int) -> tuple[int, int]:
    """(the window's, the main cache's) bytes: cache_size x 0.01 truncated, and the rest."""
    w = int(cap_bytes * WINDOW_RATIO)
    return w, cap_bytes - w


def cbf_shape(main_bytes: int) -> tuple[int, int]:
    """(hashes, counters) of minimalIncrementCBF_init(entries = (int) main_bytes, error 0.001)."""
    entries = main_bytes & 0xFFFFFFFF            # C's conversion to int: modulo 2^32, signed
    if entries >= 2**31:
        entries -= 2**32
    bpe = -math.log(CBF_ERROR) / 0.480453013918201
    hashes = int(math.ceil(0.693147180559945 * bpe))
    counters = int(min(math.ceil(bpe * entries), _INT_MAX))
    if counters < hashes:
        counters = 2 * hashes
    return hashes, counters


@numba.njit(cache=True)
def _indices(ids, hashes, counters):
    """Each object's counter indices, as minimalIncrementCBF computes them (unsigned 32-bit)."""
    out = np.empty((ids.shape[0], hashes), np.uint32)
    m = np.uint32(counters)
    for c in range(ids.shape[0]):
        a = np.uint32(xxh64_u64(ids[c], _SEEDS[0]) & np.uint64(0xFFFFFFFF))
        b = np.uint32(xxh64_u64(ids[c], _SEEDS[1]) & np.uint64(0xFFFFFFFF))
        for i in range(hashes):
            out[c, i] = np.uint32(a + np.uint32(i) * b) % m
    return out


_LOCK = threading.Lock()


def _counters_of(ids: np.ndarray, hashes: int, counters: int) -> tuple[np.ndarray, int]:
    """(each object's counters, densely numbered; how many there are)."""
    raw = _indices(np.ascontiguousarray(ids, np.uint64), hashes, counters)
    if counters <= 2 * raw.size:                 # few counters: kept whole, as libCacheSim does
        return raw.astype(np.int32), counters
    uniq, inv = np.unique(raw.ravel(), return_inverse=True)
    return inv.astype(np.int32).reshape(raw.shape), len(uniq)


def new_state(ids: np.ndarray, cap_bytes: int, memo: dict | None = None) -> tuple[np.ndarray, tuple]:
    """An empty W-TinyLFU of `cap_bytes` over objects whose ids (by code) are `ids`: the filter's counters
    each object hashes to, numbered densely (every counter none hashes to stays 0 in libCacheSim too).
    `memo` (one per trace) keeps the last numbering: sizes whose main caches pass about 150 MB all have
    INT_MAX counters, so one numbering serves them all."""
    n = len(ids)
    _, main = window_main_bytes(cap_bytes)
    hashes, counters = cbf_shape(main)
    with _LOCK:                                  # (replays run on threads: one numbering at a time)
        key = ("wtinylfu", hashes, counters)
        got = memo.get(key) if memo is not None else None
        if got is None:
            got = _counters_of(ids, hashes, counters)
            if memo is not None:
                memo.clear()
                memo[key] = got
    idx, k = got

    def links() -> tuple:
        return np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    # sc: misses, byte misses, the window's bytes, main hits since the last halving
    # window: nxt, prv, in it, size; main: nxt, prv, segment, size, heads and tails, bytes and shares by
    # segment; the filter: each object's counters, the counters; the window's head and tail
    return np.zeros(4, np.int64), (*links(), np.zeros(n, np.int8), np.zeros(n, np.int64), *links(),
                                   np.full(n, -1, np.int8), np.zeros(n, np.int64), np.full(4, -1, np.int64),
                                   np.zeros(2, np.int64), np.zeros(2, np.int64), idx, np.zeros(k, np.uint32),
                                   np.full(2, -1, np.int64))


@numba.njit(inline="always")
def _estimate(x, idx, cnt):
    m = cnt[idx[x, 0]]
    for i in range(1, idx.shape[1]):
        m = min(m, cnt[idx[x, i]])
    return m


@numba.njit(inline="always")
def _add(x, idx, cnt):
    """Every one of the object's counters up by one (a counter it hashes to twice, by two)."""
    for i in range(idx.shape[1]):
        cnt[idx[x, i]] += 1


@hot
def wtinylfu_replay(code, size, na, cap, sc, wnx, wpv, inw, wsz, mnx, mpv, seg, msz, mht, mqb, seg_max, idx, cnt,
                    wht):
    """W-TinyLFU as WTinyLFU.c runs it. A hit in the window moves the object to its head; a hit in the main
    SLRU promotes it there and counts it in the filter. A miss enters the window's head (counted), when it
    fits the window's share and the main cache's first segment; to make room, the window's oldest moves to
    the main cache while that has room; else it replaces the main cache's victim (the oldest of its lowest
    segment) when the filter estimates it more frequent, or leaves; each candidate counted again; an empty
    window evicts from the main cache."""
    w_cap = np.int64(cap * WINDOW_RATIO)
    main_cap = cap - w_cap
    seg_max[0] = np.int64(MAIN_SEGMENTS[0] / (MAIN_SEGMENTS[0] + MAIN_SEGMENTS[1]) * main_cap)
    seg_max[1] = np.int64(MAIN_SEGMENTS[1] / (MAIN_SEGMENTS[0] + MAIN_SEGMENTS[1]) * main_cap)
    halve_after = 32 * main_cap
    misses, byte_misses, wb, counted = sc[0], sc[1], sc[2], sc[3]
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        if inw[x]:
            if wht[0] != x:
                unlink(x, wpv, wnx, wht, 0)
                push_head(x, wpv, wnx, wht, 0)
            continue
        if seg[x] >= 0:
            slru_hit(x, seg, mpv, mnx, mht, mqb, msz, seg_max, 2)
            _add(x, idx, cnt)
            counted += 1
            if counted >= halve_after:
                counted = 0
                for k in range(cnt.shape[0]):
                    cnt[k] >>= 1
            continue
        misses += 1
        byte_misses += s
        if s > cap or s > w_cap or s > main_cap or s > seg_max[0]:
            continue
        while wb + mqb[0] + mqb[1] + s > cap:
            while True:                               # WTinyLFU_evict: until something leaves the cache
                if wb == 0:
                    slru_evict(seg, mpv, mnx, mht, mqb, msz, 2)
                    break
                v = wht[1]
                vs = wsz[v]
                gone = False
                if mqb[0] + mqb[1] + vs <= main_cap:
                    unlink(v, wpv, wnx, wht, 0)
                    inw[v] = 0
                    wb -= vs
                    slru_insert(v, vs, seg, mpv, mnx, mht, mqb, msz, seg_max, 2, main_cap)
                elif _estimate(v, idx, cnt) > _estimate(slru_victim(mqb, mht, 2), idx, cnt):
                    slru_evict(seg, mpv, mnx, mht, mqb, msz, 2)
                    unlink(v, wpv, wnx, wht, 0)
                    inw[v] = 0
                    wb -= vs
                    slru_insert(v, vs, seg, mpv, mnx, mht, mqb, msz, seg_max, 2, main_cap)
                    gone = True           # the main cache's victim left (libcachesim 0.3.5 ends the eviction)
                else:
                    unlink(v, wpv, wnx, wht, 0)
                    inw[v] = 0
                    wb -= vs
                    gone = True
                _add(v, idx, cnt)
                if gone:
                    break
        push_head(x, wpv, wnx, wht, 0)
        inw[x] = 1
        wsz[x] = s
        wb += s
        _add(x, idx, cnt)
    sc[0], sc[1], sc[2], sc[3] = misses, byte_misses, wb, counted
