"""The lab's figures from its steps' documents (pure but for reading the catalog): the requirement
the OLTP run measured, which directory is the fast tier, the engines the OLTP step runs on, and where
each probed target stands against the catalog. The steps' command lines are in lab_steps.py."""

from __future__ import annotations

import os
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import load_catalog
from dbtier.model.standing import closest
from dbtier.core.parts import dict_at


def requirement_from_oltp(oltp: dict[str, Any]) -> dict[str, Any] | None:
    """The measured peak load: device I/O at the OLTP knee (pure). Capacity: 3x the database, at least 10 GB.

    A figure the run did not measure (no device sample, no duration, no database size) is None and
    named in `absent`; a measured 0 (every read served from memory) stays 0. Neither is sized for:
    plan size gets only the figures above 0, never a made-up token."""
    knee = oltp.get("knee")
    if not knee:
        return None
    pt = next((p for p in oltp.get("points", []) if p.get("clients") == knee.get("clients")), None)
    if not pt or not pt.get("devices"):
        return None
    devs = pt["devices"]
    # the bytes are what the device sampler saw over its own window (sampled_s), not pgbench's
    secs = pt.get("sampled_s") if isinstance(pt.get("sampled_s"), (int, float)) else pt.get("duration_s")
    secs = secs if isinstance(secs, (int, float)) and secs > 0 else None

    def total(key: str, per_s: float | None = 1.0) -> float | None:
        vals = [d.get(key) for d in devs]
        if per_s is None or any(not isinstance(v, (int, float)) for v in vals):
            return None
        return float(sum(vals)) * per_s

    db_bytes = (oltp.get("load") or {}).get("database_bytes")
    req: dict[str, Any] = {
        "read_iops": total("read_iops"),
        "write_iops": total("write_iops"),
        "read_mbps": total("read_bytes", None if secs is None else 1 / secs / 1e6),
        "write_mbps": total("write_bytes", None if secs is None else 1 / secs / 1e6),
        "capacity_gb": max(10.0, 3 * db_bytes / 1e9) if isinstance(db_bytes, (int, float)) else None,
    }
    req["absent"] = [k for k, v in req.items() if v is None]
    return req


def tiers(dirs: list[str], probe: dict[str, Any] | None) -> tuple[str, str]:
    """The fast tier is the directory with the most 4 KiB random-read IOPS (the first one without a probe)."""
    real = [os.path.realpath(d) for d in dirs]
    if len(real) < 2:
        return real[0], real[0]
    score = {}
    for t in (probe or {}).get("targets", []):
        s = t.get("summary") or {}
        score[os.path.realpath(t["path"])] = s.get("read_iops_4k") or 0
    ranked = sorted(real, key=lambda d: -score.get(d, 0)) if score else real
    return ranked[0], ranked[-1]


def standing(probe: dict[str, Any]) -> list[dict[str, Any]]:
    """Where each probed target stands against the catalog: measured / catalog per figure (a figure a
    write-back cache gave, the target's cache_suspect, is left out: it is not the media's)."""
    cat = load_catalog()
    return [{"path": t["path"], **closest(media_figures(t), list(cat.devices.values()))}
            for t in probe.get("targets", []) if t.get("summary")]


def media_figures(target: dict[str, Any]) -> dict[str, Any]:
    """A probe target's summary without the figures its cache_suspect names (results/cache_suspect.py)."""
    cache = dict_at(target, "cache_suspect")
    drop = set(cache.get("figures") or [])
    return {k: v for k, v in (target.get("summary") or {}).items() if k not in drop}


# The engines `lab --engines` runs the OLTP step on (`bench oltp --engine E`); PostgreSQL alone by default.
DEFAULT_ENGINES = ("postgres",)


def parse_engines(text: str | None, known: Sequence[str]) -> list[str]:
    """'postgres,mariadb' -> ['postgres', 'mariadb'] (in the order given, each once); empty -> the default.
    An unknown name is refused with the list of known ones."""
    names = list(dict.fromkeys(x.strip() for x in (text or "").split(",") if x.strip()))
    if not names:
        return list(DEFAULT_ENGINES)
    bad = [n for n in names if n not in known]
    if bad:
        raise DbtierError(f"--engines: unknown engine {', '.join(bad)}",
                          f"engines: {', '.join(known)} (comma-separated, e.g. --engines postgres,mariadb)")
    return names


def plan_engine(engines: Sequence[str]) -> str:
    """The engine whose OLTP run the plan sizes for: PostgreSQL's when it ran, else the first."""
    return "postgres" if "postgres" in engines else engines[0]
