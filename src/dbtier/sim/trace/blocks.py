"""Cutting a trace into cache blocks (the cache kernels' input).

A request (offset, length) covers the fixed blocks offset // B .. (offset + length - 1) // B of its volume;
a block's key is volume << 42 | block number. `cut` gives each request's block count and every block's key,
chunk by chunk (8 bytes a block of the chunk: memory follows the chunk, not the trace); the kernels map
keys to rows of the blocks a cache holds (sim/cache/slots.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.trace.chunks import Chunk

VOLUME_SHIFT = 42            # block key = volume << 42 | block number


@dataclass
class Prepared:
    """A trace (or one chunk of it) cut into blocks: per request its block count, and every block's key
    (volume << 42 | block number) in order, request after request."""
    block_size: int
    nblk: np.ndarray          # int32 per request
    keys: np.ndarray          # int64 per block
    op: np.ndarray            # uint8 per request (0 read, 1 write)
    first_request: int = 0    # index of this piece's first request in the whole trace
    nids: int | None = None         # distinct blocks (reads and writes): `prepare` counts them
    read_nids: int | None = None    # distinct blocks read

    @property
    def working_set_bytes(self) -> int:
        return (self.nids or 0) * self.block_size

    @property
    def read_working_set_bytes(self) -> int:
        return (self.read_nids or 0) * self.block_size


# Working memory of cutting into blocks: `simulate run`'s chunk holds each block's key (8 bytes); simulate
# mrc's spill (sim/mrc/spill.py) 4 bytes per block and, per distinct block, its table's slots (12 bytes each, at
# most 70% full, 1.5x while it doubles): 52 bytes at worst.
BYTES_PER_BLOCK = 4
BYTES_PER_KEY = 8
BYTES_PER_DISTINCT = 52


def memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def check_expansion(path: Any, nreq: int, total_blocks: int, distinct_bound: int, block_size: int,
                    bytes_per_block: int = BYTES_PER_BLOCK) -> None:
    """Refuse a block expansion that cannot fit in half of this machine's memory, before allocating it
    (the readers cap one request at 1 GiB, but many large requests in small blocks still add up).
    `distinct_bound`: an upper bound of the distinct blocks (the table's entries) after it."""
    need = total_blocks * bytes_per_block + distinct_bound * BYTES_PER_DISTINCT
    have = memory_bytes()
    if need > have // 2:
        raise DbtierError(
            f"{path}: {nreq:,} requests cut into {block_size:,}-byte blocks make {total_blocks:,} "
            f"blocks, about {need / 1e9:,.1f} GB of working memory; this machine has {have / 1e9:,.1f} GB",
            "use a larger --block-size (e.g. --block-size 64K), or replay one volume (--volume NAME)")


@numba.njit(nogil=True, cache=True)
def _count_blocks(offset, length, shift, nblk):
    """Per request its block count (into nblk); returns (total blocks, largest block number)."""
    total = 0
    top = 0
    for i in range(offset.shape[0]):
        last = (offset[i] + length[i] - 1) >> shift
        k = last - (offset[i] >> shift) + 1
        nblk[i] = k
        total += k
        if last > top:
            top = last
    return total, top


@numba.njit(nogil=True, cache=True)
def _keys(offset, volume, nblk, shift, keys):
    pos = 0
    for i in range(offset.shape[0]):
        base = (np.int64(volume[i]) << VOLUME_SHIFT) | (offset[i] >> shift)
        for b in range(nblk[i]):
            keys[pos] = base + b
            pos += 1


def check_block_size(block_size: int) -> int:
    """log2 of a valid --block-size."""
    if block_size <= 0 or block_size & (block_size - 1):
        raise DbtierError(f"--block-size {block_size} must be a power of two bytes", "e.g. --block-size 8K")
    return block_size.bit_length() - 1


def cut(offset: np.ndarray, length: np.ndarray, volume: np.ndarray, op: np.ndarray, block_size: int,
        path: Any = "trace", first_request: int = 0) -> Prepared:
    """Requests cut into blocks: per request the block count, every block's key (refused, before the keys
    are made, when they would not fit in half of this machine's memory)."""
    shift = check_block_size(block_size)
    offset = np.ascontiguousarray(offset, dtype=np.int64)
    length = np.ascontiguousarray(length, dtype=np.int64)
    volume = np.ascontiguousarray(volume, dtype=np.int32)
    op = np.ascontiguousarray(op, dtype=np.uint8)
    n = offset.shape[0]
    nblk = np.empty(n, dtype=np.int32)
    total, top = _count_blocks(offset, length, shift, nblk)
    if n and top >= (1 << VOLUME_SHIFT):
        raise DbtierError(f"{path}: offsets beyond {(1 << VOLUME_SHIFT) * block_size} bytes",
                          "use a larger --block-size")
    check_expansion(path, n, int(total), 0, block_size, BYTES_PER_KEY)
    keys = np.empty(int(total), dtype=np.int64)
    _keys(offset, volume, nblk, shift, keys)
    return Prepared(block_size, nblk, keys, op, first_request)


def cut_chunk(chunk: Chunk, block_size: int, path: Any = "trace") -> Prepared:
    return cut(chunk.offset_bytes, chunk.length_bytes, chunk.volume, chunk.op, block_size, path,
               chunk.first_request)

