"""Rows for the blocks a cache holds (or remembers), not for every block a trace touches.

The cache kernels (kernels.py) keep each block's list links and state in one row of a plain array. A
`Rows` maps a block's key (volume << 42 | block number) to its row through an open-addressing hash table
(linear probing, Fibonacci hashing), and holds at most `rows_max` rows: the most blocks the policy can
hold at once (LRU, FIFO, SIEVE: the cache's blocks; S3-FIFO, 2Q: its blocks and its ghost's) plus spare
rows.
A row whose block has left the cache (its live column 0: evicted, invalidated, trimmed from the ghost,
emptied at a restart) keeps its key until a row is needed and none is free: then one sweep over the rows
unmaps every such row (its table entry deleted) and chains it into a free list. A sweep frees at least the
spare rows (live rows never exceed the policy's bound), so with spares a quarter of the bound it runs at
most once per that many new blocks and costs about 25 ns per row it frees (9.8 million rows, 2 million
freed).

Exactness: a row that is not live is exactly what a block never seen has (links -1, state 0: the shared
policy rules leave an evicted row so), so a block gets the same treatment from a recycled row, a fresh one
or the dense numbering the kernels used before; no answer depends on which row a block gets.

Until the first sweep every block the replay has seen has its own row (rows are taken fresh in first-touch
order), so `hiwater` is the exact number of distinct blocks seen; after one, more blocks were seen than
`rows_max` (more than the cache holds), and a block the cache will not take in (a write around it, a
bypassing read) is only looked up (`row_if_kept`).

Memory: per row the policy's 16 bytes and the key's 8; the table 8 bytes a slot, at most half full (at 70%,
the 64 GB cache's replay on the large-footprint bench took 2.7-3.0 s instead of 2.1-2.4: longer probe runs
for the misses and longer shifts for the deletions).
"""

from __future__ import annotations

import numba
import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.core.malloc import populate
from dbtier.sim.jit import prefetch
from dbtier.sim.trace.blocks import memory_bytes

EMPTY = np.int64(0)           # an empty table slot (a slot holds its row plus one): new tables are calloc'd
UNMAPPED = np.int64(-1)       # the key of a row that holds no block (keys are >= 0)
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)   # Fibonacci hashing: the key times 2^64/phi, top bits
_HI = np.int64(-(1 << 32))    # a slot's high half: the top 32 bits of its key's hash
_LO = np.int64(0xFFFFFFFF)    # its low half: the row
_ONE = np.uint64(1)
MAX_LOAD = 0.5       # the table's fill at most (see Memory above)
ROW_COLS = 4                              # int32 per row (the kernels' prev, next, state/where, freq)
KEY_BYTES = 8
SLOT_BYTES = 8                            # a table slot: the hash's top half and the row, one int64
SWEEP_AHEAD = 16    # freed rows from fetching a freed row's table slot to deleting its entry (8: 10% slower, 32: 40%)
# st: the rows' state, carried from call to call
S_HIWATER, S_FREE, S_TSHIFT, S_SWEEPS, S_FREED = range(5)
_NST = 5


# The table holds no keys: a slot is the top 32 bits of its key's hash and its row plus one, so that a probe reads one
# cache line of slots, a miss (most lookups on a large footprint) reads nothing else, and moving or
# deleting an entry needs no key (its home is the slot's top bits: tables have at most 2^32 slots). A slot
# whose hash half matches is confirmed against the row's key (rowkey). Indexes are unsigned: no wraparound
# code on the probe path.

@numba.njit(inline="always")
def hash_of(key):
    return np.int64(np.uint64(key) * _HASH_MUL)


@numba.njit(inline="always")
def home(hv, tshift):
    """The slot where a probe for hash `hv` (or for the entry in slot value `hv`) starts."""
    return np.uint64(hv) >> np.uint64(tshift)


@numba.njit(inline="always")
def prefetch_slot(key, table, tshift):
    """Hint: the table slot where `key`'s probe starts (a few blocks ahead)."""
    prefetch(table, home(hash_of(key), tshift))


@numba.njit(inline="always")
def peek(key, table, rowkey, tshift, confirm):
    """The row mapped to `key`, or -1 (confirm: checked against the row's key). Unconfirmed, the row of the
    first slot whose hash half is `key`'s: a hint read ahead of a block's turn (the row may be another block's
    or be recycled before the turn)."""
    mask = np.uint64(table.shape[0] - 1)
    hv = hash_of(key)
    h = home(hv, tshift)
    while True:
        s = table[h]
        if s == EMPTY:
            return np.intp(-1)
        if (s ^ hv) & _HI == 0 and (not confirm or rowkey[(s & _LO) - 1] == key):
            return np.intp((s & _LO) - 1)
        h = (h + _ONE) & mask


@numba.njit(inline="always")
def _delete(key, row, table, tshift):
    """Remove row `row` of `key` (mapped) from the table, shifting later entries of its run back (no
    tombstones)."""
    mask = np.uint64(table.shape[0] - 1)
    hv = hash_of(key)
    want = (hv & _HI) | (row + 1)
    h = home(hv, tshift)
    while table[h] != want:
        h = (h + _ONE) & mask
    j = h
    while True:
        j = (j + _ONE) & mask
        s = table[j]
        if s == EMPTY:
            break
        i = home(s, tshift)
        # s stays unless its home lies cyclically outside (h, j]: then the hole at h is on its probe path
        if (h < j and (i <= h or i > j)) or (h > j and i <= h and i > j):
            table[h] = s
            h = j
    table[h] = EMPTY


# called, not inlined: once per many blocks
@numba.njit(nogil=True, cache=True, _nrt=False)  # type: ignore[call-overload]  # _nrt: numba-private
def _sweep(table, rowkey, nxt, live, st):
    """Unmap every row whose block is neither cached nor a ghost, and chain those rows as the free list
    (lowest first). Called only once the free list is empty, so every row below the high-water mark is mapped
    (a row is unmapped only here, and then free until a block takes it): the pass reads the live column,
    and a freed row's key. One pass: each freed row's table slot is fetched as the row is found and its entry
    deleted SWEEP_AHEAD freed rows later (the row's lines still in the cache; two passes, the second
    following the chain, spent a third of their time waiting for the chain's rows again)."""
    tshift = st[S_TSHIFT]
    first = -1
    last = -1
    lag = -1                    # the freed row whose entry is deleted next, SWEEP_AHEAD behind `last`
    behind = 0
    freed = 0
    for s in range(st[S_HIWATER]):
        if live[s] == 0:
            prefetch_slot(rowkey[s], table, tshift)
            if last >= 0:
                nxt[last] = s
            else:
                first = s
                lag = s
            last = s
            freed += 1
            if behind == SWEEP_AHEAD:
                _delete(rowkey[lag], np.int64(lag), table, tshift)
                rowkey[lag] = UNMAPPED
                lag = nxt[lag]
            else:
                behind += 1
    if last >= 0:
        nxt[last] = -1
    while lag >= 0:
        _delete(rowkey[lag], np.int64(lag), table, tshift)
        rowkey[lag] = UNMAPPED
        lag = nxt[lag]
    st[S_FREE] = first
    st[S_SWEEPS] += 1
    st[S_FREED] += freed


@numba.njit(inline="always")
def row_of(key, table, rowkey, prev, nxt, live, st):
    """The row of block `key`: its own when mapped, else a free one (links -1, not live) mapped to it."""
    mask = np.uint64(table.shape[0] - 1)
    tshift = st[S_TSHIFT]
    hv = hash_of(key)
    h = home(hv, tshift)
    while True:
        s = table[h]
        if s == EMPTY:
            break
        if (s ^ hv) & _HI == 0 and rowkey[(s & _LO) - 1] == key:
            return np.intp((s & _LO) - 1)
        h = (h + _ONE) & mask
    x = st[S_FREE]
    if x < 0 and st[S_HIWATER] < rowkey.shape[0]:
        x = st[S_HIWATER]                    # a fresh row (zeroed by the allocation: not live)
        st[S_HIWATER] = x + 1
        prev[x] = -1
        nxt[x] = -1
    else:
        if x < 0:                             # every row taken: recycle (Rows.reserve made this the bound)
            _sweep(table, rowkey, nxt, live, st)
            x = st[S_FREE]
            h = home(hv, tshift)              # deletions moved entries: find the key's empty slot again
            while table[h] != EMPTY:
                h = (h + _ONE) & mask
        st[S_FREE] = nxt[x]
        nxt[x] = -1
    table[h] = (hv & _HI) | (x + 1)
    rowkey[x] = key
    return np.intp(x)


@numba.njit(inline="always")
def row_if_kept(key, table, rowkey, prev, nxt, live, st):
    """For a block the cache will not take in (a write around it, a bypassing read): its row if it has one,
    else -1. Until rows are first recycled it gets one all the same, so that every block seen has one and
    `hiwater` stays exact; after that the replay has seen more blocks than it has rows, and a row for a block
    that cannot stay would only be swept again."""
    if st[S_SWEEPS] == 0:
        return row_of(key, table, rowkey, prev, nxt, live, st)
    return peek(key, table, rowkey, st[S_TSHIFT], True)


@numba.njit(nogil=True, cache=True)
def _rehash(table, new_table, tshift):
    mask = np.uint64(new_table.shape[0] - 1)
    for j in range(table.shape[0]):
        s = table[j]
        if s != EMPTY:
            h = home(s, tshift)
            while new_table[h] != EMPTY:
                h = (h + _ONE) & mask
            new_table[h] = s


def table_slots(rows: int) -> int:
    """The table's slots for `rows` entries: a power of two, at most MAX_LOAD full."""
    bits = 6
    while (1 << bits) * MAX_LOAD < rows:
        bits += 1
    return 1 << bits


def bytes_per_row() -> float:
    return ROW_COLS * 4 + KEY_BYTES


class Rows:
    """Up to `rows_max` rows of ROW_COLS int32 (`node`) for the blocks a replay holds, and the table from
    block key to row. `reserve(n)` before a call that may see n new blocks: all rows_max rows exist from the
    first call (untouched until taken), and the table grows (doubling) for the rows that may be mapped, so
    that a kernel only recycles once all rows_max are taken."""

    def __init__(self, rows_max: int, what: str = "the cache"):
        self.rows_max = max(1, int(rows_max))
        self.what = what
        self.node = np.zeros((0, ROW_COLS), dtype=np.int32)
        self.rowkey = np.zeros(0, dtype=np.int64)
        self.table = np.zeros(64, dtype=np.int64)
        self.st = np.zeros(_NST, dtype=np.int64)
        self.st[S_FREE] = -1
        self.st[S_TSHIFT] = 64 - 6
        self.table_rows = 0                 # rows the table is sized for (reserve)
        self.populated = 0                  # rows whose pages are made (reserve)

    @property
    def hiwater(self) -> int:
        """Rows ever taken: the distinct blocks seen, while no sweep has run."""
        return int(self.st[S_HIWATER])

    @property
    def sweeps(self) -> int:
        return int(self.st[S_SWEEPS])

    @property
    def recycled(self) -> bool:
        """Rows have been recycled: the replay has seen more distinct blocks than rows_max."""
        return self.sweeps > 0

    def allocated_bytes(self) -> int:
        """The rows taken so far (the others are allocated but never touched: no memory) and the table."""
        return int(min(self.hiwater, self.rows_max) * bytes_per_row() + self.table.nbytes)

    def reserve(self, new_blocks: int) -> None:
        need = min(self.rows_max, self.hiwater + int(new_blocks))
        if self.node.shape[0] == 0:
            # every row at once, refused now if they could not fit; calloc'd, a row's page is only touched when
            # the row is first taken (in order), so memory follows the rows used and growing copies nothing
            if self.rows_max >= 1 << 31:                 # rows are int32 in the lists and the table
                raise DbtierError(f"{self.what} needs state for more than {(1 << 31) - 1:,} blocks",
                                  "use a larger --block-size or a smaller cache")
            want = self.rows_max * bytes_per_row() + table_slots(self.rows_max) * SLOT_BYTES
            if want > memory_bytes() // 2:
                raise DbtierError(
                    f"{self.what} needs state for {self.rows_max:,} blocks, about {want / 1e9:,.1f} GB; this machine "
                    f"has {memory_bytes() / 1e9:,.1f} GB", "use a larger --block-size or a smaller cache")
            self.node = np.zeros((self.rows_max, ROW_COLS), dtype=np.int32)
            self.rowkey = np.zeros(self.rows_max, dtype=np.int64)
        if need > self.populated:
            # the rows this call may take are made now (populate: one call, not a fault a page)
            populate(self.node, self.populated * ROW_COLS, need * ROW_COLS)
            populate(self.rowkey, self.populated, need)
            self.populated = need
        if need <= self.table_rows:
            return
        # the table follows the rows in use (doubling): a large cache over a small trace keeps a small one;
        # within a quarter of its largest it takes that at once (calloc'd: fresh pages are touched as used, and
        # tables made only to be rehashed cost their page faults: 0.2 s of a 64 GB cache's replay)
        rows = min(self.rows_max, max(need, 2 * self.table_rows, 1024))
        if 4 * table_slots(rows) >= table_slots(self.rows_max):
            rows = self.rows_max
        self.table_rows = rows
        slots = table_slots(rows)
        if slots > self.table.shape[0]:
            table = np.zeros(slots, dtype=np.int64)
            populate(table)                     # written throughout
            tshift = 64 - (slots.bit_length() - 1)
            _rehash(self.table, table, tshift)
            self.table = table
            self.st[S_TSHIFT] = tshift
