"""`dbtier probe --hosts HOSTS TARGET...`: the probe run on many hosts at once (measure/fleet.py's `run`)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any, Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli.common import Sink, console, emit
from dbtier.cli.markup import esc
from dbtier.core.errors import DbtierError
from dbtier.measure import fleet
from dbtier.measure.probe import Profile
from dbtier.cli.probe.tables import probe_points_table, probe_summary_table


def run(args: argparse.Namespace, profile: Profile, tests: tuple[str, ...], size: int | None) -> int:
    req = fleet.ProbeFleetRequest.checked(
        hosts=args.hosts, targets=args.paths, trust=args.trust, fill=args.fill, devices=args.device,
        profile=profile, tests=tests, max_lat_ms=args.max_lat_ms, margin_pct=args.margin_pct, size=size,
        direct=not args.buffered, destroy_data=args.destroy_data, hosts_step=args.hosts_step,
        hosts_remote=args.hosts_remote)
    sink = Sink("probe.fleet", args)
    out = console(args)

    def on_error(exc: DbtierError) -> None:
        out.print(f"[red]dbtier: error: {esc(exc.message)}[/red]")

    res = fleet.run(req, sink.start, sink.save, lambda agg: _progress(out, agg, args.json),
                    warn=lambda w: print(f"dbtier: warning: {w}", file=sys.stderr),
                    note=lambda n: print(f"dbtier: {n}", file=sys.stderr), on_error=on_error)
    run_ = sink.run
    run_.finish(res.status)
    doc = run_.doc

    def render() -> None:
        for h in doc["hosts"]:
            te = h["targets"][0]
            if te["summary"]:
                out.print(probe_summary_table({**te, "path": f"{h['host']}:{te['path']}"}))
        agg = doc["aggregate"]
        if agg["summary"]:
            out.print(probe_summary_table(agg))
        sc = doc["fleet"]["scaling"]
        if sc:
            out.print(esc(sc["verdict"]))
        for e in doc["errors"]:
            out.print(f"[red]{esc(e.get('message', ''))}[/red]")
        out.print(f"result: {esc(run_.dir.result_path)}")
    emit(doc, args, render)
    return 0 if res.status == "ok" else 1


@contextlib.contextmanager
def _progress(out: Console, agg: dict[str, Any], quiet: bool) -> Iterator[Callable[[dict[str, Any]], None]]:
    """The fleet's progress on the terminal: a bar with the aggregate's points, and each point's line as it
    comes."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed} points"),
                  TimeElapsedColumn(), console=out, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"probe {agg['hosts']} hosts", total=None)

        def on_point(point: dict[str, Any]) -> None:
            progress.advance(task)
            progress.update(task, description=esc(f"{point['hosts']} hosts: {point['test']} "
                                                  f"x{point['outstanding']}"))
            if not quiet:
                progress.console.print(probe_points_table([point], header=point is agg["points"][0]))

        yield on_point
