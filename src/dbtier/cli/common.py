"""Options and plumbing every subcommand shares (sqlite-utils style).

Every command: `--json` prints the result document on stdout and keeps the
terminal quiet; `--out DIR` names the run directory (default
runs/<UTC timestamp>-<command>).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any, Callable, Iterator

from rich.console import Console

from dbtier.core.errors import DbtierError
from dbtier.measure.machine import machine_info
from dbtier.results.document import finish, new_document
from dbtier.results.store import RunDir, dumps


def add_output_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print the result document (JSON) on stdout")
    g.add_argument("--out", metavar="DIR", help="run directory to write (default runs/<UTC timestamp>-<command>)")
    g.add_argument("--runs-dir", metavar="DIR", default="runs", help="where new run directories go (default ./runs)")


def console(args: argparse.Namespace) -> Console:
    """Terminal output goes to stderr under --json, so stdout carries only the document."""
    quiet = getattr(args, "json", False)
    return Console(stderr=True, quiet=quiet) if quiet else Console(stderr=False)


class Run:
    """A run directory plus its document; `save()` after each step."""

    def __init__(self, command: str, args: argparse.Namespace, params: dict[str, Any],
                 paths: list[str] | None = None, devices: list[str] | None = None):
        self.dir = RunDir.create(command, getattr(args, "out", None), getattr(args, "runs_dir", "runs"))
        self.doc = new_document(command, params, machine_info(paths, devices))
        self.save()

    def save(self) -> None:
        self.dir.write(self.doc)

    def finish(self, status: str = "ok") -> None:
        finish(self.doc, status)
        self.save()

    @contextlib.contextmanager
    def guard(self) -> Iterator["Run"]:
        """Ctrl-C marks the run interrupted, a DbtierError marks it failed with the error recorded;
        either way the document keeps every finished step, and the exception goes on to the CLI."""
        try:
            yield self
        except KeyboardInterrupt:
            self.finish("interrupted")
            raise
        except DbtierError as exc:
            self.doc["errors"].append({"message": exc.message, "hint": exc.hint})
            self.finish("failed")
            raise


def usage(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """The action of a command group called without a subcommand: its help, exit 2."""
    def show(_args: argparse.Namespace) -> int:
        p.print_help()
        return 2
    return show


def emit(doc: dict[str, Any], args: argparse.Namespace, render: Callable[[], None] | None = None) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(dumps(doc).decode())
        sys.stdout.flush()
    elif render is not None:
        render()
