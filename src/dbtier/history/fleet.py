"""A fleet's history in batches: memory bounded by the batch, not by the number of databases.

**Import.** The files are read in batches of at most store.batch_bytes() of input (whole files, in the
order given; a file larger than that is a batch of its own, worked on a database file). Each batch is
read (many files per DuckDB scan), turned into intervals, totals, peaks and profiles in a DuckDB of its
own, and its series written as one part (`totals/part-00000.parquet`, `profiles/part-00000.parquet`,
...): a part holds whole databases, sorted by name. A database whose files fall in two batches or more
(or a RAC database one of whose instances is in another batch) is done again from all its files
together, as the last part, and dropped from the earlier ones: every database's figures come from all its
samples at once, whatever the batching. An import of one batch writes `totals.parquet` etc. as before.

**Bad files.** With `skip_bad`, a batch that fails is split in halves until the files that fail alone are
found (a few more reads of the batch, only when one is bad); the rest is imported and the skipped files
are listed with their error. Without it, the first error stops the import, naming the file (and the
line and column where the reader can tell).
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import read as read_history
from dbtier.history import provenance, store, summary
from dbtier.history.tables import ReadOptions, ReadResult
from dbtier.results.result import Frozen, Result

# sources whose files are read as one batch (a DMA collection is a few small files per database)
ONE_BATCH = ("dma",)


@dataclass(frozen=True, kw_only=True)
class HistoryImport(Result):
    """`history import`'s answer, the library call's (`import_files`): the section it adds to the document
    (summarise_import's sections over every batch's databases), read-only; the series it wrote, as parts
    under the working directory (series file name -> its parts, for the caller to move where it keeps
    them); the files skipped ({file, error}) and how many batches it read."""
    kind: str = "history.import"
    parts: Mapping[str, tuple[Path, ...]]
    skipped: tuple[Mapping[str, str], ...] = ()
    batches: int = 0


@dataclass
class _Batch:
    files: list[str]
    doc: dict[str, Any]
    owners: dict[str, tuple[list[str], list[str]]]     # database as the reader names it -> (its files, names made of it)
    parts: dict[str, Path]


def import_files(work: Path, source: str, files: Sequence[str], sizes: Sequence[int], opts: ReadOptions,
                 top: int, profile_tz: str, skip_bad: bool = False,
                 progress: Callable[[int, str], None] | None = None, into: dict[str, Any] | None = None) -> HistoryImport:
    """Read `files` (of `sizes` bytes) batch by batch into parts under `work`/out. `progress(files done,
    what now)` after each step. `into`: an earlier import's document: its parts are taken as they are
    (hard links) but for the databases these files add to, which are done again from their earlier files
    and these together."""
    progress = progress or (lambda _n, _what: None)
    budget = 1 << 62 if source in ONE_BATCH else store.batch_bytes()
    groups = store.plan_batches(list(sizes), budget)
    out = work / "out"
    batches: list[_Batch] = [_earlier(into, out)] if into is not None else []
    skipped: list[dict[str, str]] = []
    done = 0
    for k, idx in enumerate(groups):
        if k + 1 < len(groups):   # the next batch's files come off the disk while DuckDB works on this one
            _prefetch([files[i] for i in groups[k + 1]])
        names = [files[i] for i in idx]
        nbytes = sum(sizes[i] for i in idx)
        what = f"batch {k + 1} of {len(groups)}" if len(groups) > 1 else "reading"
        progress(done, f"{source}: {what} ({len(names):,} files)")
        good, bad = _usable(work, source, names, nbytes, opts, top, profile_tz, skip_bad)
        skipped += bad
        if good:
            batches.append(_run_batch(work, out, len(batches), source, good, nbytes, opts, top, profile_tz))
        if len(groups) > 1:     # read once: its pages make room for the next batch's (no reclaim at the end)
            _fadvise(names, getattr(os, "POSIX_FADV_DONTNEED", None))
        done += len(names)
        progress(done, f"{source}: {done:,} of {len(files):,} files read")
    if not batches:
        raise DbtierError(f"every file failed ({len(skipped)}; the first: {skipped[0]['error']})",
                          "check that the files are the collector's output for --source " + source)
    _redo_spanning(work, out, source, batches, opts, top, profile_tz, progress, len(files))
    doc = _merge([b.doc for b in batches])
    if not doc["databases"]:
        raise summary.no_intervals([f for b in batches for f in b.files])
    prov = next((b.doc["provenance"] for b in batches if b.doc.get("provenance")), None)   # (an --into run may
    if doc.get("kind") != "hourly" and prov:                    # predate it) every batch's resets and gaps, once
        doc["provenance"] = provenance.run_level({k: prov[k] for k in provenance.KEYS if k in prov},
                                                 doc["databases"])
    parts: dict[str, list[Path]] = {}
    for b in batches:
        for name, path in b.parts.items():
            if path.exists():
                parts.setdefault(name.split("#")[0], []).append(path)
    # which files hold which database (what a later --into reads again); the last batch that read a database
    # (the one that did it again from all its files) says it
    doc["database_files"] = {db: {"files": fs, "names": names} for b in batches for db, (fs, names) in b.owners.items()}
    return HistoryImport(section=Frozen(doc), parts={k: tuple(v) for k, v in parts.items()},
                         skipped=tuple(skipped), batches=len(groups))


def _prefetch(paths: Sequence[str]) -> None:
    """Ask the kernel to read `paths` ahead (posix_fadvise WILLNEED), in a thread of its own: a fleet's CSV
    is larger than the page cache holds, and reading it took a sixth of a 10,000-database import."""
    _fadvise(paths, getattr(os, "POSIX_FADV_WILLNEED", None))


def _fadvise(paths: Sequence[str], advice: int | None) -> None:
    """posix_fadvise(advice) on each of `paths`, in a thread of its own (where the OS has it). DONTNEED after
    a batch: a fleet's 15 GB of CSV filled the page cache, and the kernel's reclaiming took the cores'
    time in the last third of the import."""
    if advice is None or not hasattr(os, "posix_fadvise"):
        return

    def run() -> None:
        for p in paths:
            try:
                fd = os.open(p, os.O_RDONLY)
            except OSError:
                continue              # its reader names it
            try:
                os.posix_fadvise(fd, 0, 0, advice)
            except OSError:
                pass
            finally:
                os.close(fd)

    threading.Thread(target=run, name="dbtier-fadvise", daemon=True).start()


def _earlier(doc: dict[str, Any], out: Path) -> _Batch:
    """An earlier import as the first batch: its parts linked into `out` (that run is never changed:
    a part rewritten without some databases is a new file), its databases' files from `database_files`."""
    run_dir = Path(doc["_run_dir"])
    held = doc.get("database_files")
    if not isinstance(held, dict):
        raise DbtierError(f"{run_dir}: an import written before `--into` (it does not say which files hold which "
                          "database)", "re-import its files together with the new ones (once)")
    parts: dict[str, Path] = {}
    n = 0
    for name in (store.INTERVALS_FILE, store.TOTALS_FILE, store.PROFILES_FILE):
        for i, p in enumerate(store.series_files(run_dir, name)):
            dest = out / store.part_path(name, 0).replace("part-00000", f"part-earlier-{i:05d}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(p, dest)
            except OSError:       # another filesystem: a copy
                shutil.copyfile(p, dest)
            parts[f"{name}#{i}"] = dest
            n += 1
    if n == 0:
        raise DbtierError(f"{run_dir}: no series files (totals.parquet) in this import run",
                          "re-run `dbtier history import` for it")
    owners = {db: (list(v.get("files") or []), list(v.get("names") or [db])) for db, v in held.items()}
    sections = {k: doc.get(k) for k in ("source", "kind", "files", "notes", "limitations", "profile_tz", "databases")}
    return _Batch(list(doc.get("files") or []), sections, owners, parts)


def _read_summarise(con: duckdb.DuckDBPyConnection, source: str, files: Sequence[str], opts: ReadOptions,
                    top: int, profile_tz: str, only: Sequence[str] | None = None,
                    owners: bool = False) -> tuple[ReadResult, dict[str, Any], dict]:
    res = read_history(con, source, list(files), opts)
    if only is not None:      # the databases done again: only their rows of these files
        inlist = ", ".join(sql_str(d) for d in only)
        con.execute(f"CREATE OR REPLACE VIEW _only AS SELECT * FROM {res.table} WHERE database IN ({inlist})")
        res.cleanup.append(res.table)
        res.table = "_only"
        if res.keys:
            res.keys = f"(SELECT * FROM {res.keys} WHERE database IN ({inlist}))"
    own = _owners(con, res) if owners else {}
    doc = summary.summarise_import(con, res, top=top, profile_tz=profile_tz, require_intervals=False)
    return res, doc, own


def _owners(con: duckdb.DuckDBPyConnection, res: ReadResult) -> dict[str, tuple[list[str], list[str]]]:
    """Each database as the reader names it: the files it came from, and the names it gets (NAME, or
    NAME/UNIT per instance when summary.name_units splits it)."""
    if res.kind == "hourly":
        return {}
    src = res.keys or res.table
    cols = {d[0] for d in con.execute(f"SELECT * FROM {src} LIMIT 0").description}
    files = "_file" if "_file" in cols else "NULL"
    units = "unit" if "unit" in cols else "NULL"
    held: dict[str, tuple[set, set]] = {}
    # the distinct triples (a few per file), grouped here: cheaper than lists of distinct values per database
    for db, f, u in con.execute(f"SELECT database, CAST(f AS VARCHAR), u FROM "
                                f"(SELECT DISTINCT database, {files} AS f, {units} AS u FROM {src})").fetchall():
        fs, us = held.setdefault(db, (set(), set()))
        fs.add(f)
        us.add(u)
    out = {}
    for db, (fs, us) in held.items():
        fs.discard(None)
        us.discard(None)
        named = [f"{db}/{u}" for u in sorted(us)] if res.unit_names and len(us) > 1 else [db]
        out[db] = (sorted(fs) if fs else list(res.files), named)
    return out


def _usable(work: Path, source: str, files: list[str], nbytes: int, opts: ReadOptions, top: int, profile_tz: str,
            skip_bad: bool) -> tuple[list[str], list[dict[str, str]]]:
    """The files of a batch to import, and those skipped ({file, error}). Without skip_bad, every file
    (a bad one stops the import where the batch is done)."""
    if not skip_bad:
        return files, []

    def fails(fs: list[str]) -> DbtierError | None:
        with store.open_db(work, nbytes) as con:
            try:
                _read_summarise(con, source, fs, opts, top, profile_tz)
            except DbtierError as exc:
                return exc
        return None

    first = fails(files)
    if first is None:
        return files, []

    def bisect(fs: list[str], err: DbtierError | None) -> list[dict[str, str]]:
        err = err if err is not None else fails(fs)
        if err is None:
            return []
        if len(fs) == 1:
            return [{"file": fs[0], "error": err.message}]
        mid = len(fs) // 2
        return bisect(fs[:mid], None) + bisect(fs[mid:], None)

    bad = bisect(files, first)
    if not bad:       # no file fails alone: the files disagree with each other (e.g. the same snapshot twice)
        raise first
    gone = {b["file"] for b in bad}
    return [f for f in files if f not in gone], bad


def _run_batch(work: Path, out: Path, k: int, source: str, files: list[str], nbytes: int, opts: ReadOptions,
               top: int, profile_tz: str, only: Sequence[str] | None = None) -> _Batch:
    with store.open_db(work, nbytes) as con:
        res, doc, own = _read_summarise(con, source, files, opts, top, profile_tz, only=only, owners=True)
        written = store.write_import_files(con, out, res.kind, doc["databases"], part=k)
    parts = {name: out / store.part_path(name, k) for name in written}
    return _Batch(list(files), doc, own, parts)


def _redo_spanning(work: Path, out: Path, source: str, batches: list[_Batch], opts: ReadOptions, top: int,
                   profile_tz: str, progress: Callable[[int, str], None], nfiles: int) -> None:
    """A database read in more than one batch: done again from all its files as one more batch, and its
    rows dropped from the earlier parts."""
    seen: dict[str, int] = {}
    for b in batches:
        for db in b.owners:
            seen[db] = seen.get(db, 0) + 1
    spanning = sorted(db for db, n in seen.items() if n > 1)
    if not spanning:
        return
    progress(nfiles, f"{source}: {len(spanning):,} database(s) in several batches, read again together")
    files = sorted({f for b in batches for db in spanning if db in b.owners for f in b.owners[db][0]})
    gone_files = [f for f in files if not os.path.exists(f)]
    if gone_files:
        raise DbtierError(f"{', '.join(gone_files[:3])}: gone, and {len(spanning)} database(s) among the new files "
                          f"({', '.join(spanning[:3])}) have earlier samples there to read again",
                          "put the earlier files back where they were, or import the database's files anew "
                          "without --into")
    nbytes = sum(os.path.getsize(f) for f in files if os.path.exists(f))
    drop: set[str] = set()
    for b in batches:
        gone = {n for db in spanning if db in b.owners for n in b.owners[db][1]}
        if not gone:
            continue
        drop |= gone
        b.doc["databases"] = [d for d in b.doc["databases"] if d["name"] not in gone]
        for path in b.parts.values():
            _rewrite_without(path, gone)
    batches.append(_run_batch(work, out, len(batches), source, files, nbytes, opts, top, profile_tz,
                              only=spanning))


def _rewrite_without(path: Path, gone: set[str]) -> None:
    """A part without the rows of `gone` (removed when nothing is left)."""
    con = duckdb.connect()
    try:
        src = f"read_parquet({sql_str(str(path))})"
        inlist = ", ".join(sql_str(d) for d in sorted(gone))
        left = store.one_row(con.execute(f"SELECT count(*) FROM {src} WHERE database NOT IN ({inlist})"))[0]
        if left == 0:
            path.unlink()
            return
        store.write_parquet(con, f"SELECT * FROM {src} WHERE database NOT IN ({inlist}) ORDER BY database", path)
    finally:
        con.close()


def _merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The batches' sections as one import's: databases by name, files, notes and limitations once each."""
    first = docs[0]
    out = dict(first)
    out["databases"] = sorted((d for doc in docs for d in doc["databases"]), key=lambda d: d["name"])
    for key in ("files", "notes", "limitations"):
        out[key] = list(dict.fromkeys(x for doc in docs for x in doc.get(key) or []))
    return out


def move_parts(parts: Mapping[str, Sequence[Path]], run_dir: Path) -> list[str]:
    """The parts into the run directory: NAME.parquet when there is one, NAME/part-*.parquet otherwise.
    Returns what the run directory holds (its `series_files`)."""
    names = []
    for name, paths in parts.items():
        if len(paths) == 1:
            shutil.move(str(paths[0]), run_dir / name)
            names.append(name)
        else:
            d = run_dir / name.removesuffix(".parquet")
            d.mkdir(exist_ok=True)
            for p in paths:
                shutil.move(str(p), d / p.name)
            names.append(f"{d.name}/")
    return names
