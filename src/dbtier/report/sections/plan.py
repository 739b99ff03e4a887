"""The report section of a `dbtier plan` document (equivalent, budget, size, value): configurations
side by side as tables and bar charts.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from dbtier.model.plan.plandoc import mix_rule
from dbtier.report.svg import charts as svg
from dbtier.report.sections.plan_cloud import cloud_section
from dbtier.report.sections.plan_life import dropped_sentence, life_section
from dbtier.report.base import (
    errors_html,
    esc,
    figure_frame,
    get,
    html_table,
    isnum,
    json_details,
    json_value,
    kv_table,
    num,
    run_head,
)
from dbtier.report.svg.charts import Series
from dbtier.core.parts import dict_at

# -- plan ------------------------------------------------------------------------------------------

# (key in an array dict, label, unit, digits) for the side-by-side figure tables
_PLAN_FIGURES = (("price_usd", "price", "$", 0), ("capacity_gb", "usable capacity", "GB", 0),
                 ("read_iops", "random read", "IOPS", 0), ("write_iops", "random write", "IOPS", 0),
                 ("iops", "random mix", "IOPS", 0), ("read_mbps", "sequential read", "MB/s", 0),
                 ("write_mbps", "sequential write", "MB/s", 0), ("read_latency_us", "read latency", "µs", 0),
                 ("write_latency_us", "write latency", "µs", 0), ("usd_per_gb", "$/GB", "$", 2),
                 ("usd_per_iops", "$/IOPS", "$", 3), ("usd_per_mbps", "$ per MB/s", "$", 2))


def _usd(x: Any, digits: int = 0) -> str:
    return f"${num(x, digits)}" if isnum(x) else "—"


def _arrays_charts(names: Sequence[str], arrays: Sequence[dict[str, Any]], highlight: int | None = None) -> str:
    """Side-by-side bar charts of price, capacity, IOPS, MB/s and latency, one row per configuration."""
    def pts(key: str) -> list[tuple[float, float | None]]:
        return [(k, a.get(key) if isnum(a.get(key)) else None) for k, a in enumerate(arrays)]

    r = next((a.get("read_fraction") for a in arrays if isnum(a.get("read_fraction"))), None)
    mix = f"mix ({r:.0%} reads)" if isnum(r) else "mix"
    charts = [
        (svg.hbar_chart("Price", names, [Series("price", pts("price_usd"), svg.colour(0))], unit="USD",
                        x_label="US dollars, overhead included", highlight=highlight),
         "Devices plus controller/enclosure overhead units."),
        (svg.hbar_chart("Usable capacity", names, [Series("capacity", pts("capacity_gb"), svg.colour(4))],
                        unit="GB", x_label="GB (10⁹ bytes)", highlight=highlight),
         "After the layout's redundancy."),
        (svg.hbar_chart("Random IOPS", names, [Series("read", pts("read_iops"), svg.colour(0)),
                                               Series("write", pts("write_iops"), svg.colour(1)),
                                               Series(mix, pts("iops"), svg.colour(3))],
                        unit="IOPS", x_label="IOPS", highlight=highlight),
         "Writes after the layout's write penalty; the mix is time-weighted."),
        (svg.hbar_chart("Sequential MB/s", names, [Series("read", pts("read_mbps"), svg.colour(0)),
                                                   Series("write", pts("write_mbps"), svg.colour(1))],
                        unit="MB/s", x_label="MB/s (10⁶ bytes)", highlight=highlight),
         "The least of the devices and the controller/bus ceilings."),
        (svg.hbar_chart("Latency (one I/O, nothing queued)", names,
                        [Series("read", pts("read_latency_us"), svg.colour(0)),
                         Series("write", pts("write_latency_us"), svg.colour(1))],
                        unit="µs", x_label="microseconds (shorter is better)", highlight=highlight),
         "From the catalog's device figures; a raid5/6 small write reads before it writes."),
    ]
    return '<div class="charts">' + "".join(figure_frame(c, cap) for c, cap in charts) + "</div>"


def _arrays_table(names: Sequence[str], arrays: Sequence[dict[str, Any]]) -> str:
    """Figures side by side; each cell names what limits it (from the array's `limits`)."""
    heads = ["", *(esc(n) for n in names)]
    rows = []
    for key, label, unit, digits in _PLAN_FIGURES:
        cells = [esc(label) + (f' <span class="reason">{esc(unit)}</span>' if unit != "$" else "")]
        for a in arrays:
            v = a.get(key)
            text = _usd(v, digits) if unit == "$" else num(v, digits)
            lim = get(a, "limits", key)
            if isinstance(lim, dict) and lim.get("limit"):
                text += (f'<br><span class="reason" title="{esc(lim.get("detail"))}">'
                         f'{esc(lim.get("limit"))}</span>')
            cells.append(text)
        rows.append(cells)
    return '<div class="wide">' + html_table(heads, rows, num_cols=range(1, len(heads)), cls="plan") + "</div>"


def _array_name(a: dict[str, Any]) -> str:
    if not isinstance(a, dict):
        return "?"
    name = f"{num(a.get('count'))} × {a.get('device')}"
    sec = a.get("second")
    if isinstance(sec, dict):
        name += f" + {num(sec.get('count'))} × {sec.get('device')}"
    return name


def _design_name(c: dict[str, Any]) -> str:
    """A plan size candidate's name, with the layouts folded into it named together: "2 x disk raid1 / mirror2"
    (a read cache's backing layouts: its `second.layouts`)."""
    name = str(c.get("description") or _array_name(c))
    sec = dict_at(c, "second")
    own, lays = ((sec.get("layout"), sec.get("layouts")) if c.get("layout") == "read-cache"
                 else (c.get("layout"), c.get("layouts")))
    if (isinstance(own, str) and isinstance(lays, list) and len(lays) > 1 and all(isinstance(x, str) for x in lays)
            and name.endswith(" " + own)):
        return name[:-len(own)] + " / ".join(lays)
    return name


def _plan_equivalent(doc: dict[str, Any]) -> str:
    ref = dict_at(doc, "reference")
    using = get(doc, "using", "device") or "?"
    layout = get(doc, "using", "layout") or "jbod"
    by = dict_at(doc, "by_metric")
    arrays = dict_at(doc, "arrays")
    matched = dict_at(doc, "matched")
    out = [f"<h3>Equal performance: <code>{esc(using)}</code> ({esc(layout)}) against one "
           f"<code>{esc(ref.get('device'))}</code></h3>",
           f'<p class="sub">How many {esc(using)}, with their controller/enclosure overhead, match one '
           f'{esc(ref.get("device"))} on each metric, and what that costs.</p>']
    rows = []
    for metric in ("iops", "throughput", "capacity"):
        m = by.get(metric)
        if not isinstance(m, dict):
            continue
        ratio = m.get("price_ratio")
        w, ref_w = get(m, "tco", "watts"), get(m, "reference_tco", "watts")
        rows.append([esc(metric), esc(matched.get(metric) or ""), num(m.get("count")), _usd(m.get("price_usd")),
                     _usd(m.get("reference_price_usd")),
                     (f"{ratio:,.2f}×" if isnum(ratio) else "—"),
                     f"{num(w)} W against {num(ref_w)} W" if isnum(w) and isnum(ref_w) else "—",
                     num(get(m, "tco", "rack_units"), 1)])
    out.append(html_table(["metric", "to match", "count", "price", "reference price", "price ratio", "power",
                           "rack units"], rows, num_cols=(2, 3, 4, 5, 7)))
    out.append('<p class="note">Power: active watts, the array at the load it is compared on (devices and their '
               "controllers/enclosures); rack units: the controllers and enclosures the drives sit in (a PCIe card "
               "takes none).</p>")
    mix = doc.get("mix_rule") if isinstance(doc.get("mix_rule"), dict) else None
    if mix is None and isnum(ref.get("read_iops")) and isnum(ref.get("write_iops")) and isnum(doc.get("read_fraction")):
        mix = mix_rule(doc["read_fraction"], ref["read_iops"], ref["write_iops"])
    if mix:
        out.append(f'<p class="note">{esc(mix.get("text"))}.</p>')
    names = [f"1 × {ref.get('device')}"]
    arrs = [ref]
    for metric in ("iops", "throughput", "capacity"):
        a = arrays.get(metric)
        if isinstance(a, dict):
            names.append(f"{_array_name(a)} ({metric})")
            arrs.append(a)
    if len(arrs) > 1:
        out.append("<h4>Side by side</h4>" + _arrays_charts(names, arrs, highlight=0))
        out.append(_arrays_table(names, arrs))
    return "".join(out)


def _plan_budget(doc: dict[str, Any]) -> str:
    opts = [o for o in (doc.get("options") or []) if isinstance(o, dict)]
    usd, layout = doc.get("usd"), doc.get("layout") or "jbod"
    out = [f"<h3>Equal budget: what {_usd(usd)} buys ({esc(layout)})</h3>",
           '<p class="sub">The most of each device the budget buys, controller/enclosure overhead included.</p>']
    rows = []
    for o in opts:
        rows.append([f"<code>{esc(o.get('device'))}</code>", num(o.get("count")), _usd(o.get("price_usd")),
                     num(o.get("capacity_gb")), num(o.get("iops")), num(o.get("read_mbps")),
                     num(o.get("write_mbps")), num(o.get("read_latency_us")), num(o.get("write_latency_us")),
                     esc(o.get("note") or "")])
    out.append('<div class="wide">' + html_table(["device", "count", "price", "GB", "IOPS (mix)", "read MB/s",
                                               "write MB/s", "read µs", "write µs", ""], rows,
                                                  num_cols=range(1, 9)) + "</div>")
    bought = [o for o in opts if isnum(o.get("count")) and o["count"] > 0]
    if bought:
        arrs = [o["array"] if isinstance(o.get("array"), dict) else o for o in bought]
        names = [_array_name(a) for a in arrs]
        out.append("<h4>Side by side</h4>" + _arrays_charts(names, arrs))
        out.append(_arrays_table(names, arrs))
    return "".join(out)


def _margin_cell(m: Any, headroom: Any) -> str:
    if not isinstance(m, dict):
        return "—"
    met = m.get("met")
    cls, mark = ("pass", "✓") if met is True else (("fail", "✗") if met is False else ("na", "–"))
    margin = m.get("margin")
    if not isnum(margin):
        text = "—"
    elif margin >= 1 and m.get("offered", 0) >= (m.get("required") or math.inf):   # 2x or more: as a multiple
        x = margin + 1
        text = f"{x:,.0f}×" if x >= 10 else f"{x:.1f}×"
    else:
        text = f"{margin * 100:+,.0f}%"
    tip = f"offered {num(m.get('offered'))}, required {num(m.get('required'))}"
    return f'<span class="{cls}" title="{esc(tip)}">{mark} {esc(text)}</span>'


REQ_LABELS = {"read_iops": "read IOPS", "write_iops": "write IOPS", "read_mbps": "read MB/s",
              "write_mbps": "write MB/s", "capacity_gb": "capacity GB", "read_latency_us": "read latency µs"}


def _plan_size(doc: dict[str, Any]) -> str:
    req = dict_at(doc, "requirement")
    cands = [c for c in (doc.get("candidates") or []) if isinstance(c, dict)]
    if cands and isinstance(cands[0].get("cloud"), dict):
        return cloud_section(doc)
    headroom = req.get("headroom")
    out = ["<h3>Cheapest configurations that meet the requirement</h3>"]
    kv = [(REQ_LABELS.get(k, k), num(req.get(k))) for k in ("read_iops", "write_iops", "read_mbps", "write_mbps",
                                                            "capacity_gb") if isnum(req.get(k))]
    if isnum(req.get("max_read_latency_us")):
        kv.append(("read latency ceiling", f"{num(req['max_read_latency_us'])} µs"))
    kv.append(("headroom", f"{headroom:.0%}" if isnum(headroom) else "—"))
    if req.get("source"):
        kv.append(("from", esc(req.get("source"))))
    out.append(kv_table(kv))
    binding = doc.get("binding")
    if binding:
        out.append(f'<p class="note"><b>Binding requirement: {esc(binding)}</b> — '
                   f'{esc(doc.get("binding_detail") or "")}</p>')
    out.append(dropped_sentence(doc))
    out.append(_grade_and_prices(doc))
    cloud = [x for x in (doc.get("cloud_volumes_left_out") or []) if isinstance(x, str)]
    if cloud:
        out.append(f'<p class="note">Cloud volumes left out ({esc(", ".join(cloud))}): on-prem designs only; '
                   "<code>dbtier plan size --cloud aws|azure|gcp</code> sizes cloud storage.</p>")
    keys = list(dict.fromkeys(k for c in cands for k in (c.get("meets") or {}) if isinstance(c.get("meets"), dict)))
    heads = ["#", "configuration", "class", "price", "GB", "IOPS read / write", "MB/s read / write", "read µs",
             "binding", *(f"{esc(REQ_LABELS.get(k, k))}<br>margin" for k in keys)]

    def pair(a: Any, b: Any) -> str:
        return f"{svg.fmt_num(a) if isnum(a) else '—'} / {svg.fmt_num(b) if isnum(b) else '—'}"

    rows = []
    for i, c in enumerate(cands, 1):
        meets = dict_at(c, "meets")
        rows.append([str(i), esc(_design_name(c)), esc(_classes(c)), _usd(c.get("price_usd")),
                     num(c.get("capacity_gb")), pair(c.get("read_iops"), c.get("write_iops")),
                     pair(c.get("read_mbps"), c.get("write_mbps")), num(c.get("read_latency_us")),
                     f"<b>{esc(c.get('binding') or '')}</b>" if i == 1 else esc(c.get("binding") or ""),
                     *(_margin_cell(meets.get(k), headroom) for k in keys)])
    if rows:
        out.append('<div class="wide">' + html_table(heads, rows, num_cols=(3, 4, 5, 6, 7, *range(9, 9 + len(keys))),
                                                     cls="cands") + "</div>")
        out.append(life_section(doc, cands, [_design_name(c) for c in cands]))
        out.append('<p class="reason">Ranked as the terms say (cost over the service life, or price). Margin = offered / required − 1 (read and write rates '
                   'offered while the other is also served), shown as a multiple from 2× up; a requirement is met '
                   'when its margin is at least the headroom. The binding requirement is the one whose own smallest '
                   'configuration costs the most (or latency, when it ruled out a cheaper one).</p>')
    else:
        out.append('<p class="na">No candidates in this document.</p>')
    return "".join(out)


def _classes(c: dict[str, Any]) -> str:
    """A candidate's device class, and its second set's (a mixed design): "nvme-ri-gen4 + hdd-nl"."""
    sec = dict_at(c, "second")
    names = [str(x) for x in (c.get("device_class"), sec.get("device_class")) if isinstance(x, str)]
    return " + ".join(dict.fromkeys(names)) or "—"


def _grade_and_prices(doc: dict[str, Any]) -> str:
    """The grade the plan offered (and what it left out), and the quotes it was priced on (stale ones flagged)."""
    out = []
    g = doc.get("grade") if isinstance(doc.get("grade"), dict) else None
    if g and g.get("text"):
        gone = [x for x in g.get("left_out") or [] if isinstance(x, dict)]
        client = [str(x.get("device")) for x in gone if x.get("reason") == "grade"]
        study = [x for x in gone if x.get("reason") == "study"]
        extra = (f" Left out: client drives {esc(', '.join(client))}." if client else "") + (
            f" {len(study)} study device(s) of 2009-2011 left out (<code>--devices</code> names one)." if study else "")
        out.append(f'<p class="note"><b>Grade</b> {esc(g["text"])}.{extra}</p>')
    pr = doc.get("prices") if isinstance(doc.get("prices"), dict) else None
    if pr:
        rows = [[f"<code>{esc(a.get('id'))}</code>", _usd(a.get("price_usd"), 2), esc(a.get("date")),
                 esc(a.get("source")), _usd(a.get("catalog_price_usd"), 2),
                 '<span class="fail">more than a year old</span>' if a.get("stale") else "current"]
                for a in pr.get("applied") or [] if isinstance(a, dict)]
        out.append(f'<p class="note"><b>Quoted prices</b> from <code>{esc(pr.get("file"))}</code> replace the '
                   "catalog's:</p>" + html_table(["device", "quoted", "date", "source", "catalog's", "age"], rows,
                                                 num_cols=(1, 4)))
    return "".join(out)


def _plan_value(doc: dict[str, Any]) -> str:
    v = dict_at(doc, "value")
    cfg = dict_at(doc, "config")
    res = dict_at(doc, "result")
    out = [f"<h3>Price/performance of <code>{esc(res.get('run_dir'))}</code> ({esc(res.get('kind') or '?')} run) as "
           f"{esc(cfg.get('description') or _array_name(cfg))}</h3>"]
    labels = (("tpm_per_usd", "TPM per $", 3), ("nopm_per_usd", "NOPM per $", 3), ("tps_per_usd", "TPS per $", 4), ("iops_per_usd", "IOPS per $", 3),
              ("mbps_per_usd", "MB/s per $", 4), ("usd_per_gb", "$ per usable GB", 2),
              ("usd_per_tpm", "$ per TPM", 2), ("usd_per_nopm", "$ per NOPM", 2), ("usd_per_tps", "$ per TPS", 2), ("usd_per_iops", "$ per IOPS", 3))
    rows = [[esc(label), num(v.get(k), d)] for k, label, d in labels if isnum(v.get(k))]
    out.append(html_table(["figure", "value"], rows, num_cols=(1,)))
    used = [u for u in (doc.get("figures_used") or []) if isinstance(u, str)]
    if used:
        out.append("<h4>Which figures were used</h4><ul>" + "".join(f"<li>{esc(u)}</li>" for u in used) + "</ul>")
    measured = doc.get("measured")
    if isinstance(measured, dict) and measured:
        out.append("<h4>Measured</h4>" + kv_table((k.replace("_", " "), json_value(x)) for k, x in measured.items()))
    if cfg:
        out.append("<h4>The configuration, from the catalog</h4>" + _arrays_table([_array_name(cfg)], [cfg]))
    return "".join(out)


_PLAN_ACTIONS: dict[str, Callable[[dict[str, Any]], str]] = {
    "equivalent": _plan_equivalent, "budget": _plan_budget, "size": _plan_size, "value": _plan_value}


def plan_section(doc: dict[str, Any], i: int) -> str:
    anchor = f"run-{i + 1}"
    out = [run_head(doc, i, anchor), errors_html(doc)]
    render = _PLAN_ACTIONS.get(doc.get("plan"))  # type: ignore[arg-type]
    if render is None:
        out.append(f'<p class="note">This plan document has no known action ({esc(doc.get("plan"))}); its raw '
                   "content follows.</p>")
    else:
        out.append(render(doc))
    files = get(doc, "catalog", "files")
    if isinstance(files, list) and files:
        over = get(doc, "catalog", "overridden")
        extra = f"; overridden: {json_value(list(over))}" if isinstance(over, dict) and over else ""
        out.append(f'<p class="reason">Catalog: {json_value(files)}{extra}. Figures are the catalog\'s datasheet '
                   "figures; the array model is described in <code>dbtier.model.plan.array</code>.</p>")
    out.append(json_details(doc))
    return f'<section class="run plan">{"".join(out)}</section>'
