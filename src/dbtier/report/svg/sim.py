"""The simulate report's charts, on report/svg/charts.py's pieces: a CDF on a log x axis, and a timeline with
windows (a failure, a resync) and event lines (a restart)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, TypeGuard

from dbtier.report.base import esc
from dbtier.report.svg.charts import (CHAR_W, GRID, INK, LEGEND_ROW, MUTED, Series, colour, coord, fmt_num,
                                      log10_ticks, nice_ticks, open_svg, text_el)


@dataclass(frozen=True)
class Window:
    """A shaded time range with a label (e.g. 'fast side down')."""
    x0: float
    x1: float
    label: str
    fill: str = "#fbe3e4"


@dataclass(frozen=True)
class Event:
    """A vertical line at x with a label (e.g. 'restart')."""
    x: float
    label: str
    colour: str = INK


def _series_legend(series: Sequence[Series], width: int, y: float) -> tuple[list[str], int]:
    if len(series) < 2:
        return [], 0
    parts, x, row = ['<g class="legend">'], 12.0, 0
    for i, s in enumerate(series):
        w = 22 + len(s.name) * CHAR_W + 16
        if x + w > width - 8 and x > 12:
            x, row = 12.0, row + 1
        cy = y + row * LEGEND_ROW
        col = s.colour or colour(i)
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        parts.append(f'<line x1="{coord(x)}" y1="{coord(cy)}" x2="{coord(x + 16)}" y2="{coord(cy)}" stroke="{col}" '
                     f'stroke-width="2.5"{dash}/>')
        parts.append(text_el(x + 22, cy + 4, s.name))
        x += w
    parts.append("</g>")
    return parts, row + 1


class _Scale:
    def __init__(self, lo: float, hi: float, p0: float, p1: float, log: bool):
        self.lo, self.hi, self.p0, self.p1, self.log = lo, hi, p0, p1, log

    def __call__(self, v: float) -> float:
        t = (lambda z: math.log10(z)) if self.log else (lambda z: z)
        a, b = t(self.lo), t(self.hi)
        if b == a:
            return (self.p0 + self.p1) / 2
        return self.p0 + (t(v) - a) / (b - a) * (self.p1 - self.p0)

    def ok(self, v: float | None) -> TypeGuard[float]:
        return v is not None and math.isfinite(v) and (not self.log or v > 0)


def _ticks(values: list[float], log: bool, zero: bool) -> list[float]:
    vals = [v for v in values if v is not None and math.isfinite(v) and (not log or v > 0)] or [1.0]
    lo, hi = min(vals), max(vals)
    if log:
        return log10_ticks(lo, hi)
    if zero:
        lo = min(lo, 0.0)
    return nice_ticks(lo, hi)


def _polyline(points: list[tuple[float, float]], col: str, dashed: bool, step: bool = False) -> str:
    if step:
        stepped: list[tuple[float, float]] = []
        for (x0, y0), (x1, _y1) in zip(points, points[1:]):
            stepped += [(x0, y0), (x1, y0)]
        stepped.append(points[-1])
        points = stepped
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    path = " ".join(f"{coord(x)},{coord(y)}" for x, y in points)
    return (f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="2.2" '
            f'stroke-linejoin="round"{dash}/>')


def _frame_axes(parts: list[str], xs: _Scale, ys: _Scale, xt: list[float], yt: list[float], left: float,
                right: float, top: float, bottom: float, x_label: str, y_label: str, height: int,
                y_fmt=fmt_num, x_fmt=fmt_num) -> None:
    for t in yt:
        y = ys(t)
        parts.append(f'<line x1="{coord(left)}" y1="{coord(y)}" x2="{coord(right)}" y2="{coord(y)}" stroke="{GRID}"/>')
        parts.append(text_el(left - 6, y + 4, y_fmt(t), anchor="end", size=11, fill=MUTED))
    for t in xt:
        x = xs(t)
        parts.append(f'<line x1="{coord(x)}" y1="{coord(bottom)}" x2="{coord(x)}" y2="{coord(bottom + 4)}" stroke="{MUTED}"/>')
        parts.append(text_el(x, bottom + 17, x_fmt(t), anchor="middle", size=11, fill=MUTED))
    parts.append(f'<line x1="{coord(left)}" y1="{coord(bottom)}" x2="{coord(right)}" y2="{coord(bottom)}" stroke="{MUTED}"/>')
    parts.append(f'<line x1="{coord(left)}" y1="{coord(bottom)}" x2="{coord(left)}" y2="{coord(top)}" stroke="{MUTED}"/>')
    if x_label:
        parts.append(text_el((left + right) / 2, height - 8, x_label, anchor="middle"))
    if y_label:
        cy = (top + bottom) / 2
        parts.append(text_el(14, cy, y_label, anchor="middle", extra=f' transform="rotate(-90 14 {coord(cy)})"'))


def cdf_chart(title: str, series: Sequence[Series], *, x_label: str = "latency (µs)",
              y_label: str = "fraction of requests", width: int = 560, height: int = 330,
              desc: str | None = None) -> str:
    """Cumulative distributions on a log10 x axis: each series' points are (value, fraction ≤ value)."""
    legend, rows = _series_legend(series, width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0)
    left, right, bottom = 62.0, width - 18.0, height - 44.0
    parts = open_svg(width, height, title, desc) + legend
    xs_all = [x for s in series for x, _ in s.points if x is not None and x > 0]
    if not xs_all:
        parts.append(text_el(width / 2, (top + bottom) / 2, "no data", anchor="middle", size=13, fill=MUTED))
        return "".join(parts + ["</svg>"])
    xt = _ticks(xs_all, True, False)
    yt = [0.0, 0.25, 0.5, 0.75, 1.0]
    xs = _Scale(xt[0], xt[-1], left + 8, right - 8, True)
    ys = _Scale(0.0, 1.0, bottom, top, False)
    _frame_axes(parts, xs, ys, xt, yt, left, right, top, bottom, x_label, y_label, height,
                y_fmt=lambda v: f"{v * 100:.0f}%")
    for i, s in enumerate(series):
        col = s.colour or colour(i)
        pts = [(xs(x), ys(y)) for x, y in s.points if xs.ok(x) and y is not None]
        parts.append(f'<g class="series"><title>{esc(s.name)}</title>')
        if len(pts) > 1:
            parts.append(_polyline(pts, col, s.dashed, step=True))
        for q in (0.5, 0.99):
            hit = next(((x, y) for x, y in s.points if y is not None and y >= q and xs.ok(x)), None)
            if hit:
                tip = f"{s.name}: p{q * 100:g} {fmt_num(hit[0])} µs"
                parts.append(f'<circle cx="{coord(xs(hit[0]))}" cy="{coord(ys(q))}" r="3" fill="{col}">'
                             f"<title>{esc(tip)}</title></circle>")
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def timeline_chart(title: str, series: Sequence[Series], *, windows: Sequence[Window] = (),
                   events: Sequence[Event] = (), x_label: str = "time (s)", y_label: str = "",
                   y_log: bool = False, y_max: float | None = None, y_fmt=fmt_num, width: int = 560,
                   height: int = 330, desc: str | None = None) -> str:
    """Series over time with shaded windows (failure, resync) and labelled event lines (restart)."""
    legend, rows = _series_legend(series, width, 40)
    top = 40 + rows * LEGEND_ROW + (6 if rows else 0) + (14 if windows or events else 0)
    left, right, bottom = 62.0, width - 18.0, height - 44.0
    parts = open_svg(width, height, title, desc) + legend
    xs_all = [x for s in series for x, _ in s.points] + [w.x0 for w in windows] + [w.x1 for w in windows] + \
        [e.x for e in events]
    ys_all = [y for s in series for _, y in s.points if y is not None] + ([y_max] if y_max is not None else [])
    if not any(y is not None for s in series for _, y in s.points):
        parts.append(text_el(width / 2, (top + bottom) / 2, "no data", anchor="middle", size=13, fill=MUTED))
        return "".join(parts + ["</svg>"])
    x_lo, x_hi = min(xs_all), max(xs_all)
    xt = [t for t in nice_ticks(x_lo, x_hi) if x_lo - 1e-9 <= t <= x_hi + 1e-9] or [x_lo, x_hi]
    yt = _ticks(ys_all, y_log, True)
    xs = _Scale(x_lo, x_hi, left + 8, right - 8, False)
    ys = _Scale(yt[0], yt[-1], bottom, top, y_log)
    for w in windows:
        a, b = xs(max(w.x0, x_lo)), xs(min(w.x1, x_hi))
        parts.append(f'<rect x="{coord(a)}" y="{coord(top)}" width="{coord(max(b - a, 1.5))}" height="{coord(bottom - top)}" '
                     f'fill="{w.fill}"><title>{esc(w.label)}</title></rect>')
        if b - a >= len(w.label) * CHAR_W * 0.8:     # a narrow window keeps its label in the tooltip
            parts.append(text_el((a + b) / 2, top - 4, w.label, anchor="middle", size=11, fill=MUTED))
    _frame_axes(parts, xs, ys, xt, yt, left, right, top, bottom, x_label, y_label, height, y_fmt=y_fmt)
    for e in events:
        x = xs(e.x)
        parts.append(f'<line x1="{coord(x)}" y1="{coord(top)}" x2="{coord(x)}" y2="{coord(bottom)}" stroke="{e.colour}" '
                     f'stroke-width="1.5" stroke-dasharray="4 3"><title>{esc(e.label)}</title></line>')
        anchor = "end" if x > left + (right - left) * 0.7 else "start"
        parts.append(text_el(x + (-4 if anchor == "end" else 4), top + 12, e.label, anchor=anchor, size=11,
                           fill=e.colour))
    for i, s in enumerate(series):
        col = s.colour or colour(i)
        parts.append(f'<g class="series"><title>{esc(s.name)}</title>')
        run: list[tuple[float, float]] = []
        pts: list[tuple[float | None, float | None]] = list(s.points)
        for px, py in pts + [(None, None)]:        # the gap at the end draws the last run
            if px is None or not ys.ok(py):
                if len(run) > 1:
                    parts.append(_polyline(run, col, s.dashed))
                elif len(run) == 1:
                    parts.append(f'<circle cx="{coord(run[0][0])}" cy="{coord(run[0][1])}" r="2" fill="{col}"/>')
                run = []
            else:
                run.append((xs(px), ys(py)))
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


