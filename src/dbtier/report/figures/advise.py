"""An advise run's headline figures: the recommended option, its total over the service life, and the
requirement it was sized for (the `advise` kind's figures face, dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.report.figures.core import Figure, dicts, fmt


def figures(doc: dict[str, Any]) -> list[Figure]:
    """The recommended option, its total over the service life, and the requirement it was sized for."""
    a = dict_at(doc, "advice")
    opts = dicts(a.get("options"))
    rec = a.get("recommended")
    best = opts[rec] if isinstance(rec, int) and not isinstance(rec, bool) and 0 <= rec < len(opts) else {}
    req = dict_at(a, "requirement")
    years = best.get("service_years")
    return [Figure("recommended", "recommended", f"{best.get('where')}: {best.get('description')}" if best else None),
            Figure("total_usd", "its total over the service life" + (f" ({fmt(years)} years)" if years else ""),
                   best.get("total_usd"), "$", 0, "lower"),
            Figure("read_iops", "required read IOPS", req.get("read_iops"), "IOPS", 0),
            Figure("write_iops", "required write IOPS", req.get("write_iops"), "IOPS", 0),
            Figure("capacity_gb", "required capacity", req.get("capacity_gb"), "GB", 0)]
