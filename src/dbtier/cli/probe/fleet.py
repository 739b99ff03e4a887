"""`dbtier probe --hosts HOSTS TARGET...`: the probe run on many hosts at once (measure/fleet.py)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli.common import Run, console, emit
from dbtier.cli.markup import esc
from dbtier.core.errors import DbtierError
from dbtier.measure import executor, fleet
from dbtier.measure.probe import Profile, load_levels
from dbtier.cli.probe.tables import probe_points_table, probe_summary_table


def trust_networks(items: list[str]) -> list[Any]:
    nets = []
    for item in items:
        try:
            nets.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise DbtierError(f"--trust {item}: not a network", "e.g. --trust 10.0.0.0/8") from None
    return nets


def target_paths(hosts: list[fleet.Host], items: list[str]) -> dict[str, str]:
    """TARGET...: one path for every host, or host=path for each host."""
    if not items:
        raise DbtierError("--hosts needs the target on the hosts", "e.g. dbtier probe --hosts db1,db2 /var/lib/pgsql")
    per = [i for i in items if "=" in i]
    if not per:
        if len(items) > 1:
            raise DbtierError(f"--hosts takes one target for every host, or host=path each; got {len(items)} paths",
                              "probe one path at a time, or name each host's: db1=/data db2=/srv/data")
        return {h.name: items[0] for h in hosts}
    if len(per) != len(items):
        raise DbtierError("mixing a plain target with host=path ones", "give host=path for every host")
    out: dict[str, str] = {}
    names = {h.name for h in hosts} | {h.address for h in hosts}
    for i in per:
        name, _, path = i.partition("=")
        if name not in names:
            raise DbtierError(f"{i}: {name} is not one of --hosts", "use the names given to --hosts")
        host = next(h for h in hosts if name in (h.name, h.address))
        if host.name in out:
            raise DbtierError(f"{i}: {host.name} has two targets", "one target per host")
        out[host.name] = path
    missing = [h.name for h in hosts if h.name not in out]
    if missing:
        raise DbtierError(f"no target for {', '.join(missing)}", "give host=path for every host")
    return out


def run(args: argparse.Namespace, profile: Profile, tests: tuple[str, ...], size: int | None) -> int:
    if args.fill:
        raise DbtierError("--fill with --hosts: filling needs each host's free space, which fio cannot report",
                          "run `dbtier probe --fill` on the host itself")
    if args.device:
        raise DbtierError("--device with --hosts: give the device as the target (e.g. db1=/dev/nvme1n1)",
                          "with --destroy-data; only on a host of this machine, where it can be checked blank")
    executor.require("fio")
    hosts = fleet.parse_hosts(args.hosts)
    nets = trust_networks(args.trust)
    paths = target_paths(hosts, args.paths)
    warnings = [w for w in (fleet.untrusted(h, nets) for h in hosts) if w]
    for w in warnings:
        print(f"dbtier: warning: {w}", file=sys.stderr)
    import tempfile
    with tempfile.TemporaryDirectory(prefix="dbtier-fleet-") as scratch:
        fleet.reachable(hosts, scratch)
    swept = fleet.remove_dead_remote(hosts)       # what a dbtier that died left on these hosts
    if swept:
        print(f"dbtier: removed the test files an earlier fleet probe left (its dbtier died): {', '.join(swept)}",
              file=sys.stderr)
    members = fleet.make_members(hosts, paths, profile, args.margin_pct, size, args.buffered, args.destroy_data,
                                 args.hosts_remote)
    params = {"hosts": [h.name for h in hosts], "paths": paths, "profile": profile.name, "tests": list(tests),
              "point_s": profile.point_s, "ramp_s": profile.ramp_s, "max_lat_ms": args.max_lat_ms,
              "margin_pct": args.margin_pct, "direct_io": not args.buffered, "fill": False,
              "hosts_step": args.hosts_step, "trust": args.trust, "hosts_remote": args.hosts_remote,
              "load_levels": [list(x) for x in load_levels(profile.max_outstanding, os.cpu_count() or 1)],
              "engine": "fio client/server", "latency": "fio lat_ns: submission to completion; the aggregate's "
              "percentiles from the hosts' latency bins merged (json+)",
              "commit_pattern": "8 KiB buffered write + fdatasync per write, psync engine, preallocated file"}
    try:
        run_ = Run("probe.fleet", args, params, paths=[m.target.path for m in members if m.local])
    except BaseException:
        fleet.cleanup(members, None)
        raise
    doc = run_.doc
    agg: dict[str, Any] = {"path": f"{len(members)} hosts at once", "kind": "fleet", "index": 0,
                           "status": "running", "direct_io": not args.buffered,
                           "file_bytes": members[0].target.file_bytes, "filesystem": None, "points": [],
                           "summary": None, "steady_state": None, "fill": None, "fsync_honesty": None,
                           "hosts": len(members), "complete": True}
    for m in members:
        m.entry["targets"].append({"path": m.target.path, "kind": m.target.kind, "index": 0, "status": "running",
                                   "direct_io": not args.buffered, "file_bytes": m.target.file_bytes,
                                   "filesystem": m.target.filesystem, "points": [], "summary": None,
                                   "steady_state": None, "fill": None, "fsync_honesty": None})
    doc["hosts"] = [m.entry for m in members]
    doc["aggregate"] = agg
    doc["targets"] = [agg]          # what show, report and `plan value` read of a probe: the aggregate
    doc["fleet"] = {"warnings": warnings, "left_behind": [], "scaling": None}
    out = console(args)
    status = "ok"
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed} points"),
                      TimeElapsedColumn(), console=out, transient=True, disable=args.json) as progress:
            task = progress.add_task(f"probe {len(members)} hosts", total=None)

            def on_point(point: dict[str, Any]) -> None:
                progress.advance(task)
                progress.update(task, description=esc(f"{point['hosts']} hosts: {point['test']} "
                                                      f"x{point['outstanding']}"))
                if not args.json:
                    progress.console.print(probe_points_table([point], header=point is agg["points"][0]))

            req = fleet.FleetRequest(profile, tests, args.max_lat_ms, not args.buffered, args.hosts_step,
                                     os.cpu_count() or 1)
            doc["fleet"]["scaling"] = fleet.probe(req, members, agg, run_.dir, run_.save, on_point, doc["errors"])
        agg["status"] = "ok" if agg["complete"] else "incomplete"
        if not agg["complete"]:
            status = "failed"
    except DbtierError as exc:
        agg["status"] = "failed"
        doc["errors"].append({"message": exc.message, "hint": exc.hint})
        status = "failed"
        out.print(f"[red]dbtier: error: {esc(exc.message)}[/red]")
    except BaseException as exc:
        agg["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        raise
    finally:
        doc["fleet"]["left_behind"] = fleet.cleanup(members, run_.dir)
        run_.save()
    run_.finish(status)

    def render() -> None:
        for m in members:
            if m.tentry["summary"]:
                out.print(probe_summary_table({**m.tentry, "path": f"{m.host.name}:{m.tentry['path']}"}))
        if agg["summary"]:
            out.print(probe_summary_table(agg))
        sc = doc["fleet"]["scaling"]
        if sc:
            out.print(esc(sc["verdict"]))
        for e in doc["errors"]:
            out.print(f"[red]{esc(e.get('message', ''))}[/red]")
        out.print(f"result: {esc(run_.dir.result_path)}")
    emit(doc, args, render)
    return 0 if status == "ok" else 1
