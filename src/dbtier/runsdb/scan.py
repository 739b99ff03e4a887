"""Find the runs under a runs directory and bring its index up to date.

What is a run: a directory holding a result.json or dbtier's run marker (results/store.RUN_MARKER),
directly under the runs directory, or a step of a lab (a run directory inside a lab's), or under a plain
folder that groups runs (up to two levels down). A marked directory without its result.json is listed as
damaged ("no result.json"); a folder with neither (a report, a WAL or textfile directory) is no run and is
not listed. Hidden entries (the index itself, temp files) and `bench/` (what `make bench` writes: figures,
not runs) are not runs.

`refresh_registered` lists the runs made elsewhere (dbtier.core.runlog: wherever --out put them), with
their own index in the state directory; the registry is pruned of the runs deleted since.

Reading is the slow part of a cold index (10,000 documents): above POOL_MIN documents it is spread over
the CPUs in worker processes (spawned, so no state of this process is shared).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc

from dbtier.core import runlog
from dbtier.core.errors import DbtierError
from dbtier.results.store import RESULT_FILE, has_marker, marker_of
from dbtier.runsdb import extract, index

POOL_MIN = 64           # fewer documents are read faster here than workers start
_NOT_RUNS = frozenset({"bench"})
_MAX_DEPTH = 2          # folders of folders of runs; deeper is not searched
Progress = Callable[[int, int], None]


@dataclass
class Refreshed:
    root: str                       # the runs directory, absolute
    table: pa.Table
    runs: int = 0
    read: int = 0                   # documents read this time
    reused: int = 0                 # rows taken from the index as they were
    removed: int = 0                # rows of runs that are gone
    written: bool = False
    not_written: str | None = None  # why the index file could not be written
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    registry: str | None = None     # the run registry this lists (its runs: made elsewhere), else None
    pruned: int = 0                 # registry entries dropped: those runs are gone

    def as_dict(self) -> dict[str, Any]:
        if self.registry is not None:
            head = {"runs_dir": None, "registry": self.registry, "file": str(registry_index()), "pruned": self.pruned}
        else:
            head = {"runs_dir": self.root, "file": str(index.path_of(self.root))}
        return {**head, "runs": self.runs, "read": self.read, "reused": self.reused, "removed": self.removed,
                "written": self.written, "not_written": self.not_written, "seconds": round(self.seconds, 3)}


def check_root(root: str) -> str:
    """The runs directory as an absolute path, or one error naming what is wrong with it."""
    if str(root).strip() == "":
        raise DbtierError("--runs-dir '': an empty directory name", "e.g. --runs-dir runs")
    try:
        ok = os.path.isdir(root)
        exists = ok or os.path.lexists(root)
    except OSError:
        ok, exists = False, False
    if not ok:
        what = "is not a directory" if exists else "does not exist"
        raise DbtierError(f"runs directory {root} {what}",
                          "pass the directory dbtier writes runs into with --runs-dir DIR (default ./runs)")
    path = os.path.abspath(root)
    if not _utf8(path):
        raise DbtierError(f"runs directory {shown(path)}: its path is not UTF-8 text", "rename it, or link to it")
    return path


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _is_run(path: str) -> bool:
    return _stat(os.path.join(path, RESULT_FILE)) is not None or has_marker(path)


def _has_runs(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return any(e.is_dir() and _is_run(e.path) for e in it)
    except OSError:
        return False


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:      # bytes that are not UTF-8 (os.fsdecode's surrogates)
        return False


def shown(name: str) -> str:
    """A name that is not UTF-8, readable (its bad bytes as U+FFFD); the index stores text."""
    return os.fsencode(name).decode("utf-8", "replace")


Found = tuple[str, "os.stat_result | None", "str | None"]
NOT_UTF8 = "its name is not UTF-8 text (rename it to list it)"


def discover(root: str, rel: str = "", depth: int = 0) -> list[Found]:
    """(run_id, stat of its result.json or None, why it is damaged or None) for every run under root/rel;
    a name that is not UTF-8 is given as shown(), never read."""
    out: list[Found] = []
    try:
        with os.scandir(os.path.join(root, rel)) as it:
            entries = sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        return out
    for e in entries:
        try:
            if not e.is_dir():
                continue
        except OSError:
            continue
        rid = os.path.join(rel, e.name) if rel else e.name
        if not _utf8(rid):
            if _is_run(e.path):
                out.append((shown(rid), None, NOT_UTF8))
            continue
        st = _stat(os.path.join(e.path, RESULT_FILE))
        if st is not None:
            out.append((rid, st, None))
        elif depth == 0 and e.name in _NOT_RUNS:
            continue
        elif has_marker(e.path):        # a run whose document is gone
            out.append((rid, None, None))
        elif depth < _MAX_DEPTH and _has_runs(e.path):
            out += discover(root, rid, depth + 1)
        # else: a folder that is not a run and never was one: not listed
    return out


def _lab_steps(root: str, lab_id: str) -> list[Found]:
    out: list[Found] = []
    try:
        with os.scandir(os.path.join(root, lab_id)) as it:
            for e in sorted(it, key=lambda e: e.name):
                if e.name.startswith(".") or e.name == "raw" or not e.is_dir():
                    continue
                st = _stat(os.path.join(e.path, RESULT_FILE))
                if st is not None and _utf8(e.name):
                    out.append((os.path.join(lab_id, e.name), st, None))
    except OSError:
        pass
    return out


def _read(root: str, todo: list[tuple[str, str | None]], progress: Progress | None) -> list[dict[str, Any]]:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if len(todo) < POOL_MIN or cpus < 2:
        rows = []
        for i, (rid, lab) in enumerate(todo):
            rows.append(extract.read_row(root, rid, lab))
            if progress and i % 200 == 199:
                progress(i + 1, len(todo))
        return rows
    import multiprocessing
    workers = min(cpus, 8)
    size = max(16, min(256, len(todo) // (workers * 8) or 1))
    chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
    rows = []
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for part in pool.map(extract.read_rows, [root] * len(chunks), chunks):
                rows += part
                if progress:
                    progress(len(rows), len(todo))
    except (OSError, RuntimeError):     # no processes to be had (limits, a sandbox): read them here
        return [extract.read_row(root, rid, lab) for rid, lab in todo]
    return rows


def _changed(old: dict[str, tuple[int, int, str]], rid: str, st: os.stat_result | None) -> bool:
    o = old.get(rid)
    if o is None or st is None:
        return True
    # a running run is read again: its process may have died without the file changing (abandoned)
    return (o[0], o[1]) != (st.st_mtime_ns, st.st_size) or o[2] == "running"


def refresh(root: str, progress: Progress | None = None, write: bool = True) -> Refreshed:
    """The index of `root` brought up to date with what is on disk (and saved when anything changed)."""
    root = check_root(root)
    return _refresh(root, discover(root), None, progress, write)


def registry_index() -> Path:
    return runlog.state_dir() / "runs-index.parquet"


def _still_a_run(e: dict[str, Any]) -> bool:
    p = e["path"]
    return os.path.isdir(p) and _is_run(p)


def refresh_registered(skip: set[str], progress: Progress | None = None, write: bool = True) -> Refreshed:
    """The runs of the run registry (pruned of those deleted since) that are not among `skip` (real paths:
    the runs the runs directories list already), each as a row whose run_id is its absolute path without the
    leading '/' (the index's root is '/'). A run inside another run's directory (a lab's step, the imports
    an advise run makes) is part of that run, not listed on its own (a lab lists its steps)."""
    entries, pruned = runlog.prune(_still_a_run)
    reals = [(e["path"], os.path.realpath(e["path"])) for e in entries]
    runs = {r for _, r in reals} | skip
    found: list[Found] = []
    for p, real in reals:
        if real in skip or not _utf8(p) or _inside(real, runs):
            continue
        found.append((p.lstrip("/"), _stat(os.path.join(p, RESULT_FILE)), None))
    r = _refresh("/", found, registry_index(), progress, write)
    r.registry, r.pruned = str(runlog.registry_path()), pruned
    return r


def _inside(real: str, runs: set[str]) -> bool:
    parent = os.path.dirname(real)
    while parent and parent != os.path.dirname(parent):
        if parent in runs:
            return True
        parent = os.path.dirname(parent)
    return False


def _refresh(root: str, top: list[Found], file: Path | None, progress: Progress | None, write: bool) -> Refreshed:
    t0 = time.perf_counter()
    fp = index.fingerprint()
    old_t = index.load(root, fp, file)
    old: dict[str, tuple[int, int, str]] = {}
    labs_before: set[str] = set()
    if old_t is not None:
        cols = old_t.select(["run_id", "mtime_ns", "size", "status", "command"]).to_pydict()
        for rid, m, s, status, cmd in zip(cols["run_id"], cols["mtime_ns"], cols["size"], cols["status"],
                                          cols["command"]):
            old[rid] = (m, s, status)
            if cmd == "lab":
                labs_before.add(rid)
    keep: list[str] = []
    new_rows: list[dict[str, Any]] = []

    def sort(found: list[Found], lab: str | None) -> list[tuple[str, str | None]]:
        todo = []
        for rid, st, why in found:
            if st is None:
                if old.get(rid, (0, 0, ""))[1] == -1:     # still no result.json: its row stands
                    keep.append(rid)
                else:
                    new_rows.append(extract.damaged_row(rid, why or f"no {RESULT_FILE}", lab=lab,
                                                        marker=marker_of(os.path.join(root, rid))))
            elif _changed(old, rid, st):
                todo.append((rid, lab))
            else:
                keep.append(rid)
        return todo

    fresh = _read(root, sort(top, None), progress)
    new_rows += fresh
    labs = [rid for rid in keep if rid in labs_before] + [r["run_id"] for r in fresh if r["command"] == "lab"]
    steps = [(lab, _lab_steps(root, lab)) for lab in labs]
    todo = [x for lab, found in steps for x in sort(found, lab)]
    new_rows += _read(root, todo, None)

    kept_t = None
    if old_t is not None and keep:
        kept_t = old_t.filter(pc.is_in(old_t["run_id"], value_set=pa.array(keep, pa.string())))
    new_t = index.table(new_rows)
    t = pa.concat_tables([kept_t, new_t]) if kept_t is not None else new_t
    r = Refreshed(root, t, runs=t.num_rows, read=len(new_rows), reused=len(keep))
    r.removed = len(old) - len(keep) - sum(1 for row in new_rows if row["run_id"] in old)
    if write and (old_t is None or new_rows or r.removed):
        r.not_written = index.save(root, t, fp, file)
        r.written = r.not_written is None
    r.seconds = time.perf_counter() - t0
    return r
