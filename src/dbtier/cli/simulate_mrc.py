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
    from dbtier.core.files import regular_file
    from dbtier.core.workdir import workdir
    from dbtier.sim import mrc, mrc_spill, objects
    path = regular_file(args.trace, "trace", "pass the trace file itself")
    policies = mrc.parse_policies(args.policy)
    if args.sample is not None:
        mrc.sample(np.zeros(0, np.uint64), args.sample)    # a rate outside (0, 1] refused before reading
    mrc.parse_sizes(args.sizes, 1 << 62)                    # and sizes that are not sizes
    fmt = objects.detect(path)[0] if args.format == "auto" else args.format
    rate = args.sample if args.sample is not None and args.sample < 1.0 else None
    with render.Progress(console(args), args.json) as prog, \
            workdir(path.stat().st_size, f"the spilled codes of {path}", "dbtier-mrc-") as work:
        # one read of the trace, spilled as codes (16 bytes a request; a sample's only): memory holds no trace
        spill = mrc_spill.scan(objects.read_objects(path, args.format), work, str(path), rate,
                               keep_next="belady" in policies,
                               progress=lambda n: prog(f"reading the trace: {n:,} requests", 0.0))
        # with a sample, the trace's objects and footprint are the sample's, scaled
        src = spill if rate is None else mrc.Sampled(spill, rate, spill.total_requests, spill.total_bytes)
        caches = mrc.parse_sizes(args.sizes, src.footprint_bytes)
        run = Run("simulate", args, {"action": "mrc", "trace": str(path), "format": args.format,
                                     "policy": policies, "sizes": args.sizes, "sample": args.sample},
                  inputs=[str(path)])
        what = f"{', '.join(policies)} at {len(caches)} sizes"
        step = lambda k, n: prog(f"{what}: {k} of {n} replays", k / n)      # noqa: E731
        if rate is None:
            got = mrc.curves(policies, spill, caches, progress=step)      # on every core
        else:          # SHARDS: estimates (Belady's next requests are the sample's own)
            got = mrc.sampled_curves(policies, src, caches, progress=step)
        curves = [{"policy": pol, "sample_rate": 1.0 if rate is None else rate,
                   "points": [p.doc() for p in got[pol]]} for pol in policies]
    run.doc["mrc"] = {"trace": {"format": fmt, "mode": "object", "requests": spill.total_requests,
                                "objects": src.n_objects, "footprint_bytes": src.footprint_bytes},
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
