"""The report section of a `dbtier simulate mrc` document: the trace, every policy's miss-ratio curve on one
chart with Belady drawn as the bound, and each policy's headroom to it. Pure: a document in, HTML out; the
numbers come from report/figures/mrc.py, the same the Markdown report and `dbtier show` print.
"""

from __future__ import annotations

from typing import Any

from dbtier.report.figures import mrc as M
from dbtier.report.svg import charts as svg
from dbtier.report.base import esc, figure_frame, html_table, kv_table
from dbtier.report.figures.core import isnum
from dbtier.report.svg.charts import Series
from dbtier.core.parts import dict_at

BOUND_LABEL = "Belady (optimal bound)"
# one colour per policy, whichever others share the chart (svg's palette, then two more for twelve)
_COLOURS = dict(zip(("lru", "fifo", "clock", "s3fifo", "s3fifo-2023", "sieve", "twoq", "slru", "lfu", "arc", "lirs",
                     "wtinylfu"), svg.PALETTE + ("#17becf", "#bcbd22")))


def _est_words(m: dict[str, Any]) -> str:
    return f"SHARDS estimates{M.sample_words(m)}" if m.get("estimates") else ""


def curve_chart(m: dict[str, Any]) -> str | None:
    """Miss ratio (%) against cache size (log2, in one binary unit) for every policy; Belady dashed, in ink."""
    sizes = M.sizes(m)
    if not sizes:
        return None
    # The unit of the power of two at or above the largest size: the log2 ticks then read 0.125 .. 512.
    unit, scale = M.size_unit(2 ** (int(max(sizes)) - 1).bit_length())
    series = []
    real = 0
    for c in M.curves(m):
        pts = [(p["cache_bytes"] / scale, M.pct(p.get("miss_ratio"))) for p in c.get("points") or []
               if isinstance(p, dict) and isnum(p.get("cache_bytes"))]
        if c.get("policy") == M.BOUND:
            series.append(Series(BOUND_LABEL, pts, colour=svg.INK, dashed=True))
        else:
            series.append(Series(M.policy_name(c.get("policy")), pts,
                                 colour=_COLOURS.get(str(c.get("policy")), svg.colour(real))))
            real += 1
    est = _est_words(m)
    chart = svg.line_chart("Miss ratio by cache size" + (f" ({est})" if est else ""), series,
                           x_label=f"cache size ({unit}, log scale)", y_label="miss ratio (%)", x_log2=True,
                           legend=True)
    cap = "Misses per request at each cache size, one replay per policy and size."
    if M.bound_ran(m):
        cap += f" Dashed: Belady, {M.BOUND_NOTE}."
    else:
        cap += f" {M.not_computed(m)}."
    if m.get("estimates"):
        cap += f" {est[0].upper() + est[1:]}: {m.get('note') or 'every figure is an estimate'}."
    return figure_frame(chart, esc(cap))


def _gap(g: float | None) -> str:
    return "—" if g is None else f"{g:+.2f} pp"


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.2f}%"


def _best_lines(m: dict[str, Any]) -> str:
    items = []
    for b in M.best(m):
        text = f"At {M.size_text(b.cache_bytes)}: {M.best_names(b)} misses {_p(b.miss_ratio)}"
        if b.bound is None:
            text += " (no bound computed)"
        elif b.gap_pp is not None and b.gap_pp < 0:
            text += (f", {-b.gap_pp:.2f} pp below Belady's {_p(b.bound)} (objects of varied sizes or a sample: "
                     "Belady is no bound there)")
        elif b.gap_pp is not None:
            text += f", {b.gap_pp:.2f} pp above Belady's {_p(b.bound)}"
        items.append(f"<li>{esc(text)}</li>")
    return (f'<p>The real policy that misses least at each size:</p><ul class="reason">{"".join(items)}</ul>'
            if items else "")


def _headroom_table(m: dict[str, Any]) -> str:
    bests = {(b.cache_bytes, p) for b in M.best(m) for p in b.policies}
    out, last = [], None
    for r in M.rows(m):
        name = esc(M.policy_name(r.policy))
        if (r.cache_bytes, r.policy) in bests:
            name = f"<b>{name}</b>"
        gap = "the bound" if r.policy == M.BOUND else _gap(r.gap_pp)
        out.append([esc(M.size_text(r.cache_bytes)) if r.cache_bytes != last else "", name, _p(r.miss_ratio),
                    esc(gap), "—" if r.misses is None else f"{r.misses:,}", _p(r.byte_miss_ratio)])
        last = r.cache_bytes
    return html_table(["cache", "policy", "miss ratio", "above Belady", "misses", "byte miss ratio"], out,
                      num_cols=(2, 3, 4, 5), cls="points")


def section_html(doc: dict[str, Any]) -> str:
    """HTML for one simulate mrc document (headings from h3 down; the caller places it)."""
    m = doc["mrc"]
    tr = dict_at(m, "trace")
    params = dict_at(doc, "params")
    names = ", ".join(M.policy_name(c.get("policy")) for c in M.curves(m))
    out = [f"<h3>Miss-ratio curves: {esc(names)}</h3>"]
    if m.get("estimates"):
        note = m.get("note") or f"{_est_words(m)}: every figure is an estimate"
        out.append(f'<p class="note">{esc(note)}.</p>')
    fp = tr.get("footprint_bytes")
    rows = [("trace", f"<code>{esc(params.get('trace'))}</code>" if params.get("trace") else "—"),
            ("format", f"{esc(tr.get('format'))} ({esc(tr.get('mode') or 'object')} mode)"),
            ("requests", f"{tr['requests']:,}" if isnum(tr.get("requests")) else "—"),
            ("objects", f"{tr['objects']:,}" if isnum(tr.get("objects")) else "—"),
            ("footprint", f"{esc(M.size_text(fp))} ({fp:,} bytes)" if isnum(fp) else "—")]
    out.append(kv_table(rows))
    chart = curve_chart(m)
    if chart:
        out.append('<h4>Charts</h4><div class="charts">' + chart + "</div>")
    out.append("<h4>Headroom to Belady</h4>")
    if not M.bound_ran(m):
        out.append(f'<p class="note">{esc(M.not_computed(m))}.</p>')
    out.append(_best_lines(m) + _headroom_table(m))
    out.append('<p class="reason">Above Belady: percentage points over Belady\'s miss ratio at that size (negative: '
               "below it). Bold: the real policy that misses least at that size.</p>")
    out.append("<h4>How these numbers were obtained</h4>")
    out += [f'<p class="reason">{esc(what)}: {esc(how)}.</p>' for what, how in M.method(doc)]
    return "\n".join(out)
