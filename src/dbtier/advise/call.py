"""`dbtier advise` as a library call: `advise(AdviseRequest, docs, start) -> Advise`.

From import runs' documents (`history import`'s, as dbtier.results.store.load_run reads them) to the
answer: one requirement (one series as it is; several databases or a cluster's instances summed as
`history requirement` sums them, history/calls.py), sized on-prem from the catalog and on each provider's
volumes (plan.py), ranked by the cost over the service life (options.py), with the databases' own rows,
the assumptions and what in the history deserves a look. `start(inputs)` returns the directory a sum's
series go to (the command's run directory: the burst replay and the days read them there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from dbtier.advise import options, plan
from dbtier.history import combine, days, summary
from dbtier.history.calls import Start, summed
from dbtier.results.result import Frozen, Result

PROVIDERS = ("aws", "azure", "gcp")
MAX_DAYS_PER_DATABASE = 50     # above, each database's own TB a day is left out (one series read each)


@dataclass(frozen=True, kw_only=True)
class AdviseRequest:
    """What the advice is asked: the providers to price (`clouds`), the instance whose volume caps bind
    ("auto": the cheapest that carries the load), the service life, the percentile of the interval rates,
    the headroom, a capacity (None: the history's), one design per role (`roles`, as `plan size --roles`),
    the on-prem catalog (`plan.prepared_catalog`: quotes applied, graded; `prices` and `grade` its document
    parts), a shared array's data reduction and parity groups, and the storage the database is on today
    (`current`: a probe run's document, from `current_path`)."""
    clouds: tuple[str, ...] = PROVIDERS
    instance: str = "auto"
    service_years: float = 5.0
    percentile: str = "95"
    headroom: float = 0.3
    capacity_gb: float | None = None
    roles: str | None = None
    catalog: Any = field(default=None, compare=False)
    prices: dict[str, Any] | None = field(default=None, compare=False)
    grade: dict[str, Any] | None = field(default=None, compare=False)
    data_reduction: float = 1.0
    wide_parity_groups: bool = False
    current: dict[str, Any] | None = field(default=None, compare=False)
    current_path: str | None = None


@dataclass(frozen=True, kw_only=True)
class Advise(Result):
    """The advice: the document's section (`advice`: the options ranked and the one recommended, the
    requirement, the databases; `requirement`, `from`, `history_runs`, `engine`, `prices`)."""
    kind: str = "advise"


def advise(req: AdviseRequest, docs: Sequence[dict[str, Any]], start: Start) -> Advise:
    docs = list(docs)
    if sum(len(d.get("databases") or []) for d in docs) == 1:
        figures, source = summary.requirement(docs[0], req.percentile, req.headroom, req.capacity_gb)
        part = None
    else:
        figures, source, part, _series = summed(docs, req.percentile, req.headroom, req.capacity_gb, start)
    key, pnum = summary.PERCENTILES[req.percentile]
    rows = database_rows(docs, part, key, pnum)
    hourly = any(d.get("kind") == "hourly" for d in docs)
    engine = plan.engine_of({d.get("source") for d in docs})
    opts, separated = plan.options_for(figures, source, req.clouds, req.instance, req.service_years, hourly, engine,
                                       req.roles, req.catalog, {"data_reduction": req.data_reduction,
                                                                "wide_parity_groups": req.wide_parity_groups})
    warnings = plan.warnings(docs) + list(source.get("notes") or [])
    ranked, rec = options.rank(opts)
    advice = {"requirement": {**figures, "with_headroom": summary.with_headroom(figures), "basis": source.get("basis"),
                              "of": source.get("of")},
              "databases": rows, "clustered": bool(figures.get("clustered")),
              "bound": source.get("bound") or (part or {}).get("bound"),
              "options": ranked, "recommended": rec, "warnings": warnings,
              "assumptions": plan.assumptions(figures, source, hourly, req.prices, req.grade,
                                              service_years=req.service_years, instance=req.instance,
                                              roles=req.roles, data_reduction=req.data_reduction,
                                              wide_parity_groups=req.wide_parity_groups),
              "roles": separated, "grade": req.grade}
    if req.current is not None:
        advice["current"] = plan.current_of(req.current, str(req.current_path), figures)
    section = {"advice": advice, "requirement": figures, "from": source,
               "history_runs": [d["_run_dir"] for d in docs], "engine": engine, "prices": req.prices}
    return Advise(section=Frozen(section))


def database_rows(docs: list[dict[str, Any]], part: dict[str, Any] | None, key: str, pnum: int) -> list[dict[str, Any]]:
    """A row per database: its own peak, its cluster's where it is one instance of several, its TB a day."""
    dbs = [db for d in docs for db in d.get("databases") or []]
    clusters: dict[str, dict[str, Any]] = {}
    if part is not None and part.get("kind") == "series":
        clusters = {n: {m: (pk.get(m) or {}).get(key) for m in combine.METRICS}
                    for n, pk in (part.get("clusters") or {}).items()}
    elif part is not None:
        clusters = {str(r["name"]): {m: ((r.get("peaks") or {}).get(m) or {}).get(key) for m in combine.METRICS}
                    for r in part.get("databases") or [] if len(r.get("series") or []) > 1}
    writes: dict[str, Any] = {}
    if len(dbs) <= MAX_DAYS_PER_DATABASE:
        for d in docs:
            for db in d.get("databases") or []:
                writes[str(db.get("name"))] = days.of_run(d, db, pnum)[0]["write"]["tb_per_day"]
    return combine.database_rows(dbs, key, clusters, writes)
