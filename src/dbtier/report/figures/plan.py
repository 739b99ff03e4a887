"""A plan's headline figures, one function per action (the `plan.size`, `plan.value`, `plan.equivalent` and
`plan.budget` kinds' figures faces, dbtier.results.kinds), a plan size's candidates table and the catalog it
priced from (their terminal faces)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.report.figures.core import Figure, Table, Terminal, config_name, dicts, fmt, get, isnum

_VALUE_KEYS = (("tpm_per_usd", "TPM per $", 3, "higher"), ("tps_per_usd", "TPS per $", 4, "higher"),
               ("iops_per_usd", "IOPS per $", 3, "higher"), ("mbps_per_usd", "MB/s per $", 4, "higher"),
               ("usd_per_gb", "$ per usable GB", 2, "lower"), ("usd_per_tpm", "$ per TPM", 3, "lower"),
               ("usd_per_tps", "$ per TPS", 2, "lower"), ("usd_per_iops", "$ per IOPS", 4, "lower"))


def _life_cost(c: dict[str, Any]) -> list[Figure]:
    """A design's cost on one basis, its total over the service life (compared), with the purchase and the
    monthly price as detail (not compared): a purchase beside a five-year cloud total would mislead."""
    cloud = c.get("cloud") if isinstance(c.get("cloud"), dict) else None
    tco = dict_at(c, "tco")
    total = cloud.get("service_life_usd") if cloud else tco.get("total_usd", c.get("price_usd"))
    years = tco.get("service_years") or (c.get("endurance") or {}).get("service_years") if not cloud else None
    out = [Figure("total_usd", "its total over the service life" + (f" ({fmt(years)} years)" if years else ""),
                  total, "$", 0, "lower")]
    if cloud:
        out.append(Figure("monthly_usd", "its price a month (detail)", get(cloud, "monthly_usd", "total"), "$", 2))
    else:
        out.append(Figure("purchase_usd", "its purchase (detail)", tco.get("purchase_usd", c.get("price_usd")), "$", 0))
    return out


def _shown(out: list[Figure]) -> list[Figure]:
    """The figures with a value to show: a number, a text, or none (an object in a document is left out)."""
    return [f for f in out if isnum(f.value) or isinstance(f.value, str) or f.value is None]


def size(doc: dict[str, Any]) -> list[Figure]:
    """The cheapest configuration: its cost over the service life, capacity and IOPS, what binds."""
    c = (dicts(doc.get("candidates")) or [{}])[0]
    return _shown([Figure("cheapest", "cheapest configuration", config_name(c)),
                   *_life_cost(c),
                   Figure("capacity_gb", "its usable capacity", c.get("capacity_gb"), "GB", 0, "higher"),
                   Figure("read_iops", "its random read IOPS", c.get("read_iops"), "IOPS", 0, "higher"),
                   Figure("write_iops", "its random write IOPS", c.get("write_iops"), "IOPS", 0, "higher"),
                   Figure("binding", "binding requirement", doc.get("binding")),
                   Figure("designs_meeting", "designs meeting the requirement", doc.get("designs_meeting"), "",
                          0)])


def value(doc: dict[str, Any]) -> list[Figure]:
    """The configuration, its price and the measured figures per dollar."""
    cfg = dict_at(doc, "config")
    out = [Figure("config", "configuration", config_name(cfg)),
           Figure("price_usd", "price", cfg.get("price_usd"), "$", 0, "lower")]
    out += [Figure(k, label, get(doc, "value", k), "", d, better) for k, label, d, better in _VALUE_KEYS]
    return _shown(out)


def equivalent(doc: dict[str, Any]) -> list[Figure]:
    """How many of one device match the reference on each metric, and at what price."""
    out = [Figure("reference", "reference", get(doc, "reference", "device")),
           Figure("using", "matched with", get(doc, "using", "device"))]
    for metric in ("iops", "throughput", "capacity"):
        m = get(doc, "by_metric", metric)
        out += [Figure(f"{metric}.count", f"count to match on {metric}", get(m, "count"), "", 0, "lower", metric),
                Figure(f"{metric}.price_usd", f"price to match on {metric}", get(m, "price_usd"), "$", 0,
                       "lower", metric),
                Figure(f"{metric}.price_ratio", f"× the reference's price ({metric})", get(m, "price_ratio"),
                       "×", 2, "lower", metric)]
    return _shown(out)


def budget(doc: dict[str, Any]) -> list[Figure]:
    """The budget, and per device what it buys."""
    out = [Figure("usd", "budget", doc.get("usd"), "$", 0)]
    for o in dicts(doc.get("options")):
        d = str(o.get("device"))
        out += [Figure(f"{d}.count", f"{d}: count", o.get("count"), "", 0, None, d),
                Figure(f"{d}.iops", f"{d}: IOPS (mix)", o.get("iops"), "IOPS", 0, "higher", d),
                Figure(f"{d}.capacity_gb", f"{d}: capacity", o.get("capacity_gb"), "GB", 0, "higher", d)]
    return _shown(out)


def unknown(doc: dict[str, Any]) -> list[Figure]:
    """A plan of an action this dbtier does not know: no figures (what its numbers are is not known)."""
    return []


def size_tables(doc: dict[str, Any]) -> list[Table]:
    """The cheapest configurations."""
    out: list[Table] = []
    rows = [[i, config_name(c), c.get("price_usd"), c.get("capacity_gb"), c.get("read_iops"),
             c.get("write_iops"), c.get("binding")] for i, c in enumerate(dicts(doc.get("candidates")), 1)]
    if rows:
        out.append(Table("Cheapest configurations", ["#", "configuration", "price $", "GB", "read IOPS",
                                                     "write IOPS", "binding"], rows, (0, 0, 0, 0, 0, 0, 0)))
    return out


def no_tables(doc: dict[str, Any]) -> list[Table]:
    return []


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The catalog the plan priced from."""
    out: list[tuple[str, str]] = []
    files = get(doc, "catalog", "files")
    if isinstance(files, list):
        out.append(("catalog", ", ".join(map(str, files)) + " (datasheet figures, not measurements)"))
    return out


TERMINAL = Terminal(no_tables, method)
SIZE_TERMINAL = Terminal(size_tables, method)
