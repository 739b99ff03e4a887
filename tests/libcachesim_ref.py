"""libCacheSim (the `libcachesim` package, a development dependency pinned in pyproject.toml) as the reference
the miss-ratio curves are tested against: a trace written as oracleGeneral records, replayed by its C
engine (process_trace), its miss ratios turned back into counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np

LIBCACHESIM_VERSION = "0.3.5"

# dbtier's policy -> libCacheSim's class, each with its defaults (as a user runs it); s3fifo-2023 (S3FIFOv0.c)
# is not in the Python package: it is checked against libCacheSim's test-suite figures instead
CLASSES = {"lru": "LRU", "fifo": "FIFO", "clock": "Clock", "s3fifo": "S3FIFO", "arc": "ARC", "sieve": "Sieve",
           "twoq": "TwoQ", "slru": "SLRU", "lfu": "LFU", "lirs": "LIRS", "wtinylfu": "WTinyLFU", "belady": "Belady"}

RECORD = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])


def write_oracle(path: Path, ids: np.ndarray, sizes: np.ndarray) -> Path:
    """The requests as oracleGeneral records (time = position, next access computed, -1 never)."""
    n = len(ids)
    rec = np.zeros(n, RECORD)
    rec["time"] = np.arange(n)
    rec["id"] = ids
    rec["size"] = sizes
    nxt = np.full(n, -1, np.int64)
    last: dict[int, int] = {}
    for i in range(n - 1, -1, -1):
        x = int(ids[i])
        nxt[i] = last.get(x, -1)
        last[x] = i + 1
    rec["next"] = nxt
    rec.tofile(path)
    return path


def misses(path: Path, policy: str, caches: list[int], hashpower: int = 24) -> list[tuple[int, int]]:
    """(misses, byte misses) of libCacheSim's `policy` at each cache size (bytes) on the oracleGeneral file.
    `hashpower`: its hash tables' initial size (2^24 buckets by default, 128 MiB each, which costs the time
    of small traces; they grow as needed, and no policy here depends on it)."""
    import libcachesim as lcs

    assert lcs.__version__ == LIBCACHESIM_VERSION, lcs.__version__
    rec = np.fromfile(path, RECORD)
    n, total = len(rec), int(rec["size"].astype(np.int64).sum())
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    out = []
    for c in caches:
        mr, bmr = getattr(lcs, CLASSES[policy])(int(c), hashpower=hashpower).process_trace(reader)
        # ratios of whole counts over n and total: rounding gives the counts back (both far under 2^52)
        out.append((int(round(mr * n)), int(round(bmr * total))))
    return out
