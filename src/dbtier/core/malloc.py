"""glibc's mmap threshold fixed, so a streamed replay's freed chunks go back to the system (glibc only;
elsewhere nothing).

By default glibc raises its mmap threshold each time a mapped block is freed (up to 32 MiB) and its trim
threshold with it, so once the first chunk's arrays are freed the next ones come from the heap, whose freed
pages the process keeps. mallopt(M_MMAP_THRESHOLD) turns that raising off for both: blocks above the
threshold are mapped and unmapped, and the heap is trimmed at glibc's default 128 KiB again. Measured on
`simulate run` read-cache over 10 million requests: 0.79 GB peak instead of 1.07-1.11 GB at 16 MiB; 1 MiB
gave 0.70 GB but 10-11 s instead of 7 (every chunk's arrays mapped and faulted in afresh).
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 16 << 20


def fixed_mmap_threshold(nbytes: int = THRESHOLD_BYTES) -> bool:
    """Set glibc's mmap threshold to `nbytes` for the rest of the process; False where that is not glibc."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, nbytes))
