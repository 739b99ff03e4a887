"""`dbtier advise SOURCE...`: from a database's own history to where it should live and what each option costs.

Thin: the history is imported (each source's files into a `history import` run inside this run's
directory, or import runs given as they are), then dbtier.advise.call sums it into one requirement (the same
rules `history requirement` and `history consolidate` follow), sizes it on-prem (model/plan/sizing.py) and on
each provider (model/cloud/sizing.py), and puts the options side by side.
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path
from typing import Any

from dbtier.advise import answer
from dbtier.advise.call import PROVIDERS, AdviseRequest, advise
from dbtier.cli.history import imports as history_import
from dbtier.cli import options as argtypes
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.plan.options import add_array_options, add_grade_option, add_prices_option
from dbtier.core.errors import DbtierError
from dbtier.history import SOURCES
from dbtier.results.store import is_run_dir, load_run

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("advise", help="from a database's history to where it should live and what it costs, "
                                      "on-prem and on each cloud",
                       description="Read a database's I/O history (anything `dbtier history import` reads: AWR, DMA, "
                       "SQL Server, PostgreSQL, diskstats, iostat, sar, Prometheus, CloudWatch, Azure Monitor; or "
                       "history runs already made), sum a cluster's instances and several databases into one "
                       "requirement, size it on owned hardware from the catalog and on each cloud provider's "
                       "volumes, and rank the options by their cost over one service life.")
    p.add_argument("sources", nargs="*", metavar="SOURCE",
                   help="exported files, directories or DMA .zip/.tgz collections, or `dbtier history` run directories")
    p.add_argument("--source", "-s", choices=list(SOURCES), help="what the files are (default: told from their "
                   "first bytes)")
    p.add_argument("--cloud", default="aws,azure,gcp", metavar="aws,azure,gcp|none",
                   help="the providers to price (default all three; none: on-prem only)")
    p.add_argument("--instance", default="auto", metavar="NAME|auto",
                   help="the instance or VM whose volume caps bind (auto, the default: the cheapest in the data that "
                        "carries the load sustained); a name belongs to one provider, so give one --cloud with it")
    p.add_argument("--service-years", type=argtypes.positive_float(30), default=5.0, metavar="N",
                   help="the service life every option is priced over (default 5)")
    p.add_argument("--percentile", choices=["95", "99", "max"], default="95",
                   help="which peak of the interval rates to size for (default 95)")
    p.add_argument("--headroom", type=argtypes.nonneg_float(argtypes.MAX_HEADROOM), default=0.3, metavar="FRACTION",
                   help="margin on top of every figure (default 0.3 = 30%%)")
    p.add_argument("--capacity-gb", type=argtypes.positive_float(), metavar="GB",
                   help="capacity to require (default: the allocated size the history reports)")
    p.add_argument("--roles", nargs="?", const="auto", metavar="ROLE=TYPE[:GB],...",
                   help="one design per role the history separates (data, log, temp, archive: AWR's file types, "
                        "PostgreSQL's WAL), on-prem and on each cloud; pin a cloud type and capacity per role as "
                        "`plan size --roles` does (one database's history)")
    add_grade_option(p, "production")
    add_prices_option(p)
    p.add_argument("--current", metavar="RUN_DIR",
                   help="a `dbtier probe` run of the storage the database is on today: whether it already meets "
                        "the requirement, and by what margin")
    p.add_argument("--prometheus", metavar="URL", help="fetch the history from this Prometheus (as `history fetch`)")
    p.add_argument("--start", metavar="TIME", help="with --prometheus: where the history starts (2026-11-01T00:00:00Z, now-7d); with --interval: "
                   "the first snapshot's time of files that carry none")
    p.add_argument("--end", metavar="TIME", help="with --prometheus: where it ends (now)")
    add_array_options(p)
    history_import.read_options(p)
    history_import.timing_options(p, start=False)
    add_output_options(p)
    p.set_defaults(func=run_advise)


def providers(text: str) -> list[str]:
    if text.strip() == "none":
        return []
    got = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in got if x not in PROVIDERS]
    if bad or not got:
        raise DbtierError(f"--cloud {text}: {', '.join(bad) or 'empty'} is not a provider",
                          "give some of aws,azure,gcp, or none")
    return list(dict.fromkeys(got))


# -- the history --------------------------------------------------------------------------------------------

def split_sources(sources: list[str]) -> tuple[list[str], list[str]]:
    """(run directories of `dbtier history`, files to import). A path that does not exist is refused here,
    before anything is made."""
    runs: list[str] = []
    files: list[str] = []
    for s in sources:
        p = Path(s)
        if not p.exists():
            raise DbtierError(f"{s}: no such file or directory", "check the path")
        (runs if p.is_dir() and is_run_dir(p) else files).append(s)
    return runs, files


def history_docs(paths: list[str]) -> list[dict[str, Any]]:
    """Import runs from the run directories given (a consolidation or requirement run stands for the import
    runs it was taken from)."""
    out: list[dict[str, Any]] = []
    for path in paths:
        doc = load_run(path)
        action = (doc.get("params") or {}).get("action")
        if doc.get("command") != "history" or action not in ("import", "consolidate", "requirement"):
            raise DbtierError(f"{path}: not a `dbtier history` run (a {doc.get('command')} run)",
                              "give exported files or `dbtier history import` run directories")
        if action == "import":
            out.append(doc)
        elif action == "consolidate":
            out += history_docs([str(r) for r in doc.get("runs") or []])
        else:
            src = (doc.get("params") or {}).get("run")
            out += history_docs([str(src)]) if src else []
    return out


def import_groups(args: argparse.Namespace, files: list[str]) -> list[tuple[str, list[str]]]:
    """[(source, files)]: the files grouped by the source each is (sniffed, or --source for all)."""
    groups: dict[str, list[str]] = {}
    for f in files:
        src = args.source or history_import.sniff_source([f])
        groups.setdefault(src, []).append(f)
    return list(groups.items())


def import_into(args: argparse.Namespace, run_dir: Path, groups: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    """Each group of files into its own `history import` run inside `run_dir`/history/."""
    docs = []
    for i, (source, files) in enumerate(groups):
        sub = copy.copy(args)
        # the import's progress shows on a terminal (quiet under --json, as the import's own)
        sub.out, sub.force, sub.runs_dir, sub.into, sub.name = (str(run_dir / "history" / f"{i + 1}-{source}"),
                                                                 False, None, None, None)
        _doc, path = history_import.import_into_run(sub, source, files, {"files": files}, inputs=files)
        docs.append(load_run(path))
    return docs


def fetch_into(args: argparse.Namespace, run_dir: Path) -> list[dict[str, Any]]:
    from dbtier.cli.history import fetch as history_fetch
    sub = copy.copy(args)
    sub.out, sub.force, sub.runs_dir, sub.name = str(run_dir / "history" / "prometheus"), False, None, None
    sub.step, sub.match, sub.timeout = None, None, history_fetch.promfetch.DEFAULT_TIMEOUT_S
    _doc, path = history_fetch.fetch_into_run(sub)
    return [load_run(path)]


def current_run(path: str) -> dict[str, Any]:
    try:
        return load_run(path)
    except DbtierError as exc:
        raise DbtierError(f"--current {exc.message}", "give a `dbtier probe` run of the storage the database is "
                          "on today") from None


# -- the command ----------------------------------------------------------------------------------------

def run_advise(args: argparse.Namespace) -> int:
    clouds = providers(args.cloud)
    if args.instance != "auto" and len(clouds) != 1:
        raise DbtierError(f"--instance {args.instance}: an instance belongs to one provider",
                          "give one --cloud with it, e.g. --cloud aws --instance r6i.4xlarge, or --instance auto")
    if args.prometheus and not (args.start and args.end):
        raise DbtierError("--prometheus needs --start and --end", "e.g. --start -7d --end now")
    if not args.sources and not args.prometheus:
        raise DbtierError("no history given", "give exported files, a DMA collection or history run "
                          "directories (dbtier advise awr_sysstat.csv), or --prometheus URL --start --end")
    from dbtier.advise import plan
    # the catalog first: a bad quote file is refused before anything is imported or made
    catalog, prices, graded = plan.prepared_catalog(args.prices, args.grade)
    run_paths, files = split_sources(list(args.sources))
    given = history_docs(run_paths)
    groups = import_groups(args, files)
    current_doc = current_run(args.current) if args.current else None
    if current_doc is not None and current_doc.get("command") not in ("probe", "lab"):
        raise DbtierError(f"--current {args.current}: a {current_doc.get('command')} run, not a probe",
                          "give a `dbtier probe` run of the storage the database is on today")
    params = {"sources": list(args.sources), "cloud": clouds, "instance": args.instance,
              "service_years": args.service_years, "percentile": args.percentile, "headroom": args.headroom,
              "capacity_gb": args.capacity_gb, "current": args.current, "prometheus": args.prometheus,
              "roles": args.roles, "grade": args.grade, "prices": args.prices}
    run = Run("advise", args, params, inputs=[*run_paths, *files, *([args.current] if args.current else []),
                                              *([args.prices] if args.prices else [])])
    docs = given + import_into(args, run.dir.path, groups) + (fetch_into(args, run.dir.path) if args.prometheus
                                                              else [])
    request = AdviseRequest(clouds=tuple(clouds), instance=args.instance, service_years=args.service_years,
                            percentile=args.percentile, headroom=args.headroom, capacity_gb=args.capacity_gb,
                            roles=args.roles, catalog=catalog, prices=prices, grade=graded,
                            data_reduction=args.data_reduction, wide_parity_groups=args.wide_parity_groups,
                            current=current_doc, current_path=args.current)
    res = advise(request, docs, lambda _inputs: run.dir.path)
    run.doc.update(res.to_json())
    run.finish()
    from dbtier.report.html import render_html
    (run.dir.path / "report.html").write_text(render_html([{**run.doc, "_run_dir": str(run.dir.path)}]),
                                              encoding="utf-8")
    emit(run.doc, args, lambda: show(args, run.doc, run.dir.path))
    return 0


def show(args: argparse.Namespace, doc: dict[str, Any], run_dir: Path) -> None:
    out = console(args)
    from rich.markup import escape
    for line in answer.lines(doc["advice"]):
        out.print(escape(line), highlight=False)
    grade = doc["advice"].get("grade")
    if grade:
        out.print(escape(f"On-prem grade {grade['text']}."), highlight=False, style="dim")
    prices = doc.get("prices")
    if prices:
        out.print(escape(f"On-prem prices: {len(prices['applied'])} quote(s) from {prices['file']} replace the "
                         "catalog's."), highlight=False, style="dim")
        for note in prices.get("notes") or []:
            out.print(escape(f"Stale price: {note}"), highlight=False, style="yellow")
    out.print()
    from dbtier.cli.fit import Col, fitted
    from rich.text import Text
    title = (f"options over {doc['advice']['options'][0]['service_years']:g} years, cheapest first "
             "(* recommended)")
    cols = [Col(c, figure=c not in ("where", "what", "binding"), min_width=18 if c == "what" else 10)
            for c in answer.COLUMNS]
    for t in fitted(out.width, title, cols, [[Text(x) for x in r] for r in answer.rows(doc["advice"])], boxed=False):
        out.print(t)
    out.print(f"[dim]Run: {escape(str(run_dir))} (result.json, report.html)[/dim]")
