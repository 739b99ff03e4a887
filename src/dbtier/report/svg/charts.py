"""Charts: pure functions from numbers to self-contained SVG strings. Line, bar, horizontal bar, stacked
bar and stacked area charts; a heat map (the history report); the simulate report's CDF and timeline are in
sim.py, on the pieces here.

No JavaScript, no external fonts or images: each chart is one <svg> element with
a <title> (its accessible name), a white background so it prints as seen, and
all text escaped. Colours come from one palette so a test keeps its colour
across the charts of a report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence, TypeGuard

from dbtier.report.base import esc

# Tableau 10: distinguishable for most colour-vision deficiencies and in greyscale print.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
INK = "#222"
MUTED = "#666"
GRID = "#e3e3e3"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

CHAR_W = 6.6       # rough width of one 12px character, for layout only
LEGEND_ROW = 18


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float | None]]   # (x, y); y None is a gap
    colour: str | None = None
    dashed: bool = False


@dataclass(frozen=True)
class Marker:
    """A highlighted point (a ring and a label), e.g. the peak of a sweep."""
    x: float
    y: float
    label: str
    colour: str = INK


@dataclass(frozen=True)
class RefLine:
    """A horizontal reference line across the plot (e.g. an average)."""
    y: float
    label: str
    colour: str = MUTED


@dataclass(frozen=True)
class Band:
    """A shaded x range (e.g. the steady-state window)."""
    x0: float
    x1: float
    label: str = ""


@dataclass
class _Frame:
    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    parts: list[str] = field(default_factory=list)

    @property
    def plot_w(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> float:
        return self.height - self.top - self.bottom


# -- numbers -----------------------------------------------------------------

def fmt_num(x: float | None) -> str:
    """Short readable numbers for ticks and labels: 950, 1.2k, 10k, 1.2M, 0.25."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if x == 0:
        return "0"
    ax = abs(x)
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= div * 0.9995:
            return _trim(x / div) + suffix
    return _trim(x)


def _trim(v: float) -> str:
    av = abs(v)
    if av >= 100:
        text = f"{v:.0f}"
    elif av >= 10:
        text = f"{v:.1f}"
    elif av >= 1:
        text = f"{v:.2f}"
    else:
        text = f"{v:.3g}"
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] with steps of 1, 2, 2.5 or 5 × 10^k."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    ticks: list[float] = []
    v = start
    while v < hi + step * 0.5 and len(ticks) < 50:
        ticks.append(round(v, 12))
        if v >= hi - 1e-9 * step:
            break
        v += step
    if ticks[-1] < hi - 1e-9 * step:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def log10_ticks(lo: float, hi: float) -> list[float]:
    """Decades spanning [lo, hi] (lo > 0); 2 and 5 between them when the span is short."""
    a, b = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
    if b <= a:
        b = a + 1
    mults = (1, 2, 5) if b - a <= 2 else (1,)
    ticks = [m * 10.0 ** e for e in range(a, b + 1) for m in mults if m * 10.0 ** e <= 10.0 ** b]
    return ticks


def log2_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log2(lo) + 1e-9), math.ceil(math.log2(hi) - 1e-9)
    if b <= a:
        b = a + 1
    return [2.0 ** e for e in range(a, b + 1)]


class _Axis:
    """Maps data values to pixels, linear, log2 or log10."""

    def __init__(self, values: Sequence[float], kind: str, p0: float, p1: float,
                 include_zero: bool = False, pad: float = 0.0, tight: bool = False):
        self.kind = kind
        vals = [v for v in values if v is not None and math.isfinite(v) and (kind == "linear" or v > 0)]
        if not vals:
            vals = [1.0]
        lo, hi = min(vals), max(vals)
        if kind == "log2":
            self.ticks = log2_ticks(lo, hi)
        elif kind == "log10":
            self.ticks = log10_ticks(lo, hi)
        else:
            if include_zero:
                lo = min(lo, 0.0)
                hi = max(hi, 0.0)
            if pad and hi > lo:
                span = hi - lo
                hi += span * pad
                if not include_zero or lo < 0:
                    lo -= span * pad
            self.ticks = nice_ticks(lo, hi)
        self.lo, self.hi = self.ticks[0], self.ticks[-1]
        if tight and kind == "linear" and hi > lo:
            # The axis spans the data exactly; only the round ticks inside it are drawn.
            self.lo, self.hi = lo, hi
            self.ticks = [t for t in self.ticks if lo - 1e-9 <= t <= hi + 1e-9] or [lo, hi]
        self.p0, self.p1 = p0, p1

    def _t(self, v: float) -> float:
        if self.kind == "log2":
            return math.log2(v)
        if self.kind == "log10":
            return math.log10(v)
        return v

    def __call__(self, v: float) -> float:
        lo, hi = self._t(self.lo), self._t(self.hi)
        if hi == lo:
            return (self.p0 + self.p1) / 2
        return self.p0 + (self._t(v) - lo) / (hi - lo) * (self.p1 - self.p0)

    def ok(self, v: float | None) -> TypeGuard[float]:
        return v is not None and math.isfinite(v) and (self.kind == "linear" or v > 0)


# -- SVG pieces ----------------------------------------------------------------

def coord(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def text_el(x: float, y: float, s: str, anchor: str = "start", size: int = 12, fill: str = INK,
          weight: str | None = None, extra: str = "") -> str:
    w = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{coord(x)}" y="{coord(y)}" text-anchor="{anchor}" font-size="{size}" fill="{fill}"{w}{extra}>'
            f"{esc(s)}</text>")


def open_svg(width: int, height: int, title: str, desc: str | None) -> list[str]:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" preserveAspectRatio="xMidYMid meet" '
             f'font-family="{esc(FONT)}" aria-label="{esc(title)}">',
             f"<title>{esc(title)}</title>"]
    if desc:
        parts.append(f"<desc>{esc(desc)}</desc>")
    parts.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>')
    parts.append(text_el(12, 20, title, size=14, weight="600"))
    return parts


def _legend_layout(names: Sequence[str], width: int, x0: float) -> list[tuple[float, int]]:
    """(x offset, row) for each legend entry, wrapping at the chart width."""
    out, x, row = [], x0, 0
    for name in names:
        w = 22 + len(name) * CHAR_W + 16
        if x + w > width - 8 and x > x0:
            x, row = x0, row + 1
        out.append((x, row))
        x += w
    return out


def _legend(items: Sequence[tuple[str, str, bool, str]], width: int, y: float, x0: float = 12) -> tuple[list[str], int]:
    """items: (name, colour, dashed, kind 'line'|'box'). Returns parts and rows used."""
    if not items:
        return [], 0
    layout = _legend_layout([i[0] for i in items], width, x0)
    parts = ['<g class="legend">']
    for (name, col, dashed, kind), (x, row) in zip(items, layout):
        cy = y + row * LEGEND_ROW
        if kind == "box":
            parts.append(f'<rect x="{coord(x)}" y="{coord(cy - 5)}" width="14" height="10" fill="{col}"/>')
        else:
            dash = ' stroke-dasharray="5 3"' if dashed else ""
            parts.append(f'<line x1="{coord(x)}" y1="{coord(cy)}" x2="{coord(x + 16)}" y2="{coord(cy)}" stroke="{col}" '
                         f'stroke-width="2.5"{dash}/>')
            parts.append(f'<circle cx="{coord(x + 8)}" cy="{coord(cy)}" r="2.5" fill="{col}"/>')
        parts.append(text_el(x + 22, cy + 4, name))
    parts.append("</g>")
    return parts, max(row for _, row in layout) + 1


def _axes(fr: _Frame, xa: _Axis | None, ya: _Axis, x_label: str, y_label: str,
          x_tick_labels: Sequence[tuple[float, str]] | None = None) -> None:
    p = fr.parts
    x0, x1 = fr.left, fr.width - fr.right
    y0, y1 = fr.height - fr.bottom, fr.top
    for t in ya.ticks:
        y = ya(t)
        p.append(f'<line x1="{coord(x0)}" y1="{coord(y)}" x2="{coord(x1)}" y2="{coord(y)}" stroke="{GRID}" stroke-width="1"/>')
        p.append(text_el(x0 - 6, y + 4, fmt_num(t), anchor="end", size=11, fill=MUTED))
    ticks = x_tick_labels if x_tick_labels is not None else [(t, fmt_num(t)) for t in (xa.ticks if xa else [])]
    for t, label in ticks:
        x = xa(t) if xa else t
        p.append(f'<line x1="{coord(x)}" y1="{coord(y0)}" x2="{coord(x)}" y2="{coord(y0 + 4)}" stroke="{MUTED}"/>')
        p.append(text_el(x, y0 + 17, label, anchor="middle", size=11, fill=MUTED))
    p.append(f'<line x1="{coord(x0)}" y1="{coord(y0)}" x2="{coord(x1)}" y2="{coord(y0)}" stroke="{MUTED}" stroke-width="1"/>')
    p.append(f'<line x1="{coord(x0)}" y1="{coord(y0)}" x2="{coord(x0)}" y2="{coord(y1)}" stroke="{MUTED}" stroke-width="1"/>')
    if x_label:
        p.append(text_el((x0 + x1) / 2, fr.height - 8, x_label, anchor="middle", size=12, fill=INK))
    if y_label:
        cy = (y0 + y1) / 2
        p.append(text_el(14, cy, y_label, anchor="middle", size=12, fill=INK,
                       extra=f' transform="rotate(-90 14 {coord(cy)})"'))


def _no_data(fr: _Frame, message: str) -> None:
    fr.parts.append(text_el(fr.width / 2, fr.top + fr.plot_h / 2, message, anchor="middle", size=13, fill=MUTED))


def _note_lines(note: str | None) -> list[str]:
    return [ln for ln in str(note).split("\n")] if note else []


def _notes_height(notes: Sequence[str] | None) -> int:
    """Extra bottom margin for notes under the category labels: 14 px a line."""
    return 14 * max((len(_note_lines(n)) for n in notes or ()), default=0)


def _notes(fr: _Frame, centres: Sequence[tuple[float, str]], notes: Sequence[str] | None) -> None:
    """Each category's note under its label (below the x axis, above the axis title)."""
    if not notes:
        return
    y_axis = fr.height - fr.bottom
    for (x, _), note in zip(centres, notes):
        for j, line in enumerate(_note_lines(note)):
            fr.parts.append(text_el(x, y_axis + 31 + 14 * j, line, anchor="middle", size=11, fill=INK,
                                  weight="600" if j == 0 else None))


# -- charts ----------------------------------------------------------------------

def line_chart(title: str, series: Sequence[Series], *, x_label: str = "", y_label: str = "",
               x_log2: bool = False, y_log: bool = False, markers: Sequence[Marker] = (),
               ref_lines: Sequence[RefLine] = (), bands: Sequence[Band] = (),
               width: int = 560, height: int = 330, desc: str | None = None,
               y_zero: bool = True, legend: bool | None = None, y_max: float | None = None) -> str:
    """Several series over a shared x axis; x on a log2 scale for queue depth or streams.

    The legend is drawn when there is more than one series unless `legend` says otherwise.
    `y_max` puts the top of a linear y axis there (100 for a %) unless the data go higher."""
    items = [(s.name, s.colour or colour(i), s.dashed, "line") for i, s in enumerate(series)]
    show_legend = len(series) > 1 if legend is None else legend
    legend_parts, rows = _legend(items if show_legend else [], width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0)
    fr = _Frame(width, height, left=62, right=18, top=top, bottom=44)
    fr.parts = open_svg(width, height, title, desc) + legend_parts

    xs = [x for s in series for x, _ in s.points] + [b.x0 for b in bands] + [b.x1 for b in bands]
    ys = [y for s in series for _, y in s.points if y is not None] + [r.y for r in ref_lines] + [m.y for m in markers]
    fixed = y_max is not None and not y_log
    xa = _Axis(xs, "log2" if x_log2 else "linear", fr.left + 8, fr.width - fr.right - 8, tight=True)
    ya = _Axis(ys + ([y_max] if y_max is not None and fixed else []), "log10" if y_log else "linear", fr.height - fr.bottom, fr.top,
               include_zero=y_zero and not y_log, pad=0.0 if fixed else 0.04)
    has_data = any(xa.ok(x) and ya.ok(y) for s in series for x, y in s.points)
    if not has_data:
        _axes(fr, None, ya, x_label, y_label, x_tick_labels=[])
        _no_data(fr, "no data")
        return "".join(fr.parts + ["</svg>"])

    for b in bands:
        if xa.ok(b.x0) and xa.ok(b.x1):
            bx0, bx1 = xa(b.x0), xa(b.x1)
            fr.parts.append(f'<rect x="{coord(min(bx0, bx1))}" y="{coord(fr.top)}" width="{coord(abs(bx1 - bx0))}" '
                            f'height="{coord(fr.plot_h)}" fill="#f1f4f8"/>')
            if b.label:
                fr.parts.append(text_el((bx0 + bx1) / 2, fr.top + 14, b.label, anchor="middle", size=11, fill=MUTED))
    _axes(fr, xa, ya, x_label, y_label)
    for r in ref_lines:
        if ya.ok(r.y):
            y = ya(r.y)
            fr.parts.append(f'<line x1="{coord(fr.left)}" y1="{coord(y)}" x2="{coord(fr.width - fr.right)}" y2="{coord(y)}" '
                            f'stroke="{r.colour}" stroke-width="1.2" stroke-dasharray="2 3"/>')
            fr.parts.append(text_el(fr.left + 6, y - 5, r.label, size=11, fill=r.colour))
    for (name, col, dashed, _), s in zip(items, series):
        ordered = sorted(s.points, key=lambda p: (p[0] is None, p[0] or 0))
        pts = [(xa(x), ya(y)) if xa.ok(x) and ya.ok(y) else None for x, y in ordered]
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        fr.parts.append(f'<g class="series"><title>{esc(name)}</title>')
        run: list[tuple[float, float]] = []
        for pt in pts + [None]:
            if pt is None:
                if len(run) > 1:
                    path = " ".join(f"{coord(x)},{coord(y)}" for x, y in run)
                    fr.parts.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="2.2" '
                                    f'stroke-linejoin="round"{dash}/>')
                run = []
            else:
                run.append(pt)
        for pt, (dx, dy) in zip(pts, ordered):
            if pt is not None:
                tip = f"{name}: {fmt_num(dx)} → {fmt_num(dy)}"
                fr.parts.append(f'<circle cx="{coord(pt[0])}" cy="{coord(pt[1])}" r="3" fill="{col}">'
                                f"<title>{esc(tip)}</title></circle>")
        fr.parts.append("</g>")
    for m in markers:
        if xa.ok(m.x) and ya.ok(m.y):
            mx, my = xa(m.x), ya(m.y)
            fr.parts.append(f'<circle cx="{coord(mx)}" cy="{coord(my)}" r="7" fill="none" stroke="{m.colour}" '
                            f'stroke-width="1.5"/>')
            anchor = "end" if mx > fr.left + fr.plot_w * 0.7 else "start"
            tx = mx - 10 if anchor == "end" else mx + 10
            ty = my - 10 if my - 10 > fr.top + 8 else my + 20
            fr.parts.append(text_el(tx, ty, m.label, anchor=anchor, size=11, fill=m.colour, weight="600"))
    fr.parts.append("</svg>")
    return "".join(fr.parts)


def bar_chart(title: str, categories: Sequence[str], series: Sequence[Series], *, y_label: str = "",
              x_label: str = "", width: int = 560, height: int = 330, desc: str | None = None,
              value_labels: bool = True, unit: str = "", notes: Sequence[str] | None = None,
              y_max: float | None = None) -> str:
    """Grouped bars: one group per category, one bar per series. Series points are
    (category index, value); a missing or None value leaves a gap. `notes` (one per category,
    lines split at newlines) are written under the category labels; `y_max` puts the top of the
    axis there (100 for a %) unless the data go higher."""
    items = [(s.name, s.colour or colour(i), False, "box") for i, s in enumerate(series)]
    legend_parts, rows = _legend(items if len(series) > 1 else [], width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0) + (10 if value_labels else 0)
    fr = _Frame(width, height, left=62, right=18, top=top, bottom=44 + _notes_height(notes))
    fr.parts = open_svg(width, height, title, desc) + legend_parts
    values = {(i, int(c)): v for i, s in enumerate(series) for c, v in s.points
              if v is not None and math.isfinite(v)}
    ya = _Axis(list(values.values()) + ([y_max] if y_max is not None else []), "linear", fr.height - fr.bottom,
               fr.top, include_zero=True, pad=0.0 if y_max is not None else 0.02)
    n = len(categories)
    if not values or n == 0:
        _axes(fr, None, ya, x_label, y_label, x_tick_labels=[])
        _no_data(fr, "no data")
        return "".join(fr.parts + ["</svg>"])
    group_w = fr.plot_w / n
    inner = group_w * 0.72
    bar_w = inner / max(len(series), 1)
    centres = [(fr.left + group_w * (k + 0.5), cat) for k, cat in enumerate(categories)]
    _axes(fr, None, ya, x_label, y_label, x_tick_labels=centres)
    _notes(fr, centres, notes)
    base = ya(0.0)
    for i, s in enumerate(series):
        col = items[i][1]
        fr.parts.append(f'<g class="series"><title>{esc(s.name)}</title>')
        for k in range(n):
            v = values.get((i, k))
            if v is None:
                continue
            x = fr.left + group_w * k + (group_w - inner) / 2 + bar_w * i
            y = ya(v)
            label = f"{s.name}, {categories[k]}: {fmt_num(v)}{(' ' + unit) if unit else ''}"
            fr.parts.append(f'<rect x="{coord(x + 1)}" y="{coord(min(y, base))}" width="{coord(max(bar_w - 2, 1))}" '
                            f'height="{coord(abs(base - y))}" fill="{col}"><title>{esc(label)}</title></rect>')
            if value_labels:
                fr.parts.append(text_el(x + bar_w / 2, min(y, base) - 4, fmt_num(v), anchor="middle", size=11,
                                      fill=INK))
        fr.parts.append("</g>")
    fr.parts.append("</svg>")
    return "".join(fr.parts)


def hbar_chart(title: str, categories: Sequence[str], series: Sequence[Series], *, x_label: str = "",
               width: int = 560, desc: str | None = None, unit: str = "", value_labels: bool = True,
               highlight: int | None = None) -> str:
    """Horizontal grouped bars, for side-by-side comparisons with long names: one row per category (its
    label on the left), one bar per series. Series points are (category index, value); a missing or None
    value leaves a gap. The height grows with the rows; `highlight` draws one category's label in bold."""
    items = [(s.name, s.colour or colour(i), False, "box") for i, s in enumerate(series)]
    legend_parts, rows = _legend(items if len(series) > 1 else [], width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0)
    values = {(i, int(c)): v for i, s in enumerate(series) for c, v in s.points
              if v is not None and math.isfinite(v)}
    n = len(categories)
    bar_h = 14 if len(series) > 1 else 18
    row_h = bar_h * max(len(series), 1) + 10
    label_w = min(max((len(c) for c in categories), default=4) * CHAR_W + 14, width * 0.45)
    # room on the right for the value label of the longest bar
    right = 18 + (max((len(fmt_num(v)) for v in values.values()), default=1) * CHAR_W + 6 if value_labels else 0)
    height = int(top + max(n, 1) * row_h + 44)
    fr = _Frame(width, height, left=label_w, right=right, top=top, bottom=44)
    fr.parts = open_svg(width, height, title, desc) + legend_parts
    xa = _Axis(list(values.values()), "linear", fr.left, fr.width - fr.right, include_zero=True, pad=0.0)
    if not values or n == 0:
        _no_data(fr, "no data")
        return "".join(fr.parts + ["</svg>"])
    p = fr.parts
    y_axis = fr.height - fr.bottom
    for t in xa.ticks:
        x = xa(t)
        p.append(f'<line x1="{coord(x)}" y1="{coord(fr.top)}" x2="{coord(x)}" y2="{coord(y_axis)}" stroke="{GRID}" '
                 'stroke-width="1"/>')
        p.append(text_el(x, y_axis + 16, fmt_num(t), anchor="middle", size=11, fill=MUTED))
    p.append(f'<line x1="{coord(fr.left)}" y1="{coord(fr.top)}" x2="{coord(fr.left)}" y2="{coord(y_axis)}" stroke="{MUTED}"/>')
    p.append(f'<line x1="{coord(fr.left)}" y1="{coord(y_axis)}" x2="{coord(fr.width - fr.right)}" y2="{coord(y_axis)}" '
             f'stroke="{MUTED}"/>')
    if x_label:
        p.append(text_el((fr.left + fr.width - fr.right) / 2, fr.height - 8, x_label, anchor="middle", size=12))
    base = xa(0.0)
    for k, cat in enumerate(categories):
        y0 = fr.top + k * row_h + 5
        label = cat if len(cat) * CHAR_W + 14 <= label_w else cat[:max(int((label_w - 14) / CHAR_W) - 1, 1)] + "…"
        text = text_el(fr.left - 6, y0 + row_h / 2 + 3, label, anchor="end", size=12,
                     weight="600" if highlight == k else None)
        # a shortened label keeps the full name as its tooltip
        p.append(text if label == cat else f"<g><title>{esc(cat)}</title>{text}</g>")
        for i, s in enumerate(series):
            v = values.get((i, k))
            if v is None:
                continue
            y = y0 + i * bar_h
            x = xa(v)
            tip = f"{s.name + ', ' if len(series) > 1 else ''}{cat}: {fmt_num(v)}{(' ' + unit) if unit else ''}"
            p.append(f'<rect x="{coord(min(x, base))}" y="{coord(y)}" width="{coord(max(abs(x - base), 0.5))}" '
                     f'height="{coord(bar_h - 2)}" fill="{items[i][1]}"><title>{esc(tip)}</title></rect>')
            if value_labels:
                p.append(text_el(max(x, base) + 4, y + bar_h - 5, fmt_num(v), size=11))
    p.append("</svg>")
    return "".join(p)


def stacked_bar_chart(title: str, categories: Sequence[str], series: Sequence[Series], *, y_label: str = "",
                      x_label: str = "", width: int = 560, height: int = 330, desc: str | None = None,
                      unit: str = "", y_max: float | None = None, totals: bool = True,
                      notes: Sequence[str] | None = None, legend: bool = True) -> str:
    """One bar per category made of one segment per series, stacked in series order from the
    bottom. Series points are (category index, value); missing, None and non-positive values add no
    segment. `y_max` fixes the top of the axis (100 for shares in %); `totals` writes each bar's total
    above it; `notes` (one per category, lines split at newlines) go under the category labels."""
    items = [(s.name, s.colour or colour(i), False, "box") for i, s in enumerate(series)]
    legend_parts, rows = _legend(items if legend and series else [], width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0) + (10 if totals else 0)
    fr = _Frame(width, height, left=62, right=18, top=top, bottom=44 + _notes_height(notes))
    fr.parts = open_svg(width, height, title, desc) + legend_parts
    n = len(categories)
    values = {(i, int(c)): v for i, s in enumerate(series) for c, v in s.points
              if v is not None and math.isfinite(v) and v > 0 and 0 <= int(c) < n}
    sums = [sum(v for (i, k), v in values.items() if k == kk) for kk in range(n)]
    ya = _Axis(sums + ([y_max] if y_max is not None else []), "linear", fr.height - fr.bottom, fr.top,
               include_zero=True, pad=0.0 if y_max is not None else 0.02)
    if not values or n == 0:
        _axes(fr, None, ya, x_label, y_label, x_tick_labels=[])
        _no_data(fr, "no data")
        return "".join(fr.parts + ["</svg>"])
    group_w = fr.plot_w / n
    bar_w = min(group_w * 0.62, 90.0)
    centres = [(fr.left + group_w * (k + 0.5), cat) for k, cat in enumerate(categories)]
    _axes(fr, None, ya, x_label, y_label, x_tick_labels=centres)
    _notes(fr, centres, notes)
    suffix = (" " + unit) if unit else ""
    stacked = [0.0] * n
    for i, s in enumerate(series):
        col = items[i][1]
        fr.parts.append(f'<g class="series"><title>{esc(s.name)}</title>')
        for k in range(n):
            v = values.get((i, k))
            if v is None:
                continue
            y_lo, y_hi = ya(stacked[k]), ya(stacked[k] + v)
            stacked[k] += v
            x = centres[k][0] - bar_w / 2
            tip = f"{s.name}, {categories[k]}: {fmt_num(v)}{suffix}"
            fr.parts.append(f'<rect x="{coord(x)}" y="{coord(y_hi)}" width="{coord(bar_w)}" '
                            f'height="{coord(max(y_lo - y_hi, 0.5))}" fill="{col}" stroke="#fff" stroke-width="0.6">'
                            f"<title>{esc(tip)}</title></rect>")
        fr.parts.append("</g>")
    if totals:
        for k, (x, _) in enumerate(centres):
            if sums[k] > 0:
                fr.parts.append(text_el(x, ya(sums[k]) - 4, fmt_num(sums[k]), anchor="middle", size=11))
    fr.parts.append("</svg>")
    return "".join(fr.parts)


def stacked_area_chart(title: str, series: Sequence[Series], *, x_label: str = "", y_label: str = "",
                       y_max: float | None = None, width: int = 560, height: int = 330, desc: str | None = None,
                       unit: str = "") -> str:
    """Series stacked on each other over a shared x axis (e.g. CPU user, system and iowait % over
    time): each band is filled from the sum of the series below it. The x values are the union of the
    series' x values; a series without a value at an x (or with None) adds nothing there."""
    items = [(s.name, s.colour or colour(i), False, "box") for i, s in enumerate(series)]
    legend_parts, rows = _legend(items if series else [], width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0)
    fr = _Frame(width, height, left=62, right=18, top=top, bottom=44)
    fr.parts = open_svg(width, height, title, desc) + legend_parts
    xs = sorted({x for s in series for x, _ in s.points if x is not None and math.isfinite(x)})
    table = [{x: y for x, y in s.points if x is not None and y is not None and math.isfinite(y) and y > 0}
             for s in series]
    sums = [sum(t.get(x, 0.0) for t in table) for x in xs]
    xa = _Axis(xs, "linear", fr.left + 8, fr.width - fr.right - 8, tight=True)
    ya = _Axis(sums + ([y_max] if y_max is not None else []), "linear", fr.height - fr.bottom, fr.top,
               include_zero=True, pad=0.0 if y_max is not None else 0.04)
    if not xs or not any(sums):
        _axes(fr, None, ya, x_label, y_label, x_tick_labels=[])
        _no_data(fr, "no data")
        return "".join(fr.parts + ["</svg>"])
    _axes(fr, xa, ya, x_label, y_label)
    suffix = (" " + unit) if unit else ""
    below = [0.0] * len(xs)
    for (name, col, _, _), t in zip(items, table):
        above = [b + t.get(x, 0.0) for b, x in zip(below, xs)]
        if len(xs) == 1:   # one sample: a thin column rather than an invisible area
            x = xa(xs[0])
            edge = [(x - 3, ya(above[0])), (x + 3, ya(above[0])), (x + 3, ya(below[0])), (x - 3, ya(below[0]))]
        else:
            edge = [(xa(x), ya(v)) for x, v in zip(xs, above)] + \
                   [(xa(x), ya(v)) for x, v in reversed(list(zip(xs, below)))]
        path = " ".join(f"{coord(px)},{coord(py)}" for px, py in edge)
        peak = max(t.values(), default=0.0)
        fr.parts.append(f'<g class="series"><title>{esc(f"{name}: up to {fmt_num(peak)}{suffix}")}</title>'
                        f'<polygon points="{path}" fill="{col}" fill-opacity="0.85" stroke="{col}" '
                        'stroke-width="1"/></g>')
        below = above
    fr.parts.append("</svg>")
    return "".join(fr.parts)


# -- a heat map: hour of day x day of week, or statistic x hour (the history report) ------------------
# Colour runs from white to the palette's first blue; empty cells are hatched grey so "no data" never
# reads as "zero".

_LOW = (255, 255, 255)


def _hex(c: str) -> tuple[int, int, int]:
    c = c.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def shade(v: float, lo: float, hi: float, high: str = PALETTE[0]) -> str:
    """White at lo, `high` at hi (linear)."""
    t = 0.0 if hi <= lo else max(0.0, min(1.0, (v - lo) / (hi - lo)))
    h = _hex(high)
    r, g, b = (round(a + (z - a) * t) for a, z in zip(_LOW, h))
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_map(title: str, row_labels: Sequence[str], col_labels: Sequence[str],
             values: Sequence[Sequence[float | None]], *, unit: str = "", width: int = 720,
             cell_h: int = 22, desc: str | None = None, marks: Sequence[tuple[int, int]] = ()) -> str:
    """values[row][col]; `marks` are (row, col) cells outlined (e.g. the peak)."""
    left = 12 + max((len(r) for r in row_labels), default=4) * 7
    top, right, bottom = 44, 14, 46
    n_r, n_c = len(row_labels), len(col_labels)
    height = top + n_r * cell_h + bottom
    cell_w = (width - left - right) / max(n_c, 1)
    vals = [v for row in values for v in row if v is not None and math.isfinite(v)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    lo = min(lo, 0.0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart heatmap" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" font-family="{esc(FONT)}" aria-label="{esc(title)}">',
             f"<title>{esc(title)}</title>"]
    if desc:
        parts.append(f"<desc>{esc(desc)}</desc>")
    parts.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>')
    parts.append('<defs><pattern id="hm-empty" width="6" height="6" patternUnits="userSpaceOnUse">'
                 '<rect width="6" height="6" fill="#f4f4f4"/><path d="M0,6 L6,0" stroke="#d0d0d0" stroke-width="1"/>'
                 "</pattern></defs>")
    parts.append(f'<text x="12" y="20" font-size="14" font-weight="600" fill="{INK}">{esc(title)}</text>')
    for i, lab in enumerate(row_labels):
        y = top + i * cell_h
        parts.append(f'<text x="{left - 6}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="{MUTED}">{esc(lab)}</text>')
        for j in range(n_c):
            v = values[i][j] if j < len(values[i]) else None
            x = left + j * cell_w
            ok = v is not None and math.isfinite(v)
            fill = shade(v, lo, hi) if v is not None and ok else "url(#hm-empty)"
            tip = f"{lab}, {col_labels[j]}: " + (f"{fmt_num(v)}{(' ' + unit) if unit else ''}" if ok else "no data")
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{cell_w - 1:.1f}" height="{cell_h - 1}" fill="{fill}">'
                         f"<title>{esc(tip)}</title></rect>")
    for (i, j) in marks:
        if 0 <= i < n_r and 0 <= j < n_c:
            parts.append(f'<rect x="{left + j * cell_w:.1f}" y="{top + i * cell_h}" width="{cell_w - 1:.1f}" '
                         f'height="{cell_h - 1}" fill="none" stroke="{INK}" stroke-width="2"/>')
    every = max(1, math.ceil(n_c / ((width - left - right) / 26)))
    for j, lab in enumerate(col_labels):
        if j % every == 0:
            x = left + (j + 0.5) * cell_w
            parts.append(f'<text x="{x:.1f}" y="{top + n_r * cell_h + 14}" text-anchor="middle" font-size="11" '
                         f'fill="{MUTED}">{esc(lab)}</text>')
    # colour scale
    ly = height - 16
    for k in range(10):
        parts.append(f'<rect x="{left + k * 16}" y="{ly - 8}" width="16" height="10" '
                     f'fill="{shade(lo + (hi - lo) * k / 9, lo, hi)}" stroke="#eee"/>')
    parts.append(f'<text x="{left + 166}" y="{ly + 1}" font-size="11" fill="{MUTED}">'
                 f"{esc(fmt_num(lo))} to {esc(fmt_num(hi))}{(' ' + esc(unit)) if unit else ''}</text>")
    parts.append("</svg>")
    return "".join(parts)
