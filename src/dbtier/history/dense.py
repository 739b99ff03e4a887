"""The consolidation grid at fleet scale, without a sort: each database's cells made in one pass over its
intervals (in any order) as a dense run of its bins, by a compiled kernel, and added straight into the
per-bin sums. consolidate.regrid does the same in SQL with a window over each database's intervals in time
order, whose sort was most of a 10,000-database consolidation.

The rules are regrid's, to the piece: an interval overlapping a cell adds (overlap seconds) to the cell's
coverage and (rate x overlap) to its numerator (for a rate the interval has); the cell's rate is the
numerator over the seconds of the intervals that have that rate, and the cell counts when covered for at
least half its length. tests/unit/test_history_dense.py holds the two implementations to each other.

Pass 1 (a batch of whole databases at a time): the cells, each database's first and last counting cell,
the per-bin sums over the bins any common window can hold (`bound`: from the latest first interval to the
earliest last one), and each database's IOPS and MB/s over those bins, kept in a file per batch.
Pass 2: once every database's first and last cell give the window, each database's figures over it, read
back from those files.

`Fallback` says the dense form does not fit (a database whose span holds far more cells than its intervals,
e.g. years of gaps) or that the consolidation is to fail (a database with no cell, histories that do not
overlap): the caller then takes regrid's way, which also words the error.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import duckdb

from dbtier.history import store

METRICS = ("read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps")
_IOPS, _MBPS = METRICS.index("iops"), METRICS.index("mbps")
_NONE = np.iinfo(np.int64).min      # "no cell" in first/last


class Fallback(Exception):
    """The dense grid does not apply here (see the module's text)."""


@dataclass
class Dense:
    """Pass 1's product: each database's first and last counting bin, the per-bin sums over `bound`, and
    the files of each batch's databases' cells over `bound`."""
    names: list[str]
    first: np.ndarray            # int64 per database (index into names); _NONE when it has no cell
    last: np.ndarray
    bound: tuple[int, int]       # bins [b0, b1]
    count: np.ndarray            # per bin of bound: databases with a cell there
    sums: np.ndarray             # (6, bins): sum of each rate over those cells (non-NULL ones)
    nonnull: np.ndarray          # (6, bins): how many cells had that rate
    spills: list[tuple[np.ndarray, Path]]     # (database indexes, PATH.{valid,iops,mbps}.npy over bound)
    batch: dict[int, int]                     # database index -> the batch (index into pass1's batches) holding it

    def batches_of(self, names: Sequence[str]) -> list[int]:
        pos = {n: i for i, n in enumerate(self.names)}
        return sorted({self.batch[pos[n]] for n in names if pos.get(n) in self.batch})


@numba.njit(nogil=True, cache=True)
def _spans(db, s, e, g, ndb):
    first = np.full(ndb, np.iinfo(np.int64).max, np.int64)
    last = np.full(ndb, np.iinfo(np.int64).min, np.int64)
    for i in range(db.shape[0]):
        d = db[i]
        b0 = np.int64(np.floor(s[i] / g))
        b1 = np.int64(np.ceil(e[i] / g)) - 1
        if b0 < first[d]:
            first[d] = b0
        if b1 > last[d]:
            last[d] = b1
    return first, last


@numba.njit(nogil=True, cache=True)
def _accumulate(db, s, e, rates, g, first, off, cov, num, den, full):
    """Each interval's pieces into its database's cells (regrid's pieces: min(e, cell end) - max(s, cell
    start) for every cell it overlaps, kept when positive). `full`: no rate is ever missing, so each rate's
    seconds are the cell's coverage (den is not kept)."""
    k = rates.shape[0]
    for i in range(db.shape[0]):
        d = db[i]
        si, ei = s[i], e[i]
        b = np.int64(np.floor(si / g))
        while b * g < ei:
            ov = min(ei, (b + 1) * g) - max(si, b * g)
            if ov > 0:
                j = off[d] + b - first[d]
                cov[j] += ov
                for m in range(k):
                    r = rates[m, i]
                    if full:
                        num[m, j] += r * ov
                    elif not np.isnan(r):
                        num[m, j] += r * ov
                        den[m, j] += ov
            b += 1


@numba.njit(nogil=True, cache=True)
def _finish(first, off, cov, num, den, full, g, derive_iops, derive_mbps, b0, b1, summed_idx,
            vfirst, vlast, count, sums, nonnull, sv, si, sm):
    """Per database: its first and last counting cell; its cells in [b0, b1] into the per-bin sums and
    into its row of the spill arrays (sv valid, si IOPS, sm MB/s)."""
    nm = sums.shape[0]
    vals = np.empty(nm)
    for d in range(first.shape[0]):
        n = (off[d + 1] - off[d])
        for t in range(n):
            j = off[d] + t
            if cov[j] < g / 2:
                continue
            b = first[d] + t
            if vfirst[d] == np.iinfo(np.int64).min or b < vfirst[d]:
                vfirst[d] = b
            if vlast[d] == np.iinfo(np.int64).min or b > vlast[d]:
                vlast[d] = b
            if b < b0 or b > b1:
                continue
            for m in range(nm):
                vals[m] = np.nan
            for q in range(summed_idx.shape[0]):
                m = summed_idx[q]
                secs = cov[j] if full else den[q, j]
                if secs > 0:
                    vals[m] = num[q, j] / secs
            if derive_iops:
                vals[2] = vals[0] + vals[1]
            if derive_mbps:
                vals[5] = vals[3] + vals[4]
            c = b - b0
            count[c] += 1
            for m in range(nm):
                if not np.isnan(vals[m]):
                    sums[m, c] += vals[m]
                    nonnull[m, c] += 1
            sv[d, c] = True
            si[d, c] = vals[2]
            sm[d, c] = vals[5]


def bound(con: duckdb.DuckDBPyConnection, table: str, step: int, overlap_s: tuple[float, float] | None) -> tuple[int, int]:
    """The bins any common window lies in: from the latest first interval's first cell to the earliest last
    interval's last cell (a window is where every database has cells). `overlap_s`: (latest start, earliest
    end) in seconds since the epoch, when the imports say them (whole seconds: the end is taken a second
    later, so the bound never falls short); else the totals are read for them."""
    g = float(step)
    if overlap_s is not None:
        lo, hi = int(np.floor(overlap_s[0] / g)), int(np.ceil((overlap_s[1] + 1) / g)) - 1
        if lo > hi:
            raise Fallback("no overlap")
        return lo, hi
    lo, hi = store.one_row(con.execute(f"""SELECT max(CAST(floor(s / 1e6 / {g}) AS BIGINT)), min(CAST(ceil(e / 1e6 / {g}) AS BIGINT) - 1)
                             FROM (SELECT min(epoch_us(start)) AS s, max(epoch_us("end")) AS e FROM {table}
                                   GROUP BY database)"""))
    if lo is None or hi is None or lo > hi:
        raise Fallback("no overlap")
    return int(lo), int(hi)


# bytes a cell takes in pass 1: coverage, and a numerator and a denominator for each of up to 6 rates
_CELL_BYTES = 8 * 13


def pass1(con: duckdb.DuckDBPyConnection, batches: Sequence[str], names: Sequence[str], step: int,
          shape: dict[str, Any], bnd: tuple[int, int], work: Path) -> Dense:
    """Every batch (SQL selecting the totals of whole databases) put on the grid (see the module's text)."""
    cell_budget = store.batch_bytes() // _CELL_BYTES
    g = float(step)
    derive = shape["derive"]
    summed = [m for m in METRICS if not derive.get(m)]
    full = all(shape["full"].get(m) for m in summed)
    summed_idx = np.array([METRICS.index(m) for m in summed], np.int64)
    ndb = len(names)
    b0, b1 = bnd
    width = b1 - b0 + 1
    vfirst = np.full(ndb, _NONE, np.int64)
    vlast = np.full(ndb, _NONE, np.int64)
    count = np.zeros(width, np.int64)
    sums = np.zeros((len(METRICS), width))
    nonnull = np.zeros((len(METRICS), width), np.int64)
    spills = []
    batch: dict[int, int] = {}
    bufs = _Buffers()
    value_set = pa.array(list(names), pa.string())
    local = np.zeros(ndb, np.int64)
    # NaN stands for NULL (a rate is finite or missing)
    rates = ", ".join(f"coalesce({m}, 'NaN'::DOUBLE)" for m in summed)
    queries = [f"""SELECT database, epoch_us(start) / 1e6 AS s, epoch_us("end") / 1e6 AS e, {rates} FROM {src}"""
               for src in batches]
    for k, tbl in enumerate(_fetched(con, queries)):
        if tbl.num_rows == 0:
            continue
        found = pc.index_in(tbl.column(0), value_set=value_set)
        if found.null_count:
            raise Fallback("a database the shape does not name")
        gi = found.to_numpy(zero_copy_only=False)
        ids = np.flatnonzero(np.bincount(gi, minlength=ndb))     # the batch's databases (indexes into names)
        local[ids] = np.arange(len(ids))
        db = local[gi]                                            # ... as 0..n-1
        s = tbl.column(1).to_numpy()
        e = tbl.column(2).to_numpy()
        r = np.empty((len(summed), tbl.num_rows))
        for q in range(len(summed)):
            r[q] = tbl.column(3 + q).to_numpy()
        del tbl, found, gi
        first, last = _spans(db, s, e, g, len(ids))
        sizes = np.maximum(last - first + 1, 0)
        if int(sizes.sum()) > cell_budget or len(ids) * width > cell_budget:
            raise Fallback("spans too sparse")
        off = np.zeros(len(ids) + 1, np.int64)
        np.cumsum(sizes, out=off[1:])
        ncell = int(off[-1])
        # the buffers kept from batch to batch (cleared, not made anew: fresh pages cost a page fault each)
        cov, num, den = bufs.cells(ncell, len(summed), full)
        _accumulate(db, s, e, r, g, first, off, cov, num, den, full)
        del s, e, r, db
        sv, si, sm = bufs.spill(len(ids), width)
        fv = np.full(len(ids), _NONE, np.int64)
        lv = np.full(len(ids), _NONE, np.int64)
        _finish(first, off, cov, num, den, full, g, bool(derive.get("iops")), bool(derive.get("mbps")), b0, b1,
                summed_idx, fv, lv, count, sums, nonnull, sv, si, sm)
        vfirst[ids], vlast[ids] = fv, lv
        path = work / f"dense-{k:05d}"
        for name, arr in (("valid", sv), ("iops", si), ("mbps", sm)):
            np.save(path.with_suffix(f".{name}.npy"), arr)
        spills.append((ids, path))
        batch.update((int(i), k) for i in ids)
    return Dense(list(names), vfirst, vlast, bnd, count, sums, nonnull, spills, batch)


class _Buffers:
    """pass1's arrays, grown when a batch needs more and cleared for each."""

    def __init__(self) -> None:
        self._cells = np.zeros(0)
        self._spill = (np.zeros(0, np.bool_), np.zeros(0), np.zeros(0))

    def cells(self, n: int, k: int, full: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Coverage, k numerators and (unless `full`) k denominators of n cells, zeroed."""
        size = n * (1 + k) if full else n * (1 + 2 * k)
        if self._cells.size < size:
            self._cells = np.empty(size)
        buf = self._cells[:size]
        buf.fill(0.0)
        den = buf[:0].reshape(0, 0) if full else buf[n * (1 + k):].reshape(k, n)
        return buf[:n], buf[n:n * (1 + k)].reshape(k, n), den

    def spill(self, rows: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = rows * width
        if self._spill[0].size < n:
            self._spill = (np.empty(n, np.bool_), np.empty(n), np.empty(n))
        v, i, m = (a[:n].reshape(rows, width) for a in self._spill)
        v.fill(False)
        i.fill(np.nan)
        m.fill(np.nan)
        return v, i, m


def _fetched(con: duckdb.DuckDBPyConnection, queries: Sequence[str]) -> Iterator[pa.Table]:
    """Each query's rows, the next one read (by DuckDB, in a thread of its own, on a cursor of its own) while
    the caller works on this one: the kernels and the reading overlap."""
    cur = con.cursor()
    with ThreadPoolExecutor(1, thread_name_prefix="dbtier-grid") as pool:
        ahead = pool.submit(lambda q: cur.execute(q).to_arrow_table(), queries[0]) if queries else None
        for i in range(len(queries)):
            assert ahead is not None        # submitted for query i, before the loop or in the pass before
            tbl = ahead.result()
            ahead = pool.submit(lambda q: cur.execute(q).to_arrow_table(), queries[i + 1]) \
                if i + 1 < len(queries) else None
            yield tbl
    cur.close()


def _spill(path: Path, name: str, cols: slice | int) -> np.ndarray:
    return np.load(path.with_suffix(f".{name}.npy"), mmap_mode="r")[:, cols]


def window(dense: Dense) -> tuple[int, int]:
    """regrid's window: the latest first cell to the earliest last one (Fallback when a database has no
    cell or the histories do not overlap: regrid's way words those)."""
    if (dense.first == _NONE).any():
        raise Fallback("a database without a cell")
    lo, hi = int(dense.first.max()), int(dense.last.min())
    if lo > hi:
        raise Fallback("no overlap")
    return lo, hi


def sum_table(dense: Dense, lo: int, hi: int) -> pa.Table:
    """The summed series over the window: bins where some database has a cell, `databases` how many, each
    rate's sum (NULL where no database has it)."""
    b0 = dense.bound[0]
    cols = slice(lo - b0, hi - b0 + 1)
    cnt = dense.count[cols]
    keep = cnt > 0
    bins = np.arange(lo, hi + 1, dtype=np.int64)[keep]
    data: dict[str, Any] = {"bin": pa.array(bins), "databases": pa.array(cnt[keep])}
    for m, name in enumerate(METRICS):
        data[name] = pa.array(dense.sums[m, cols][keep], mask=dense.nonnull[m, cols][keep] == 0)
    return pa.table(data)


@dataclass
class PerDb:
    names: list[str]
    max_iops: np.ndarray     # NaN: no IOPS in the window
    max_mbps: np.ndarray
    peak_bin: np.ndarray
    cells: np.ndarray        # cells in the window (0: not in the window at all)


def per_database(dense: Dense, lo: int, hi: int) -> PerDb:
    """Each database over the window: its highest IOPS and MB/s cell, the bin of its highest IOPS (the
    earliest of equals; without IOPS, its first cell), and how many cells it has there."""
    b0 = dense.bound[0]
    cols = slice(lo - b0, hi - b0 + 1)
    n = len(dense.names)
    mi, mm = np.full(n, np.nan), np.full(n, np.nan)
    pb, nc = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for ids, path in dense.spills:
        v, iops, mbps = (_spill(path, x, cols) for x in ("valid", "iops", "mbps"))
        nc[ids] = v.sum(axis=1)
        has_i = v & ~np.isnan(iops)
        mi[ids] = np.where(has_i.any(axis=1), np.where(has_i, iops, -np.inf).max(axis=1), np.nan)
        has_m = v & ~np.isnan(mbps)
        mm[ids] = np.where(has_m.any(axis=1), np.where(has_m, mbps, -np.inf).max(axis=1), np.nan)
        key = np.where(v, np.where(np.isnan(iops), -1.0, iops), -np.inf)
        pb[ids] = lo + key.argmax(axis=1)      # argmax: the first of equals, the earliest bin
    return PerDb(dense.names, mi, mm, pb, nc)


def at_bin(dense: Dense, lo: int, b: int) -> list[tuple[str, float, float]]:
    """(database, IOPS, MB/s) of every database with a cell at bin `b` (NaN where it lacks the rate)."""
    c = b - dense.bound[0]
    out = []
    for ids, path in dense.spills:
        v, iops, mbps = (_spill(path, x, c) for x in ("valid", "iops", "mbps"))
        out += [(dense.names[i], float(iops[j]), float(mbps[j])) for j, i in enumerate(ids) if v[j]]
    return out


def register_sum(con: duckdb.DuckDBPyConnection, table: pa.Table, step: int, out: str) -> None:
    """`out` as regrid's way makes it (bin, start, end, seconds, databases, the rates)."""
    con.register("_dense_sum", table)
    try:
        con.execute(f"""
            CREATE OR REPLACE TABLE {out} AS
            SELECT bin, TIMESTAMP '1970-01-01' + to_seconds(bin * {step}) AS start,
                   TIMESTAMP '1970-01-01' + to_seconds((bin + 1) * {step}) AS "end", {float(step)} AS seconds,
                   databases, {', '.join(METRICS)}
            FROM _dense_sum""")
    finally:
        con.unregister("_dense_sum")


