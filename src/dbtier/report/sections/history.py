"""The history section of the HTML report: IOPS and MB/s over time, peaks marked, hour-of-day heat maps.

`section_html(doc, run_dir)` draws one `dbtier history` run (import, consolidate or requirement)
from its result.json and the Parquet series beside it. It only reads; a missing series file
gives a note, never an error. Long series are drawn at most ~600 points per line, each point the
highest rate of its stretch, so a peak is never smoothed away.
"""

from __future__ import annotations

import contextvars
import datetime as _dt
import math
from pathlib import Path
from typing import Any, Sequence, cast

from dbtier.core.files import duck_path, sql_str
from dbtier.report.svg import charts as svg
from dbtier.report.base import esc, figure_frame, html_table, module_section
from dbtier.report.svg.charts import Marker, Series, heat_map

MAX_POINTS = 600
MAX_DATABASES = 8
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _n(x: Any, digits: int = 0) -> str:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return "–"
    return f"{x:,.{digits}f}"


def _figure(chart: str, caption: str = "") -> str:
    """Captions here are plain text: escaped, then framed as every section frames a chart."""
    return figure_frame(chart, esc(caption))


def _note(text: str, bad: bool = False) -> str:
    return f'<p class="note{" bad" if bad else ""}">{esc(text)}</p>'


# What could not be read while drawing one section: said at the end of it, never silently dropped.
_PROBLEMS: contextvars.ContextVar[list[str]] = contextvars.ContextVar("history_report_problems")


def _query(run_dir: str, sql: str, params: Sequence[Any] = ()) -> list[tuple] | None:
    """Rows from the run's Parquet files, or None when they cannot be read (the reason is kept in _PROBLEMS:
    a report never fails on an unreadable series file, but it says so)."""
    try:
        import duckdb
        con = duckdb.connect(":memory:")
        try:
            con.execute("SET TimeZone = 'UTC'")
            return con.execute(sql.replace("{dir}", str(Path(run_dir)).replace("'", "''")), list(params)).fetchall()
        finally:
            con.close()
    except Exception as exc:  # noqa: BLE001 - recorded, shown under the section
        problems = _PROBLEMS.get(None)
        if problems is not None:
            problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return None


def _pq(run_dir: str, name: str) -> str | None:
    p = Path(run_dir) / name
    return f"read_parquet({sql_str(duck_path(p))})" if p.exists() else None   # a run dir may be named r[1]


def _downsampled(run_dir: str, table: str, where: str, params: Sequence[Any], cols: Sequence[str]) -> list[tuple]:
    """(epoch seconds of start, max of each col) in at most MAX_POINTS buckets, time order."""
    maxes = ", ".join(f"max({c})" for c in cols)
    sql = f"""WITH t AS (SELECT epoch(start) AS x, {', '.join(cols)} FROM {table} WHERE {where}),
              b AS (SELECT min(x) AS x0, max(x) AS x1, count(*) AS n FROM t)
              SELECT min(x), {maxes} FROM t, b
              GROUP BY CASE WHEN n <= {MAX_POINTS} THEN x ELSE floor((x - x0) / ((x1 - x0 + 1) / {MAX_POINTS})) END
              ORDER BY 1"""
    return _query(run_dir, sql, params) or []


def _axis(rows: list[tuple]) -> tuple[float, float, str]:
    """(origin epoch, divisor, unit label) for x: minutes, hours past three hours, days past three days."""
    if not rows:
        return 0.0, 3600.0, "hours"
    x0 = rows[0][0]
    span = rows[-1][0] - x0
    if span > 3 * 86400:
        return x0, 86400.0, "days"
    return (x0, 3600.0, "hours") if span > 3 * 3600 else (x0, 60.0, "minutes")


def _when(x0: float) -> str:
    return (_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=x0)).strftime("%Y-%m-%d %H:%M UTC")


def _time_charts(name: str, rows: list[tuple], peak_iops: float | None, peak_mbps: float | None) -> list[str]:
    """IOPS and MB/s over time; rows: (x, read_iops, write_iops, iops, read_mbps, write_mbps, mbps)."""
    if not rows:
        return [_note(f"{name}: no series to draw")]
    x0, div, unit = _axis(rows)
    xs = [(r[0] - x0) / div for r in rows]
    label = f"{unit} since {_when(x0)}"
    out = []
    for title, idx, pk, u in ((f"{name}: IOPS per interval", (1, 2, 3), peak_iops, "IOPS"),
                              (f"{name}: MB/s per interval", (4, 5, 6), peak_mbps, "MB/s")):
        series = [Series("read", list(zip(xs, [r[idx[0]] for r in rows])), colour=svg.colour(0)),
                  Series("write", list(zip(xs, [r[idx[1]] for r in rows])), colour=svg.colour(1)),
                  Series("total", list(zip(xs, [r[idx[2]] for r in rows])), colour=svg.colour(9), dashed=True)]
        markers = []
        tot = [r[idx[2]] for r in rows]
        if any(v is not None for v in tot):
            k = max(range(len(tot)), key=lambda i: (tot[i] is not None, tot[i] or 0))
            markers.append(Marker(xs[k], tot[k], f"peak {svg.fmt_num(pk if pk is not None else tot[k])} {u}"))
        out.append(_figure(svg.line_chart(title, series, x_label=label, y_label=u, markers=markers, width=720,
                                          height=300), "each point the highest rate of its stretch of time"))
    return out


def _dow_hour(run_dir: str, table: str, where: str, params: Sequence[Any], metric: str = "mean_iops"
              ) -> list[list[float | None]] | None:
    rows = _query(run_dir, f"SELECT key, {metric} FROM {table} WHERE kind = 'dow_hour' AND {where}", params)
    if not rows:
        return None
    grid: list[list[float | None]] = [[None] * 24 for _ in range(7)]
    for key, v in rows:
        d, h = divmod(int(key), 24)
        if 0 <= d < 7:
            grid[d][h] = v
    return grid


def _heat(title: str, grid: list[list[float | None]] | None, unit: str, tz: str) -> str:
    if grid is None:
        return ""
    cells = [((i, j), v) for i in range(7) for j in range(24) if (v := grid[i][j]) is not None]
    top = max(cells, key=lambda c: c[1], default=None)          # the first of the highest
    peak = top[0] if top else None
    return _figure(heat_map(title, DAYS, [f"{h:02d}" for h in range(24)], grid, unit=unit,
                            marks=[peak] if peak else []),
                   f"mean per hour of day (columns) and day of week (rows), {tz}; the outlined cell is the highest")


def _peaks_table(dbs: Sequence[dict[str, Any]]) -> str:
    rows = []
    for db in dbs:
        pk = db.get("peaks") or {}
        rows.append([esc(db.get("name")), _n(db.get("intervals"))]
                    + [f"{_n((pk.get(m) or {}).get('p95'), d)} / {_n((pk.get(m) or {}).get('max'), d)}"
                       for m, d in (("read_iops", 0), ("write_iops", 0), ("read_mbps", 1), ("write_mbps", 1))])
    return html_table(["database", "intervals", "read IOPS p95 / max", "write IOPS", "read MB/s", "write MB/s"], rows,
                      num_from=1, wide=True)


def _import(doc: dict[str, Any], run_dir: str) -> str:
    dbs = doc.get("databases") or []
    out = [f"<p>{esc(doc.get('source'))} history of {len(dbs)} database(s) from {len(doc.get('files') or [])} "
           f"file(s); times in UTC.</p>", _peaks_table(dbs)]
    for note in doc.get("limitations") or []:
        out.append(_note(note, bad=True))
    for note in doc.get("notes") or []:
        out.append(_note(note))
    if doc.get("kind") == "hourly":
        return "".join(out + [_dma(doc, run_dir)])
    totals, profiles = _pq(run_dir, "totals.parquet"), _pq(run_dir, "profiles.parquet")
    if totals is None:
        out.append(_note("the series files (totals.parquet) are not in the run directory: charts left out"))
        return "".join(out)
    cols = ("read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps")
    for db in dbs[:MAX_DATABASES]:
        name = db.get("name")
        out.append(f"<h4>{esc(name)}</h4>")
        rows = _downsampled(run_dir, totals, "database = ?", [name], cols)
        tot = db.get("total") or {}
        out += _time_charts(name, rows, (tot.get("iops") or {}).get("max"), (tot.get("mbps") or {}).get("max"))
        if profiles:
            out.append(_heat(f"{name}: IOPS by hour of day", _dow_hour(run_dir, profiles, "database = ?", [name]),
                             "IOPS", doc.get("profile_tz") or "UTC"))
        top = db.get("top_intervals") or []
        if top:
            out.append(html_table(
                ["busiest intervals (start, UTC)", "read IOPS", "write IOPS", "read MB/s", "write MB/s"],
                [[esc(t.get("start")), _n(t.get("read_iops")), _n(t.get("write_iops")),
                  _n(t.get("read_mbps"), 1), _n(t.get("write_mbps"), 1)] for t in top[:5]], num_from=1, wide=True))
    if len(dbs) > MAX_DATABASES:
        out.append(_note(f"{len(dbs) - MAX_DATABASES} more databases are in the table above and the Parquet files; "
                         "charts are drawn for the first few"))
    return "".join(out)


_STATS = ("avg", "p50", "p75", "p90", "p95", "max")


def _dma(doc: dict[str, Any], run_dir: str) -> str:
    out = []
    for db in (doc.get("databases") or [])[:MAX_DATABASES]:
        hours = db.get("hour_of_day") or []
        if not hours:
            continue
        name = db.get("name")
        out.append(f"<h4>{esc(name)}</h4>")
        for m, u in (("read_iops", "IOPS"), ("write_iops", "IOPS"), ("read_mbps", "MB/s"), ("write_mbps", "MB/s")):
            series = [Series(st, [(h["hour"], (h.get(m) or {}).get(st)) for h in hours], colour=svg.colour(i),
                             dashed=st == "avg") for i, st in enumerate(_STATS) if st in ("avg", "p50", "p95", "max")]
            label = {"read_iops": "read IOPS", "write_iops": "write IOPS", "read_mbps": "read MB/s",
                     "write_mbps": "write MB/s"}[m]
            out.append(_figure(svg.line_chart(f"{name}: {label} by hour of day", series,
                                              x_label="hour of day (database time)", y_label=u, width=560,
                                              height=280)))
        grid = [[((h.get("read_iops") or {}).get(st) or 0) + ((h.get("write_iops") or {}).get(st) or 0)
                 if (h.get("read_iops") or {}).get(st) is not None else None for h in hours] for st in _STATS]
        out.append(_figure(heat_map(f"{name}: read + write IOPS by hour of day and statistic", list(_STATS),
                                    [f"{h['hour']:02d}" for h in hours], grid, unit="IOPS"),
                           "each statistic of per-snapshot deltas, per hour of day (read and write added per "
                           "statistic: not a true percentile of the sum)"))
    return "".join(out)


def _consolidate(doc: dict[str, Any], run_dir: str) -> str:
    sp, ps = doc.get("sum_of_peaks") or {}, doc.get("peak_of_sum") or {}
    sg = doc.get("sum_of_peaks_grid") or sp    # older documents had only the grid's
    g = doc.get("grid") or {}
    out = [f"<p>{len(doc.get('databases') or [])} databases on a common UTC grid of {_n(g.get('step_seconds'))} s "
           f"from {esc(g.get('start'))} to {esc(g.get('end'))}.</p>",
           html_table(["", "IOPS", "MB/s"],
                      [[f"sum of the peaks ({esc(sp.get('percentile') or 'max')} of each own series)",
                        _n(sp.get("iops")), _n(sp.get("mbps"), 1)],
                       ["sum of the peaks on the grid", _n(sg.get("iops")), _n(sg.get("mbps"), 1)],
                       ["peak of the sum (on the grid)", _n(ps.get("iops")), _n(ps.get("mbps"), 1)],
                       ["gain (grid sum of peaks / peak of sum)", _n(doc.get("gain"), 2),
                        _n(doc.get("gain_mbps"), 2)]], num_from=1, wide=True),
           f"<p>The combined IOPS peak is at {esc(doc.get('peak_time'))}.</p>"]
    drivers = doc.get("drivers") or []
    if drivers:
        out.append(html_table(["what drives the combined peak", "IOPS at the peak", "share", "its own peak"],
                              [[esc(d.get("database")), _n(d.get("iops")),
                                "–" if d.get("share") is None else f"{d['share']:.0%}", _n(d.get("own_peak_iops"))]
                               for d in drivers], num_from=1, wide=True))
    sum_pq, grid_pq, prof = _pq(run_dir, "sum.parquet"), _pq(run_dir, "grid.parquet"), _pq(run_dir, "profiles.parquet")
    if sum_pq is None:
        out.append(_note("the series files (sum.parquet) are not in the run directory: charts left out"))
        return "".join(out)
    cols = ("read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps")
    rows = _downsampled(run_dir, sum_pq, "true", [], cols)
    out += _time_charts("sum of the databases", rows, ps.get("iops"), ps.get("mbps"))
    if grid_pq and rows:
        names = [d.get("database") for d in drivers[:6]]
        x0, div, unit = _axis(rows)
        series = []
        for i, name in enumerate(names):
            pts = _query(run_dir, f"SELECT bin * {int(g.get('step_seconds') or 3600)} AS x, max(iops) FROM {grid_pq} "
                                  f"WHERE database = ? GROUP BY 1 ORDER BY 1", [name]) or []
            if len(pts) > MAX_POINTS:
                k = math.ceil(len(pts) / MAX_POINTS)
                pts = [max(pts[j:j + k], key=lambda p: p[1] or 0) for j in range(0, len(pts), k)]
            series.append(Series(str(name), [((x - x0) / div, y) for x, y in pts], colour=svg.colour(i)))
        if series:
            out.append(_figure(svg.line_chart("the drivers of the combined peak: IOPS on the grid", series,
                                              x_label=f"{unit} since {_when(x0)}", y_label="IOPS", width=720,
                                              height=300)))
    if prof:
        out.append(_heat("sum of the databases: IOPS by hour of day", _dow_hour(run_dir, prof, "true", []), "IOPS",
                         "UTC"))
    return "".join(out)


def _requirement(doc: dict[str, Any]) -> str:
    req = doc.get("requirement") or {}
    wh = doc.get("with_headroom") or {}
    src = doc.get("from") or {}
    rows = [[label, _n(req.get(k), d), _n(wh.get(k), d)]
            for k, label, d in (("read_iops", "read IOPS", 0), ("write_iops", "write IOPS", 0),
                                ("read_mbps", "read MB/s", 1), ("write_mbps", "write MB/s", 1),
                                ("capacity_gb", "capacity GB", 1))]
    for m in ("write", "read"):
        if f"{m}_tb_per_day" in req:
            n, p = req.get(f"{m}_days_counted"), req.get(f"{m}_days_percentile")
            what = "mean day" if p is None else "max" if p >= 100 else f"p{p:g}"
            rows.append([f"{m} TB/day ({what} of {n if n is not None else '?'} days)",
                         _n(req.get(f"{m}_tb_per_day"), 3), _n(wh.get(f"{m}_tb_per_day"), 3)])
    pct = req.get("percentile")
    inst = ""
    if "instances" in req:
        n = req.get("instances")
        inst = (f" Instances: {esc(n if n is not None else 'not said by the source')}"
                + (" (clustered: only storage every node reaches)." if req.get("clustered") else "."))
    days = f" TB/day: {esc(src.get('days_method'))}." if src.get("days_method") else ""
    return (f"<p>p{esc(pct if pct != 100 else 'max')} of {esc(src.get('of'))} (from {esc(src.get('run_dir'))}), with "
            f"{_n((req.get('headroom') or 0) * 100)}% headroom; capacity from {esc(src.get('capacity_from'))}."
            f"{inst}{days}</p>"
            + html_table(["", "measured", "with headroom"], rows, num_from=1, wide=True))


def section(doc: dict[str, Any], i: int) -> str:
    """The report section of any history document (the history kinds' section face, dbtier.results.kinds)."""
    # results.store.load_run gives every document its _run_dir; one built without it draws as a partial
    # document does (section_html's guard catches the TypeError of reading under None)
    return module_section(doc, i, "history", section_html(doc, cast(str, doc.get("_run_dir"))))


def section_html(doc: dict[str, Any], run_dir: str) -> str:
    """HTML for one `dbtier history` run (without the run's heading, which the report adds)."""
    action = (doc.get("params") or {}).get("action")
    problems: list[str] = []
    token = _PROBLEMS.set(problems)
    try:
        if action == "import":
            body = _import(doc, run_dir)
        elif action == "consolidate":
            body = _consolidate(doc, run_dir)
        elif action == "requirement":
            body = _requirement(doc)
        else:
            body = _note(f"unknown history action {action!r}")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:   # a partial document draws what it can
        body = _note(f"this history document could not be drawn in full ({type(exc).__name__}: {exc})", bad=True)
    finally:
        _PROBLEMS.reset(token)
    for p in dict.fromkeys(problems):
        body += _note(f"a chart of this run was left out: its series file could not be read ({p})", bad=True)
    return f'<div class="history">{body}</div>'
