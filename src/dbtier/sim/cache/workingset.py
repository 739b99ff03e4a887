"""The working set: how many distinct blocks a trace touches (and how many it reads), in bounded memory.

Exact while it is small: a hash set of the block keys (8 bytes a slot, at most 70% full; the read flag
in the key's bit 62) counts them exactly up to `exact_max` distinct blocks (EXACT_BLOCKS by default:
4 Mi blocks, 32 GiB of 8 KiB blocks, a table of at most 64 MiB). Past that the set is dropped and the
count is HyperLogLog's estimate (Flajolet et al. 2007; 2^16 one-byte registers, 64 KiB, filled from the set
when it is dropped, then fed every block: a register keeps its maximum, so the order does not matter):
relative standard error 1.04 / sqrt(2^16) = 0.41%, with the small-range correction (linear counting)
below 2.5 x 2^16 (never reached here: an estimate is only used past exact_max). Every result that shows an
estimate says so (`estimate`, `method`, `relative_std_error`).

Blocks as in blocks.py: a request (offset, length) of volume v covers keys v << 42 | block, block from
offset >> shift to (offset + length - 1) >> shift.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros

from dbtier.core.errors import DbtierError
from dbtier.core.malloc import populate
from dbtier.sim.trace.blocks import VOLUME_SHIFT
from dbtier.sim.jit import hot, prefetch

EXACT_BLOCKS = 1 << 22
HLL_BITS = 16
HLL_REGISTERS = 1 << HLL_BITS
HLL_RSE = 1.04 / math.sqrt(HLL_REGISTERS)
METHOD_EXACT = "exact (a hash set of the distinct blocks)"
METHOD_HLL = f"HyperLogLog, {HLL_REGISTERS:,} registers (relative standard error {HLL_RSE:.2%})"

_EMPTY = np.int64(0)          # a slot holds its key plus one (new sets are calloc'd), bit 62 the read flag
_READ = np.int64(1 << 62)
_KEY = np.int64((1 << 62) - 1)
_MAX_LOAD = 0.7
_FIB = np.uint64(0x9E3779B97F4A7C15)
_AHEAD = 6            # requests ahead whose blocks' slots the exact count fetches (the set outgrows the CPU caches)
_AHEAD_BLOCKS = 8     # of each, at most its first 8 blocks


@numba.njit(inline="always")
def _mix(x):
    """splitmix64's finaliser: every input bit reaches every output bit (HyperLogLog needs uniform bits)."""
    z = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(inline="always")
def _hll_add(regs, reg_read, key, rd):
    h = _mix(key)
    idx = np.intp(h >> np.uint64(64 - HLL_BITS))
    w = (h << np.uint64(HLL_BITS)) | np.uint64(1 << (HLL_BITS - 1))    # the guard bit caps the rank
    rank = np.uint8(leading_zeros(w) + 1)
    if regs[idx] < rank:
        regs[idx] = rank
    if rd and reg_read[idx] < rank:
        reg_read[idx] = rank


@hot
def _feed_exact(offset, length, volume, op, shift, i0, keys, st, limit):
    """Requests i0.. into the set; stops before a request that could take it past `limit` entries and
    returns it (its blocks fed again later are harmless: the set keeps its keys), else n.
    st: [distinct, distinct read, log2 of the set's slots, largest block]."""
    n = offset.shape[0]
    mask = keys.shape[0] - 1
    hshift = np.uint64(64 - st[2])
    count = st[0]
    nread = st[1]
    top = st[3]
    i = i0
    while i < n:
        f = offset[i] >> shift
        last = (offset[i] + length[i] - 1) >> shift
        if count + (last - f + 1) > limit:
            break
        if last > top:
            top = last
        a = i + _AHEAD                  # a later request's first blocks: their slots fetched now
        if a < n:
            pbase = (np.int64(volume[a]) << VOLUME_SHIFT) | (offset[a] >> shift)
            for b in range(min(_AHEAD_BLOCKS, ((offset[a] + length[a] - 1) >> shift) - (offset[a] >> shift) + 1)):
                prefetch(keys, np.intp((np.uint64(pbase + b) * _FIB) >> hshift))
        base = np.int64(volume[i]) << VOLUME_SHIFT
        rd = op[i] == 0
        for b in range(f, last + 1):
            key = base | b
            h = np.intp((np.uint64(key) * _FIB) >> hshift)
            while True:
                kk = keys[h]
                if kk == _EMPTY:
                    keys[h] = (key + 1) | _READ if rd else key + 1
                    count += 1
                    if rd:
                        nread += 1
                    break
                if (kk & _KEY) == key + 1:
                    if rd and (kk & _READ) == 0:
                        keys[h] = kk | _READ
                        nread += 1
                    break
                h = (h + 1) & mask
        i += 1
    st[0] = count
    st[1] = nread
    st[3] = top
    return i


@hot
def _feed_hll(offset, length, volume, op, shift, i0, regs, reg_read, st):
    """Requests i0.. into the registers (st[3]: the largest block)."""
    top = st[3]
    for i in range(i0, offset.shape[0]):
        f = offset[i] >> shift
        last = (offset[i] + length[i] - 1) >> shift
        if last > top:
            top = last
        base = np.int64(volume[i]) << VOLUME_SHIFT
        rd = op[i] == 0
        for b in range(f, last + 1):
            _hll_add(regs, reg_read, base | b, rd)
    st[3] = top


@hot
def _hll_from_set(keys, regs, reg_read):
    """The set's blocks into the registers: a register keeps its maximum, so this is the stream so far."""
    for s in range(keys.shape[0]):
        kk = keys[s]
        if kk != _EMPTY:
            _hll_add(regs, reg_read, (kk & _KEY) - 1, (kk & _READ) != 0)


@numba.njit(nogil=True, cache=True)
def _rehash(keys, new_keys, bits):
    mask = new_keys.shape[0] - 1
    hshift = np.uint64(64 - bits)
    for s in range(keys.shape[0]):
        kk = keys[s]
        if kk != _EMPTY:
            h = np.intp((np.uint64((kk & _KEY) - 1) * _FIB) >> hshift)
            while new_keys[h] != _EMPTY:
                h = (h + 1) & mask
            new_keys[h] = kk


def _bits_for(entries: int, bits: int) -> int:
    """log2 of the fewest slots (at least 2^bits) that hold `entries` at most _MAX_LOAD full."""
    while int((1 << bits) * _MAX_LOAD) < entries:
        bits += 1
    return bits


def hll_estimate(regs: np.ndarray) -> float:
    """HyperLogLog's estimate from its registers (raw, or linear counting in the small range)."""
    m = regs.shape[0]
    alpha = 0.7213 / (1 + 1.079 / m)
    e = alpha * m * m / float(np.sum(np.ldexp(1.0, -regs.astype(np.int64))))
    zeros = int(np.count_nonzero(regs == 0))
    if e <= 2.5 * m and zeros:
        e = m * math.log(m / zeros)
    return e


class WorkingSet:
    """Distinct blocks (and distinct blocks read) of the requests fed so far, in order or not: exact up to
    `exact_max` distinct blocks (None: no bound), HyperLogLog's estimate past it."""

    def __init__(self, block_size: int, exact_max: int | None = EXACT_BLOCKS):
        self.block_size = block_size
        self.shift = block_size.bit_length() - 1
        self.exact_max = exact_max
        self.exact = True
        self.regs = np.zeros(HLL_REGISTERS, dtype=np.uint8)
        self.reg_read = np.zeros(HLL_REGISTERS, dtype=np.uint8)
        self.keys = np.zeros(1 << 10, dtype=np.int64)
        self.st = np.array([0, 0, 10, 0], dtype=np.int64)

    def feed(self, offset: np.ndarray, length: np.ndarray, volume: np.ndarray, op: np.ndarray,
             path: Any = "trace") -> None:
        offset = np.ascontiguousarray(offset, dtype=np.int64)
        length = np.ascontiguousarray(length, dtype=np.int64)
        volume = np.ascontiguousarray(volume, dtype=np.int32)
        op = np.ascontiguousarray(op, dtype=np.uint8)
        n = offset.shape[0]
        i = 0
        while self.exact:
            i = _feed_exact(offset, length, volume, op, self.shift, i, self.keys, self.st,
                            int(self.keys.shape[0] * _MAX_LOAD))
            if i >= n:
                break
            self._grow(int((offset[i] + length[i] - 1) >> self.shift) - int(offset[i] >> self.shift) + 1)
        if not self.exact:
            _feed_hll(offset, length, volume, op, self.shift, i, self.regs, self.reg_read, self.st)
        if int(self.st[3]) >= 1 << VOLUME_SHIFT:
            raise DbtierError(f"{path}: offsets beyond {(1 << VOLUME_SHIFT) * self.block_size} bytes",
                              "use a larger --block-size")

    def feed_chunk(self, chunk: Any, path: Any = "trace") -> None:
        self.feed(chunk.offset_bytes, chunk.length_bytes, chunk.volume, chunk.op, path)

    def _grow(self, more: int) -> None:
        need = int(self.st[0]) + more
        if self.exact_max is not None and need > self.exact_max:
            self.exact = False                       # past the bound: the registers alone from now on
            _hll_from_set(self.keys, self.regs, self.reg_read)
            self.keys = np.zeros(1, dtype=np.int64)
            return
        bits = _bits_for(need, int(self.st[2]))
        if self.exact_max is not None:
            # within a quarter of the largest set it takes that at once (sets made only to be rehashed cost
            # their pages: fresh memory is dear)
            most = _bits_for(self.exact_max, bits)
            if bits + 2 >= most:
                bits = most
        keys = np.zeros(1 << bits, dtype=np.int64)
        populate(keys)                               # written throughout: its pages at once
        _rehash(self.keys, keys, bits)
        self.keys = keys
        self.st[2] = bits

    @property
    def nids(self) -> int:
        """Distinct blocks (exact, or the estimate rounded)."""
        return int(self.st[0]) if self.exact else round(hll_estimate(self.regs))

    @property
    def read_nids(self) -> int:
        return int(self.st[1]) if self.exact else round(hll_estimate(self.reg_read))

    @property
    def bytes(self) -> int:
        return self.nids * self.block_size

    @property
    def read_bytes(self) -> int:
        return self.read_nids * self.block_size

    def describe(self) -> dict[str, Any]:
        """The result document's words for how the working set was counted."""
        return {"working_set_estimate": not self.exact,
                "working_set_method": METHOD_EXACT if self.exact else METHOD_HLL,
                "working_set_relative_std_error": 0.0 if self.exact else HLL_RSE}
