"""`dbtier simulate mrc TRACE`: miss-ratio curves of an object trace (sim/mrc.py) for several policies from
one read of the trace."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rich import box
from rich.table import Table

from dbtier.cli import simulate_render as render
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.markup import esc
from dbtier.core.units import human_bytes


def register_mrc(ssub: argparse._SubParsersAction) -> None:
    """`simulate mrc` and its options (cli/simulate.py registers the other actions)."""
    mp = ssub.add_parser("mrc", help="miss-ratio curves of an object trace (oracleGeneral, vscsi, txt) for "
                         "several policies",
                         description="Miss-ratio curves of an object trace for each --policy, from one read of "
                         "the trace, with libCacheSim's semantics (a miss admits the whole object at its byte size; "
                         "whole objects are evicted until it fits; an object larger than the cache is not "
                         "admitted). LRU's curve comes from one pass (byte stack distances). Formats: "
                         "oracleGeneral (.bin, .zst), vscsi v1/v2, txt (one id per line).")
    mp.add_argument("trace", metavar="TRACE", help="object trace file (oracleGeneral .bin or .zst, .vscsi, .txt)")
    mp.add_argument("--format", default="auto", choices=("auto", "oracleGeneral", "vscsi", "txt"),
                    help="trace format (default: from the name and the first records)")
    mp.add_argument("--policy", default="lru", metavar="LIST",
                    help="comma-separated: lru, fifo, clock, s3fifo, arc, belady (the optimal bound) (default lru)")
    mp.add_argument("--sizes", metavar="LIST", help="cache sizes: 128MiB (binary), 1GB (decimal), 5%% of the "
                    "footprint, comma-separated (default: 1%% to 100%% of the footprint)")
    mp.add_argument("--sample", type=float, metavar="RATE",
                    help="SHARDS spatial sampling at RATE (e.g. 0.01): estimates for traces of hundreds of "
                    "millions of requests (SHARDS-adj; the document says the figures are estimates)")
    add_output_options(mp)
    mp.set_defaults(func=run_mrc)


def run_mrc(args: argparse.Namespace) -> int:
    from dbtier.sim import mrc, objects
    path = Path(args.trace)
    policies = mrc.parse_policies(args.policy)
    if args.sample is not None:
        mrc.sample(np.zeros(0, np.uint64), args.sample)    # a rate outside (0, 1] refused before reading
    with render.Progress(console(args), args.json) as prog:
        prog("reading the trace", 0.0)
        t = objects.load_objects(path, args.format)
        fmt, _ = objects.detect(path) if args.format == "auto" else (args.format, None)
        rate = args.sample if args.sample is not None and args.sample < 1.0 else None
        # with a sample, the whole trace is only read: its objects and footprint are the sample's, scaled
        objs = mrc.objects_of(t.obj_id, t.size) if rate is None else mrc.sampled(t.obj_id, t.size, rate)
        caches = mrc.parse_sizes(args.sizes, objs.footprint_bytes)     # refused before the run directory exists
        run = Run("simulate", args, {"action": "mrc", "trace": str(path), "format": args.format,
                                     "policy": policies, "sizes": args.sizes, "sample": args.sample},
                  inputs=[str(path)])
        prog(f"{', '.join(policies)} at {len(caches)} sizes", 0.5)
        if rate is None:
            got = mrc.curves(policies, objs, caches, t.next_access)      # on every core
        else:          # SHARDS: estimates (Belady's next requests are the sample's own)
            got = mrc.sampled_curves(policies, objs, caches)
        curves = [{"policy": pol, "sample_rate": 1.0 if rate is None else rate,
                   "points": [p.doc() for p in got[pol]]} for pol in policies]
    run.doc["mrc"] = {"trace": {"format": fmt, "mode": "object", "requests": len(t.obj_id),
                                "objects": objs.n_objects, "footprint_bytes": objs.footprint_bytes},
                      "curves": curves,
                      "estimates": rate is not None}
    if rate is not None:
        run.doc["mrc"]["note"] = (f"SHARDS spatial sample at {rate:g} of the objects (SHARDS-adj): every figure "
                                  "of the curves, and the trace's objects and footprint, are estimates")
    run.finish()
    emit(run.doc, args, lambda: _render(args, run.doc["mrc"], path))
    return 0


def _render(args: argparse.Namespace, m: dict, path: Path) -> None:
    con = console(args)
    tr = m["trace"]
    con.print(f"{esc(str(path))} ({tr['format']}, objects): {tr['requests']:,} requests, {tr['objects']:,} objects, "
              f"footprint {human_bytes(tr['footprint_bytes'])}", highlight=False)
    rate = m["curves"][0]["sample_rate"]
    title = "miss ratio (misses)" + (f": estimates from a {rate:g} SHARDS sample" if rate < 1 else "")
    table = Table(box=box.SIMPLE_HEAD, title=title)
    table.add_column("cache", justify="right")
    for c in m["curves"]:
        table.add_column(c["policy"].upper(), justify="right")
    for i, pt in enumerate(m["curves"][0]["points"]):
        row = [human_bytes(pt["cache_bytes"])]
        for c in m["curves"]:
            p = c["points"][i]
            row.append(f"{p['miss_ratio']:.4f} ({p['misses']:,})")
        table.add_row(*row)
    con.print(table)
