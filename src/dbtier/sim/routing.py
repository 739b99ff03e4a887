"""The read-cache design's device I/Os, emitted request by request in one compiled pass (already in request
order: the queueing model needs them so, and sorting millions of them per chunk cost more than the cache).

Per request, in this order (the order the model serves a request's parts in):
- a read: its cached blocks from the cache device (its bytes shared pro rata, len x hits / blocks); its
  missing blocks from the backing device as one read of the request's own bytes over that run (from its
  first missing block to its last, clipped to the bytes asked: a read that misses every block issues
  exactly the I/O the device alone would, so a miss never costs more than the device alone), or, when it
  bypasses the cache (sequential cutoff), just the bytes it asked for (pro rata); then the fill of the
  blocks it admitted (background cache write, which no request waits on);
- a block the request covers only in part (it starts or ends inside it), cached and next to the missing
  run, is read with the run from the backing device: the block model cannot tell which of that block's
  bytes the cache holds, and a cache that holds the extents a miss read (bcache) holds only the bytes its
  neighbour asked for -- not these. Served from the cache, the run would start or end mid-block, off
  where the stream's previous read ended, and a stream of unaligned reads (64 KiB at 512-byte offsets, as
  in the CloudPhysics trace) would pay a seek per read on a disk that the device alone reads sequentially;
- a write: write-around to the backing device; write-through to the cache and the backing device;
  write-back to the cache, or to the backing device when it bypasses;
- then the dirty blocks its admission evicted (write-back destaging, background backing write).
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.sim.cache.replay import MODE_CODES
from dbtier.sim.device.latency import SubIOs

CACHE, BACKING = 0, 1


@numba.njit(nogil=True, cache=True)
def _emit(first, op, offset, length, volume, nblk, hits, adm, dst, fm, byp, has_byp, bs, mode, fill,
          req, dev, fg, iop, nbytes, off, vol):
    """Count the I/Os (fill False) or write them into the arrays (fill True); returns the count."""
    j = 0
    for i in range(op.shape[0]):
        r = first + i
        k = float(nblk[i])
        h = float(hits[i])
        ln = float(length[i])
        b = has_byp and byp[i]
        # the missing run [lo, hi) in the request's blocks (taken as contiguous from the first miss: the cache
        # counts a request's hits and its first miss, not each block's outcome), widened over a cached block
        # the request covers only in part when it adjoins the run (module docstring)
        lo = fm[i]
        hi = lo + nblk[i] - hits[i]
        start, end = offset[i], offset[i] + length[i]
        if op[i] == 0 and not b and hits[i] < nblk[i]:
            if lo == 1 and start % bs != 0:
                lo = 0
                h -= 1.0
            if hi == nblk[i] - 1 and end % bs != 0:
                hi = nblk[i]
                h -= 1.0
            start = max(start, (offset[i] // bs + lo) * bs)
            end = min(end, (offset[i] // bs + hi) * bs)
        for part in range(6):
            # part: 0 cache read, 1 backing read, 2 fill, 3 write to the cache, 4 write to the backing, 5 destage
            if op[i] == 0:
                if part == 0:
                    ok = h > 0
                elif part == 1:
                    ok = h < k
                elif part == 2:
                    ok = adm[i] > 0
                else:
                    ok = part == 5 and dst[i] > 0
            else:
                if part == 3:
                    ok = mode != 0 and not b
                elif part == 4:
                    ok = mode == 0 or mode == 1 or b
                else:
                    ok = part == 5 and dst[i] > 0
            if not ok:
                continue
            if fill:
                req[j] = r
                o = offset[i]
                v = volume[i]
                if part == 0:
                    d, f, w, nb = CACHE, True, 0, ln * h / k
                elif part == 1:
                    d, f, w = BACKING, True, 0
                    if b:
                        nb = ln * (k - h) / k
                    else:
                        nb, o = float(end - start), start
                elif part == 2:
                    d, f, w, nb, o, v = CACHE, False, 1, float(adm[i]) * bs, -2, 0
                elif part == 3:
                    d, f, w, nb = CACHE, True, 1, ln
                elif part == 4:
                    d, f, w, nb = BACKING, True, 1, ln
                else:
                    d, f, w, nb, o, v = BACKING, False, 1, float(dst[i]) * bs, -2, 0
                dev[j] = d
                fg[j] = f
                iop[j] = w
                nbytes[j] = nb
                off[j] = o
                vol[j] = v
            j += 1
    return j


def cache_ios(first: int, op: np.ndarray, offset: np.ndarray, length: np.ndarray, volume: np.ndarray,
              nblk: np.ndarray, hits: np.ndarray, admitted: np.ndarray, destaged: np.ndarray, first_miss: np.ndarray,
              bypass: np.ndarray | None, block_size: int, write_mode: str) -> SubIOs:
    """The device I/Os of requests first .. first + len(op) - 1 (device 0 the cache, 1 the backing one) from
    the cache replay's per-request outputs, in request order."""
    byp = np.zeros(0, dtype=np.bool_) if bypass is None else np.ascontiguousarray(bypass, dtype=np.bool_)
    args = (int(first), np.ascontiguousarray(op, dtype=np.uint8), np.ascontiguousarray(offset, dtype=np.int64),
            np.ascontiguousarray(length, dtype=np.int64), np.ascontiguousarray(volume, dtype=np.int32),
            nblk, hits, admitted, destaged, first_miss, byp, bypass is not None, int(block_size), MODE_CODES[write_mode])
    e64, e32, eb, e8, ef = (np.zeros(0, dtype=t) for t in (np.int64, np.int32, np.bool_, np.uint8, np.float64))
    n = _emit(*args, False, e64, e32, eb, e8, ef, e64, e64)
    req, off, vol = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    dev, fg, iop, nb = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.uint8), \
        np.empty(n, dtype=np.float64)
    _emit(*args, True, req, dev, fg, iop, nb, off, vol)
    return SubIOs([req], [dev], [fg], [iop], [nb], [off], [vol])
