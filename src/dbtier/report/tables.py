"""Terminal tables (rich). They only read result documents."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from dbtier.cli.markup import esc, lit

# One line per point as the probe measures it: at most 79 columns (one space between columns), each figure
# whole; latencies keep one decimal below 10,000 µs, whole microseconds above.
_POINT_COLS = (("test", 14, "left"), ("jobs×qd", 7, "right"), ("IOPS", 9, "right"), ("MB/s", 8, "right"),
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


SUMMARY_LABELS = {
    "read_iops_4k": ("4 KiB random read, peak", "IOPS", 0),
    "write_iops_4k": ("4 KiB random write, peak", "IOPS", 0),
    "mixed_iops_8k": ("8 KiB 70/30 mix, peak", "IOPS", 0),
    "read_lat_us_qd1_p50": ("read latency at QD1, p50", "µs", 1),
    "write_lat_us_qd1_p50": ("write latency at QD1, p50", "µs", 1),
    "read_lat_us_p99_at_max": ("read latency at peak, p99", "µs", 1),
    "read_mbps_seq": ("sequential read", "MB/s", 0),
    "write_mbps_seq": ("sequential write", "MB/s", 0),
    "commit_lat_us_p50": ("commit (8 KiB + fdatasync), p50", "µs", 1),
    "commit_lat_us_p99": ("commit, p99", "µs", 1),
    "commits_per_s": ("commits per second, best", "/s", 0),
}


def rotational_text(bd: Any) -> str:
    """A block device's rotational flag for people: a virtual disk's is its driver's default, so unknown."""
    if not isinstance(bd, dict) or "rotational" not in bd:
        return "—"
    if bd.get("virtual") is True or bd.get("rotational_note"):
        return "unknown (virtual disk)"
    return {True: "yes", False: "no"}.get(bd["rotational"], "unknown")


def cache_note(cache: dict[str, Any]) -> str:
    """What a target's cache_suspect says: whose figures they are and what would measure the media."""
    names = [SUMMARY_LABELS[k][0] if k in SUMMARY_LABELS else k for k in cache.get("figures") or []]
    return f"{' and '.join(names)}: a write-back cache's figure, not the media's ({cache.get('why')}); {cache.get('test')}."


def probe_summary_table(entry: dict[str, Any]) -> Table:
    s = entry["summary"]
    cache = entry.get("cache_suspect") if isinstance(entry.get("cache_suspect"), dict) else {}
    cached = set(cache.get("figures") or [])
    t = Table(title=esc(f"{entry['path']} ({entry.get('filesystem') or entry['kind']})"), title_justify="left")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_column("unit")
    t.add_column("runs (min–max)", justify="right")   # a headline figure is the median of its point's runs
    spreads = entry.get("spread") if isinstance(entry.get("spread"), dict) else {}
    for key, (label, unit, digits) in SUMMARY_LABELS.items():
        if s.get(key) is not None:
            sp = spreads.get(key) or {}
            n = sp.get("n") or 0
            runs = f"{_num(sp['min'], digits)}–{_num(sp['max'], digits)}, n={n}" if n > 1 else f"n={n}" if n else ""
            value = _num(s[key], digits) + (" [red](cache)[/red]" if key in cached else "")
            t.add_row(label, value, unit, runs)
    notes = []
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
