"""`plan size --cloud --roles`: one volume set per role of the database (data, log, temp, archive) under one
instance's caps, from the per-file-type history (Oracle AWR by file type; PostgreSQL's data, WAL and temp
files). Pure: the rows in, the roles' requirements and the design out.

A role's requirement is the chosen statistic (p95, p99 or max, linear interpolation between ranks as DuckDB's
quantile_cont) of each of its rates over the intervals, after adding up the role's file types interval by
interval. Capacity: the database's goes to `data`; another role takes the capacity given for it
(`--roles log=io2:200`), else the smallest volume its type allows (the history does not say how large redo,
WAL or temp files are).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.cloud.volumes import Instance, VolumeType, volume_type
from dbtier.model.cloud.sizing import (MAX_VOLUMES, CloudCandidate, Intervals, Part, instances_for, place, shared_by,
                                     types_for, part_for)
from dbtier.model.plan.requirement import Requirement

ROLES = ("data", "log", "temp", "archive")
_LOG = {"log file", "redo", "redo log", "log", "wal"}


def role_of(file_type: str) -> str:
    """The role of a file type as the history names it (AWR's FILETYPE_NAME, PostgreSQL's data / wal / temp
    files and pg_stat_io's backend/object/context)."""
    ft = file_type.strip().lower()
    parts = ft.split("/")
    if ft in _LOG or (len(parts) == 3 and parts[1] == "wal"):
        return "log"
    if "temp" in ft:
        return "temp"
    if "archive" in ft or "flashback" in ft:
        return "archive"
    return "data"


def parse_spec(spec: str | None) -> dict[str, tuple[str | None, float | None]]:
    """`--roles` [ROLE=TYPE[:GB],...]: a volume type (and capacity) pinned per role; empty or 'auto': each role
    its cheapest type, sized by the history."""
    out: dict[str, tuple[str | None, float | None]] = {}
    if not spec or spec == "auto":
        return out
    for item in spec.split(","):
        role, eq, rest = item.strip().partition("=")
        if role not in ROLES or not eq or not rest:
            raise DbtierError(f"--roles {spec!r}: '{item}' is not ROLE=TYPE[:GB] with ROLE one of {', '.join(ROLES)}",
                              "e.g. --roles log=io2:200,data=gp3")
        t, _, gb = rest.partition(":")
        cap = None
        if gb:
            try:
                cap = float(gb)
            except ValueError:
                cap = -1.0
            if not (math.isfinite(cap) and cap > 0):
                raise DbtierError(f"--roles: '{item}': the capacity after ':' must be a positive number of GB",
                                  "e.g. log=io2:200")
        out[role] = (t.strip() or None, cap)
    return out


def _quantile(values: list[float], q: float) -> float:
    v = sorted(values)
    if not v:
        return 0.0
    pos = (len(v) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def by_role(rows: Sequence[tuple[str, float, float, float, float, float, float]]
            ) -> tuple[dict[str, dict[float, list[float]]], dict[str, list[str]]]:
    """Per role, per interval start: [seconds, read IOPS, write IOPS, read MB/s, write MB/s] summed over the
    role's file types; and the file types each role took."""
    series: dict[str, dict[float, list[float]]] = {}
    names: dict[str, list[str]] = {}
    for ft, start, secs, ri, wi, rm, wm in rows:
        role = role_of(ft)
        if ft not in names.setdefault(role, []):
            names[role].append(ft)
        acc = series.setdefault(role, {}).setdefault(start, [secs, 0.0, 0.0, 0.0, 0.0])
        acc[0] = max(acc[0], secs)
        for i, x in enumerate((ri, wi, rm, wm), 1):
            acc[i] += x
    return series, names


def role_requirements(rows: Sequence[tuple[str, float, float, float, float, float, float]], req: Requirement,
                      statistic: str, spec: dict[str, tuple[str | None, float | None]]
                      ) -> tuple[dict[str, Requirement], dict[str, Intervals], dict[str, Any]]:
    """(requirement per role, (seconds, IOPS, MB/s) intervals per role for the burst replay, what the history
    separated: {role: file types} and the roles it could not)."""
    if not rows:
        raise DbtierError("the history gives only the database's totals, not its file types: the roles cannot be "
                          "separated", "import an AWR dba_hist_iostat_filetype export or PostgreSQL statistics "
                                       "(WAL apart), or size without --roles")
    q = {"p95": 0.95, "p99": 0.99, "max": 1.0}.get(statistic)
    if q is None:
        raise DbtierError(f"--roles: the history's statistic {statistic!r} has no per-interval values",
                          "take the requirement with --percentile 95, 99 or max")
    series, names = by_role(rows)
    reqs: dict[str, Requirement] = {}
    intervals: dict[str, Intervals] = {}
    idle: list[str] = []
    for role in ROLES:
        if role not in series:
            continue
        vals = list(series[role].values())
        figs = [_quantile([v[i] for v in vals], q) for i in range(1, 5)]
        cap = req.capacity_gb if role == "data" else (spec.get(role, (None, None))[1])
        if not any(f > 0 for f in figs) and not cap:
            idle.append(role)           # no I/O at the statistic and no capacity: nothing to size
            continue
        reqs[role] = replace(req, read_iops=figs[0], write_iops=figs[1], read_mbps=figs[2], write_mbps=figs[3],
                             capacity_gb=cap, source=f"{req.source}: the {role} role ({', '.join(names[role])})")
        intervals[role] = [(v[0], v[1] + v[2], v[3] + v[4]) for _, v in sorted(series[role].items())]
    stray = sorted(set(spec) - set(reqs) - set(idle))
    if stray:
        raise DbtierError(f"--roles names {', '.join(stray)}, which the history does not separate (it has "
                          f"{', '.join(reqs)})", "name only roles the history has")
    missing = [r for r in ("data", "log", "temp") if r not in reqs]
    separated = {"file_types": names, "not_separated": missing, "idle": idle,
                 "no_capacity": [r for r, q in reqs.items() if not q.capacity_gb],
                 "note": (f"the history does not separate {', '.join(missing)}: its I/O is counted in the roles "
                          "it does separate" if missing else None),
                 "capacity": "the database's capacity goes to data; the other roles take the capacity given with "
                             "--roles ROLE=TYPE:GB, else their type's smallest volume"}
    return reqs, intervals, separated


def size_roles(types: dict[str, VolumeType], instances: dict[str, Instance], provider: str,
               reqs: dict[str, Requirement], spec: dict[str, tuple[str | None, float | None]],
               instance_name: str | None, service_years: float = 5.0, clustered: bool = False,
               copies: int = 1, max_volumes: int = MAX_VOLUMES, attach: int | None = None
               ) -> tuple[list[CloudCandidate], list[dict[str, Any]]]:
    """One design: per role the cheapest volume set (of the pinned type, or of every type of the provider),
    all of them under one instance's caps. A cluster's (`attach` instances) only of types they can share."""
    n = shared_by(clustered, attach)
    parts: list[Part] = []
    missed: list[dict[str, Any]] = []
    mine = types_for(types, provider, clustered, n, missed)
    for role, r in reqs.items():
        pinned = spec.get(role, (None, None))[0]
        options = [shareable(volume_type(types, provider, pinned), n, role)] if pinned else mine
        best: Part | None = None
        for vt in options:
            part, why = part_for(vt, r, role, max_volumes=max_volumes)
            if part is None:
                missed.append({"type": f"{role}: {vt.type}", "reason": why})
            elif best is None or part.monthly["total"] < best.monthly["total"] - 1e-9:
                best = part
        if best is None:
            raise DbtierError(f"no {provider} volume set carries the {role} role: "
                              + "; ".join(m["reason"] for m in missed if m["type"].startswith(role + ":")),
                              "pin another type for it (--roles ROLE=TYPE) or lower the requirement")
        parts.append(best)
    c, why = place(tuple(parts), instances_for(instances, provider, instance_name), instance_name, provider,
                    service_years, copies)
    if c is None:
        raise DbtierError(f"the roles' volume sets together exceed the instance: {why}",
                          "choose a larger --instance, or --instance auto")
    return [replace(c, attach=n)], missed


def shareable(vt: VolumeType, n: int, role: str) -> VolumeType:
    """A pinned type as `n` instances can share it, or one clear error."""
    shared = vt.for_attach(n)
    if shared is None:
        raise DbtierError(f"--roles {role}={vt.type}: {n} instances can't attach one {vt.type} volume (at most "
                          f"{vt.most_attach})", "pin a type the cluster can share (see `multi_attach` in "
                                                "catalog/cloud_volumes.toml), or leave the role unpinned")
    return shared
