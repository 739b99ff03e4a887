"""The read-cache design's device I/Os (sim/routing.py) against a hand-worked list: which device each part
goes to, in which order, foreground or not, its bytes and offset, for reads with hits, misses, admissions
and a bypass, and writes in each write mode (8 KiB blocks)."""

from __future__ import annotations

import numpy as np
import pytest

from dbtier.sim import routing

C, B = routing.CACHE, routing.BACKING
BS = 8192
READ, WRITE = 0, 1

# per request: op, offset, length, volume, blocks, hits, admitted, destaged, first miss, bypass
REQS = [
    (READ, 16384, 24576, 3, 3, 1, 2, 0, 0, False),      # blocks 2-4: one hit, two missing from block 2 on
    (READ, 8192, 10000, 3, 2, 0, 0, 0, 0, True),       # bypassing: just the bytes asked, from the backing
    (READ, 0, 4096, 3, 1, 1, 0, 0, -1, False),         # a hit: the cache alone
    (READ, 81920, 16384, 3, 2, 0, 2, 1, 0, False),     # missing from block 10 on, admitted, a dirty block evicted
    (WRITE, 40960, 8192, 3, 1, 0, 0, 1, -1, False),    # a write whose admission evicted a dirty block
    (WRITE, 49152, 8192, 3, 1, 0, 0, 0, -1, True),     # a write that bypasses
]


def _by_hand(mode: str) -> list[tuple]:
    """(request, device, foreground, op, bytes, offset, volume) in the order the model serves them."""
    first = 100
    out = [
        (first, C, True, READ, 24576 * 1 / 3, 16384, 3),
        (first, B, True, READ, 2 * BS, 16384, 3),
        (first, C, False, WRITE, 2 * BS, -2, 0),
        (first + 1, B, True, READ, 10000.0, 8192, 3),
        (first + 2, C, True, READ, 4096.0, 0, 3),
        (first + 3, B, True, READ, 2 * BS, 81920, 3),
        (first + 3, C, False, WRITE, 2 * BS, -2, 0),
        (first + 3, B, False, WRITE, BS, -2, 0),
    ]
    to_cache, to_backing = {"write-around": (False, True), "write-through": (True, True),
                            "write-back": (True, False)}[mode]
    if to_cache:
        out.append((first + 4, C, True, WRITE, 8192.0, 40960, 3))
    if to_backing:
        out.append((first + 4, B, True, WRITE, 8192.0, 40960, 3))
    out.append((first + 4, B, False, WRITE, BS, -2, 0))
    out.append((first + 5, B, True, WRITE, 8192.0, 49152, 3))    # a bypassing write: the backing device, any mode
    return out


@pytest.mark.parametrize("mode", ["write-around", "write-through", "write-back"])
def test_each_part_to_its_device_in_order(mode):
    cols = list(zip(*REQS))
    op, offset, length, volume = (np.array(c) for c in cols[:4])
    nblk, hits, adm, dst, fm = (np.array(c, dtype=np.int32) for c in cols[4:9])
    byp = np.array(cols[9], dtype=np.bool_)
    ios = routing.cache_ios(100, op.astype(np.uint8), offset, length, volume.astype(np.int32), nblk, hits, adm, dst,
                            fm, byp, BS, mode)
    got = list(zip(*(np.concatenate(getattr(ios, k)).tolist() for k in
                     ("req", "dev", "fg", "op", "nbytes", "offset", "volume"))))
    assert got == _by_hand(mode)
