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
- **CLOCK**, **S3-FIFO**, **SIEVE**, **2Q**, **SLRU**, **LFU**, **ARC**, **LIRS**, **W-TinyLFU**: as
  libCacheSim's Clock.c, S3FIFO.c, Sieve.c, TwoQ.c, SLRU.c, LFU.c, ARC.c, LIRS.c and WTinyLFU.c run them in
  libcachesim 0.3.5, with its default parameters (policies.ABOUT; the kernels say each rule), miss for
  miss (tested against that package); `s3fifo-2023` is the original S3-FIFO (libCacheSim's S3FIFOv0.c, the
  figures its test suite asserts), which `s3fifo` was until it followed libcachesim 0.3.5.
- **Belady** (MIN): evicts the object asked for again farthest ahead (never again first): the bound no
  policy beats when objects share one size, every curve read against it.

The replay kernels are also the independent reference the one-pass curve is tested against. The kernels
(kernels.py, queues.py, lirs.py, tinylfu.py; policies.py names them) read a trace a
chunk at a time, from memory (`Objects`) or from the codes spill.py wrote (`Spill`): memory is the
running replays' state and a chunk. Block traces come as objects of one block each
(spill.BlockObjects); the block cache (sim/cache/) runs the same LRU and FIFO rules, and S3-FIFO's
original ones (`s3fifo-2023` here).
"""

from __future__ import annotations

import abc
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.mrc import kernels as K
from dbtier.sim.mrc import policies as P

POLICIES = P.POLICIES

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z%]*)\s*")
# binary units for KiB/MiB/... and the bare letters (as fio and dd take them), decimal for KB/MB/...
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30,
          "t": 1 << 40, "tib": 1 << 40, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
CHUNK = 1 << 20            # requests handed to a kernel at a time
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


_ALIASES = {"2q": "twoq", "w-tinylfu": "wtinylfu", "s3-fifo": "s3fifo"}


def parse_policies(text: str) -> list[str]:
    """`lru,fifo` -> ['lru', 'fifo'] (any case, repeats once; `all`: every policy; 2q, w-tinylfu, s3-fifo
    taken for twoq, wtinylfu, s3fifo); an unknown name or none is refused."""
    names = [_ALIASES.get(p.strip().lower(), p.strip().lower()) for p in text.split(",") if p.strip()]
    names = [q for p in names for q in (POLICIES if p == "all" else (p,))]
    bad = [p for p in names if p not in POLICIES]
    if not names or bad:
        raise DbtierError(f"--policy {text}: {', '.join(bad) or 'no policy'} not among {', '.join(POLICIES)}",
                          "e.g. --policy lru,s3fifo,sieve,twoq,arc,wtinylfu,belady")
    return list(dict.fromkeys(names))


@dataclass
class Coded(abc.ABC):
    """A trace as dense object codes 0..n_objects-1, read a chunk at a time (`chunks`): in memory (`Objects`)
    or spilled to disk by spill.scan (`Spill`), the kernels the same for both (the interface those two
    implement)."""
    requests: int
    bytes: int               # the requests' bytes, added up
    n_objects: int
    max_size: int
    constant_sizes: bool     # every request of an object gives it the same size
    footprint_bytes: int     # each object at its largest size, added up

    @abc.abstractmethod
    def chunks(self, with_next: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """(codes, sizes, next accesses or None) of each chunk in trace order."""

    @abc.abstractmethod
    def ensure_next(self) -> None:
        """Next accesses for Belady: the trace's own, else from a backward pass (kernels.next_back)."""

    @abc.abstractmethod
    def object_ids(self) -> np.ndarray:
        """Each code's object id (uint64): W-TinyLFU's filter hashes the ids, as libCacheSim does."""


@dataclass
class Objects(Coded):
    """A trace held in memory (tests, small traces); `chunk` requests at a time to the kernels."""
    code: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    size: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    next_access: np.ndarray | None = None     # 1-based index of the object's next request, -1 never
    chunk: int = CHUNK
    ids: np.ndarray | None = None             # each code's id

    def object_ids(self) -> np.ndarray:
        assert self.ids is not None
        return self.ids

    def chunks(self, with_next: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        nxt = self.next_access if with_next else None
        if with_next:
            assert nxt is not None      # only Belady asks, and curves() calls ensure_next() for it first
        for i in range(0, self.requests, self.chunk):
            j = i + self.chunk
            yield self.code[i:j], self.size[i:j], None if nxt is None else nxt[i:j]

    def ensure_next(self) -> None:
        if self.next_access is None:
            self.next_access = next_requests(self)


def objects_of(obj_id: np.ndarray, size: np.ndarray, next_access: np.ndarray | None = None,
               chunk: int = CHUNK) -> Objects:
    uniq, code = np.unique(obj_id, return_inverse=True)
    code = code.astype(np.int64)
    size = np.asarray(size, np.int64)
    largest = np.zeros(len(uniq), np.int64)
    np.maximum.at(largest, code, size)
    smallest = np.full(len(uniq), np.iinfo(np.int64).max)
    np.minimum.at(smallest, code, size)
    return Objects(len(code), int(size.sum()), len(uniq), int(size.max(initial=0)),
                   bool((largest == smallest).all()), int(largest.sum()), code, size, next_access, chunk,
                   uniq.astype(np.uint64))


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
    out = np.empty(objs.requests, np.int64)
    K.next_back(objs.code, 0, np.full(objs.n_objects, -1, np.int64), out)
    return out


def about(policy: str) -> dict:
    """What the document says of a policy: {"follows": ...[, "params": {...}]} (its libCacheSim defaults)."""
    return dict(P.ABOUT[policy])


def curve(policy: str, objs: Coded, caches: Sequence[int]) -> list[Point]:
    """`policy`'s misses at each cache size (bytes)."""
    return curves([policy], objs, caches, workers=1)[policy]


_NO_NEXT = np.zeros(0, np.int64)


_MEMO_LOCK = threading.Lock()


def _memo(objs: Coded) -> dict:
    """A trace's memo for the policies' states (policies.new_state), made once."""
    with _MEMO_LOCK:
        if not hasattr(objs, "_policy_memo"):
            objs._policy_memo = {}           # type: ignore[attr-defined]
        return objs._policy_memo             # type: ignore[attr-defined]


class Abandoned(Exception):
    """A replay stopped between chunks: the curve it belonged to was given up (an interrupt, or another
    replay's failure)."""


def _chunks(objs: Coded, with_next: bool, stop: threading.Event | None) -> Iterator[tuple]:
    for ch in objs.chunks(with_next):
        if stop is not None and stop.is_set():
            raise Abandoned
        yield ch


def replay(policy: str, objs: Coded, cap: int, stop: threading.Event | None = None) -> Point:
    """`policy` at `cap` bytes, request by request, the trace fed a chunk at a time (until `stop` is set)."""
    sc, state = P.new_state(policy, objs.n_objects, cap, objs.object_ids() if policy in P.NEEDS_IDS else None,
                            _memo(objs))
    kernel = P.REPLAY[policy]
    for code, size, na in _chunks(objs, policy == "belady", stop):
        kernel(code, size, _NO_NEXT if na is None else na, cap, sc, *state)
    return Point(cap, objs.requests, int(sc[0]), objs.bytes, int(sc[1]))


def lru_one_pass(objs: Coded, caches: Sequence[int], positions: int | None = None,
                 stop: threading.Event | None = None) -> list[Point]:
    """LRU at every size of `caches` from one pass of byte stack distances (valid while every object keeps
    one size and fits each cache: `one_pass_sizes`)."""
    cs = np.array(sorted(caches), np.int64)
    tree, obj_at, last, osz, hit_n, hit_b, sc = K.new_lru_pass(objs.n_objects, len(cs), positions)
    for code, size, _ in _chunks(objs, False, stop):
        K.lru_pass(code, size, cs, tree, obj_at, last, osz, hit_n, hit_b, sc)
    hits, hit_bytes = np.cumsum(hit_n[:-1]), np.cumsum(hit_b[:-1])
    got = {int(c): Point(int(c), objs.requests, objs.requests - int(h), objs.bytes, objs.bytes - int(hb))
           for c, h, hb in zip(cs, hits, hit_bytes)}
    return [got[c] for c in caches]


def one_pass_sizes(objs: Coded, caches: Sequence[int]) -> list[int]:
    return [c for c in caches if objs.constant_sizes and objs.max_size <= c]


def curves(policies: Sequence[str], objs: Coded, caches: Sequence[int], workers: int | None = None,
           progress: Callable[[int, int], None] | None = None) -> dict[str, list[Point]]:
    """Each policy's curve; the replays (one per policy and size; LRU's one pass is one) run on `workers`
    threads (the kernels release the GIL; default: every core), each reading the trace a chunk at a time,
    so memory holds the running replays' state and a chunk each. `progress(done, total)` after each."""
    policies = parse_policies(",".join(policies))
    one_pass = one_pass_sizes(objs, caches) if "lru" in policies else []
    if "belady" in policies:
        objs.ensure_next()
    jobs: list[tuple[str, int | None]] = [("lru", None)] if one_pass else []
    jobs += [(p, c) for p in policies for c in caches if not (p == "lru" and c in one_pass)]
    done: dict[tuple[str, int], Point] = {}
    stop = threading.Event()
    pool = ThreadPoolExecutor(max(1, workers or os.cpu_count() or 1), thread_name_prefix="dbtier-mrc")
    try:
        futs = [pool.submit(lru_one_pass, objs, one_pass, None, stop) if c is None
                else pool.submit(replay, p, objs, c, stop) for p, c in jobs]
        for k, ((p, _), f) in enumerate(zip(jobs, futs)):
            pts = f.result()
            for pt in pts if isinstance(pts, list) else [pts]:      # lru_one_pass's list, or replay's Point
                done[(p, pt.cache_bytes)] = pt
            if progress:
                progress(k + 1, len(jobs))
    finally:
        # Ctrl-C or a failed replay: the queued replays are dropped and the running ones stop at their next
        # chunk, rather than the whole curve being computed before the command can end
        stop.set()
        pool.shutdown(cancel_futures=True)
    return {p: [done[(p, c)] for c in caches] for p in policies}


# -- SHARDS (Waldspurger et al., FAST '15): spatial sampling for huge traces --------------------------------

_MOD = 1 << 24


def id_hash(obj_id: np.ndarray) -> np.ndarray:
    """A well-mixed 64-bit hash of each id (MurmurHash3's finaliser): neighbouring ids land far apart."""
    return K.mix_all(np.ascontiguousarray(obj_id, np.uint64))


def sample(obj_id: np.ndarray, rate: float) -> np.ndarray:
    """The requests SHARDS keeps at `rate`: those whose object's hash falls under rate x 2^24 (mod 2^24), so
    an object is kept with all its requests or not at all."""
    if not 0 < rate <= 1:
        raise DbtierError(f"--sample {rate}: a rate between 0 and 1 (e.g. 0.01 for 1%)", "e.g. --sample 0.01")
    return (id_hash(obj_id) % np.uint64(_MOD)) < np.uint64(int(rate * _MOD))


@dataclass
class Sampled:
    objs: Coded            # the sampled requests
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

    def cache_objects(self, cache_bytes: int) -> float:
        """About how many of the sample's objects its scaled cache holds (the sample's mean object size): the
        evidence behind that size's estimate."""
        return cache_bytes * self.rate / (self.objs.footprint_bytes / self.objs.n_objects)


# A sampled cache holding fewer objects than this gives rough estimates: on Zipf traces of 2, 10 and 30 million
# requests the 1% sample's largest errors (0.014-0.023) were all at caches of about 100 sampled objects; from
# about 190 up they stayed under 0.006. (A margin over that, for traces less kind.)
FEW_SAMPLED_OBJECTS = 500


def sampled(obj_id: np.ndarray, size: np.ndarray, rate: float) -> Sampled:
    keep = sample(obj_id, rate)
    if not keep.any():
        raise DbtierError(f"--sample {rate}: no object of this trace falls in a {rate:g} sample",
                          "take a larger rate (or no --sample)")
    size = np.asarray(size, np.int64)
    return Sampled(objects_of(obj_id[keep], size[keep]), rate, len(obj_id), int(size.sum()))


def sampled_curves(policies: Sequence[str], smp: Sampled, caches: Sequence[int], workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, list[Point]]:
    """Estimated curves from a SHARDS sample, each cache scaled by its rate. SHARDS-adj: a curve's misses
    over the number of sampled requests expected (rate x requests), not the number drawn, which corrects
    the sample's luck in its popular objects; the estimates are given back in the whole trace's units."""
    rate, n, total = smp.rate, smp.requests, smp.bytes
    got = curves(policies, smp.objs, [max(1, int(c * rate)) for c in caches], workers, progress)
    exp_n, exp_b = rate * n, rate * total
    return {p: [Point(c, n, int(round(pt.misses / exp_n * n)), total, int(round(pt.byte_misses / exp_b * total)))
                for c, pt in zip(caches, pts)] for p, pts in got.items()}
