"""`dbtier probe PATH...`: characterise the storage under directories (or blank raw devices)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Callable, Iterator

from rich.console import Console

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import options as argtypes
from dbtier.cli.markup import esc
from dbtier.cli.common import Sink, add_output_options, console, emit
from dbtier.cli.own_checkout import default_dir
from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.measure.probe import PROFILES, TESTS, ProbeRequest, check_targets, probe, with_profile
from dbtier.cli.probe.tables import probe_points_table, probe_summary_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="characterise storage: IOPS/latency vs load, MB/s, commit latency, fsync honesty",
                       description="Characterise the storage under each directory with fio (direct I/O): small random "
                       "I/O over a load sweep, large sequential streams, commit (write + fdatasync) latency, and "
                       "whether fsync is honest.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="directories to probe (default: none; see --device)")
    p.add_argument("--device", action="append", default=[], metavar="DEV",
                   help="probe a raw block device instead (needs --destroy-data; refused unless blank and unused)")
    p.add_argument("--destroy-data", action="store_true", help="allow overwriting every byte of each --device")
    p.add_argument("--profile", choices=sorted(PROFILES), default="quick",
                   help="quick (about a minute a target) or full (longer points, bigger file, SNIA steady state)")
    p.add_argument("--only", default=",".join(TESTS), metavar="TESTS",
                   help=f"comma-separated subset of {','.join(TESTS)} (default: all)")
    p.add_argument("--size", type=argtypes.size(), metavar="SIZE",
                   help="test file size, e.g. 4G (default: the profile's, capped by free space)")
    p.add_argument("--point-seconds", type=argtypes.duration(0, 86400), metavar="S",
                   help="measured seconds per point (default: the profile's)")
    p.add_argument("--max-lat-ms", type=argtypes.positive_float(1e6), default=50.0,
                   help="stop a load sweep once p99 latency passes this (default 50)")
    p.add_argument("--margin-pct", type=argtypes.number(0, 100, hi_open=True, between=True), default=10.0,
                   help="free space to leave untouched, %% of the filesystem (default 10; never below "
                   "512 MiB or 5%% of it, whichever is smaller)")
    p.add_argument("--fill", action="store_true", help="also measure write performance as the filesystem fills")
    p.add_argument("--fill-max", type=argtypes.size(), metavar="SIZE",
                   help="with --fill: write at most this much (default: up to the margin)")
    p.add_argument("--buffered", action="store_true",
                   help="measure through the page cache (for filesystems without direct I/O; the result says so)")
    f = p.add_argument_group("many hosts at once (fio client/server)")
    f.add_argument("--hosts", metavar="HOSTS", help="probe on these hosts at once, each running `fio --server`: "
                   "host[:port] comma list or a file of them; PATH is then the target on every host, or host=path "
                   "each (docs/commands/probe.md: fio's protocol has no authentication)")
    f.add_argument("--trust", action="append", default=[], metavar="CIDR",
                   help="a network whose hosts may be sent fio jobs without a warning (loopback always may)")
    f.add_argument("--hosts-remote", action="store_true",
                   help="the hosts' files are not this machine's even on loopback (fio servers in containers): "
                   "none of the local checks, as for any other host")
    f.add_argument("--hosts-step", action="store_true",
                   help="also run the 4 KiB random read at the peak with 1, 2, 4, ... N hosts: how the shared "
                   "storage scales and where per-host latency degrades")
    add_output_options(p)
    p.set_defaults(func=run)


def _tests(text: str) -> tuple[str, ...]:
    chosen = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in chosen if t not in TESTS]
    if bad or not chosen:
        raise DbtierError(f"--only: unknown test {', '.join(bad) or '(none)'}", f"choose from {', '.join(TESTS)}")
    return chosen


def probe_request(args: argparse.Namespace) -> ProbeRequest:
    """The request of `probe PATH... | --device DEV...` (fio must be installed)."""
    if not args.paths and not args.device:
        default_dir(None, "PATH", "dbtier probe /mnt/nvme")   # inside dbtier's own checkout: say what to pass
        raise DbtierError("nothing to probe", "pass one or more directories, e.g. `dbtier probe /var/lib/postgresql`")
    tests = _tests(args.only)
    profile = with_profile(args.profile, args.point_seconds)
    executor.require("fio")
    # every figure's range is checked once, by its option's type
    return ProbeRequest(paths=tuple(args.paths), devices=tuple(args.device), profile=profile, tests=tests,
                        max_lat_ms=args.max_lat_ms, direct=not args.buffered, fill=args.fill, fill_max=args.fill_max,
                        margin_pct=args.margin_pct, size=args.size, destroy_data=args.destroy_data)


def run(args: argparse.Namespace) -> int:
    if args.hosts is None and (args.trust or args.hosts_step or args.hosts_remote):
        raise DbtierError("--trust, --hosts-step and --hosts-remote go with --hosts",
                          "add --hosts HOSTS, or leave them out")
    if args.hosts is not None:
        from dbtier.cli.probe import fleet as probe_fleet
        return probe_fleet.run(args, with_profile(args.profile, args.point_seconds), _tests(args.only), args.size)
    req = probe_request(args)
    targets = check_targets(req)
    sink = Sink("probe", args, paths=args.paths, devices=args.device)
    out = console(args)

    def on_error(exc: DbtierError) -> None:
        out.print(f"[red]dbtier: error: {esc(exc.message)}[/red]")
        if exc.hint:
            out.print(f"  next: {esc(exc.hint)}")

    res = probe(req, targets, lambda: sink.start(req.params()), sink.save, lambda path: _progress(out, path, args.json),
                on_error)
    run_ = sink.run
    status = "failed" if res.failed else "ok"
    run_.finish(status)
    doc = run_.doc

    def render() -> None:
        for entry in doc["targets"]:
            if entry["summary"]:
                out.print(probe_summary_table(entry))
        out.print(f"result: {esc(run_.dir.result_path)}")
    emit(doc, args, render)
    return 0 if status == "ok" else 1


@contextlib.contextmanager
def _progress(out: Console, path: str, quiet: bool) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A target's progress on the terminal: a bar with its points, and each point's line as it comes."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed} points"),
                  TimeElapsedColumn(), console=out, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"probe {esc(path)}", total=None)
        table_header = [False]

        def on_point(point: dict[str, Any]) -> None:
            progress.advance(task)
            progress.update(task, description=esc(f"{path}: {point['test']} x{point['outstanding']}"))
            if not quiet:
                progress.console.print(probe_points_table([point], header=not table_header[0]))
                table_header[0] = True

        yield on_point
