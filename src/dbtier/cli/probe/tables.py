"""The probe's terminal tables (rich): each point as it is measured, and a target's headline figures."""

from __future__ import annotations

from typing import Any

from rich.console import JustifyMethod
from rich.table import Table

from dbtier.cli.markup import esc, lit
from dbtier.report.figures.labels import SUMMARY_LABELS, cache_note

# One line per point as the probe measures it: at most 79 columns (one space between columns), each figure
# whole; latencies keep one decimal below 10,000 µs, whole microseconds above.
_POINT_COLS: tuple[tuple[str, int, JustifyMethod], ...] = (
    ("test", 14, "left"), ("jobs×qd", 7, "right"), ("IOPS", 9, "right"), ("MB/s", 8, "right"),
    ("p50 µs", 8, "right"), ("p99 µs", 8, "right"), ("p99.9 µs", 8, "right"), ("fio cores", 9, "right"))


def _num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def _lat(x: float | None) -> str:
    return _num(x, 1 if x is None or x < 10_000 else 0)


def probe_points_table(points: list[dict[str, Any]], header: bool = True) -> Table:
    t = Table(show_header=header, box=None, pad_edge=False, collapse_padding=True)
    for name, width, justify in _POINT_COLS:
        t.add_column(name, min_width=width, justify=justify, no_wrap=True)
    for p in points:
        lat = p.get("commit_lat_us") or p.get("lat_us") or {}
        t.add_row(lit(p["test"]), f"{p['jobs']}x{p['iodepth']}", _num(p["iops"]), _num(p["mbps"], 1),
                  _lat(lat.get("p50")), _lat(lat.get("p99")), _lat(lat.get("p999")), f"{p['cpu_cores']:.2f}")
    return t


def probe_summary_table(entry: dict[str, Any]) -> Table:
    s = entry["summary"]
    suspect = entry.get("cache_suspect")
    cache: dict[str, Any] = suspect if isinstance(suspect, dict) else {}
    cached = set(cache.get("figures") or [])
    t = Table(title=esc(f"{entry['path']} ({entry.get('filesystem') or entry['kind']})"), title_justify="left")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_column("unit")
    t.add_column("runs (min–max)", justify="right")   # a headline figure is the median of its point's runs
    spread = entry.get("spread")
    spreads: dict[str, Any] = spread if isinstance(spread, dict) else {}
    for key, (label, unit, digits) in SUMMARY_LABELS.items():
        if s.get(key) is not None:
            sp = spreads.get(key) or {}
            n = sp.get("n") or 0
            runs = f"{_num(sp['min'], digits)}–{_num(sp['max'], digits)}, n={n}" if n > 1 else f"n={n}" if n else ""
            value = _num(s[key], digits) + (" [red](cache)[/red]" if key in cached else "")
            t.add_row(label, value, unit, runs)
    notes: list[str] = []
    if s.get("fsync_honesty"):
        colour = "green" if s["fsync_honesty"] == "ok" else "red"
        t.add_row("fsync honesty", f"[{colour}]{esc(s['fsync_honesty'])}[/{colour}]", "")
        notes.append(f"fsync {s['fsync_honesty']}: {s['fsync_honesty_reason']}")
    if cached:
        notes.append(cache_note(cache))
    if notes:
        t.caption = esc("\n".join(notes))
        t.caption_justify = "left"
    return t
