"""What the `dbtier runs` verbs share: their options, the runs directories, --since, the catalogue (the
refreshed indexes in a locked DuckDB connection) and the command's own Run."""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
from typing import Any

from dbtier.cli.common import Run, add_name_option
from dbtier.core.errors import DbtierError
from dbtier.core.units import UnitError, parse_duration

DEFAULT_RUNS_DIR = "runs"       # where every command writes its runs by default (results/store.RunDir)


def add_runs_options(p: argparse.ArgumentParser, writes: bool = False) -> None:
    g = p.add_argument_group("runs and output")
    g.add_argument("--runs-dir", dest="runs_dirs", action="append", metavar="DIR",
                   help="a runs directory to read (repeat for several; default ./runs, where dbtier writes runs)"
                        + ("; this command's own run directory goes in the first" if writes else ""))
    g.add_argument("--json", action="store_true", help="print the result document (JSON) on stdout")
    g.add_argument("--out", metavar="DIR", help="write this command's run directory here"
                   + ("" if writes else " (it makes none otherwise: it only reads, like show and compare)"))
    g.add_argument("--force", action="store_true", help="with --out: replace an existing run directory whole")
    add_name_option(g)


def add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--where", metavar="EXPR", help="a SQL boolean expression over the columns, e.g. "
                   "\"host = 'db1' AND started_at > '2025-01-01'\" (with --kind, the kind's figures too)")
    p.add_argument("--since", metavar="DATE", help="runs started at or after DATE (2025-03-01, "
                   "2025-03-01T12:00, in UTC) or within a duration back from now (7d, 12h)")


def roots(args: argparse.Namespace) -> list[str]:
    return list(getattr(args, "runs_dirs", None) or [DEFAULT_RUNS_DIR])


def parse_since(text: str) -> _dt.datetime:
    """--since as naive UTC: a date or time (UTC unless it says otherwise), or a duration back from now."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    try:
        return now - _dt.timedelta(seconds=parse_duration(text))
    except (UnitError, OverflowError):
        pass
    try:
        t = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise DbtierError(f"--since {text!r}: not a date, time or duration",
                          "e.g. --since 2025-03-01, --since 2025-03-01T12:00Z or --since 7d") from None
    return t.astimezone(_dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t


def catalogue(args: argparse.Namespace, dirs: list[str] | None = None,
              registry: bool = False) -> tuple[Any, list[Any]]:
    """(a locked DuckDB connection over the runs, each runs directory's refresh) for the command's dirs;
    `registry`: the runs made elsewhere too (dbtier.core.runlog), their refresh last."""
    from dbtier.runsdb import scan, views
    progress = _progress(args)
    try:
        done = [scan.refresh(r, progress) for r in (dirs or roots(args))]
        reg = None
        if registry:
            listed = {os.path.realpath(os.path.join(r.root, rid)) for r in done
                      for rid in r.table.column("run_id").to_pylist()}
            reg = scan.refresh_registered(listed, progress)
    finally:
        if progress is not None:
            progress.close()
    con = views.connect([(r.root, r.table) for r in done], reg.table if reg is not None else None)
    return con, done + ([reg] if reg is not None else [])


class _Bar:
    """A progress bar on stderr while a cold index reads thousands of documents (a terminal only)."""

    def __init__(self) -> None:
        self.p: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.p is None:
            from rich.console import Console
            from rich.progress import Progress
            self.p = Progress(console=Console(stderr=True), transient=True)
            self.p.start()
            self.task = self.p.add_task("reading result documents", total=total)
        self.p.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()


def _progress(args: argparse.Namespace) -> _Bar | None:
    return _Bar() if not getattr(args, "json", False) and sys.stderr.isatty() else None


def make_run(args: argparse.Namespace, action: str, params: dict[str, Any], writes: bool = False,
             inputs: list[str] | None = None) -> Run:
    ns = argparse.Namespace(out=args.out, force=args.force, runs_dir=roots(args)[0] if writes else None,
                            name=getattr(args, "name", None))
    return Run(f"runs.{action}", ns, {"action": action, "runs_dirs": roots(args), **params}, inputs=inputs or [],
               read_only=not writes)
