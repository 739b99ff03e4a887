"""The side-by-side part of the report: every probe target in one table, and runs of one kind with
their key figures (and charts) next to each other.
"""

from __future__ import annotations

from typing import Any, Sequence

from dbtier.report.figures import core as F
from dbtier.report import summary as FC
from dbtier.report.sections import simulate as sim_report
from dbtier.report.figures import placed as P
from dbtier.report.svg import charts as svg
from dbtier.report.verdict import rules as R
from dbtier.report.base import esc, figure_frame, get, isnum, num, run_label
from dbtier.report.sections.probe import machine_target, verdict_html
from dbtier.report.svg.charts import Series
from dbtier.report.figures.labels import SUMMARY_LABELS
from dbtier.results import kinds
from dbtier.results.probe import HIGHER_BETTER, SUMMARY_KEYS
from dbtier.core.parts import dict_at

# -- comparison ------------------------------------------------------------------------

Entry = tuple[dict[str, Any], int]     # a document and its section number (0-based)

_NO_COMPARE = {"probe", "lab", "report", "show", "compare", "unknown"}   # kinds, and commands, not set side by side


def _probe_targets(entries: Sequence[Entry]) -> list[tuple[int, int, dict[str, Any], dict[str, Any]]]:
    out = []
    for d, i in entries:
        if d.get("command") != "probe":
            continue
        for j, t in enumerate(d.get("targets") or []):
            if isinstance(t, dict):
                out.append((i, j, d, t))
    return out


def _probe_comparison(entries: Sequence[Entry]) -> str:
    cols = _probe_targets(entries)
    if len(cols) < 2:
        return ""
    heads = ["measure"]
    for i, j, d, t in cols:
        mt = (machine_target(d, t, j) or {}) if t.get("kind") != "fleet" else {}   # a fleet's: many machines
        dev = get(mt, "block_device", "model") or get(mt, "block_device", "driver") or ""
        fs = t.get("filesystem") or mt.get("filesystem") or ""
        heads.append(f'<a href="#run-{i + 1}-t{j + 1}"><code>{esc(t.get("path"))}</code></a><br>'
                     f'<span class="reason">{esc(run_label(d, i))}<br>{esc(" · ".join(x for x in (fs, dev) if x))}'
                     f'</span>')
    heads.append("unit")
    rows = []
    for key in SUMMARY_KEYS:
        if key == "fsync_honesty_reason":
            continue
        if key == "fsync_honesty":
            cells = [verdict_html(get(t, "summary", key)) for _, _, _, t in cols]
            rows.append("<tr><td>fsync honesty</td>" + "".join(f'<td class="num">{c}</td>' for c in cells)
                        + "<td></td></tr>")
            continue
        label, unit, digits = SUMMARY_LABELS.get(key, (key, "", 1))
        vals = [get(t, "summary", key) for _, _, _, t in cols]
        nums = [v for v in vals if isnum(v)]
        best = (max(nums) if key in HIGHER_BETTER else min(nums)) if len(nums) > 1 else None
        tds = "".join(f'<td class="num{" best" if best is not None and v == best else ""}">{num(v, digits)}</td>'
                      for v in vals)
        rows.append(f"<tr><td>{esc(label)}</td>{tds}<td class=unit>{esc(unit)}</td></tr>")
    head = "".join(f"<th{' class=num' if 0 < k < len(heads) - 1 else ''}>{h}</th>" for k, h in enumerate(heads))
    return ('<p class="sub">Every probe target in this report; the best value of each row in bold.</p>'
            f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            "</div>")


def _run_hint(doc: dict[str, Any]) -> str:
    """What sets a run apart from others of its kind: its temp directory, its backup target ..."""
    k = kinds.kind_of(doc)
    p = dict_at(doc, "params")
    if k == "bench.dss" and p.get("temp"):
        return f"temp on {p['temp']}"
    if k == "bench.backup" and p.get("to"):
        return f"to {p['to']}"
    if k == "bench.oltp":   # the engine first: a lab's engines run the same workload side by side
        return " · ".join(x for x in (F.engine_words(doc)[0], F.workload_name(doc)) if x)
    host = get(doc, "machine", "hostname")
    return f"on {host}" if host else ""


def _figures_comparison(kind: str, group: Sequence[Entry]) -> str:
    table = FC.side_by_side_judged([d for d, _ in group])
    if not table:
        return ""
    heads = ["measure"] + [f'<a href="#run-{i + 1}"><code>{esc(run_label(d, i))}</code></a><br>'
                           f'<span class="reason">{esc(_run_hint(d))}</span>' for d, i in group] + ["unit"]
    rows = []
    # durable and non-durable runs side by side: said, and no value is marked the best
    clash = F.durability_clash([d for d, _ in group])
    unjudged: dict[str, list[str]] = {}
    for f0, vals, judged in table:
        # the best in bold only where the one evidence rule (verdict/rules.py's judge, compare's) calls it better
        best = judged["best"] if not clash else None
        label = (f"{f0.group}: " if f0.group and f0.group not in f0.label else "") + f0.label
        if not clash and judged["verdict"] == R.TOO_LITTLE:
            unjudged.setdefault(str(judged["reason"]), []).append(label)
        cells = "".join(f'<td class="num{" best" if best is not None and k == best else ""}">'
                        f'{num(v, f0.digits) if isnum(v) else esc(v) if v is not None else "—"}</td>'
                        for k, v in enumerate(vals))
        mark = ' <span class="reason" title="too little evidence">?</span>' \
            if not clash and judged["verdict"] == R.TOO_LITTLE else ""
        rows.append(f"<tr><td>{esc(label)}{mark}</td>{cells}<td class=unit>{esc(f0.unit)}</td></tr>")
    head = "".join(f"<th{' class=num' if 0 < k < len(heads) - 1 else ''}>{h}</th>" for k, h in enumerate(heads))
    notes = "".join(f'<p class="reason">? No best is marked, too little evidence ({esc(why)}): '
                    f"{esc(', '.join(labels[:4]) + (f' and {len(labels) - 4} more' if len(labels) > 4 else ''))}.</p>"
                    for why, labels in unjudged.items())
    return (f"<h3>{esc(kind)}: {len(group)} runs</h3>"
            + (f'<p class="note bad"><b>Not comparable:</b> {esc(clash)}.</p>' if clash else "")
            + f'<div class="wide"><table class="compare"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>" + notes + _placement_comparison([d for d, _ in group]))


def _placement_comparison(docs: Sequence[dict[str, Any]]) -> str:
    """Where each part went in each run (OLTP and DSS runs), and where the runs move a part only within one
    device, or a run keeps parts apart on one device, that said: such a comparison shows no placement."""
    ws = [P.where(d) for d in docs]
    if len(ws) < 2 or not all(ws):
        return ""
    roles = list(dict.fromkeys(r for w in ws for r in w))
    rows = "".join(f"<tr><td>{esc(P.role_word(r))}</td>"
                   + "".join(f'<td><code class="wrap">{esc(w[r].get("dir"))}</code><br>'
                             f'<span class="reason">{esc(P.part_text(w[r]))}</span></td>' if r in w else "<td>—</td>"
                             for w in ws) + "</tr>" for r in roles)
    names = [F.run_name(d) for d in docs]
    notes = list(dict.fromkeys(t for k in range(1, len(docs))
                               for t in P.comparison_sentences(docs[0], docs[k], (names[0], names[k]))))
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    return (f'<h4>Placement</h4><div class="wide"><table class="placement"><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div>" + "".join(f'<p class="note">{esc(t)}</p>' for t in notes))


def _comparison_charts(kind: str, group: Sequence[Entry]) -> list[str]:
    """The charts that set runs of one kind (`kind`, its name) side by side: a bench run's (TPC-H query times,
    TPS against clients, backup MB/s); other kinds have none here."""
    from dbtier.report.sections.dss import dss_tiers_html
    names = [f"{run_label(d, i)}" + (f" ({_run_hint(d)})" if _run_hint(d) else "") for d, i in group]
    out = []
    if kind == "bench.dss":
        qs = sorted({q["query"] for d, _ in group for q in F.dss_queries(d)})
        if qs:
            series = []
            for k, (d, _) in enumerate(group):
                by = {q["query"]: q.get("seconds") for q in F.dss_queries(d)}
                series.append(Series(names[k], [(n, by.get(q) if isnum(by.get(q)) else None)
                                                for n, q in enumerate(qs)], svg.colour(k)))
            out.append(figure_frame(svg.bar_chart("TPC-H per-query time, runs side by side", [f"Q{q}" for q in qs],
                                                  series, x_label="query", y_label="seconds", unit="s", width=1000,
                                                  value_labels=False,
                                                  desc="Grouped bars: each query, one bar per run."),
                                    "One group per query, one bar per run (the median of its warm runs)."))
        tiers = dss_tiers_html([d for d, _ in group])
        if tiers:
            out.append(tiers)
    elif kind == "bench.oltp":
        lines = [Series(names[k], [(p["clients"], p.get("tps")) for p in F.oltp_view(d)["points"]], svg.colour(k))
                 for k, (d, _) in enumerate(group)]
        if any(s.points for s in lines):
            out.append(figure_frame(svg.line_chart("TPS vs clients, runs side by side", lines, x_label="clients",
                                                   y_label="transactions per second", x_log2=True,
                                                   desc="One line per run."),
                                    "One line per run (a placement matrix: its last step)."))
    elif kind == "bench.backup":
        methods = list(dict.fromkeys(m["method"] for d, _ in group for m in F.backup_methods(d)))
        if methods:
            series = []
            for k, (d, _) in enumerate(group):
                by = {m["method"]: m["dir_mbps"] for m in F.backup_methods(d)}
                series.append(Series(names[k], [(n, by.get(m)) for n, m in enumerate(methods)], svg.colour(k)))
            out.append(figure_frame(svg.bar_chart("Backup MB/s to the directory, runs side by side", methods, series,
                                                  x_label="method", y_label="MB/s", unit="MB/s",
                                                  desc="Grouped bars: each method, one bar per run."),
                                    "One group per method, one bar per run: MB/s to the backup directory."))
    return out


def comparison_html(entries: Sequence[Entry]) -> str:
    parts = []
    probes = _probe_comparison(entries)
    if probes:
        parts.append(probes)
    groups: dict[str, list[Entry]] = {}      # by label: a kind's runs, a fleet's with the single hosts'
    for d, i in entries:
        if kinds.kind_of(d) not in _NO_COMPARE and d.get("command") not in _NO_COMPARE:
            groups.setdefault(kinds.label_of(d), []).append((d, i))
    for k, group in groups.items():
        if len(group) < 2:
            continue
        name = kinds.kind_of(group[0][0])
        try:
            table = _figures_comparison(k, group)
            charts = _comparison_charts(name, group)
            if group[0][0].get("command") == "simulate":
                extra = sim_report.compare_html([d for d, _ in group])
                if extra:
                    charts.append(extra)
        except Exception as exc:  # noqa: BLE001 - said in the report, and the rest still drawn
            parts.append(f'<p class="note bad">The side-by-side of the {esc(k)} runs could not be drawn '
                         f"({esc(type(exc).__name__)}: {esc(exc)}).</p>")
            continue
        if table or charts:
            parts.append(table + (f'<div class="charts{" one" if name == "bench.dss" else ""}">' + "".join(charts)
                                  + "</div>" if charts else ""))
    if not parts:
        return ""
    return ('<section class="compare"><h2 id="compare">Side by side</h2>'
            '<p class="sub">Runs of the same kind, their key figures next to each other; in bold the best value of a '
            "row, where it beats every other run's by more than their combined spread (at least 5%) and each rests "
            f"on {R.MIN_RUNS} runs or more within {F.fmt_auto(R.MAX_SPREAD_PCT)}% of each other (compare's "
            "rule).</p>" + "".join(parts) + "</section>")
