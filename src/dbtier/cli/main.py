"""`dbtier` entry point: one module per subcommand, each with register() and run()."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

from dbtier import __version__
from dbtier.cli.options import Parser
from dbtier.core.errors import DbtierError

# Module name under dbtier.cli for each subcommand, in help order.
SUBCOMMANDS = ["lab", "probe", "bench", "report", "show", "compare", "catalog", "plan", "history", "simulate"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(  # dbtier's error format for option errors too
        prog="dbtier",
        description="Where should this database live, and what will that cost?",
    )
    parser.add_argument("--version", action="version", version=f"dbtier {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"dbtier.cli.{name}").register(sub)
    return parser


def _sigterm(signum, frame):  # SIGTERM cleans up like Ctrl-C
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except DbtierError as exc:
        print(f"dbtier: error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  next: {exc.hint}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("dbtier: interrupted; finished steps are kept in the run directory", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 141
