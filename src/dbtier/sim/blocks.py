"""Cutting a trace into cache blocks and numbering the distinct ones densely (the cache kernels' input).

A request (offset, length) covers the fixed blocks offset // B .. (offset + length - 1) // B of its volume.
`BlockMap` numbers every (volume, block) key in first-touch order with an open-addressing hash table in
numba, chunk after chunk with the same ids whatever the chunking, so the kernels (cache.py) index plain
arrays; first-touch order keeps hot blocks' rows together in memory. `prepare` is one feed of it over a
whole trace. `prefetch` is the CPU hint both the map and the kernels use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from dbtier.core.errors import DbtierError
from dbtier.sim.chunks import Chunk
from dbtier.sim.traces import Trace

VOLUME_SHIFT = 42            # block key = volume << 42 | block number


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to fetch arr[idx]'s cache line (llvm.prefetch; read, high locality). No effect on results."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen


@dataclass
class Prepared:
    """A trace (or one chunk of it) cut into blocks: per request the block count, and the dense ids of all
    blocks in order. Ids are numbered in first-touch order over everything fed to the `BlockMap` so far."""
    block_size: int
    nblk: np.ndarray          # int32 per request
    ids: np.ndarray           # int32 per block, request after request
    nids: int                 # distinct blocks (the working set, reads and writes) so far
    read_nids: int            # distinct blocks read so far
    op: np.ndarray            # uint8 per request (0 read, 1 write)
    first_request: int = 0    # index of this piece's first request in the whole trace

    @property
    def working_set_bytes(self) -> int:
        return self.nids * self.block_size

    @property
    def read_working_set_bytes(self) -> int:
        return self.read_nids * self.block_size


# prepare's working memory: 4 bytes per block occurrence (its id) and, per distinct block, the hash
# table's slots (12 bytes each, at most 70% full, 1.5x while it doubles): 52 bytes at worst.
BYTES_PER_BLOCK = 4
BYTES_PER_DISTINCT = 52


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def check_expansion(path: Any, nreq: int, total_blocks: int, distinct_bound: int, block_size: int) -> None:
    """Refuse a block expansion that cannot fit in half of this machine's memory, before allocating it
    (the readers cap one request at 1 GiB, but many large requests in small blocks still add up).
    `distinct_bound`: an upper bound of the distinct blocks (the table's entries) after it."""
    need = total_blocks * BYTES_PER_BLOCK + distinct_bound * BYTES_PER_DISTINCT
    have = _memory_bytes()
    if need > have // 2:
        raise DbtierError(
            f"{path}: {nreq:,} requests cut into {block_size:,}-byte blocks make {total_blocks:,} "
            f"blocks, about {need / 1e9:,.1f} GB of working memory; this machine has {have / 1e9:,.1f} GB",
            "use a larger --block-size (e.g. --block-size 64K), or replay one volume (--volume NAME)")


_EMPTY_KEY = np.iinfo(np.int64).min     # block keys are >= 0
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the key times 2^64/phi, top bits
_READ_BIT = np.uint32(1 << 31)           # in a slot's value: the block has been read
_ID_MASK = np.uint32((1 << 31) - 1)
_MAX_LOAD = 0.7
_ID_PREFETCH = 16                        # requests ahead whose first block's slot is fetched early


@numba.njit(nogil=True, cache=True)
def _count_blocks(offset, length, volume, shift, nblk, vmin, vmax):
    """Per request its block count (into nblk); returns (total blocks, largest block number, distinct bound).
    vmin/vmax (per volume, zeroed / filled by the caller) bound each volume's block span."""
    total = 0
    top = 0
    for i in range(offset.shape[0]):
        f = offset[i] >> shift
        last = (offset[i] + length[i] - 1) >> shift
        k = last - f + 1
        nblk[i] = k
        total += k
        if last > top:
            top = last
        v = volume[i]
        if f < vmin[v]:
            vmin[v] = f
        if last > vmax[v]:
            vmax[v] = last
    span = 0
    for v in range(vmin.shape[0]):
        if vmax[v] >= vmin[v]:
            span += vmax[v] - vmin[v] + 1
    return total, top, min(total, span)


@numba.njit(inline="always")
def _slot(key, shift):
    return np.intp((np.uint64(key) * _HASH_MUL) >> np.uint64(shift))


@numba.njit(nogil=True, cache=True)
def _map_blocks(offset, volume, op, nblk, shift, i0, pos0, ids, keys, vals, st, limit):
    """Number the blocks of requests i0.. densely (first touch first), writing ids from pos0. Stops before a
    request that could take the table past `limit` entries; returns (next request, next block position).
    st: [distinct, distinct read, log2 of the table's size]."""
    n = offset.shape[0]
    mask = keys.shape[0] - 1
    hshift = 64 - st[2]
    count = st[0]
    nread = st[1]
    pos = pos0
    i = i0
    while i < n:
        k = nblk[i]
        if count + k > limit:
            break
        if i + _ID_PREFETCH < n:
            ip = i + _ID_PREFETCH
            h = _slot((np.int64(volume[ip]) << VOLUME_SHIFT) | (offset[ip] >> shift), hshift)
            prefetch(keys, h)
            prefetch(vals, h)
        base = (np.int64(volume[i]) << VOLUME_SHIFT) | (offset[i] >> shift)
        rd = op[i] == 0
        for b in range(k):
            if b + 4 < k:
                h = _slot(base + b + 4, hshift)
                prefetch(keys, h)
                prefetch(vals, h)
            key = base + b
            h = _slot(key, hshift)
            while True:
                kk = keys[h]
                if kk == key:
                    v = vals[h]
                    break
                if kk == _EMPTY_KEY:
                    keys[h] = key
                    v = np.uint32(count)
                    vals[h] = v
                    count += 1
                    break
                h = (h + 1) & mask
            if rd and (v & _READ_BIT) == 0:
                vals[h] = v | _READ_BIT
                nread += 1
            ids[pos] = np.int32(v & _ID_MASK)
            pos += 1
        i += 1
    st[0] = count
    st[1] = nread
    return i, pos


@numba.njit(nogil=True, cache=True)
def _rehash(keys, vals, new_keys, new_vals, bits):
    mask = new_keys.shape[0] - 1
    hshift = 64 - bits
    for s in range(keys.shape[0]):
        key = keys[s]
        if key != _EMPTY_KEY:
            h = _slot(key, hshift)
            while new_keys[h] != _EMPTY_KEY:
                h = (h + 1) & mask
            new_keys[h] = key
            new_vals[h] = vals[s]


class BlockMap:
    """(volume, block) -> dense id in first-touch order, fed chunk after chunk: the ids do not depend on how
    the trace is cut into chunks. An open-addressing hash table (linear probing) of 12 bytes a slot, at
    most 70% full: 17 to 34 bytes per distinct block, plus each chunk's ids (4 bytes per block)."""

    def __init__(self, block_size: int, bits: int = 16):
        if block_size <= 0 or block_size & (block_size - 1):
            raise DbtierError(f"--block-size {block_size} must be a power of two bytes", "e.g. --block-size 8K")
        self.block_size = block_size
        self.shift = block_size.bit_length() - 1
        self.keys = np.full(1 << bits, _EMPTY_KEY, dtype=np.int64)
        self.vals = np.zeros(1 << bits, dtype=np.uint32)
        self.st = np.array([0, 0, bits], dtype=np.int64)
        self.requests = 0                  # requests fed so far

    @property
    def nids(self) -> int:
        return int(self.st[0])

    @property
    def read_nids(self) -> int:
        return int(self.st[1])

    def _limit(self) -> int:
        return int(self.keys.shape[0] * _MAX_LOAD)

    def _grow(self, need: int) -> None:
        if need >= 1 << 31:                      # ids are int32
            raise DbtierError(f"more than {(1 << 31) - 1:,} distinct blocks", "use a larger --block-size")
        bits = int(self.st[2])
        while int((1 << bits) * _MAX_LOAD) < need:
            bits += 1
        keys = np.full(1 << bits, _EMPTY_KEY, dtype=np.int64)
        vals = np.zeros(1 << bits, dtype=np.uint32)
        _rehash(self.keys, self.vals, keys, vals, bits)
        self.keys, self.vals = keys, vals
        self.st[2] = bits

    def feed(self, offset: np.ndarray, length: np.ndarray, volume: np.ndarray, op: np.ndarray,
             path: Any = "trace") -> Prepared:
        """The next requests of the trace (in order) cut into blocks with their dense ids."""
        offset = np.ascontiguousarray(offset, dtype=np.int64)
        length = np.ascontiguousarray(length, dtype=np.int64)
        volume = np.ascontiguousarray(volume, dtype=np.int32)
        op = np.ascontiguousarray(op, dtype=np.uint8)
        n = offset.shape[0]
        nv = int(volume.max()) + 1 if n else 0
        nblk = np.empty(n, dtype=np.int32)
        vmin = np.full(nv, np.iinfo(np.int64).max, dtype=np.int64)
        vmax = np.full(nv, -1, dtype=np.int64)
        total, top, bound = _count_blocks(offset, length, volume, self.shift, nblk, vmin, vmax)
        if n and top >= (1 << VOLUME_SHIFT):
            raise DbtierError(f"{path}: offsets beyond {(1 << VOLUME_SHIFT) * self.block_size} bytes",
                              "use a larger --block-size")
        check_expansion(path, n, int(total), self.nids + int(bound), self.block_size)
        ids = np.empty(int(total), dtype=np.int32)
        i = pos = 0
        while True:
            i, pos = _map_blocks(offset, volume, op, nblk, self.shift, i, pos, ids, self.keys, self.vals, self.st,
                                 self._limit())
            if i >= n:
                break
            self._grow(self.nids + int(nblk[i]))
        first = self.requests
        self.requests += n
        return Prepared(self.block_size, nblk, ids, self.nids, self.read_nids, op, first)

    def feed_chunk(self, chunk: Chunk, path: Any = "trace") -> Prepared:
        return self.feed(chunk.offset_bytes, chunk.length_bytes, chunk.volume, chunk.op, path)


def prepare(trace: Trace, block_size: int) -> Prepared:
    """Cut each request into blocks of `block_size` bytes and number the distinct blocks densely."""
    return BlockMap(block_size).feed(trace.offset_bytes, trace.length_bytes, trace.volume, trace.op, trace.path)
