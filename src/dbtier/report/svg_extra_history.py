"""Heat map primitive for the history report (hour of day x day of week, or statistic x hour).

Pure: numbers in, one self-contained <svg> out, in the style of report/svg.py (white
background, <title> on the chart and on every cell, escaped text). Colour runs from white to the
palette's first blue; empty cells are hatched grey so "no data" never reads as "zero".
"""

from __future__ import annotations

import math
from html import escape
from typing import Sequence

from dbtier.report.svg import FONT, INK, MUTED, PALETTE, fmt_num

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
             f'width="{width}" height="{height}" font-family="{escape(FONT)}" aria-label="{escape(title)}">',
             f"<title>{escape(title)}</title>"]
    if desc:
        parts.append(f"<desc>{escape(desc)}</desc>")
    parts.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>')
    parts.append('<defs><pattern id="hm-empty" width="6" height="6" patternUnits="userSpaceOnUse">'
                 '<rect width="6" height="6" fill="#f4f4f4"/><path d="M0,6 L6,0" stroke="#d0d0d0" stroke-width="1"/>'
                 "</pattern></defs>")
    parts.append(f'<text x="12" y="20" font-size="14" font-weight="600" fill="{INK}">{escape(title)}</text>')
    for i, lab in enumerate(row_labels):
        y = top + i * cell_h
        parts.append(f'<text x="{left - 6}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="{MUTED}">{escape(lab)}</text>')
        for j in range(n_c):
            v = values[i][j] if j < len(values[i]) else None
            x = left + j * cell_w
            ok = v is not None and math.isfinite(v)
            fill = shade(v, lo, hi) if ok else "url(#hm-empty)"
            tip = f"{lab}, {col_labels[j]}: " + (f"{fmt_num(v)}{(' ' + unit) if unit else ''}" if ok else "no data")
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{cell_w - 1:.1f}" height="{cell_h - 1}" fill="{fill}">'
                         f"<title>{escape(tip)}</title></rect>")
    for (i, j) in marks:
        if 0 <= i < n_r and 0 <= j < n_c:
            parts.append(f'<rect x="{left + j * cell_w:.1f}" y="{top + i * cell_h}" width="{cell_w - 1:.1f}" '
                         f'height="{cell_h - 1}" fill="none" stroke="{INK}" stroke-width="2"/>')
    every = max(1, math.ceil(n_c / ((width - left - right) / 26)))
    for j, lab in enumerate(col_labels):
        if j % every == 0:
            x = left + (j + 0.5) * cell_w
            parts.append(f'<text x="{x:.1f}" y="{top + n_r * cell_h + 14}" text-anchor="middle" font-size="11" '
                         f'fill="{MUTED}">{escape(lab)}</text>')
    # colour scale
    ly = height - 16
    for k in range(10):
        parts.append(f'<rect x="{left + k * 16}" y="{ly - 8}" width="16" height="10" '
                     f'fill="{shade(lo + (hi - lo) * k / 9, lo, hi)}" stroke="#eee"/>')
    parts.append(f'<text x="{left + 166}" y="{ly + 1}" font-size="11" fill="{MUTED}">'
                 f"{escape(fmt_num(lo))} to {escape(fmt_num(hi))}{(' ' + escape(unit)) if unit else ''}</text>")
    parts.append("</svg>")
    return "".join(parts)
