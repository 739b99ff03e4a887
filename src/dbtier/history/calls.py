"""`history consolidate` and `history requirement` as library calls, each a request in and a typed,
immutable result out (`history import`'s call is fleet.import_files):

    consolidate(ConsolidateRequest, start) -> HistoryConsolidate   several imports on one UTC grid
    requirement(RequirementRequest, start) -> HistoryRequirement   what `plan size --from-history` reads

Both read import (or consolidation) runs by their directories and work in a DuckDB of their own, in a
working directory removed on the way out. `start(inputs)` is called once the figures are made, before any
series is written, with the run directories read, and returns the directory the series go to (the command's
run directory: a run that fails before then leaves nothing); the section's `series_files` names the files
written there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.history import combine, split, store, summary
from dbtier.results.result import Frozen, Result
from dbtier.results.store import load_run

PERCENTILES = ("95", "99", "max")


def _grid_bytes(docs: Sequence[dict[str, Any]]) -> int:
    """About the grid's size in Parquet: the runs' totals (a batch of databases at a time goes to the work
    directory)."""
    return sum(store.input_sizes([p for d in docs for p in store.series_files(d["_run_dir"], store.TOTALS_FILE)]))


@dataclass(frozen=True, kw_only=True)
class ConsolidateRequest:
    """The databases of `runs` (import run directories) on one UTC grid of `step_s` seconds (None: the longest
    median snapshot interval, to the minute); `top` drivers of the combined peak; each database's own peak at
    `percentile` for the sum of the peaks; `full_grid`: every database's cells written, not the drivers'."""
    runs: tuple[str, ...]
    step_s: int | None = None
    top: int = 10
    percentile: str = "max"
    full_grid: bool = False


@dataclass(frozen=True, kw_only=True)
class HistoryConsolidate(Result):
    """`history consolidate`'s answer: the document's section (peak of the sum, sum of the peaks, drivers,
    the series files written where `start` said, ...) and the runs it read."""
    kind: str = "history.consolidate"
    inputs: tuple[str, ...]


Start = Callable[[Sequence[str]], Path]


def consolidate(req: ConsolidateRequest, start: Start,
                progress: Callable[[str], None] = lambda _what: None) -> HistoryConsolidate:
    docs = [load_run(r) for r in req.runs]
    with store.workdir(_grid_bytes(docs)) as work, store.open_db(work) as con:
        progress("consolidating")
        try:
            part = summary.consolidation(con, docs, req.step_s, req.top, req.percentile, work=work,
                                         full_grid=req.full_grid)
        except duckdb.Error as exc:   # a Parquet file damaged past its footer: name the runs' series
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DbtierError(f"cannot read the series of {', '.join(d['_run_dir'] for d in docs)}: {why[:300]}",
                              "re-run `dbtier history import` for the run whose totals.parquet is damaged") from None
        inputs = tuple(d["_run_dir"] for d in docs)
        out = start(inputs)
        if part.get("kind") == "series":     # hour-of-day sums have no grid to write
            progress("writing Parquet")
            drivers = None if req.full_grid else [d["database"] for d in part["drivers"]]
            part["grid_databases"] = "all" if drivers is None else drivers
            part["series_files"] = store.write_consolidation_files(con, out, drivers)
    return HistoryConsolidate(section=Frozen(part), inputs=inputs)


@dataclass(frozen=True, kw_only=True)
class RequirementRequest:
    """The requirement of `run` (an import or consolidation run directory) at `percentile` of its interval
    rates, with `headroom` on top, `capacity_gb` (None: the allocated size the source reports); `database`:
    one database of an import of several (a clustered database's NAME: its instances summed). An import of
    several databases, or of a cluster's instances, is their sum, consolidated as `consolidate` does."""
    run: str
    percentile: str = "95"
    headroom: float = 0.3
    capacity_gb: float | None = None
    database: str | None = None


@dataclass(frozen=True, kw_only=True)
class HistoryRequirement(Result):
    """`history requirement`'s answer: the document's section (the requirement, where it comes from, with
    headroom, by file type; a sum's series files, written where `start` said) and the runs it read."""
    kind: str = "history.requirement"
    inputs: tuple[str, ...]


def requirement(req: RequirementRequest, start: Start) -> HistoryRequirement:
    doc = load_run(req.run)
    summed_docs = needs_sum(doc, req.database)
    section: dict[str, Any] = {}
    if summed_docs is None:
        figures, source = summary.requirement(doc, req.percentile, req.headroom, req.capacity_gb, req.database)
        inputs = (doc["_run_dir"],)
        start(inputs)
    else:      # several databases, or a cluster's instances: their sum, consolidated into the run's directory
        figures, source, part, series = summed(summed_docs, req.percentile, req.headroom, req.capacity_gb, start)
        inputs = tuple(d["_run_dir"] for d in summed_docs)
        section["consolidated"] = {k: part.get(k) for k in ("kind", "method", "bound", "databases", "clusters",
                                                            "grid", "peaks", "capacity_gb", "instances")}
        if series is not None:
            section["series_files"] = series
    section["notes"] = instance_notes(doc, req.database) + list(source.get("notes") or [])
    section["requirement"] = dict(figures)
    section.update(figures)
    section["from"] = source
    section["with_headroom"] = summary.with_headroom(figures)
    section["absent"] = source["absent"]   # what the source did not measure: missing, not 0
    if source["action"] == "import" and doc.get("kind") != "hourly":
        parts = split.by_file_type(doc, source["of"], source["statistic"])
        if parts:
            section["by_file_type"] = parts
    return HistoryRequirement(section=Frozen(section), inputs=inputs)


def summed(docs: Sequence[dict[str, Any]], percentile: str, headroom: float, capacity_gb: float | None,
           start: Start) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str] | None]:
    """The requirement of `docs`' databases together (several databases, a cluster's instances): consolidated
    (history/combine.py's rules) in a DuckDB of its own, its sum's series written where `start(inputs)` says
    (the requirement's source names that directory: the days and a cloud plan's burst replay read them
    there). (figures, source, the consolidation, the series files written or None: hour-of-day sums have
    none)."""
    docs = list(docs)
    with store.workdir(_grid_bytes(docs)) as work, store.open_db(work) as con:
        part = summary.consolidation(con, docs, None, 10, percentile, work=work)
        out = start(tuple(d["_run_dir"] for d in docs))
        series = store.write_consolidation_files(con, out, []) if part.get("kind") == "series" else None
    cdoc = {"command": "history", "params": {"action": "consolidate"}, "_run_dir": str(out),
            "source": docs[0].get("source"), **part}
    figures, source = summary.requirement(cdoc, percentile, headroom, capacity_gb)
    figures, source["notes"] = summary.sum_on_parts(figures, docs, source["statistic"])
    return figures, source, part, series


def needs_sum(doc: dict[str, Any], database: str | None) -> list[dict[str, Any]] | None:
    """The documents to consolidate for a requirement of an import run: several databases (or a clustered
    database's instances: NAME selects all of NAME/1, NAME/2, ...); None when it is one series."""
    if (doc.get("params") or {}).get("action") != "import":
        return None
    dbs = doc.get("databases") or []
    if database is not None and any(db.get("name") == database for db in dbs):
        return None
    picked = summary.only([doc], [database] if database else None)
    return picked if sum(len(d["databases"]) for d in picked) > 1 else None


def instance_notes(doc: dict[str, Any], database: str | None) -> list[str]:
    """A requirement of one instance of a clustered database sizes part of what its storage carries: said."""
    one = next((d for d in doc.get("databases") or [] if database and d.get("name") == database), None)
    if one is None:
        return []
    base = combine.cluster_of(str(one.get("name")), one.get("instances"))
    if base == one.get("name"):
        return []
    return [f"{database} is one instance of the {one.get('instances')}-instance {base}: its instances share the "
            f"storage, which carries their sum; `--database {base}` sizes that"]
