"""The checks of `dbtier bench oltp`'s options that their argparse types cannot make (they depend on the
engine and on each other), run before anything starts: each failure one DbtierError naming the option."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from dbtier.cli import options as argtypes
from dbtier.cli.settings_options import engine_options
from dbtier.core.errors import DbtierError
from dbtier.core.units import human_bytes
from dbtier.measure import slowtier
from dbtier.model.placement import matrix_steps
from dbtier.workloads.engine import Engine, parse_placement

MAX_CLIENTS = 10_000            # max_connections is clients + 10


def workload(args: argparse.Namespace, cls: type[Engine]) -> str:
    """The workload asked for, or the engine's default (tpcc where it has it); one it lacks is refused."""
    if args.workload is None:
        return "tpcc" if "tpcc" in cls.workloads else cls.workloads[0]
    if args.workload not in cls.workloads:
        raise DbtierError(f"the {cls.name} engine has no workload {args.workload!r}",
                          f"with --engine {cls.name}, choose from {', '.join(cls.workloads)}")
    return args.workload


def _clients(xs: list[int] | str) -> list[int]:
    """The sweep's client counts, ascending, each once (--clients is parsed by argtypes.int_list)."""
    if isinstance(xs, str):
        xs = argtypes.int_list(1, MAX_CLIENTS)(xs)
    return sorted(set(xs))


def _check(args: argparse.Namespace, cls: type[Engine]) -> None:
    # each number is checked by its option's type and again by workloads.oltp.OltpRequest (a request built
    # by hand); what is checked here needs the engine and the other options
    if args.dsn is not None:
        cls.check_dsn(args.dsn)
        given = cls.server_options_given(engine_options(cls, "oltp", args))
        if given:
            raise DbtierError(f"{given[0]} with --dsn: with --dsn dbtier reads your server's own settings and "
                              "never changes them", "set it on your server, and leave the option out")
    if args.dsn and args.placement_matrix:
        raise DbtierError("--placement-matrix needs the managed cluster, not --dsn",
                          f"it moves the server's own parts; {cls.dsn_place_refused}")
    if args.place and args.placement_matrix:
        raise DbtierError("--place and --placement-matrix cannot be combined", "use one of them")
    if args.dsn and getattr(args, "memory", None) is not None:
        shown = args.memory if isinstance(args.memory, str) else human_bytes(args.memory)  # 1G, not 1073741824
        raise DbtierError(f"--memory {shown} needs the managed cluster, not --dsn",
                          "dbtier bounds only a server it starts; size your server's memory yourself")


def _steps(args: argparse.Namespace, cls: type[Engine]) -> list[tuple[str, dict[str, str]]]:
    if args.placement_matrix:
        parts = [x.strip() for x in args.placement_matrix.split(",")]
        if len(parts) != 2 or not all(parts):
            raise DbtierError(f"--placement-matrix takes FAST,SLOW (got {args.placement_matrix!r})",
                              "for example --placement-matrix /mnt/nvme,/mnt/hdd")
        if os.path.realpath(parts[0]) == os.path.realpath(parts[1]):
            raise DbtierError(f"--placement-matrix: {parts[0]} is given twice", "pass two different directories")
        fast, slow = (os.path.abspath(x) for x in parts)   # the result and the report say where, absolutely
        args.placement_matrix = f"{fast},{slow}"
        return matrix_steps(fast, slow, cls.matrix)
    placement = parse_placement(args.place, cls.roles, cls.refused_roles)
    if args.dsn:
        cls.check_dsn_placement(placement)   # directories on the server's host, as given
    else:
        placement = {role: os.path.abspath(d) for role, d in placement.items()}
    return [("single", placement)]


def checked(args: argparse.Namespace, cls: type[Engine]) -> tuple[list[int], list[tuple[str, dict[str, str]]],
                                                                   slowtier.Emulation | None]:
    """Everything about bench oltp's options that their types cannot check, before anything starts:
    the sweep's clients, the placement steps and the emulated tier, or a DbtierError naming the option."""
    _check(args, cls)
    clients = _clients(args.clients)
    steps = _steps(args, cls)
    emulation = slowtier.parse(args.emulate) if args.emulate else None
    if emulation and args.dsn:
        raise DbtierError("--emulate needs the managed cluster, not --dsn", "dbtier emulates only tiers it places")
    if (emulation and not args.dsn and not args.placement_matrix and "data" not in steps[0][1]
            and os.path.realpath(args.dir) == os.path.realpath(emulation.dir)):
        # --dir is where the unplaced cluster goes: emulating it puts the whole datadir on the tier
        steps = [(name, {**pl, "data": os.path.abspath(args.dir)}) for name, pl in steps]
    if emulation and not any(os.path.realpath(d) == os.path.realpath(emulation.dir)
                             for _, pl in steps for d in pl.values()):
        raise DbtierError(f"--emulate {args.emulate}: {emulation.dir} is not one of the placement's directories",
                          "name --dir, the slow directory of --placement-matrix FAST,SLOW, or one of --place")
    ready(cls, [] if args.dsn else steps)   # --dsn: the server resolves the directories on its host
    return clients, steps, emulation


def ready(cls: type[Engine], steps: list[tuple[str, dict[str, str]]]) -> None:
    """The engine installed and every directory of the placement steps there (the lab's steps too)."""
    cls.check()
    for _, placement in steps:
        for role, d in placement.items():
            if not Path(d).is_dir():
                raise DbtierError(f"--place {role}={d}: no such directory", "create it, or pass an existing directory")
