"""The service-life part of a `plan size` report: per candidate its lifetime, durable writes, the figures
it was sized on and its cost over the service life, and why the cheapest design to buy is not the answer.

Reads only the document (`candidates[].endurance`, `durable_writes`, `sized_on`, `tco`; `terms`,
`host_writes`, `dropped`, `cheaper_by_purchase`).
"""

from __future__ import annotations

from typing import Any, Sequence

from dbtier.core.units import life_cap_years, life_years_text, per_day_text
from dbtier.report.svg import charts as svg
from dbtier.report.base import esc, figure_frame, html_table, isnum, num
from dbtier.report.svg.charts import Series
from dbtier.core.parts import dict_at


def _usd(x: Any) -> str:
    return f"${num(x)}" if isnum(x) else "—"


def _life(e: Any, reason: Any, service_years: Any = None) -> str:
    """Years the limiting device lasts; past ten service lives (at least 50 years) '> 50 years'."""
    if not isinstance(e, dict):
        return f'<span title="{esc(reason or "")}">—</span>'
    if not e.get("checked"):
        return '<span class="na">unchecked</span>'
    life = e.get("lifetime_years")
    sy = service_years if isnum(service_years) else None
    text = (f"{esc(life_years_text(life, sy))}&nbsp;years" if isnum(life)
            else ("within rating" if e.get("passes") else "over rating"))
    return text if e.get("passes", True) else f'<b class="bad">{text}</b>'


def _protected(d: Any) -> str:
    if not isinstance(d, dict):
        return "—"
    p = d.get("protected")
    if not d.get("required"):
        return "not required"
    return {True: "protected", False: "flush-bound", None: '<span class="na">unchecked</span>'}[p]


def dropped_sentence(doc: dict[str, Any]) -> str:
    """A sentence when the cheapest design to buy was dropped or grown for wear or unprotected writes
    (none when the binding requirement already says it)."""
    c = doc.get("cheaper_by_purchase")
    if not isinstance(c, dict) or not c.get("detail") or c.get("detail") == doc.get("binding_detail"):
        return ""
    what = {"durability": "unprotected writes", "endurance": "wear", "sustained": "sustained writes",
            "tco": "cost over the service life"}.get(str(c.get("reason")), str(c.get("reason")))
    return (f'<p class="note"><b>The cheapest design to buy is not the answer ({esc(what)})</b>: '
            f'{esc(c["detail"])}.</p>')


def life_section(doc: dict[str, Any], cands: Sequence[dict[str, Any]], names: Sequence[str]) -> str:
    terms = dict_at(doc, "terms")
    if not any(isinstance(c.get("tco"), dict) for c in cands):
        return ""
    years = terms.get("service_years")
    out = [f"<h4>Over the service life ({num(years, 0) if isnum(years) else '?'} years)</h4>"]
    host = dict_at(doc, "host_writes")
    if host.get("detail"):
        out.append(f'<p class="reason">Writes a day: {esc(host["detail"])}.</p>')
    dw = dict_at(doc, "durable_writes")
    if dw.get("reason"):
        out.append(f'<p class="reason">Durable writes {"required" if dw.get("required") else "not required"}: '
                   f'{esc(dw["reason"])}.</p>')
    heads = ["#", "configuration", "life", "device writes a day", "durable writes", "write IOPS sized on",
             "purchase", "replacements", "energy", "cloud", "total", "per year"]
    rows = []
    for i, (c, name) in enumerate(zip(cands, names), 1):
        e = c.get("endurance")
        t = dict_at(c, "tco")
        on = dict_at(c, "sized_on")
        dw_day = e.get("device_writes_tb_per_day") if isinstance(e, dict) else None
        rows.append([str(i), esc(name), _life(e, c.get("endurance_reason"), years),
                     per_day_text(dw_day) if isnum(dw_day) else "—",
                     _protected(c.get("durable_writes")), esc(on.get("write_iops") or "—"),
                     _usd(t.get("purchase_usd")), _usd(t.get("replacements_usd")),
                     _usd(t.get("energy_usd")) if t.get("energy_usd") is not None else '<span class="na">unpriced</span>',
                     _usd(t.get("cloud_usd")), f"<b>{_usd(t.get('total_usd'))}</b>", _usd(t.get("per_year_usd"))])
    out.append(html_table(heads, rows, num_cols=(3, 6, 7, 8, 9, 10, 11), wide=True))
    parts = [("purchase", "purchase_usd", 0), ("replacements", "replacements_usd", 1), ("energy", "energy_usd", 3),
             ("cloud", "cloud_usd", 4)]
    series = [Series(label, [(k, (c.get("tco") or {}).get(key)) for k, c in enumerate(cands)], svg.colour(col))
              for label, key, col in parts]
    # a part no candidate pays (cloud months for bought devices) would only draw zeros
    series = [s for s in series if any(isnum(v) and v > 0 for _, v in s.points)]
    chart = svg.hbar_chart("Cost over the service life", list(names), series, unit="USD",
                           x_label="US dollars over the service life", highlight=0)
    out.append('<div class="charts">' + figure_frame(chart, "Each candidate's cost over the service life, by "
                                                            "part: the first is the answer.") + "</div>")
    kwh = terms.get("usd_per_kwh")
    cap = life_cap_years(years if isnum(years) else None)
    out.append(f'<p class="reason">Life: years until the limiting flash device reaches its rated endurance (device '
               f'writes a day = host writes × the layout\'s write factor / devices × WAF), or an HDD\'s workload '
               f'against its rating; past {num(cap, 0)} years (ten service lives, at least 50) it shows as '
               f'&gt;&nbsp;{num(cap, 0)}: wear that far out only says the device outlasts the service life. Energy at ${num(kwh, 2) if isnum(kwh) else "?"}/kWh: idle + (active − idle) × '
               f'utilisation watts, every overhead unit at its watts. Ranked by '
               f'{"total cost" if terms.get("cost") == "tco" else "purchase price"}.</p>')
    dropped = [d for d in (doc.get("dropped") or []) if isinstance(d, dict)]
    if dropped:
        out.append("<p class=\"reason\">Left out: " + "; ".join(esc(d.get("detail") or d.get("device"))
                                                             for d in dropped) + ".</p>")
    return "".join(out)
