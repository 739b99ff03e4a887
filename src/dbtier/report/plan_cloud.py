"""The report of a `plan size --cloud` document: each volume type's cheapest stripe with its provisioned
settings, the monthly price by component, what binds and the instance's caps. Reads only the document."""

from __future__ import annotations

from typing import Any

from dbtier.report import svg
from dbtier.report.base import esc, figure_frame, html_table, isnum, num
from dbtier.report.svg import Series


def _usd(x: Any) -> str:
    return f"${num(x, 2)}" if isnum(x) else "—"


def cloud_section(doc: dict[str, Any]) -> str:
    cands = [c for c in doc.get("candidates") or [] if isinstance(c, dict) and isinstance(c.get("cloud"), dict)]
    if not cands:
        return '<p class="na">No cloud candidates in this document.</p>'
    first = cands[0]["cloud"]
    inst = first.get("instance")
    out = [f"<h3>{esc(first.get('provider'))} volumes as the provider sells them"
           + (f" on {esc(inst)}" if inst else "") + "</h3>"]
    rows, names = [], []
    for i, c in enumerate(cands, 1):
        cl = c["cloud"]
        vols = cl.get("volumes") or []
        v = vols[0] if vols else {}
        tp_key = next((k for k in v if k.startswith("throughput_") and k != "throughput_unit"), None)
        m = cl.get("monthly_usd") or {}
        name = f"{len(vols)} x {v.get('type')}"
        names.append(name)
        rows.append([str(i), esc(name), num(v.get("size_gib")), num(v.get("iops")),
                     f"{num(v.get(tp_key)) if tp_key else '—'} {esc(v.get('throughput_unit') or '')}",
                     _usd(m.get("capacity")), _usd(m.get("iops")), _usd(m.get("throughput")),
                     f"<b>{_usd(m.get('total'))}</b>", esc(cl.get("binding") or "")])
    out.append(html_table(["#", "volumes", "GiB each", "IOPS each", "throughput each", "capacity", "IOPS",
                           "throughput", "a month", "binds"], rows, num_cols=(2, 3, 5, 6, 7, 8), wide=True))
    series = [Series(label, [(k, (c["cloud"].get("monthly_usd") or {}).get(key)) for k, c in enumerate(cands)],
                     svg.colour(col)) for label, key, col in (("capacity", "capacity", 0), ("IOPS", "iops", 1),
                                                              ("throughput", "throughput", 3))]
    series = [s for s in series if any(isnum(v) and v > 0 for _, v in s.points)]
    chart = svg.hbar_chart("Monthly price by component", names, series, unit="USD", x_label="US dollars a month",
                           highlight=0)
    out.append('<div class="charts">' + figure_frame(chart, "List prices as of the data's date; the first is "
                                                            "the cheapest.") + "</div>")
    caps = first.get("caps")
    if isinstance(caps, dict):
        out.append(f'<p class="reason">{esc(inst)} caps its volumes at {num(caps.get("instance_iops"))} IOPS and '
                   f'{num(caps.get("instance_throughput"))} {esc(caps.get("throughput_unit"))} sustained (bursting to '
                   f'{num(caps.get("instance_max_iops"))} and {num(caps.get("instance_max_throughput"))})'
                   + (f": {esc(caps.get('binding'))}" if caps.get("binding") else "") + ".</p>")
    for m in doc.get("cloud_missed") or []:
        if isinstance(m, dict):
            out.append(f'<p class="reason">{esc(m.get("type"))}: {esc(m.get("reason"))}</p>')
    return "".join(out)
