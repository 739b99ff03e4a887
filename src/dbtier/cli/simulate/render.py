"""`dbtier simulate`'s terminal output: the replay's progress bar and the run's summary.

Only formatting of the result document (`dbtier.sim.simulate` computes every figure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.progress import TaskID
from rich.table import Table

from dbtier.cli.markup import esc
from dbtier.core.units import human_bytes, human_pct, human_us, size_text


class Progress:
    """A transient progress display on a terminal; silent otherwise (or under --json)."""

    def __init__(self, con: Console, json_out: bool):
        self.enabled = con.is_terminal and not json_out
        self.bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                            console=con, transient=True) if self.enabled else None
        self.task: TaskID | None = None

    def __enter__(self) -> "Progress":
        if self.bar:
            self.bar.start()
            self.task = self.bar.add_task("reading the trace", total=1.0)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar:
            self.bar.stop()

    def __call__(self, phase: str, frac: float) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=phase, completed=frac)

    def reading(self, frac: float) -> None:
        self("reading the trace", frac)


def run(con: Console, doc: dict[str, Any], run_dir: Path) -> None:
    """`simulate run`: the trace, the design, latency percentiles, utilisation, the curve and resync."""
    det = doc["simulation"]
    tr = doc["trace"]
    info = det["trace_info"]
    dur = "untimed" if tr["duration_s"] is None else f"{tr['duration_s']:,.1f} s"
    con.print(f"[bold]{esc(info['path'])}[/bold] ({esc(info['format'])}): {tr['requests']:,} requests "
              f"({tr['reads']:,} reads, {tr['writes']:,} writes), {size_text(tr['bytes'])}, {dur}"
              + (f"; {info['skipped_bad_lines']} malformed lines skipped" if info["skipped_bad_lines"] else ""),
              highlight=False)
    devs = esc(", ".join(f"{r} {d['id']}" for r, d in det["devices"].items()))
    head = f"design [bold]{esc(doc['design'])}[/bold]: {devs}"
    if doc["design"] == "read-cache":
        c = det["cache"]
        head += esc(f"; {size_text(c['cache_gb'] * 1e9)} {doc['policy']} {c['write_mode']}, {det['block_size']} B blocks; "
                 f"read hit ratio {human_pct(doc['read_hit_ratio'])} of blocks, {human_pct(doc['request_hit_ratio'])} "
                 "of requests")
    con.print(head, highlight=False)
    for r, d in det["devices"].items():
        lim = d.get("limits")
        if lim:         # a cloud volume: the limits that apply and which binds (its `source` has the rest)
            u = lim["throughput_unit"]
            con.print(esc(f"  {r}: at most {lim['iops']:,.0f} IOPS ({lim['iops_binds']}) and {lim['throughput']:,.2f} "
                          f"{u} ({lim['throughput_binds']}), an I/O counted per {lim['io_size_kib']:,.0f} KiB; base "
                          f"latency {lim['latency_us']:,.0f} µs"), highlight=False)

    t = Table(box=box.SIMPLE_HEAD, title="latency (queueing model)", title_justify="left")
    t.add_column("")
    for k in ("p50", "p95", "p99", "p99.9"):
        t.add_column(k, justify="right")
    base = det.get("baseline")
    for op in ("read", "write"):
        lat = doc["latency_us"][op]
        t.add_row(f"{op}", *[human_us(lat[k]) for k in ("p50", "p95", "p99", "p999")])
        if base:
            bl = base["latency_us"][op]
            t.add_row(f"[dim]{op}, {esc(base['device'])} alone[/dim]",
                      *[f"[dim]{human_us(bl[k])}[/dim]" for k in ("p50", "p95", "p99", "p999")])
    con.print(t)
    busiest = doc.get("busiest_utilisation") or {}
    con.print("utilisation: " + esc(", ".join(f"{r} {human_pct(u)}" + _busiest(busiest.get(r))
                                              for r, u in doc["device_util"].items())), highlight=False)
    if doc.get("volumes"):
        vt = Table(box=box.SIMPLE_HEAD, title="each volume on its own (--volume all)", title_justify="left")
        for name in ("volume", "requests", "read hit ratio", "read p99", "write p99", "busiest device"):
            vt.add_column(name, justify="left" if name == "volume" else "right")
        for v in doc["volumes"]:
            util = v.get("device_util") or {}
            role = max(util, key=lambda r: util[r] or 0.0) if util else None
            vt.add_row(esc(v["volume"]), f"{v['trace']['requests']:,}", human_pct(v["read_hit_ratio"]),
                       human_us(v["latency_us"]["read"]["p99"]), human_us(v["latency_us"]["write"]["p99"]),
                       f"{esc(role)} {human_pct(util[role])}" if role else "—")
        con.print(vt)
    if doc["curve"] and len(doc["curve"]) > 1:
        ct = Table(box=box.SIMPLE_HEAD, title="hit-ratio curve", title_justify="left")
        for name in ("cache", "read hit ratio", "request hit ratio"):
            ct.add_column(name, justify="right")
        for pt in det["curve_detail"]:
            mark = " (≥ working set)" if pt["larger_than_working_set"] else ""
            ct.add_row(f"{size_text(pt['cache_gb'] * 1e9)}{mark}", human_pct(pt["read_hit_ratio"]),
                       human_pct(pt["request_hit_ratio"]))
        con.print(ct)
        rec = doc.get("recommended")
        if rec:
            con.print(esc(f"recommended cache: {size_text(rec['cache_gb'] * 1e9)} ({human_pct(rec['read_hit_ratio'])} read hits): "
                          f"{rec['rule']}, {size_text(rec['flattens_at_gb'] * 1e9)} "
                          f"({human_pct(rec['flattens_read_hit_ratio'])})"), highlight=False)
    rs = doc["resync"]
    if rs:
        f = det["mirror"]["failure"]
        secs = "never (the side does not return)" if rs["seconds"] is None else f"{rs['seconds']:,.1f} s"
        tr = det["mirror"].get("tracking") or {}
        unit = f" of {human_bytes(tr['region_size'])} ({tr['model']})" if tr else ""
        con.print(esc(f"{f['side']} side down at {f['fail_at_s']:g} s: resync {rs['regions']:,} regions{unit}, "
                      f"{size_text(rs['bytes'])}, {secs}; without redundancy {rs['unprotected_seconds']:,.1f} s"),
                  highlight=False)
    for n in det["notes"]:
        con.print(f"[dim]note: {esc(n)}[/dim]", highlight=False)
    con.print(f"[dim]Run: {esc(run_dir)}  (`dbtier report {esc(run_dir)}` draws the curve, CDFs and timeline)[/dim]",
              highlight=False)


def _busiest(b: dict[str, Any] | None) -> str:
    """' (busiest second 100% at 5,882 s)' beside a device's average; '' without one."""
    if not b:
        return ""
    span = "second" if b["interval_s"] == 1 else f"{b['interval_s']:g} s"
    return f" (busiest {span} {b['pct']:.0f}% at {b['at_s']:,.0f} s)"


def capture(con: Console, summary: dict[str, Any] | None, trace_file: Path, run_dir: Path) -> None:
    """`simulate capture`: what the trace holds (None: no read or write requests) and the next command."""
    if summary:
        con.print(esc(f"captured {summary['requests']:,} requests ({summary['reads']:,} reads, "
                      f"{summary['writes']:,} writes) into {trace_file}"), highlight=False)
    else:
        con.print(esc(f"captured no read or write requests into {trace_file}"), highlight=False)
    con.print(f"[dim]next: dbtier simulate run {esc(run_dir)} --design ...[/dim]", highlight=False)
