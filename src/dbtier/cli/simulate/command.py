"""`dbtier simulate run|capture`: replay block I/O traces through tier designs; record a trace.

    dbtier simulate run TRACE --design single --device ID
    dbtier simulate run TRACE --design read-cache --cache ID --backing ID [--cache-gb GB] [--sweep]
    dbtier simulate run TRACE --design preferred-read-mirror --fast ID --slow ID [--fail fast@T --return fast@T]
                              [--tracking asm-au|md-bitmap] [--region-size SIZE]
    dbtier simulate capture DEVICE|DIR [--duration S] [--run 'COMMAND ...']

A device ID is a catalog id (`dbtier catalog list`), a probe run directory
(`runs/<stamp>-probe`, `#N` for its N-th target), or a cloud volume
(`cloud:aws:gp3:size=1000,iops=6000,mibps=250`, sim/cloudvolume.py); `--probe RUN_DIR`
fills the one device role the command line leaves open with the measured device.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbtier.cli import entry
from dbtier.cli import options as argtypes
from dbtier.cli.simulate import render
from dbtier.cli.catalog import add_catalog_option
from dbtier.cli.simulate.capture import register_capture
from dbtier.cli.simulate import convert
from dbtier.cli.simulate.mrc import register_mrc
from dbtier.cli.common import Run, usage, add_output_options, check_out_early, console, emit
from dbtier.core.errors import DbtierError
from dbtier.sim.trace import capture as cap
from dbtier.sim.device import devices as sim_devices
from dbtier.sim import names

# numpy and numba load only when a simulation runs (imports inside the functions), not with every
# `dbtier` command.
if TYPE_CHECKING:
    from dbtier.sim.device import latency
    from dbtier.sim import simulate as sim

# Option bounds: a cache of 10^9 GB (an exabyte) still counts its blocks in int64 at any --block-size;
# times of 10^9 s (31 years) from the first request are past any trace.
MAX_CACHE_GB = 1e9
MAX_TIME_S = 1e9


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="replay block I/O traces through tier designs (flash cache, mirror)",
                       description="Replay a block I/O trace through a tier design: one device, a flash read "
                       "cache in front of slower storage, or a mirror whose fast side serves every read; hit "
                       "ratios, latency distributions, utilisation, and resync after a failure.")
    ssub = p.add_subparsers(dest="simulate_command", metavar="ACTION")

    rp = ssub.add_parser("run", help="replay a trace through a design",
                         description="Replay TRACE through --design, with device figures from the catalog or a "
                         "probe run. Trace formats: " + ", ".join(names.FORMATS) + " (detected; --columns maps any "
                         "other CSV). Times (--restart-at, --fail) are seconds from the first request, or "
                         "with a unit: 90s, 10m, 1.5h.",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rp.add_argument("trace", metavar="TRACE", help="trace file (gzip/bz2/xz read as is), or a `simulate capture` "
                    "run directory")
    g = rp.add_argument_group("trace")
    _add_reading_options(g)
    g.add_argument("--volume", metavar="NAME", help="only this volume/disk/device of a multi-volume trace; `all`: "
                   "each volume through the design on its own (its own devices and cache), in parallel, with "
                   "per-volume and total figures (default: all volumes together, one shared design)")
    g.add_argument("--cluster", metavar="ADDRESS", help="with --volume all: replay the volumes on a Dask cluster "
                   "(the scheduler's address, e.g. tcp://10.0.0.5:8786) instead of this machine's cores")
    g.add_argument("--block-size", type=argtypes.size(1, 2**30), default="8K", metavar="SIZE",
                   help="cache and bitmap block (default 8K)")
    g.add_argument("--in-memory", action="store_true",
                   help="read the whole trace before replaying it (default: stream it, 2^18 requests at a time, "
                        "with the same answers; --sort, --fail and --volume NAME read it whole)")
    g.add_argument("--no-spread", action="store_true",
                   help="keep requests that share a coarse (>= 1 ms) timestamp as one burst in the queueing "
                        "model (default: spread evenly across the tick)")

    # the description is printed as is (RawDescriptionHelpFormatter): wrapped here
    d = rp.add_argument_group("design and devices", textwrap.fill(
        names.DEVICE_IDS_HELP, 78, break_long_words=False, break_on_hyphens=False))
    d.add_argument("--design", required=True, choices=names.DESIGNS, help="the tier design")
    for role, text in (("device", "the device of --design single"), ("cache", "the cache device"),
                       ("backing", "the device behind the cache"), ("fast", "the mirror side that serves reads"),
                       ("slow", "the other mirror side")):
        d.add_argument(f"--{role}", metavar="ID", help=f"{text}: catalog id, probe run directory or "
                       f"{names.CLOUD_PREFIX}... cloud volume (above)")
    d.add_argument("--probe", metavar="RUN_DIR", help="a probe run: the measured device takes the one role "
                   "not named otherwise")
    add_catalog_option(d)

    c = rp.add_argument_group("read-cache")
    c.add_argument("--cache-gb", type=argtypes.positive_float(MAX_CACHE_GB), metavar="GB",
                   help="cache size in GB (10^9 bytes; default: the trace's working set, the size at which every "
                        "re-read hits, counted in a first read of the trace)")
    c.add_argument("--policy", default="lru", choices=names.POLICIES, help="eviction policy (default lru), each "
                   "as simulate mrc and libCacheSim 0.3.5 run it: lru, fifo; s3fifo (resists scans) is libCacheSim's "
                   "current S3-FIFO (S3FIFO.c); s3fifo-2023 the original (SOSP '23, S3FIFOv0.c); "
                   "sieve (NSDI '24); twoq (2Q: Ain 25%%, Aout 50%%)")
    c.add_argument("--write-mode", default="write-around", choices=names.WRITE_MODES,
                   help="what writes do to the cache (default write-around); a note names write-through "
                        "(or write-around) when its read hit ratio differs by more than 10 points, from a second "
                        "cache in the same replay while the trace touches at most 2^22 blocks")
    c.add_argument("--seq-cutoff", type=argtypes.size(), metavar="SIZE",
                   help="bypass the cache for sequential streams of this size "
                   "or more, as bcache's sequential_cutoff (e.g. 4M; default off)")
    c.add_argument("--restart-at", action="append", default=[],
                   metavar="T", type=argtypes.duration(0, MAX_TIME_S, lo_open=False),
                   help="empty the cache at time T, as a host restart does (repeatable)")
    c.add_argument("--sweep", nargs="?", const="auto", metavar="GB,GB,...",
                   type=argtypes.float_list(0, MAX_CACHE_GB, keep=("auto",)),
                   help="also replay these cache sizes for the hit-ratio curve (default: halvings of the "
                        "working set), and recommend one: the smallest within 2 points of the largest size's read "
                        "hit ratio (the size where the miss ratio falls by less than 1 point per doubling shown "
                        "beside it); runs on all cores")
    c.add_argument("--jobs", type=argtypes.positive_int(4096), metavar="N",
                   help="parallel replays for --sweep (default: all cores)")

    m = rp.add_argument_group("preferred-read-mirror")
    m.add_argument("--fail", type=argtypes.side_time(names.SIDES, MAX_TIME_S), metavar="SIDE@T",
                   help="the side (fast or slow) fails at time T")
    m.add_argument("--return", dest="return_", type=argtypes.side_time(names.SIDES, MAX_TIME_S), metavar="SIDE@T",
                   help="the failed side returns at time T")
    m.add_argument("--tracking", choices=names.TRACKINGS, help="how the mirror tracks the writes a down side "
                   "misses, which sets the resync's unit: asm-au (default: the study's mirror is Oracle ASM's; fast "
                   "mirror resync copies the changed extents, one allocation unit each, AU_SIZE 1 MB by default) or "
                   "md-bitmap (Linux md RAID1's write-intent bitmap, 64 MiB chunks by default)")
    m.add_argument("--region-size", type=argtypes.size(), metavar="SIZE",
                   help="the tracking unit, explicitly (e.g. 4M for ASM with AU_SIZE 4 MB; default: the --tracking "
                        "model's, 1M for asm-au, 64M for md-bitmap)")
    add_output_options(rp)
    rp.set_defaults(func=run_sim)

    vp = ssub.add_parser("convert", help="a compact columnar copy of a trace (Parquet) that later runs read directly",
                         description="Read TRACE once and write it as Parquet, one file per volume, with the "
                         "source's size and SHA-256; `dbtier simulate run RUN_DIR` then replays the copy without "
                         "parsing text again (and with --volume NAME reads that volume's file only).")
    vp.add_argument("trace", metavar="TRACE", help="trace file (gzip/bz2/xz read as is)")
    _add_reading_options(vp.add_argument_group("trace"))
    add_output_options(vp)
    vp.set_defaults(func=convert.run_convert)

    register_mrc(ssub)

    register_capture(ssub)

    p.set_defaults(func=usage(p))


def _add_reading_options(g: Any) -> None:
    """How a text trace is read: `simulate run` and `simulate convert` alike."""
    g.add_argument("--format", default="auto", choices=("auto", *names.FORMATS), help="trace format (default: detect)")
    g.add_argument("--columns", metavar="MAP", help=names.COLUMNS_HELP)
    g.add_argument("--skip-bad", action="store_true", help="count and skip malformed lines instead of stopping")
    g.add_argument("--sort", action="store_true", help="sort requests by time when the file is out of order")


# -- argument parsing ------------------------------------------------------------------------------------

def build_params(args: argparse.Namespace) -> sim.Params:
    """The simulation's parameters; the option types have already parsed sizes, times and SIDE@T."""
    from dbtier.sim import mirror
    from dbtier.sim import simulate as sim
    return sim.Params(
        design=args.design, block_size=args.block_size, policy=args.policy, write_mode=args.write_mode,
        cache_gb=args.cache_gb, seq_cutoff_bytes=args.seq_cutoff or None, restart_at_s=tuple(args.restart_at),
        sweep_gb=() if args.sweep == "auto" else args.sweep,      # auto: halvings of the working set
        failure=mirror.failure_from(args.fail, args.return_), region_size=args.region_size, tracking=args.tracking,
        spread_ties=not args.no_spread, jobs=args.jobs)


def resolve_devices(args: argparse.Namespace) -> dict[str, latency.DeviceModel]:
    named = {r: getattr(args, r) for r in ("device", "cache", "backing", "fast", "slow") if getattr(args, r)}
    return sim_devices.resolve(args.design, named, args.probe, args.catalog)


# -- run ----------------------------------------------------------------------------------------------------

def _params_doc(args: argparse.Namespace, p: sim.Params, trace_path: Path) -> dict[str, Any]:
    return {"trace": str(trace_path), "format": args.format, "columns": args.columns, "skip_bad": args.skip_bad,
            "sort": args.sort, "in_memory": args.in_memory, "volume": args.volume, "cluster": args.cluster,
            "devices": {r: getattr(args, r) for r in ("device", "cache", "backing", "fast", "slow")
                        if getattr(args, r)}, "probe": args.probe, "catalog_files": list(args.catalog),
            "jobs": args.jobs, **p.to_dict()}


def _inputs(args: argparse.Namespace, trace: Path) -> list[str]:
    """What this simulation reads (the trace, probe runs as devices): --force never removes them."""
    named = [getattr(args, r) for r in ("device", "cache", "backing", "fast", "slow", "probe") if getattr(args, r)]
    return [str(trace), *(v.partition("#")[0] for v in named if not v.startswith(names.CLOUD_PREFIX)),
            *args.catalog]


def run_sim(args: argparse.Namespace) -> int:
    with entry.collector_off():
        return _run_sim(args)


def _run_sim(args: argparse.Namespace) -> int:
    from dbtier.core.malloc import tune_for_chunks
    tune_for_chunks()               # chunk after chunk of arrays: their memory goes back (see core/malloc.py)
    from dbtier.sim import request, volumes
    # Everything that can be refused is refused before the run directory exists.
    if args.cluster and args.volume != "all":
        raise DbtierError("--cluster replays volumes on a Dask cluster: it needs --volume all",
                          "add --volume all, or leave --cluster out")
    params = build_params(args)
    if args.volume == "all":
        volumes.check(params)
    devices = resolve_devices(args)
    path = cap.trace_path(args.trace)
    req = request.SimRequest(path, params, devices, format=args.format, columns=args.columns,
                             skip_bad=args.skip_bad, sort=args.sort, in_memory=args.in_memory, volume=args.volume,
                             cluster=args.cluster)
    from dbtier.measure.machine import warm_tool_versions
    warm_tool_versions()            # the run document's, asked while the process is small
    runs: list[Run] = []

    def start() -> None:            # when sim/request.py has refused all it can: before or after the replay
        runs.append(Run("simulate.run", args, _params_doc(args, params, path), inputs=_inputs(args, path)))

    # the summary prints once the progress bar has stopped (and erased its line), never onto it
    with render.Progress(console(args), args.json) as prog:
        out = request.run(req, prog, start, early=lambda: check_out_early(args))
    run = runs[0]
    run.doc.update(out.to_json())
    return _finish(args, run, list(out.warnings))


def _finish(args: argparse.Namespace, run: Run, warnings: list[str]) -> int:
    run.finish()
    for w in warnings:
        print(f"dbtier: warning: {w}", file=sys.stderr)
    emit(run.doc, args, lambda: render.run(console(args), run.doc, run.dir.path))
    return 0
