"""What the `dbtier runs` verbs share: their options, the runs directories, the catalogue's progress on the
terminal, and the command's own Run (made through the calls' `start`, dbtier.runsdb.calls)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from dbtier.cli.common import Run, add_name_option

if TYPE_CHECKING:       # dbtier.runsdb (DuckDB, pyarrow) loads when a verb runs, not when the parser is built
    from dbtier.runsdb import calls


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


def runs_dirs(args: argparse.Namespace) -> tuple[str, ...]:
    """The --runs-dir given (none: the calls read ./runs)."""
    return tuple(getattr(args, "runs_dirs", None) or ())


def roots(args: argparse.Namespace) -> list[str]:
    from dbtier.runsdb import calls
    return calls.roots(runs_dirs(args))


def catalogue(args: argparse.Namespace, dirs: list[str] | None = None,
              registry: bool = False) -> tuple[Any, list[Any]]:
    """(a locked DuckDB connection over the runs, each runs directory's refresh) for the command's dirs;
    `registry`: the runs made elsewhere too (dbtier.core.runlog), their refresh last."""
    from dbtier.runsdb import calls
    return calls.catalogue(dirs or roots(args), registry, reading(args))


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


def reading(args: argparse.Namespace) -> calls.Reading:
    """The calls' `reading`: a bar on a terminal's stderr (not with --json), gone once the indexes are read."""
    @contextlib.contextmanager
    def bar() -> Iterator[_Bar | None]:
        progress = _Bar() if not getattr(args, "json", False) and sys.stderr.isatty() else None
        try:
            yield progress
        finally:
            if progress is not None:
                progress.close()
    return bar


def make_run(args: argparse.Namespace, params: dict[str, Any], writes: bool = False,
             inputs: list[str] | None = None) -> Run:
    """The verb's run of kind runs.ACTION (params' `action`): in memory unless --out, or in the first runs
    directory when the verb `writes` (runs check)."""
    action = params["action"]
    ns = argparse.Namespace(out=args.out, force=args.force, runs_dir=roots(args)[0] if writes else None,
                            name=getattr(args, "name", None))
    return Run(f"runs.{action}", ns, params, inputs=inputs or [], read_only=not writes)


def starter(args: argparse.Namespace, made: list[Run], writes: bool = False) -> calls.Start:
    """The calls' `start`: the verb's run (appended to `made`), its directory when it has one."""
    def start(params: dict[str, Any], inputs: list[str]) -> Path | None:
        made.append(make_run(args, params, writes, inputs))
        return made[0].dir.path if made[0].persist else None
    return start
