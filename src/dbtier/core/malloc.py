"""glibc's allocator set for a streamed replay's chunk after chunk of large arrays (glibc only; elsewhere
nothing), and large arrays' pages made at once (`populate`, Linux only).

- The mmap threshold fixed at 16 MiB. By default glibc raises it each time a mapped block is freed (up to
  32 MiB) and its trim threshold with it, so once the first chunk's arrays are freed the next ones come from
  the heap, whose freed pages the process keeps. Fixed, blocks above it are mapped and unmapped. Measured
  on `simulate run` read-cache over 10 million requests: 0.79 GB peak instead of 1.07-1.11 GB at 16 MiB;
  1 MiB gave 0.70 GB but 10-11 s instead of 7 (every chunk's arrays mapped and faulted in afresh).
- One arena and a 256 MiB trim threshold: the replay's threads (reader, cache, models) would each get an
  arena whose freed tops go back to the system and fault in again, zeroed, for the next chunk. Measured on
  the large-footprint trace (bench/simulate_scale.py, 10 million requests, read-cache): page faults halved
  (213,000 to 112,000 at a 64 GB cache), system CPU 1.8-2.8 s to 1.3 s, peak RSS 5-10% lower (1.10 GB
  instead of 1.17-1.23 at 64 GB, 0.68 instead of 0.75-0.77 at 2 GB).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from typing import Any

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
THRESHOLD_BYTES = 16 << 20
TRIM_BYTES = 256 << 20


@functools.cache
def _libc() -> Any:
    """The C library (OSError where there is none to load)."""
    name = ctypes.util.find_library("c")
    if not name:
        raise OSError("no C library found")
    return ctypes.CDLL(name)


def tune_for_chunks(nbytes: int = THRESHOLD_BYTES, trim_bytes: int = TRIM_BYTES, arenas: int = 1) -> bool:
    """Set glibc's mmap threshold to `nbytes`, its trim threshold to `trim_bytes` and its arenas to at most
    `arenas` for the rest of the process; False where that is not glibc (or it refused one)."""
    try:
        mallopt = _libc().mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = [mallopt(M_MMAP_THRESHOLD, nbytes), mallopt(M_TRIM_THRESHOLD, trim_bytes), mallopt(M_ARENA_MAX, arenas)]
    return all(done)


MADV_POPULATE_WRITE = 23          # Linux 5.14 on
PAGE = 4096
POPULATE_FROM_BYTES = 1 << 20     # smaller ranges are left to fault in


@functools.cache
def _madvise() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = _libc().madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def populate(a: Any, lo: int = 0, hi: int | None = None) -> bool:
    """Make the pages of a C-contiguous array's elements lo..hi (flattened; all by default) now, in one call,
    instead of a fault at each first touch: for arrays about to be written throughout. Measured here (a VM):
    134 MB written page by page 64-357 ms, populated first 14-17 ms. Best effort: False where the system
    does not offer it (before Linux 5.14, not Linux) or refused; the pages then fault in as before."""
    fn = _madvise()
    if fn is None or not a.flags.c_contiguous:
        return False
    hi = a.size if hi is None else min(int(hi), a.size)
    start = a.ctypes.data + max(0, int(lo)) * a.itemsize
    end = a.ctypes.data + hi * a.itemsize
    start = (start + PAGE - 1) // PAGE * PAGE          # whole pages inside the range only
    end = end // PAGE * PAGE
    if end - start < POPULATE_FROM_BYTES:
        return False
    return fn(start, end - start, MADV_POPULATE_WRITE) == 0
