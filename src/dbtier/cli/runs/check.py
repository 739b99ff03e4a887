"""`dbtier runs check RUN --baseline RUN|QUERY`: does RUN hold up against the baseline? For CI.

Exit 0: every headline figure is within the tolerance or the runs' own noise (compare's rule); exit 1:
at least one regressed (listed); exit 2: the check could not be made (bad input, no baseline run, no figure
in common, a durable run against a non-durable one). The verdict is the run document's `check`.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any

from rich.console import JustifyMethod
from rich.table import Table

from dbtier.cli.common import console, emit
from dbtier.cli.markup import esc, lit
from dbtier.cli.options import nonneg_float, positive_int
from dbtier.core.errors import DbtierError
from dbtier.report.figures import core as F
from dbtier.report import summary as FC

_FIGURE_COLS = ("path", "figure_key", "item", "key", "label", "value", "text", "unit", "digits", "better", "detail",
                "median", "min", "max", "n", "spread_pct")


def register(verbs: argparse._SubParsersAction) -> None:
    from dbtier.cli.runs.common import add_runs_options
    from dbtier.runsdb.check import DEFAULT_TOLERANCE_PCT
    c = verbs.add_parser("check", help="a run against a baseline: exit 1 when a headline figure regressed",
                         description="Compare RUN's headline figures with a baseline run, or with the runs a "
                         "query selects (each figure their median, their spread its noise). A figure regresses "
                         "when it is worse by more than the runs' combined spread (at least 5%: compare's rule) "
                         "and by more than --tolerance. Exit 0: none regressed; 1: some did (listed); 2: the "
                         "check could not be made.")
    c.add_argument("run", metavar="RUN", help="the run to check: its directory (or result.json), or its run id "
                   "in the runs directory")
    c.add_argument("--baseline", required=True, metavar="RUN|QUERY",
                   help="a run (directory or run id), or a SQL boolean expression selecting runs of RUN's kind "
                        "(status ok, RUN itself left out), e.g. \"host = 'ci1'\"")
    c.add_argument("--last", type=positive_int(), metavar="N",
                   help="with a QUERY: only the N most recent runs it selects")
    c.add_argument("--tolerance", type=nonneg_float(1000.0), default=DEFAULT_TOLERANCE_PCT, metavar="PCT",
                   help=f"how much worse a figure may be, in percent (default {DEFAULT_TOLERANCE_PCT:g}); "
                        "the runs' own noise applies when larger")
    add_runs_options(c, writes=True)
    c.set_defaults(func=run_check)


def _by_id(con: Any, text: str) -> str | None:
    rows = con.execute("SELECT path FROM runs WHERE run_id = ? ORDER BY path", [text]).fetchall()
    if len(rows) > 1:
        raise DbtierError(f"{text!r} names a run in several runs directories: {', '.join(r[0] for r in rows)}",
                          "pass the run directory itself")
    return rows[0][0] if rows else None


def _looks_like_path(text: str) -> bool:
    return bool(re.fullmatch(r"[^\s'\"=<>!()]+", text)) and ("/" in text or text.endswith(".json"))


def _load(con: Any, text: str, what: str) -> dict[str, Any] | None:
    """A run named by its directory, result.json or run id; None when `text` names none (a query, then)."""
    from dbtier.results.store import load_run
    if os.path.exists(text):
        return load_run(text)
    path = _by_id(con, text)
    if path is not None:
        return load_run(path)
    if what == "RUN" or _looks_like_path(text):
        raise DbtierError(f"{what} {text!r}: no run directory there, and no run with that id in the runs "
                          "directories", "dbtier runs lists them; pass a directory, or --runs-dir DIR")
    return None


def _durable(rows: list[dict[str, Any]]) -> bool | None:
    t = next((r.get("text") for r in rows if r.get("figure_key") == "durability"), None)
    if not isinstance(t, str):
        return None
    return False if t.startswith(F.NOT_DURABLE) else (True if t.startswith("durable") else None)


def _baseline(con: Any, args: argparse.Namespace, run_path: str, kind: str, action: str | None
              ) -> tuple[list[list[dict[str, Any]]], dict[str, Any]]:
    from dbtier.runsdb import extract, views as V
    doc = _load(con, args.baseline, "--baseline")
    if doc is not None:
        bk = extract.kind_of(doc)
        if bk != (kind, action):
            raise DbtierError(f"--baseline {args.baseline} is a run of kind {' '.join(x for x in bk if x)} and RUN "
                              f"of kind {' '.join(x for x in (kind, action) if x)}: check takes runs of one kind",
                              "name a baseline of the same kind, or a query")
        return [extract.figure_rows(doc)], {"how": "run", "runs": [doc["_run_dir"]]}
    src = kind if kind in V.VIEWS else "runs"
    sql = (f"SELECT path, max(started_at) AS t FROM {src} WHERE kind = ? AND action IS NOT DISTINCT FROM ? AND "
           f"status = 'ok' AND path <> ? AND {V.check_where(args.baseline, '--baseline')} GROUP BY path "
           "ORDER BY t DESC NULLS LAST" + (f" LIMIT {int(args.last)}" if args.last else ""))
    _, picked = V.run_query(con, sql, "--baseline", f"the columns of {src}: " + ", ".join(V.columns_of(src)),
                            params=[kind, action, run_path])
    paths = [p for p, _ in picked]
    if not paths:
        raise DbtierError(f"--baseline {args.baseline!r} selects no {kind} run with status ok (other than RUN)",
                          "see what it selects: dbtier runs --kind " + kind + " --where \"...\"")
    cur = con.execute(f"SELECT {', '.join(_FIGURE_COLS)} FROM figures WHERE list_contains(?, path)", [paths])
    by: dict[str, list[dict[str, Any]]] = {p: [] for p in paths}
    for r in cur.fetchall():
        row = dict(zip(_FIGURE_COLS, r))
        by[row["path"]].append(row)
    return list(by.values()), {"how": "query", "query": args.baseline, "last": args.last, "runs": paths}


def run_check(args: argparse.Namespace) -> int:
    from dbtier.cli.runs.common import catalogue, make_run
    from dbtier.runsdb import check, extract
    con, done = catalogue(args)
    doc = _load(con, args.run, "RUN")
    assert doc is not None      # _load raises for the RUN rather than read it as a query
    kind, action = extract.kind_of(doc)
    run_path = os.path.abspath(doc["_run_dir"])
    rows = extract.figure_rows(doc)
    base_runs, base_info = _baseline(con, args, run_path, kind, action)
    mine, theirs = _durable(rows), {_durable(r) for r in base_runs} - {None}
    if mine is not None and theirs - {mine}:
        raise DbtierError(f"RUN is {'durable' if mine else F.NOT_DURABLE}, and the baseline has "
                          f"{'non-durable' if mine else 'durable'} runs: {F.NOT_DURABLE}, so no figure is judged",
                          "compare runs with the same durability (the `durability` column of the oltp view)")
    verdict = check.judge(rows, check.baseline(base_runs), args.tolerance)
    if not verdict["figures"] and not verdict["changed_texts"]:
        raise DbtierError(f"RUN and the baseline have no headline figure in common ({kind})",
                          "check a run against runs of the same kind that measured the same things")
    run = make_run(args, "check", {"run": args.run, "baseline": args.baseline, "last": args.last,
                                   "tolerance_pct": args.tolerance}, writes=True,
                   inputs=[run_path, *base_info["runs"]])
    out_doc = run.doc
    out_doc.update(index=[r.as_dict() for r in done], run={**FC.run_info(doc), "kind": kind, "action": action},
                   baseline=base_info, check=verdict)
    run.finish()
    out = console(args)

    def render() -> None:
        t = Table(title=esc(f"{kind}: {F.run_name(doc)} against {len(base_info['runs'])} baseline run"
                            f"{'s' if len(base_info['runs']) != 1 else ''}"), title_justify="left",
                  caption=f"a regression: worse by more than the threshold (the tolerance, {args.tolerance:g}%, or "
                          "the runs' combined spread, at least 5%, whichever is larger)", caption_justify="left")
        heads: tuple[tuple[str, JustifyMethod], ...] = (
            ("figure", "left"), ("baseline", "right"), ("run", "right"), ("change", "right"), ("threshold", "right"),
            ("verdict", "left"))
        for name, j in heads:
            t.add_column(name, justify=j)
        multi = len({f["item"] for f in verdict["figures"]}) > 1
        for f in verdict["figures"]:
            d = f["digits"]
            colour = {"regression": "bold red", "better": "green"}.get(f["status"], "dim")
            label = (f"{f['item']}: " if f["item"] and multi else "") + f["key"].rsplit(".", 1)[-1]
            t.add_row(lit(label), lit(F.fmt(f["baseline"], d)), lit(F.fmt(f["value"], d) + (f" {f['unit']}" if
                      f["unit"] else "")), lit(f"{f['change_pct']:+.1f}%" if f["change_pct"] is not None else "—"),
                      lit(f"{f['threshold_pct']:.1f}%" if f["threshold_pct"] is not None else "—"),
                      f"[{colour}]{esc(f['status'])}[/]")
        out.print(t)
        for c in verdict["changed_texts"]:
            out.print(f"changed: {esc(c['label'])}: {esc(', '.join(c['baseline']))} -> {esc(c['value'])}",
                      highlight=False)
        if verdict["passed"]:
            out.print(f"[green]pass[/green]: {verdict['judged']} figures judged, none regressed", highlight=False)
        else:
            out.print(f"[bold red]regression[/bold red]: {esc(', '.join(verdict['regressions']))} (exit 1)",
                      highlight=False)
        if run.persist:
            out.print(f"verdict: {esc(str(run.dir.result_path))}", highlight=False, soft_wrap=True)
    emit(out_doc, args, render)
    return verdict["exit_code"]
