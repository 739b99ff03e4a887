"""`dbtier runs`: every run under the runs directories as one table; `runs sql`, `runs trend`, `runs check`
(cli/runs/verbs.py, cli/runs/check.py).

The runs are read in place and kept in a cached index per runs directory (dbtier.runsdb.index); the table
and every query are DuckDB over it (dbtier.runsdb.views), each verb a library call (dbtier.runsdb.calls) whose
answer this package stores and prints. Listing, sql and trend only read: like `show` and
`compare` they make a run directory only with --out; `runs check` always writes one (its verdict).
"""

from __future__ import annotations

import argparse
import os
import sys

from dbtier.cli.runs import render as R
from dbtier.cli.runs.render import terminal_width
from dbtier.cli.common import Run, console, emit
from dbtier.cli.runs.common import add_filters, add_runs_options, reading, runs_dirs, starter

BASE = ("run_id", "name", "kind", "status", "started_at", "host", "device", "model", "continues", "summary")
# shown only when a run listed has one
SPARSE = frozenset({"name", "continues"})
HEADERS = {"run_id": "run", "started_at": "started (UTC)", "summary": "figures"}
# On a terminal too narrow for the whole table these go to a line under each run, uncut.
FOLDED = frozenset({"host", "device", "model", "continues", "summary"})


def register(sub: argparse._SubParsersAction) -> None:
    from dbtier.cli.runs import check as runs_check
    from dbtier.cli.runs import verbs as runs_verbs
    p = sub.add_parser("runs", help="every run as one table; sql, trend and check over them",
                       description="List every run under the runs directories (command, kind, status, start, "
                       "host, target device and model, key figures), read in place through a cached index "
                       "(.dbtier-runs-index.parquet in each runs directory), and, unless --runs-dir is given, every "
                       "run made elsewhere with --out (the run registry in the state directory; listed by its full "
                       "path, without a runs_dir). A run directory whose result.json is missing or broken is listed "
                       "as damaged with the reason; a folder that is no run (no result.json, no run marker) is "
                       "not listed. Runs of `dbtier runs` itself are left out unless "
                       "--kind runs. Verbs: sql (read-only SQL over the views), trend (a figure over time), "
                       "check (a run against a baseline, for CI); options go after the verb.")
    p.add_argument("--kind", metavar="K", help="only runs of this kind: probe, oltp, dss, backup, history, plan, "
                   "simulate (their figures become columns for --where and --sort), or lab, report, runs ...")
    add_filters(p)
    p.add_argument("--sort", metavar="COL", default="started_at",
                   help="order by this column, \"COL desc\" for descending (--sort \"read_iops_4k desc\"); "
                        "default started_at")
    p.add_argument("--everywhere", action="store_true", help="with --runs-dir: list the runs made elsewhere (the "
                   "run registry) too, as the listing without --runs-dir does")
    add_runs_options(p)
    p.set_defaults(func=run_list)
    verbs = p.add_subparsers(dest="runs_verb", metavar="VERB")
    runs_verbs.register(verbs)
    runs_check.register(verbs)


def _where(path: str, width: int) -> str:
    """A run made elsewhere as its path from here (or from ~ when shorter), its start cut when too long:
    the end names the run."""
    rel = os.path.relpath(path)
    home = os.path.expanduser("~")
    tilde = "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path
    shown = min((path, rel, tilde), key=len)
    return shown if len(shown) <= width else "…" + shown[-(width - 1):]


def run_list(args: argparse.Namespace) -> int:
    from dbtier.runsdb import views as V
    from dbtier.runsdb.calls import ListRequest, runs_list
    from dbtier.runsdb.extract import SUMMARY_KEYS
    req = ListRequest(runs_dirs=runs_dirs(args), kind=args.kind, where=args.where, since=args.since, sort=args.sort,
                      everywhere=bool(args.everywhere))
    made: list[Run] = []
    res = runs_list(req, starter(args, made), reading(args))
    run = made[0]
    doc = run.doc
    doc.update(res.to_json())
    run.finish()
    src, names, index = doc["view"], doc["columns"], doc["index"]
    records = [dict(zip(names, r)) for r in res.records]
    out = console(args)

    def render() -> None:
        if src == "runs":
            show = list(BASE)
        else:
            item = [c for c in (V.VIEWS[src].item, "device", "model") if c and c in names]
            show = ["run_id", "name", "status", "started_at", "host", *item, "continues",
                    *[k for k in SUMMARY_KEYS.get(src, ()) if k in names]]
        show = [c for c in show if c not in SPARSE or any(r.get(c) for r in records)]
        heads = [HEADERS.get(c, c) for c in show]
        body = []
        for r in records:
            cells = []
            for c in show:
                v = r.get(c)
                if c == "summary" and r["status"] != "ok" and r.get("reason"):
                    v = f"{r['status']}: {r['reason']}"
                elif c == "kind" and r.get("action"):
                    v = f"{v} {r['action']}"
                elif c == "run_id" and r.get("runs_dir") is None and isinstance(v, str):
                    v = _where(v, 90 if src == "runs" else 60)
                cells.append(R.cell(v))
            body.append(cells)
        right = {i for i, c in enumerate(show) if c not in BASE and c not in ("target", "method", "database")}
        fold = {i for i, c in enumerate(show) if c in FOLDED}
        sys.stdout.write(R.table(heads, body, right, max_cell=90 if src == "runs" else 60,
                                 width=terminal_width(out), fold=fold))
        dirs = ", ".join(r["runs_dir"] for r in index if r["runs_dir"] is not None)
        idx = "; ".join(f"index {r['read']} read, {r['reused']} reused" + ("" if r["written"] or not r["not_written"]
                        else f" (not saved: {r['not_written']})") for r in index if r["runs_dir"] is not None)
        elsewhere = sum(1 for r in records if r.get("runs_dir") is None)
        out.print(f"{len(records)} run{'s' if len(records) != 1 else ''}"
                  + (f", {doc['damaged']} damaged" if doc["damaged"] else "") + f" in {dirs} ({idx})"
                  + (f"; {elsewhere} of them made elsewhere (listed by path, from the run registry "
                     f"{next(r['registry'] for r in index if r['runs_dir'] is None)})" if elsewhere else ""),
                  markup=False, highlight=False)
    emit(doc, args, render)
    return 0
