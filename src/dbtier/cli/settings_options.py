"""The engines' own settings on the command line: the options each engine declares for a bench kind
(workloads/settings.Option) registered with the bench's parser, and the typed options the engine reads
(its EngineOptions dataclass) built back from the parsed arguments; PostgreSQL's memory and time units as
argparse types for the options the commands declare themselves (bench dss --memory-limit, lab).

The checks are workloads/settings.py's. Here they are argparse types: a value they refuse is named with
the reason, exit 2 before anything starts, like every option of cli/options.py, and a value they accept
is returned as written, so the server gets exactly what the user typed.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable

from dbtier.cli.options import named
from dbtier.workloads import settings as ws

if TYPE_CHECKING:
    from dbtier.workloads.engine import Engine


def argtype(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """An option check of workloads/settings.py as an argparse type: BadValue becomes argparse's error with
    its message; another ValueError is argparse's own `invalid <type> value` (the check's name)."""
    def conv(text: str) -> Any:
        try:
            return check(text)
        except ws.BadValue as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return named(getattr(check, "__name__", "value"), conv)


def pg_memory(lo_kb: float, hi_kb: float, plain_kb: float | None = None,
              example: str = "128MB") -> Callable[[str], str]:
    """A PostgreSQL memory setting (128MB, 1GB, 512kB) as an argparse type (workloads.settings.pg_memory)."""
    return argtype(ws.pg_memory(lo_kb, hi_kb, plain_kb, example))


def pg_time(lo_s: float, hi_s: float, example: str = "5min") -> Callable[[str], str]:
    """A PostgreSQL time setting (30s, 5min, 1h) as an argparse type (workloads.settings.pg_time)."""
    return argtype(ws.pg_time(lo_s, hi_s, example))


def add_engine_options(parser: argparse.ArgumentParser, cls: type[Engine], kind: str) -> None:
    """The engine's own settings as options of `bench KIND`, in the order it declares them (those with a
    group under that heading)."""
    groups: dict[str, Any] = {}
    for o in cls.options(kind):
        where: Any = parser
        if o.group is not None:
            if o.group not in groups:
                groups[o.group] = parser.add_argument_group(o.group)
            where = groups[o.group]
        where.add_argument(o.flag, type=None if o.parse is None else argtype(o.parse), default=o.default,
                           choices=o.choices, metavar=o.metavar, help=o.help)


def engine_options(cls: type[Engine], kind: str, args: argparse.Namespace) -> ws.EngineOptions:
    """The engine's own options as given to `bench KIND` (each its default when not given)."""
    return cls.options_type(kind, **{o.dest: getattr(args, o.dest) for o in cls.options(kind)})
