"""Whether a clustered database may be sized on a cloud provider's shared (multi-attach) volumes: its
engine's vendor support there, and where it is not supported, the route the vendor offers instead.

Pure: the data file catalog/cloud_clusters.toml (every statement with `source`, `grade`, `dated` and `as_of`)
and (provider, engine, instances) in, one answer out. Oracle certifies RAC on none of AWS, Azure or Google
Cloud's shared disks: its route on each is its own Exadata service there (named, not priced). An engine and
provider the data does not list is said to be unknown, not refused.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.model.cloud.volumes import PROVIDERS

ENGINES = ("oracle", "sqlserver", "postgresql", "mysql")
GRADES = ("V", "T", "P", "L", "D")
FIELDS = {"provider", "engine", "offered", "statement", "route", "types", "cite", "source", "grade", "dated", "as_of"}
# a history import's `source` and the engine whose statistics it reads
ENGINE_OF_SOURCE = {"awr": "oracle", "dma": "oracle", "sqlserver": "sqlserver", "postgres": "postgresql"}


def engine_of(history_source: str | None) -> str | None:
    """The database engine a history source reads (awr, dma: oracle; sqlserver; postgres: postgresql), None for
    an engine-free source (diskstats, iostat, sar) or none."""
    return ENGINE_OF_SOURCE.get(history_source or "")


def load_clusters(data: dict[str, Any] | None = None, origin: str = "shipped:cloud_clusters.toml"
                  ) -> dict[tuple[str, str], dict[str, Any]]:
    """Every entry by (provider, engine), checked: an entry that breaks a rule is named with its key."""
    if data is None:
        text = (resources.files("dbtier.catalog") / "cloud_clusters.toml").read_text(encoding="utf-8")
        data = tomllib.loads(text)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for i, e in enumerate(data.get("cluster", []), 1):
        where = f"{origin}: cluster #{i} ({e.get('provider')}:{e.get('engine')})"
        unknown = sorted(set(e) - FIELDS)
        if unknown:
            raise DbtierError(f"{where}: unknown field '{unknown[0]}'", f"the fields are {', '.join(sorted(FIELDS))}")
        if e.get("provider") not in PROVIDERS or e.get("engine") not in ENGINES:
            raise DbtierError(f"{where}: provider must be one of {', '.join(PROVIDERS)} and engine one of "
                              f"{', '.join(ENGINES)}", "fix the entry")
        if not isinstance(e.get("offered"), bool):
            raise DbtierError(f"{where}: field 'offered' must be true or false, got {e.get('offered')!r}",
                              "false where the engine's vendor does not support the cluster there")
        for k in ("statement", "cite", "source", "dated", "as_of"):
            if not isinstance(e.get(k), str) or not e[k].strip():
                raise DbtierError(f"{where}: field '{k}' must be a non-empty text", "every entry needs statement, "
                                  "cite, source, grade, dated and as_of")
        if e.get("grade") not in GRADES:
            raise DbtierError(f"{where}: field 'grade' must be one of {', '.join(GRADES)}, got {e.get('grade')!r}",
                              "the reference note's grade of the source")
        if not e["offered"] and not (isinstance(e.get("route"), str) and e["route"].strip()):
            raise DbtierError(f"{where}: field 'route' is needed where offered = false", "name where the vendor "
                              "supports the cluster instead, e.g. \"Oracle Database@AWS (Exadata)\"")
        types = e.get("types")
        if types is not None and (not isinstance(types, list) or not types
                                  or not all(isinstance(t, str) and t for t in types)):
            raise DbtierError(f"{where}: field 'types' must list volume type names, got {types!r}",
                              "e.g. types = [\"io2\"], or leave it out")
        key = (e["provider"], e["engine"])
        if key in out:
            raise DbtierError(f"{where}: a second entry for {key[0]}:{key[1]}", "keep one entry per provider and engine")
        out[key] = dict(e)
    return out


def cluster_support(provider: str, engine: str | None, instances: int | None,
                    clusters: dict[tuple[str, str], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Whether volumes may be sized for `instances` instances of `engine` sharing `provider`'s volumes:
    {offered, statement, route, types, cite, source, grade, dated, as_of}. `types` None: every shareable type."""
    if provider not in PROVIDERS:
        raise DbtierError(f"provider must be one of {', '.join(PROVIDERS)}, got '{provider}'", "e.g. aws")
    if engine is not None and engine not in ENGINES:
        raise DbtierError(f"engine must be one of {', '.join(ENGINES)}, got '{engine}'", "e.g. --engine oracle")
    blank = {"route": None, "types": None, "cite": None, "source": None, "grade": None, "dated": None, "as_of": None}
    if not instances or instances <= 1:
        return {**blank, "offered": True, "statement": "one instance: no volume is shared, so the engine's cluster "
                                                       "support does not apply."}
    if engine is None:
        return {**blank, "offered": True,
                "statement": f"the engine is not known (give --engine, or a history of an engine's own statistics): "
                             f"whether it supports a {instances}-instance cluster on {provider}'s shared volumes is "
                             "not checked."}
    e = (load_clusters() if clusters is None else clusters).get((provider, engine))
    if e is None:
        return {**blank, "offered": True,
                "statement": f"{engine}'s clustering on {provider}'s shared volumes is not known to dbtier: the "
                             f"volumes are sized as one set all {instances} instances attach, which the engine's "
                             "cluster may not use (its replicas usually keep their own volumes)."}
    return {"offered": e["offered"], "statement": e["statement"], "route": e.get("route"),
            "types": list(e["types"]) if e.get("types") else None, "cite": e["cite"], "source": e["source"],
            "grade": e["grade"], "dated": e["dated"], "as_of": e["as_of"]}


def for_cluster(types: dict[str, Any], provider: str, engine: str | None, attach: int
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the volume types an `attach`-instance cluster of `engine` may be sized on at `provider`, the support
    statement). Where the vendor supports its cluster only on some of the provider's types (SQL Server
    failover clusters), only those; where it supports none (`offered` false), the types as they are."""
    support = cluster_support(provider, engine, attach)
    if support.get("offered") and support.get("types"):
        types = {k: vt for k, vt in types.items() if vt.provider != provider or vt.type in support["types"]}
    return types, support
