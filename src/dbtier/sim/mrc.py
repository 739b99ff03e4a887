"""Miss-ratio curves of object traces, with libCacheSim's semantics. Pure: arrays in, counts out.

An object trace asks for whole objects (objects.py). A miss admits the whole object at its byte size, and
objects are evicted, whole, until it fits; an object larger than the cache is not admitted (a miss each time
it is asked for). A cache's size is in bytes.

- **LRU, the whole curve in one pass** (Mattson et al., 1970, with sizes): LRU's content is always the
  longest run of the most recently used objects that fits, so a request hits a cache of C bytes exactly
  when the bytes of the distinct objects used since its object's previous request, plus its own, are at
  most C. Those byte stack distances come from one pass with a Fenwick tree over request positions (an
  object's bytes sit at its latest request). That holds while every object fits the cache and keeps one
  size; otherwise (an object larger than a size on the curve, an object whose size changes) that size is
  replayed request by request instead, as are the other policies.
- **FIFO**: evicts the object admitted first; a hit changes nothing.
- **CLOCK**, **S3-FIFO**, **ARC**: as libCacheSim's Clock.c, S3FIFO.c and ARC.c run them (see each kernel).
- **Belady** (MIN): evicts the object asked for again farthest ahead (never again first): the bound no
  policy beats when objects share one size, every curve read against it.

The replay kernels are also the independent reference the one-pass curve is tested against.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

import numba
import numpy as np

from dbtier.core.errors import DbtierError

POLICIES = ("lru", "fifo", "clock", "s3fifo", "arc", "belady")

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z%]*)\s*")
# binary units for KiB/MiB/... and the bare letters (as fio and dd take them), decimal for KB/MB/...
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30,
          "t": 1 << 40, "tib": 1 << 40, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
DEFAULT_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0)


def parse_sizes(text: str | None, footprint_bytes: int) -> list[int]:
    """Cache sizes in bytes from `128MiB,1GB,5%` (binary KiB/MiB/GiB/TiB, decimal KB/MB/GB/TB, a percentage of
    the trace's footprint); None: a spread across the footprint. Sorted, without repeats."""
    if text is None:
        return sorted({max(1, int(footprint_bytes * f)) for f in DEFAULT_FRACTIONS})
    out = set()
    for item in text.split(","):
        m = _SIZE.fullmatch(item)
        unit = m.group(2).lower() if m else None
        if not m or (unit != "%" and unit not in _UNITS):
            raise DbtierError(f"--sizes {text}: {item.strip()!r} is not a size (e.g. 128MiB, 1GB, 5%)",
                              "give sizes with KiB/MiB/GiB (binary), KB/MB/GB (decimal) or % of the footprint")
        v = float(m.group(1))
        n = int(footprint_bytes * v / 100) if unit == "%" else int(v * _UNITS[unit])
        if n < 1:
            raise DbtierError(f"--sizes {text}: {item.strip()!r} is less than a byte", "give larger sizes")
        out.add(n)
    return sorted(out)


def parse_policies(text: str) -> list[str]:
    """`lru,fifo` -> ['lru', 'fifo'] (any case, repeats once); an unknown name or none is refused."""
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    bad = [p for p in names if p not in POLICIES]
    if not names or bad:
        raise DbtierError(f"--policy {text}: {', '.join(bad) or 'no policy'} not among {', '.join(POLICIES)}",
                          "e.g. --policy lru,fifo,clock,s3fifo,arc,belady")
    return list(dict.fromkeys(names))


@dataclass
class Objects:
    """A trace as dense object codes 0..n_objects-1 (in order of first appearance is not needed)."""
    code: np.ndarray       # int64 per request
    size: np.ndarray       # int64 bytes per request
    n_objects: int
    max_size: int
    constant_sizes: bool   # every request of an object gives it the same size
    footprint_bytes: int   # each object at its largest size, added up


def objects_of(obj_id: np.ndarray, size: np.ndarray) -> Objects:
    uniq, code = np.unique(obj_id, return_inverse=True)
    code = code.astype(np.int64)
    size = np.asarray(size, np.int64)
    largest = np.zeros(len(uniq), np.int64)
    np.maximum.at(largest, code, size)
    smallest = np.full(len(uniq), np.iinfo(np.int64).max)
    np.minimum.at(smallest, code, size)
    return Objects(code, size, len(uniq), int(size.max(initial=0)), bool((largest == smallest).all()),
                   int(largest.sum()))


@numba.njit(nogil=True, cache=True)
def _previous(code, n_objects):
    """Each request's object's previous request (index), -1 for the first."""
    last = np.full(n_objects, -1, np.int64)
    prev = np.empty(code.shape[0], np.int64)
    for i in range(code.shape[0]):
        prev[i] = last[code[i]]
        last[code[i]] = i
    return prev


@numba.njit(nogil=True, cache=True)
def _byte_distances(prev, size):
    """Bytes of the distinct objects used since the previous request of this one's object, plus its own
    (-1: its first request). Fenwick tree over positions: an object's bytes sit at its latest request."""
    n = prev.shape[0]
    tree = np.zeros(n + 1, np.int64)
    out = np.empty(n, np.int64)
    for i in range(n):
        p = prev[i]
        if p < 0:
            out[i] = -1
        else:
            s = 0
            j = i
            while j > 0:            # positions p+1 .. i-1 (1-based p+2 .. i)
                s += tree[j]
                j -= j & -j
            j = p + 1
            while j > 0:
                s -= tree[j]
                j -= j & -j
            out[i] = s + size[p]
            j = p + 1
            while j <= n:           # the object's bytes leave position p ...
                tree[j] -= size[p]
                j += j & -j
        j = i + 1
        while j <= n:               # ... for position i
            tree[j] += size[i]
            j += j & -j
    return out


_SMALL, _MAIN, _GHOST = 1, 2, 3


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
def _lru_replay(code, size, n_objects, cap):
    """(misses, byte misses) of an LRU cache of `cap` bytes, request by request (a doubly linked list)."""
    nxt = np.full(n_objects, -1, np.int64)
    prv = np.full(n_objects, -1, np.int64)
    held = np.zeros(n_objects, np.int64)      # bytes held for the object; 0 when not in the cache
    qh = np.full(1, -1, np.int64)
    qt = np.full(1, -1, np.int64)
    used = 0
    misses, byte_misses = 0, 0
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
    return misses, byte_misses


@numba.njit(nogil=True, cache=True)
def _fifo_replay(code, size, n_objects, cap):
    """(misses, byte misses) of a FIFO cache of `cap` bytes (a ring of the admitted objects, oldest first)."""
    ring = np.empty(n_objects + 1, np.int64)
    held = np.zeros(n_objects, np.int64)
    first, count, used = 0, 0, 0
    misses, byte_misses = 0, 0
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
    return misses, byte_misses


@numba.njit(nogil=True, cache=True)
def _clock_replay(code, size, n_objects, cap):
    """(misses, byte misses) of CLOCK (FIFO with a second chance, libCacheSim's one-bit Clock): an admitted
    object enters at the head with its bit clear; a hit sets it; eviction takes the tail, unless its bit is
    set: then the bit is cleared and the object goes back to the head."""
    nxt = np.full(n_objects, -1, np.int64)
    prv = np.full(n_objects, -1, np.int64)
    held = np.zeros(n_objects, np.int64)
    bit = np.zeros(n_objects, np.bool_)
    qh = np.full(1, -1, np.int64)
    qt = np.full(1, -1, np.int64)
    used = 0
    misses, byte_misses = 0, 0
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
    return misses, byte_misses


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
def _belady_replay(code, size, nxt_access, n_objects, cap):
    """(misses, byte misses) of Belady's MIN: evict the object whose next request is farthest (never again
    counts as farthest of all), a max-heap on next access updated at every hit."""
    never = np.iinfo(np.int64).max
    heap = np.zeros(n_objects + 1, np.int64)
    pos = np.zeros(n_objects, np.int64)
    pri = np.zeros(n_objects, np.int64)
    held = np.zeros(n_objects, np.int64)
    n = 1                                   # heap size + 1
    used = 0
    misses, byte_misses = 0, 0
    for i in range(code.shape[0]):
        x, s = code[i], size[i]
        na = nxt_access[i] if nxt_access[i] >= 0 else never
        if held[x] > 0:
            old = pri[x]
            pri[x] = na
            if old < na:
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
        pri[x] = na
        heap[n] = x
        n += 1
        _sift_up(heap, pri, pos, n - 1)
    return misses, byte_misses


@numba.njit(nogil=True, cache=True)
def _s3fifo_replay(code, size, n_objects, cap):
    """(misses, byte misses) of S3-FIFO as libCacheSim's S3FIFO.c runs it (the version its test suite's
    figures come from): a small FIFO of 10% of the bytes, a main FIFO of the rest, a ghost FIFO of ids
    over 90%. A miss goes to the small queue, or to main when its id was in the ghost. A hit adds one to the
    object's count. Evicting (from main when it holds more than its share or small is empty, else from
    small): small's oldest moves to main with its count reset to 0 when it was hit twice or more, else leaves
    for the ghost; main's oldest goes back to main's head with min(count, 3) - 1 while its count is 1 or
    more, else leaves. An object over the small queue's size is not admitted."""
    small_cap = np.int64(cap * 0.1)
    main_cap = cap - small_cap
    ghost_cap = np.int64(cap * 0.9)
    nxt = np.full(n_objects, -1, np.int64)
    prv = np.full(n_objects, -1, np.int64)
    where = np.zeros(n_objects, np.int8)
    freq = np.zeros(n_objects, np.int64)
    held = np.zeros(n_objects, np.int64)
    qh = np.full(4, -1, np.int64)
    qt = np.full(4, -1, np.int64)
    qb = np.zeros(4, np.int64)
    misses, byte_misses = 0, 0
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
    return misses, byte_misses


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
def _arc_replay(code, size, n_objects, cap):
    """(misses, byte misses) of ARC (Megiddo and Modha, FAST '03) in bytes, as libCacheSim's ARC.c runs it:
    T1 (seen once) and T2 (seen again) hold data, B1 and B2 their ghosts; a hit in T1 moves to T2. A request
    found in B1 raises the target p by max(|B2| / |B1|, 1) bytes (up to the cache), one in B2 lowers it by
    max(|B1| / |B2|, 1); it then enters T2, each eviction for it a REPLACE. Any other miss enters T1, and each
    eviction first trims the ghosts: when T1 + B1 would pass the cache, B1's oldest goes (then REPLACE), or T1's
    oldest when B1 is empty; otherwise B2's oldest when all four hold twice the cache, then REPLACE."""
    nxt = np.full(n_objects, -1, np.int64)
    prv = np.full(n_objects, -1, np.int64)
    where = np.full(n_objects, -1, np.int8)
    held = np.zeros(n_objects, np.int64)
    qh = np.full(4, -1, np.int64)
    qt = np.full(4, -1, np.int64)
    qb = np.zeros(4, np.int64)
    p = 0.0
    misses, byte_misses = 0, 0
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
    return misses, byte_misses


@dataclass
class Point:
    cache_bytes: int
    requests: int
    misses: int
    bytes: int
    byte_misses: int

    def doc(self) -> dict:
        return {"cache_bytes": self.cache_bytes, "requests": self.requests, "misses": self.misses,
                "miss_ratio": self.misses / self.requests if self.requests else None, "bytes": self.bytes,
                "byte_misses": self.byte_misses,
                "byte_miss_ratio": self.byte_misses / self.bytes if self.bytes else None}


def next_requests(objs: Objects) -> np.ndarray:
    """Each request's object's next request as a 1-based index, -1 when never (oracleGeneral's field), from
    a backward pass: for traces that do not carry it."""
    return _next_requests(objs.code, objs.n_objects)


@numba.njit(nogil=True, cache=True)
def _next_requests(code, n_objects):
    after = np.full(n_objects, -1, np.int64)
    out = np.empty(code.shape[0], np.int64)
    for i in range(code.shape[0] - 1, -1, -1):
        out[i] = after[code[i]]
        after[code[i]] = i + 1
    return out


def curve(policy: str, objs: Objects, caches: Sequence[int], next_access: np.ndarray | None = None) -> list[Point]:
    """`policy`'s misses at each cache size (bytes). `next_access`: the trace's own (oracleGeneral), for
    belady; else taken from a backward pass."""
    return curves([policy], objs, caches, next_access, workers=1)[policy]


_REPLAY = {"lru": _lru_replay, "fifo": _fifo_replay, "clock": _clock_replay, "s3fifo": _s3fifo_replay,
           "arc": _arc_replay}


def curves(policies: Sequence[str], objs: Objects, caches: Sequence[int], next_access: np.ndarray | None = None,
           workers: int | None = None) -> dict[str, list[Point]]:
    """Each policy's curve; the replays (one per policy and size; LRU's one pass is one) run on `workers`
    threads (the kernels release the GIL; default: every core)."""
    policies = parse_policies(",".join(policies))
    n, total = len(objs.code), int(objs.size.sum())
    one_pass = [c for c in caches if objs.constant_sizes and objs.max_size <= c]
    nxt = None
    if "belady" in policies:
        nxt = next_access if next_access is not None else next_requests(objs)

    def lru_pass() -> dict[int, Point]:
        dist = _byte_distances(_previous(objs.code, objs.n_objects), objs.size)
        first = dist < 0
        out = {}
        for c in one_pass:
            miss = first | (dist > c)
            out[c] = Point(c, n, int(miss.sum()), total, int(objs.size[miss].sum()))
        return out

    def replay(policy: str, c: int) -> Point:
        if policy == "belady":
            m, b = _belady_replay(objs.code, objs.size, nxt, objs.n_objects, c)
        else:
            m, b = _REPLAY[policy](objs.code, objs.size, objs.n_objects, c)
        return Point(c, n, int(m), total, int(b))

    with ThreadPoolExecutor(max(1, workers or os.cpu_count() or 1), thread_name_prefix="dbtier-mrc") as pool:
        lru = pool.submit(lru_pass) if "lru" in policies and one_pass else None
        jobs = {(p, c): pool.submit(replay, p, c) for p in policies for c in caches
                if not (p == "lru" and c in one_pass)}
        done = lru.result() if lru is not None else {}
        return {p: [done[c] if (p == "lru" and c in one_pass) else jobs[(p, c)].result() for c in caches]
                for p in policies}


# -- SHARDS (Waldspurger et al., FAST '15): spatial sampling for huge traces --------------------------------

_MOD = 1 << 24


def id_hash(obj_id: np.ndarray) -> np.ndarray:
    """A well-mixed 64-bit hash of each id (MurmurHash3's finaliser): neighbouring ids land far apart."""
    x = np.asarray(obj_id, np.uint64).copy()
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(33)
        x *= np.uint64(0xFF51AFD7ED558CCD)
        x ^= x >> np.uint64(33)
        x *= np.uint64(0xC4CEB9FE1A85EC53)
        x ^= x >> np.uint64(33)
    return x


def sample(obj_id: np.ndarray, rate: float) -> np.ndarray:
    """The requests SHARDS keeps at `rate`: those whose object's hash falls under rate x 2^24 (mod 2^24), so
    an object is kept with all its requests or not at all."""
    if not 0 < rate <= 1:
        raise DbtierError(f"--sample {rate}: a rate between 0 and 1 (e.g. 0.01 for 1%)", "e.g. --sample 0.01")
    return (id_hash(obj_id) % np.uint64(_MOD)) < np.uint64(int(rate * _MOD))


@dataclass
class Sampled:
    objs: Objects          # the sampled requests
    rate: float
    requests: int          # of the whole trace
    bytes: int

    @property
    def footprint_bytes(self) -> int:
        """The whole trace's footprint, estimated from the sample's."""
        return int(self.objs.footprint_bytes / self.rate)

    @property
    def n_objects(self) -> int:
        return int(round(self.objs.n_objects / self.rate))


def sampled(obj_id: np.ndarray, size: np.ndarray, rate: float) -> Sampled:
    keep = sample(obj_id, rate)
    if not keep.any():
        raise DbtierError(f"--sample {rate}: no object of this trace falls in a {rate:g} sample",
                          "take a larger rate (or no --sample)")
    size = np.asarray(size, np.int64)
    return Sampled(objects_of(obj_id[keep], size[keep]), rate, len(obj_id), int(size.sum()))


def sampled_curves(policies: Sequence[str], smp: Sampled, caches: Sequence[int],
                   workers: int | None = None) -> dict[str, list[Point]]:
    """Estimated curves from a SHARDS sample, each cache scaled by its rate. SHARDS-adj: a curve's misses
    over the number of sampled requests expected (rate x requests), not the number drawn, which corrects
    the sample's luck in its popular objects; the estimates are given back in the whole trace's units."""
    rate, n, total = smp.rate, smp.requests, smp.bytes
    got = curves(policies, smp.objs, [max(1, int(c * rate)) for c in caches], None, workers)
    exp_n, exp_b = rate * n, rate * total
    return {p: [Point(c, n, int(round(pt.misses / exp_n * n)), total, int(round(pt.byte_misses / exp_b * total)))
                for c, pt in zip(caches, pts)] for p, pts in got.items()}
