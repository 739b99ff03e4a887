"""The report of a `plan size --cloud` document: each design's volume sets (per role) with their provisioned
settings, the monthly price by component, what binds, the instance's caps and each replayed design's credit
balance over the history's time line. Reads only the document."""

from __future__ import annotations

from typing import Any

from dbtier.model.cloud.sizing import group_volumes
from dbtier.report.svg import charts as svg
from dbtier.report.base import esc, figure_frame, html_table, isnum, num
from dbtier.report.svg.charts import Series


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
        m = cl.get("monthly_usd") or {}
        groups = group_volumes(cl.get("volumes") or [])
        names.append(" + ".join(f"{n} x {v.get('type')}" for n, v in groups) + (" x 2 zones" if cl.get("copies") == 2
                                                                                 else ""))
        for j, (n, v) in enumerate(groups):
            last = j == len(groups) - 1
            rows.append([str(i) if j == 0 else "", esc(v.get("role") or "all"), esc(f"{n} x {v.get('type')}"),
                         num(v.get("size_gib")), num(v.get("iops")), f"{_tp(v)}",
                         _usd(m.get("capacity")) if last else "", _usd(m.get("iops")) if last else "",
                         _usd(m.get("throughput")) if last else "", _usd(m.get("instance_premium")) if last else "",
                         f"<b>{_usd(m.get('total'))}</b>" if last else "", esc(cl.get("binding") or "") if last else ""])
    out.append(html_table(["#", "role", "volumes", "GiB each", "IOPS each", "throughput each", "capacity", "IOPS",
                           "throughput", "instance store", "a month", "binds"], rows, num_cols=(3, 4, 6, 7, 8, 9, 10),
                          wide=True))
    series = [Series(label, [(k, (c["cloud"].get("monthly_usd") or {}).get(key)) for k, c in enumerate(cands)],
                     svg.colour(col)) for label, key, col in (("capacity", "capacity", 0), ("IOPS", "iops", 1),
                                                              ("throughput", "throughput", 3),
                                                              ("instance store", "instance_premium", 4))]
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
    out.append(balance_chart(cands))
    said: dict[str, list[str]] = {}
    for i, c in enumerate(cands, 1):
        for note in c["cloud"].get("notes") or []:
            said.setdefault(note, []).append(f"#{i}")
    for note, which in said.items():
        out.append(f'<p class="reason">{esc(", ".join(which))}: {esc(note)}</p>')
    cluster = doc.get("cluster")
    if isinstance(cluster, dict) and cluster.get("statement"):
        out.append(f'<p class="reason">{esc(cluster.get("instances"))} instances share the volumes '
                   f'({esc(cluster.get("engine") or "engine not known")}): {esc(cluster["statement"])}'
                   + (f' [{esc(cluster.get("cite"))}, grade {esc(cluster.get("grade"))}, dated '
                      f'{esc(cluster.get("dated"))}]' if cluster.get("cite") else "") + '</p>')
    if doc.get("burst_checked") is False and doc.get("burst_note"):
        out.append(f'<p class="reason">{esc(doc["burst_note"])}</p>')
    for m in doc.get("cloud_missed") or []:
        if isinstance(m, dict):
            out.append(f'<p class="reason">{esc(m.get("type"))}: {esc(m.get("reason"))}</p>')
    return "".join(out)


def _tp(v: dict[str, Any]) -> str:
    key = next((k for k in v if k.startswith("throughput_") and k != "throughput_unit"), None)
    return f"{num(v.get(key))} {esc(v.get('throughput_unit') or '')}" if key else "—"


def balance_chart(cands: list[dict[str, Any]]) -> str:
    """Each replayed design's worst credit bucket over the history's time line, as a share of the full bucket:
    where a line reaches 0 the design is throttled."""
    series = []
    for i, c in enumerate(cands, 1):
        b = c["cloud"].get("burst") or {}
        bot = b.get("balance_over_time") or {}
        cap = b.get("capacity")
        if not (isnum(cap) and cap > 0 and bot.get("t_s")):
            continue
        pts = [(t / 3600, 100 * v / cap) for t, v in zip(bot["t_s"], bot["balance"]) if isnum(t) and isnum(v)]
        series.append(Series(f"#{i} {b.get('bucket')}", pts, svg.colour(i - 1)))
    if not series:
        return ""
    chart = svg.line_chart("Burst credit balance over the history", series, x_label="hours from the history's start",
                           y_label="% of the bucket", y_max=100)
    return '<div class="charts">' + figure_frame(chart, "The worst bucket of each design replayed through the "
                                                        "history's intervals; at 0% the design is throttled (a bucket "
                                                        "whose size is not published is an assumption, said in the "
                                                        "result).") + "</div>"
