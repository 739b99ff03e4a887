"""`dbtier runs`: every run under the runs directories as one table; `runs sql`, `runs trend`, `runs check`
(cli/runs/verbs.py, cli/runs/check.py).

The runs are read in place and kept in a cached index per runs directory (dbtier.runsdb.index); the table
and every query are DuckDB over it (dbtier.runsdb.views). Listing, sql and trend only read: like `show` and
`compare` they make a run directory only with --out; `runs check` always writes one (its verdict).
"""

from __future__ import annotations

import argparse
import os
import sys

from dbtier.cli.runs import render as R
from dbtier.cli.runs.render import terminal_width
from dbtier.cli.common import console, emit
from dbtier.cli.runs.common import add_filters, add_runs_options, catalogue, make_run, parse_since
from dbtier.core.errors import DbtierError

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


def known_kinds() -> set[str]:
    from dbtier.cli.main import SUBCOMMANDS
    from dbtier.runsdb.views import VIEWS
    return set(VIEWS) | set(SUBCOMMANDS)


def _order(sort: str, cols: list[str], src: str) -> str:
    words = sort.split()
    desc = sort.startswith("-") or (len(words) == 2 and words[1].lower() == "desc")
    col = sort[1:] if sort.startswith("-") else (words[0] if len(words) == 2 and words[1].lower() in (
        "asc", "desc") else sort)
    if col not in cols:
        raise DbtierError(f"--sort {sort!r}: {src} has no column {col!r}", f"its columns: {', '.join(cols)}")
    return f'"{col}" {"DESC" if desc else "ASC"} NULLS LAST, run_id'


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
    from dbtier.runsdb.extract import SUMMARY_KEYS
    kind = args.kind
    if kind is not None and kind not in known_kinds():
        raise DbtierError(f"--kind {kind!r}: not a kind of run", "one of " + ", ".join(sorted(known_kinds())))
    since = parse_since(args.since) if args.since else None
    where = V.check_where(args.where) if args.where is not None else None
    con, done = catalogue(args, registry=not args.runs_dirs or args.everywhere)
    src = kind if kind in V.VIEWS else "runs"
    cols = V.columns_of(src)
    conds, params = [], []
    if kind is None:
        conds.append("kind IS DISTINCT FROM 'runs'")
    elif src == "runs":
        conds.append("kind = ?")
        params.append(kind)
    if where:
        conds.append(where)
    if since:
        conds.append("started_at >= ?")
        params.append(since)
    sql = (f"SELECT * FROM {src}" + (" WHERE " + " AND ".join(conds) if conds else "")
           + f" ORDER BY {_order(args.sort, cols, src)}")
    names, rows = V.run_query(con, sql, "--where" if where else "runs", hint=f"the columns of {src}: "
                              + ", ".join(cols), params=params)
    run = make_run(args, "list", {"kind": kind, "where": args.where, "since": args.since, "sort": args.sort,
                                  "everywhere": bool(args.everywhere)})
    records = [dict(zip(names, r)) for r in rows]
    doc = run.doc
    doc.update(index=[r.as_dict() for r in done], view=src, query=sql, columns=names, count=len(records),
               damaged=sum(1 for r in records if r["status"] == "damaged"),
               rows=[{k: R.jsonable(v) for k, v in r.items()} for r in records])
    run.finish()
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
        dirs = ", ".join(r.root for r in done if r.registry is None)
        idx = "; ".join(f"index {r.read} read, {r.reused} reused" + ("" if r.written or not r.not_written else
                        f" (not saved: {r.not_written})") for r in done if r.registry is None)
        elsewhere = sum(1 for r in records if r.get("runs_dir") is None)
        out.print(f"{len(records)} run{'s' if len(records) != 1 else ''}"
                  + (f", {doc['damaged']} damaged" if doc["damaged"] else "") + f" in {dirs} ({idx})"
                  + (f"; {elsewhere} of them made elsewhere (listed by path, from the run registry "
                     f"{next(r.registry for r in done if r.registry is not None)})" if elsewhere else ""),
                  markup=False, highlight=False)
    emit(doc, args, render)
    return 0
