"""`dbtier simulate mrc TRACE`: miss-ratio curves of an object trace (sim/mrc/) for several policies from
one read of the trace."""

from __future__ import annotations

import argparse
from pathlib import Path
from rich import box
from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.simulate import render
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.markup import esc
from dbtier.core.units import human_bytes
from dbtier.sim.names import FORMATS

_BLOCK = tuple(f for f in FORMATS if f != "csv")      # block trace layouts (csv is either, by its --columns)


def register_mrc(ssub: argparse._SubParsersAction) -> None:
    """`simulate mrc` and its options (cli/simulate/command.py registers the other actions)."""
    mp = ssub.add_parser("mrc", help="miss-ratio curves of an object trace (oracleGeneral, vscsi, txt, csv) "
                         "for several policies",
                         description="Miss-ratio curves of an object trace for each --policy, from one read of "
                         "the trace, with libCacheSim's semantics (a miss admits the whole object at its byte size; "
                         "whole objects are evicted until it fits; an object larger than the cache is not "
                         "admitted). LRU's curve comes from one pass (byte stack distances). Formats: "
                         "oracleGeneral (.bin, .zst; another name by its records), vscsi v1/v2, txt (one id "
                         "per line), csv through --columns (plain, gzip or zstd), e.g. `dbtier simulate mrc "
                         "requests.csv --columns id=key,size=bytes --policy lru,s3fifo,belady`.")
    mp.add_argument("trace", metavar="TRACE", help="object trace file (oracleGeneral .bin or .zst, .vscsi, .txt, "
                    "a CSV with --columns)")
    mp.add_argument("--format", default="auto", choices=("auto", "oracleGeneral", "vscsi", "txt", "csv", *_BLOCK),
                    help="trace format (default: from the name and the first records; csv with --columns). "
                    f"Block traces ({', '.join(_BLOCK)}, or a CSV whose --columns map offset and length) are "
                    "simulated at block granularity")
    mp.add_argument("--block-size", type=argtypes.size(1, 2**30), default="8K", metavar="SIZE",
                    help="a block trace's cache block (default 8K): each request is cut into the blocks it covers, "
                    "each an object of this size, as simulate run's cache does")
    mp.add_argument("--reads-only", action="store_true",
                    help="a block trace's reads only (a read cache's own curve); default: every request, as "
                    "libCacheSim reads a block trace")
    # every request counts whatever its op, as libCacheSim's CSV reader has it: in a look-aside cache a
    # write or set asks for the object too; op's values are counted for the document, not used
    mp.add_argument("--columns", metavar="MAP", help="an object CSV's columns: id=COL (required), size=COL "
                    "(bytes; left out, every object is one unit, as libCacheSim without a size), time=COL, op=COL "
                    "(every request counts whatever its op, as in libCacheSim; the ops are counted in the "
                    "document); COL a header name or a 1-based number; also time_unit=s|ms|us|ns|filetime, "
                    "delimiter=comma|tab|space|semicolon|pipe, header=auto|yes|no")
    mp.add_argument("--policy", default="lru", metavar="LIST",
                    help="comma-separated, or all: lru, fifo, clock, s3fifo, s3fifo-2023, sieve, twoq (2q), slru, "
                    "lfu, arc, lirs, wtinylfu, belady (the optimal bound) (default lru). Each runs as libCacheSim "
                    "0.3.5 (the libcachesim package) runs it, with its default parameters, miss for miss: s3fifo is "
                    "its current S3FIFO.c (since December 2024: before the first eviction a miss that finds the "
                    "small queue full goes to main); "
                    "s3fifo-2023 is the original S3-FIFO (SOSP '23, libCacheSim's S3FIFOv0.c and its test "
                    "suite's figures); slru is S4LRU (four segments of 25%%), twoq "
                    "Ain 25%% and Aout 50%%, wtinylfu a 1%% window and an SLRU main cache of 1:4")
    mp.add_argument("--sizes", metavar="LIST", help="cache sizes: 128MiB (binary), 1GB (decimal), 5%% of the "
                    "footprint, comma-separated (default: 1%% to 100%% of the footprint)")
    mp.add_argument("--sample", type=float, metavar="RATE",
                    help="SHARDS spatial sampling at RATE (e.g. 0.01): estimates for traces of hundreds of "
                    "millions of requests (SHARDS-adj; the document says the figures are estimates)")
    add_output_options(mp)
    mp.set_defaults(func=run_mrc)


def run_mrc(args: argparse.Namespace) -> int:
    from dbtier.core.files import regular_file
    from dbtier.sim.mrc import call, curves
    path = regular_file(args.trace, "trace", "pass the trace file itself")
    req = call.MrcRequest(trace=path, policies=tuple(curves.parse_policies(args.policy)), sizes=args.sizes,
                          sample=args.sample, format=args.format, columns=args.columns, block_size=args.block_size,
                          reads_only=args.reads_only)
    runs: list[Run] = []

    def start() -> None:            # the trace read: the run directory is made
        runs.append(Run("simulate.mrc", args, {"action": "mrc", "trace": str(path), "format": args.format,
                                               "columns": args.columns, "block_size": args.block_size,
                                               "reads_only": args.reads_only, "policy": list(req.policies),
                                               "sizes": args.sizes, "sample": args.sample},
                        inputs=[str(path)]))

    with render.Progress(console(args), args.json) as prog:
        res = call.run(req, prog, start)
    run = runs[0]
    run.doc.update(res.to_json())
    run.finish()
    emit(run.doc, args, lambda: _render(args, run.doc["mrc"], path))
    return 0


def _render(args: argparse.Namespace, m: dict, path: Path) -> None:
    con = console(args)
    tr = m["trace"]
    if tr["mode"] == "block":
        what = (f"{tr['io_requests']:,} {'read ' if tr['reads_only'] else ''}requests cut into {tr['requests']:,} "
                f"accesses of {tr['objects']:,} {human_bytes(tr['block_size'])} blocks")
    else:
        what = f"{tr['requests']:,} requests, {tr['objects']:,} objects"
    con.print(f"{esc(str(path))} ({tr['format']}, {tr['mode']}s): {what}, footprint "
              f"{human_bytes(tr['footprint_bytes'])}", highlight=False)
    from dbtier.report.figures.mrc import policy_name
    rate = m["curves"][0]["sample_rate"]
    est = f": estimates from a {rate:g} SHARDS sample" if rate < 1 else ""
    points = m["curves"][0]["points"]
    if len(m["curves"]) <= 5:            # a column per policy, with its misses
        table = Table(box=box.SIMPLE_HEAD, title="miss ratio (misses)" + est)
        table.add_column("cache", justify="right")
        for c in m["curves"]:
            table.add_column(policy_name(c["policy"]), justify="right")
        for i, pt in enumerate(points):
            table.add_row(human_bytes(pt["cache_bytes"]),
                          *(f"{c['points'][i]['miss_ratio']:.4f} ({c['points'][i]['misses']:,})" for c in m["curves"]))
    else:                                # more policies than fit across: a row per policy, a column per size
        table = Table(box=box.SIMPLE_HEAD, title="miss ratio (%)" + est, pad_edge=False, collapse_padding=True)
        table.add_column("policy", no_wrap=True, min_width=14)
        for pt in points:
            table.add_column(human_bytes(pt["cache_bytes"]), justify="right")
        for c in m["curves"]:
            table.add_row(policy_name(c["policy"]), *(f"{p['miss_ratio'] * 100:.1f}" for p in c["points"]))
    con.print(table)
