"""`dbtier history`'s terminal output: the tables of import, consolidate and requirement.

Only formatting of the result document (`dbtier.history.summary` computes every figure). Every figure
carries its unit or sits under a header that does; a column too narrow for its figures folds them onto a
second line rather than cutting them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from dbtier.cli.markup import esc, lit
from dbtier.core.units import count_text, duration_text, per_day_text, plain_number


def import_run(out: Console, doc: dict[str, Any], run_dir: Path) -> None:
    """`history import`: p95 / max per database, the periods, notes, limitations and the next step."""
    out.print(_import_table(doc))
    for line in _periods(doc):
        out.print(f"[dim]{esc(line)}[/dim]")
    prov = doc.get("provenance") or {}
    if prov.get("basis"):
        extra = "".join(f", {prov[k]} {k if prov[k] != 1 else k[:-1]}" for k in ("resets", "gaps") if prov.get(k))
        out.print(f"[dim]series ({esc(prov.get('semantics') or '')}): {esc(prov['basis'])}{esc(extra)}[/dim]",
                  highlight=False)
    for db in (doc.get("databases") or [])[:5]:
        if db.get("busy"):
            busy = ", ".join(f"{d} {v['p95']:.0%} / {v['max']:.0%}" for d, v in db["busy"].items())
            out.print(f"[dim]{esc(db['name'])}: device busy p95 / max: {esc(busy)}[/dim]", highlight=False)
    for note in doc.get("notes") or []:
        out.print(f"[dim]note: {esc(note)}[/dim]")
    for lim in doc.get("limitations") or []:
        out.print(f"[yellow]limitation: {esc(lim)}[/yellow]")
    skipped = doc.get("skipped_files") or []
    for s in skipped[:20]:
        out.print(f"[yellow]skipped: {esc(s['error'])}[/yellow]")
    if len(skipped) > 20:
        out.print(f"[yellow]... and {len(skipped) - 20} more skipped files (skipped_files in --json)[/yellow]")
    if doc.get("appended_to"):
        out.print(f"[dim]with the databases of {esc(doc['appended_to'])} (their series linked, not read again)[/dim]")
    out.print(f"[dim]{len(doc['databases'])} database(s) from {len(doc.get('files') or []):,} file(s) in "
              f"{count_text(doc.get('batches', 1))} batch(es); full series in "
              f"{esc(', '.join(doc['series_files']))}. Run: {esc(run_dir)}[/dim]")
    out.print(f"[dim]next: dbtier history requirement {esc(run_dir)}   or   "
              f"dbtier history consolidate {esc(run_dir)} OTHER_RUN ...[/dim]")


def consolidation(out: Console, d: dict[str, Any], run_dir: Path) -> None:
    """`history consolidate`: sum of peaks beside peak of sum, the gain, and what drives the peak."""
    if d.get("kind") != "series":
        return consolidation_hourly(out, d, run_dir)
    t = Table(title="consolidation (each database on a common UTC grid of "
              f"{duration_text(d['grid']['step_seconds'])}, {d['grid']['cells']:,} cells)", title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False)
    _columns(t, ("", "IOPS", "MB/s"), left=("",))
    sp = d["sum_of_peaks"]
    t.add_row(f"sum of the peaks ({sp['percentile']} of each own series)", _n(sp["iops"]), _n(sp["mbps"], 1))
    t.add_row("sum of the peaks on the grid", _n(d["sum_of_peaks_grid"]["iops"]),
              _n(d["sum_of_peaks_grid"]["mbps"], 1))
    t.add_row("peak of the sum (on the grid)", _n(d["peak_of_sum"]["iops"]), _n(d["peak_of_sum"]["mbps"], 1))
    t.add_row("gain (grid sum of peaks / peak of sum)", _ratio(d.get("gain")), _ratio(d.get("gain_mbps")))
    out.print(t)
    out.print(esc(f"peak of the sum at {d['peak_time']} (MB/s: {d['peak_time_mbps']}); window "
                  f"{d['grid']['start']} to {d['grid']['end']}"))
    dt = Table(title="what drives the combined IOPS peak", title_justify="left", box=box.SIMPLE_HEAD,
               show_edge=False)
    _columns(dt, ("database", "IOPS at peak", "share", "its own peak", "of own peak"))
    for dr in d["drivers"]:
        dt.add_row(lit(dr["database"]), _n(dr["iops"]), _pct(dr["share"]), _n(dr["own_peak_iops"]),
                   _pct(dr["of_own_peak"]))
    out.print(dt)
    out.print(f"[dim]Run: {esc(run_dir)}; next: dbtier history requirement {esc(run_dir)}[/dim]")


def consolidation_hourly(out: Console, d: dict[str, Any], run_dir: Path) -> None:
    """`history consolidate` of hour-of-day statistics: the sum's p95 and max per database and together."""
    t = Table(title=esc(f"consolidation ({d.get('method')}): p95 / max"), title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False)
    _columns(t, ("database", "instances", "read IOPS", "write IOPS", "read MB/s", "write MB/s"))

    def cells(pk: dict[str, Any] | None, digits: int, m: str) -> str:
        f = (pk or {}).get(m) or {}
        return f"{_n(f.get('p95'), digits)} / {_n(f.get('max'), digits)}"

    for db in d.get("databases") or []:
        t.add_row(lit(str(db.get("name"))), _n(db.get("instances")),
                  *(cells(db.get("peaks"), 1 if m.endswith("mbps") else 0, m) for m in
                    ("read_iops", "write_iops", "read_mbps", "write_mbps")))
    t.add_row("sum", "", *(cells(d.get("peaks"), 1 if m.endswith("mbps") else 0, m) for m in
                          ("read_iops", "write_iops", "read_mbps", "write_mbps")))
    out.print(t)
    out.print(f"[dim]{esc(str(d.get('bound')))}[/dim]", highlight=False)
    out.print(f"[dim]Run: {esc(run_dir)}; next: dbtier history requirement {esc(run_dir)}[/dim]")


def requirement(out: Console, req: dict[str, Any], source: dict[str, Any], with_headroom: dict[str, Any],
                from_run: str, run_dir: Path, by_file_type: dict[str, Any] | None = None) -> None:
    """`history requirement`: each figure measured and with headroom, what is missing, and the next step."""
    t = Table(title=esc(f"requirement: {source['statistic']} of {source['of']} (from {from_run})"),
              title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    _columns(t, ("", "measured", f"with {req['headroom']:.0%} headroom"), left=("",))
    for k, label, digits in (("read_iops", "read IOPS", 0), ("write_iops", "write IOPS", 0),
                             ("read_mbps", "read MB/s", 1), ("write_mbps", "write MB/s", 1),
                             ("capacity_gb", "capacity GB", 1)):
        t.add_row(label, _n(req[k], digits), _n(with_headroom[k], digits))
    for m in ("write", "read"):
        k = f"{m}_tb_per_day"
        if k in req:
            t.add_row(f"{m} a day ({_days(req, m)})", _tb(req[k]), _tb(with_headroom.get(k)))
    out.print(t)
    if source.get("basis"):
        out.print(f"[dim]each figure is the {esc(source['basis'])}[/dim]", highlight=False)
    if source.get("bound"):
        out.print(f"[dim]bounds and estimates: {esc(source['bound'])}[/dim]", highlight=False)
    if by_file_type:
        ft = Table(title="by file type (each its own " + esc(source["statistic"]) + "; they need not add up)",
                   title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
        _columns(ft, ("file type", "read IOPS", "write IOPS", "read MB/s", "write MB/s"), left=("file type",))
        for name, v in by_file_type.items():
            ft.add_row(lit(name), _n(v.get("read_iops")), _n(v.get("write_iops")), _n(v.get("read_mbps"), 1),
                       _n(v.get("write_mbps"), 1))
        out.print(ft)
    if "instances" in req:
        n = req.get("instances")
        out.print(f"instances: {_n(n)}" + (" (clustered: only storage every node reaches)" if req.get("clustered")
                                            else "" if n is not None else " (the source does not say)"),
                  highlight=False)
    if source.get("days_method"):
        dropped = [f"{source.get(f'{m}_days_partial_dropped') or 0} {m}" for m in ("write", "read")]
        out.print(f"[dim]a day's writes and reads: {esc(source['days_method'])}"
                  + (f"; {esc(source['days_rule'])} (days left out: {', '.join(dropped)})" if source.get("days_rule")
                     else "") + "[/dim]", highlight=False)
    for k, why in source["absent"].items():
        what = "plan size will not restrict to shared storage" if k == "instances" else \
            "plan size will not size for it"
        out.print(f"[yellow]{esc(k)}: missing[/yellow] — {esc(why)}; {what}", highlight=False)
    out.print(f"[dim]capacity from {esc(source['capacity_from'])}. Run: {esc(run_dir)}[/dim]")
    out.print(f"[dim]next: dbtier plan size --from-history {esc(run_dir)}[/dim]")


def _days(req: dict[str, Any], m: str) -> str:
    """`p95 of 12 days`, `max of 3 days`, `mean day of 7 days` (dma), `no whole day`."""
    n, p = req.get(f"{m}_days_counted"), req.get(f"{m}_days_percentile")
    what = "mean day" if p is None else "max" if p >= 100 else f"p{p:g}"
    if req.get(f"{m}_tb_per_day") is None:
        return "no whole day"
    return f"{what} of {n} day{'s' if n != 1 else ''}" if n is not None else what


def _columns(t: Table, names: tuple[str, ...], left: tuple[str, ...] = ("database",)) -> None:
    """Columns that fold a figure too wide for them onto a second line (rich's default cuts it with '…')."""
    for c in names:
        t.add_column(c, justify="left" if c in left else "right", overflow="fold")


def _tb(x: Any) -> str:
    """A day's volume, given in TB, in the unit its size calls for: 0.00412 -> '4.1 GB/day'."""
    return "–" if x is None else per_day_text(x)


def _n(x: Any, digits: int = 0) -> str:
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{x:.0%}"


def _ratio(x: Any) -> str:
    return "–" if x is None else f"{x:.2f}x"


def _si(x: Any) -> str:
    """Compact, never an exponent: 950, 9.5K, 185K, 1.2M, 1,230M; small fractions keep three significant digits."""
    if x is None:
        return "–"
    ax = abs(x)
    if ax >= 1e6:
        return f"{plain_number(x / 1e6)}M"
    if ax >= 1e4:
        return f"{plain_number(x / 1e3)}K"
    if ax >= 100 or x == 0:
        return f"{x:,.0f}"
    return plain_number(x)


def _pm(p: dict[str, Any] | None) -> str:
    p = p or {}
    return f"{_si(p.get('p95'))} / {_si(p.get('max'))}"


def _import_table(doc: dict[str, Any], limit: int = 30) -> Table:
    t = Table(title=esc(f"{doc.get('source')} history: p95 / max of the interval rates"), title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    t.add_column("database", ratio=1, overflow="fold")
    for c in ("intervals", "read IOPS", "write IOPS", "read MB/s", "write MB/s"):
        t.add_column(c, justify="right", overflow="fold")
    dbs = doc.get("databases") or []
    for db in dbs[:limit]:
        pk = db.get("peaks") or {}
        t.add_row(lit(db["name"]), _n(db.get("intervals")), _pm(pk.get("read_iops")), _pm(pk.get("write_iops")),
                  _pm(pk.get("read_mbps")), _pm(pk.get("write_mbps")))
    if len(dbs) > limit:
        t.caption = f"... and {len(dbs) - limit} more databases (--json has them all)"
    return t


def _periods(doc: dict[str, Any], limit: int = 5) -> list[str]:
    out = []
    for db in (doc.get("databases") or [])[:limit]:
        extra = f", {db['restarts']} restart(s)" if db.get("restarts") else ""
        extra += f", {db['wraps']} counter wrap(s)" if db.get("wraps") else ""
        out.append(f"{db['name']}: {db.get('start')} to {db.get('end')} UTC{extra}")
    return out
