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
from dbtier.measure.probe import Profile, load_levels, probe_target
from dbtier.cli.probe.tables import probe_points_table, probe_summary_table
from dbtier.results.probe import READ_4K, RANDOM, knees, spreads, summarize

DEGRADED_P99 = 1.5          # per-host p99 this many times the one-host figure: the shared storage degrades
DEGRADED_IOPS = 0.8         # or per-host IOPS below this share of one host's


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


PING_JOB = "[dbtier-ping]\nrw=read\nbs=4k\nsize=4k\nfilename=/dev/zero\nioengine=psync\n"   # makes no file


def reachable(hosts: list[fleet.Host], scratch: str) -> None:
    """Refuse, naming them, the hosts whose fio server does not run a 4 KiB read of /dev/zero (before
    anything is made there)."""
    from concurrent.futures import ThreadPoolExecutor
    job = os.path.join(scratch, "dbtier-ping.fio")
    with open(job, "w") as f:
        f.write(PING_JOB)

    def ping(h: fleet.Host) -> str | None:
        try:
            done = executor.run(["fio", f"--client={h.client()}", job, "--output-format=json"], timeout_s=60)
        except executor.TimedOut:
            return f"{h.name} (no answer in 60 s)"
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip() or "no answer").splitlines()[-1]
            return f"{h.name} ({last})"
        return None

    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        down = [d for d in pool.map(ping, hosts) if d]
    if down:
        raise DbtierError(f"no fio server answers on {', '.join(down)}",
                          "start `fio --server` on each host (see the README), or leave it out of --hosts")


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
        reachable(hosts, scratch)
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

            fp = fleet.FleetProber(members, agg, profile, run_.dir, run_.save, on_point, args.max_lat_ms,
                                   not args.buffered, os.cpu_count() or 1, doc["errors"])
            try:
                probe_target(members[0].target, agg, profile, run_.dir, run_.save, on_point, tests=tests,
                             max_lat_ms=args.max_lat_ms, direct=not args.buffered, prober=fp)
                if args.hosts_step and RANDOM in tests and len(fp.live()) > 1:
                    doc["fleet"]["scaling"] = scaling(fp, agg)
            finally:
                for m in members:
                    te = m.tentry
                    te["summary"] = summarize(te["points"], te.get("fsync_honesty"))
                    te["spread"] = spreads(te["points"])
                    te["knee"] = knees(te["points"])
                    if m.dropped is None:
                        te["status"] = m.entry["status"] = "ok"
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


def scaling(fp: fleet.FleetProber, agg: dict[str, Any]) -> dict[str, Any]:
    """The 4 KiB random read at the aggregate's peak load with 1, 2, 4, ... N hosts: how the shared storage
    scales, and the host count where each host's p99 or IOPS degrades (DEGRADED_P99, DEGRADED_IOPS)."""
    rr = [p for p in agg["points"] if p["test"] == READ_4K]
    best = max(rr, key=lambda p: p["iops"]) if rr else {"jobs": 1, "iodepth": 32}
    live = fp.live()
    counts = sorted({min(2 ** k, len(live)) for k in range(len(live).bit_length() + 1)})
    steps = []
    members = fp.members
    for k in counts:
        fp.members = live[:k]
        try:
            job = fp.job(f"scale-{READ_4K}-h{k}", rw="randread", bs_bytes=4096, iodepth=best["iodepth"],
                         numjobs=best["jobs"])
            p = fp.measure(job, READ_4K, "scaling", 100, phase="scaling")
        finally:
            fp.members = members
        # the step's points are its own, not the plan's: out of the curves and summaries
        agg["points"].remove(p)
        per_host = [m.tentry["points"].pop() for m in live[:k] if m.dropped is None]
        p99s = [(q["lat_us"] or {}).get("p99") for q in per_host]
        steps.append({"hosts": p["hosts"], "iops": p["iops"], "iops_per_host": p["iops"] / max(1, p["hosts"]),
                      "lat_us_p99": (p["lat_us"] or {}).get("p99"),
                      "worst_host_lat_us_p99": max((x for x in p99s if x is not None), default=None),
                      "host_iops": [q["iops"] for q in per_host], "raw": p["raw"]})
    return {"test": READ_4K, "jobs": best["jobs"], "iodepth": best["iodepth"], "steps": steps,
            **scaling_verdict(steps)}


def scaling_verdict(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each host's share degrades as hosts are added (pure): the first step whose worst host's p99 is
    over DEGRADED_P99 times the one-host step's, or whose IOPS per host is under DEGRADED_IOPS of it."""
    one = steps[0]
    lat1 = one["worst_host_lat_us_p99"]
    for s in steps[1:]:
        why = []
        if lat1 and (s["worst_host_lat_us_p99"] or 0) > DEGRADED_P99 * lat1:
            why.append(f"the worst host's p99 {s['worst_host_lat_us_p99']:,.0f} µs vs {lat1:,.0f} µs alone")
        if s["iops_per_host"] < DEGRADED_IOPS * one["iops_per_host"]:
            why.append(f"{s['iops_per_host']:,.0f} IOPS a host vs {one['iops_per_host']:,.0f} alone")
        if why:
            return {"degraded_at_hosts": s["hosts"],
                    "verdict": f"each host's 4 KiB random reads degrade at {s['hosts']} hosts at once: "
                               + " and ".join(why), "rule": SCALING_RULE}
    last = steps[-1]
    return {"degraded_at_hosts": None, "rule": SCALING_RULE,
            "verdict": (f"each host's 4 KiB random reads hold up to {last['hosts']} hosts at once "
                        f"({last['iops_per_host']:,.0f} IOPS a host vs {one['iops_per_host']:,.0f} alone)")}


SCALING_RULE = (f"degraded: the worst host's p99 over {DEGRADED_P99}x its one-host figure, or IOPS per host under "
                f"{DEGRADED_IOPS:.0%} of it")

