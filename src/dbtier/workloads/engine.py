"""The engine interface: what a database engine implements for dbtier to benchmark it.

`bench oltp`, `bench dss`, `bench backup` and `lab` never name an engine's programs, SQL or
settings. They look the engine up here (`engine_class(name, kind)`), register the options it declares
(`options`), build a `ServerSpec`, and drive it through these calls, in this order:

    cls.check()                  its programs are installed, else one DbtierError with the install hint
    cls.options(kind)            its settings as options of that bench kind (e.g. --shared-buffers), declared
                                 as workloads/settings.Option; the CLI registers them with its parser
    cls.options_type(kind, ...)  what was given for them, typed (a frozen dataclass per engine, a field
                                 per option), built by the CLI from the parsed arguments: `opts` below
    cls.settings(opts, clients)  those options as the server's settings (a dict, kept in the result)
    cls.durability(settings)     (durable, reason): whether a commit survives a power loss with them
    eng = cls(spec)              nothing started yet
    eng.open()                   create a managed throw-away server -- under the placement directories,
                                 as an unprivileged OS user, on 127.0.0.1 at a free port with a private
                                 socket -- or attach to the user's (`spec.dsn`) and create dbtier's own
                                 database there; everything it makes is recorded so close() removes it
    eng.placement()              where each of its roles really is (data, index, log/WAL/redo, undo, temp)
    eng.server_settings()        --dsn: the user's server's own settings, read from it (durability() takes
                                 them: the result's durability is then that server's); None: not read
    eng.load(workload, size)     OLTP: create and fill the schema -> {database_bytes, load_seconds, ...}
    eng.bound_memory(procs, buffer_bytes, before_start)
                                 restart the managed server inside a memory cgroup (its cgroup.procs
                                 file), its buffer pool set to buffer_bytes, with before_start() run while
                                 it is down (dbtier drops its files' cached pages there)
    eng.run_point(...)           drive N clients for a time, sampling server counters, wait events,
                                 devices and CPU -> one point with parsers/oltp.py's keys (tps, lat_ms, ...)
    eng.load_tpch(scale), eng.connect(), eng.run_query(q), eng.close_conn()
                                 DSS: TPC-H loaded, then each query run and timed by workloads/dss
    eng.backup_source(scale), eng.backup(to_dir, methods, devices, src_dev, dst_dev, on_result)
                                 full backups to a directory and to a null sink (workloads/backup)
    eng.alive(), eng.server_log()  whether the server still runs; its log, copied into the run directory
    eng.close()                  stop and remove all it created (managed), or drop only its own database
                                 (--dsn); idempotent; called on exit, on Ctrl-C and on failure

An engine says which bench kinds it drives (`kinds`), which roles it places (`roles`, the names
`--place` accepts; `dsn_roles`: those it can place on the user's server too, and `dsn_place_refused`: why
not the others), its placement study (`matrix`: steps of role -> FAST/SLOW) and its OLTP workloads.
A new engine is one module here with a class implementing the calls its kinds need, plus its
SQL/Lua under workloads/, and one line in ENGINES below; cli/ and the report take its name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from dbtier.core.closing import ClosedOnFailure
from dbtier.core.errors import DbtierError
from dbtier.workloads.settings import EngineOptions, Option
from dbtier.workloads.parsers.oltp import combine_repeats, knee

# name -> "module:Class", imported only when used (a command's start-up stays fast).
ENGINES = {
    "postgres": "dbtier.workloads.engine_postgres:PostgresEngine",
    "duckdb": "dbtier.workloads.engine_duckdb:DuckDBEngine",
    "mariadb": "dbtier.workloads.engine_mariadb:MariaDBEngine",
}
# What each engine drives, known without importing it (argparse's choices are built at start-up).
KINDS = {"postgres": ("oltp", "dss", "backup"), "duckdb": ("dss", "backup"), "mariadb": ("oltp", "backup")}


@dataclass
class ServerSpec:
    """What a bench asks of an engine: where its parts go and how it is reached."""
    dir: Path                                   # where unplaced parts go (the managed server's home)
    placement: dict[str, str] = field(default_factory=dict)   # role -> directory
    dsn: str | None = None                      # the user's server instead of a managed one
    port: int | None = None
    os_user: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)    # the server's own, from cls.settings(opts)
    options: dict[str, Any] = field(default_factory=dict)     # the bench's knobs (DSS: memory_limit, threads,
                                                              # compression, generator)


class Engine(ClosedOnFailure):
    """The base of every engine: the calls of the module docstring. A call an engine's kinds do not
    need raises NotImplementedError (a bug in the bench: it asked an engine for a kind it lacks)."""
    name = ""
    label = ""                                  # what drives it, as the result says ("pgbench (PostgreSQL)")
    kinds: tuple[str, ...] = ()
    roles: tuple[str, ...] = ("data",)
    refused_roles: dict[str, str] = {}        # a role users may ask for that this engine cannot place -> why
    # --dsn: the roles --place takes on the user's server (MariaDB: data, as tables made with DATA DIRECTORY),
    # and why the others are refused there
    dsn_roles: tuple[str, ...] = ()
    dsn_place_refused = "placement moves files, which dbtier only does on a server it created"
    workloads: tuple[str, ...] = ()
    matrix: tuple[tuple[str, dict[str, str]], ...] = ()
    backup_methods: tuple[str, ...] = ()     # what `bench backup --methods` chooses from (all by default)
    backup_fixed: tuple[str, ...] = ()       # ... or, without a choice, what the engine always runs
    conn: Any = None          # DSS: the open query connection
    options_type: type[EngineOptions] = EngineOptions   # what was given for options(kind), typed

    def __init__(self, spec: ServerSpec):
        self.spec = spec

    # -- class-level: before anything starts
    @classmethod
    def check(cls) -> None:
        """Raise DbtierError naming what is missing and how to install it."""

    @classmethod
    def options(cls, kind: str) -> tuple[Option, ...]:
        """The engine's own settings as options of `bench KIND` (its options_type's fields)."""
        return ()

    @classmethod
    def settings(cls, opts: EngineOptions, clients: list[int]) -> dict[str, Any]:
        return {}

    @classmethod
    def durability(cls, settings: dict[str, Any]) -> tuple[bool, str]:
        """Whether a commit survives a power loss with these settings (cls.settings' dict), and why."""
        return True, "the engine's defaults"

    @classmethod
    def method(cls, duration_s: float, rate: float | None) -> dict[str, str]:
        """How the driver measures, for the result's params: `latency` and, where the driver rounds the
        duration asked for, `duration_note`."""
        return {}

    @classmethod
    def check_dsn(cls, dsn: str) -> None:
        """A DbtierError for a --dsn this engine cannot use (password masked); PostgreSQL's by default."""
        from dbtier.workloads.dsn import check_dsn
        check_dsn(dsn)

    @classmethod
    def dsn_is_local(cls, dsn: str) -> bool:
        """Whether a --dsn server runs on this machine (its directories are this machine's)."""
        return False

    @classmethod
    def check_dsn_placement(cls, placement: dict[str, str]) -> None:
        """A DbtierError for a --place role this engine cannot place on the user's server (with why), or a
        directory that is not absolute (the server resolves it on its own host, not in dbtier's cwd)."""
        for role, d in placement.items():
            if role not in cls.dsn_roles:
                raise DbtierError(f"--place {role}={d} with --dsn: {cls.dsn_place_refused}",
                                  f"with --dsn, --place takes {', '.join(cls.dsn_roles)}" if cls.dsn_roles
                                  else "leave --dsn out: dbtier places the parts of a server it creates")
            if not d.startswith("/") or any(ord(c) < 32 for c in d):
                raise DbtierError(f"--place {role}={d} with --dsn: not an absolute path",
                                  "the server resolves the directory on its own host: give it from the root, "
                                  "e.g. --place data=/srv/fast")

    @classmethod
    def server_options_given(cls, opts: EngineOptions) -> list[str]:
        """The engine's own server options (options(kind)) whose value in opts differs from its default, as
        `--name value` (with --dsn they are refused: dbtier never changes a user's server). A value given
        equal to the default cannot be told apart, and changes nothing."""
        out = []
        for o in cls.options(opts.kind):
            v = getattr(opts, o.dest)
            if v != o.default_value():
                shown = ("on" if v else "off") if isinstance(v, bool) else v
                out.append(f"{o.flag} {shown}")
        return out

    @classmethod
    def shown_dsn(cls, dsn: str) -> str:
        """The --dsn fit to print and keep (its password masked)."""
        from dbtier.workloads.dsn import redact_dsn
        return redact_dsn(dsn)

    @classmethod
    def buffer_text(cls, opts: EngineOptions) -> str:
        """The buffer pool as the user wrote it (the memory budget's reason quotes it)."""
        return ""

    @classmethod
    def buffer_share(cls, settings: dict[str, Any]) -> int:
        """The buffer pool's share of a memory budget's cache part, as 1/N: 4 (a quarter) for an engine that
        reads through the OS page cache (the rest is that cache), 1 for one whose reads bypass it."""
        return 4

    @classmethod
    def buffer_request_bytes(cls, opts: EngineOptions) -> int | None:
        """The buffer pool the user asked for, in bytes (a memory budget takes it out of the cache part)."""
        return None

    @classmethod
    def log_reserve_bytes(cls, opts: EngineOptions) -> int:
        """How much log (WAL/redo) the server may keep on disk between checkpoints."""
        return 0

    # -- the server
    def open(self) -> None:
        raise NotImplementedError

    def placement(self) -> dict[str, str]:
        raise NotImplementedError

    def server_settings(self) -> dict[str, Any] | None:
        """--dsn: the user's server's own durability settings, read from it after open(), in settings()'s
        shape (durability() takes them). None: the engine does not read them, and the result's durability
        is that of the settings asked for."""
        return None

    def alive(self) -> bool:
        return True

    def server_log(self) -> Path | None:
        return None

    def close(self) -> None:
        raise NotImplementedError

    @property
    def managed(self) -> bool:
        return self.spec.dsn is None

    # -- OLTP
    def load(self, workload: str, warehouses: int, scale: int, log: Callable[[str], None]) -> dict[str, Any]:
        raise NotImplementedError

    def bound_memory(self, procs: str, buffer_bytes: int | None, before_start: Callable[[], object]) -> None:
        raise NotImplementedError

    def run_point(self, workload: str, clients: int, duration_s: float, warmup_s: float, warehouses: int,
                  rate: float | None, raw_dir: Path, devices: list[str], tag: str) -> dict[str, Any]:
        raise NotImplementedError

    # -- DSS
    def load_tpch(self, scale: float) -> dict[str, Any]:
        raise NotImplementedError

    def connect(self) -> None:
        raise NotImplementedError

    def run_query(self, q: int) -> list[tuple]:
        raise NotImplementedError

    def close_conn(self) -> None:
        """Close the query connection (`conn`, set by connect()) if one is open."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # -- backup
    def backup_source(self, scale: float) -> dict[str, Any]:
        raise NotImplementedError

    def backup(self, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
        """Each method to null and to to_dir, each measured `repeat` times (workloads/backup.py)."""
        raise NotImplementedError

    def opening(self) -> None:
        self.open()


def parse_placement(text: str | None, roles: tuple[str, ...], refused: dict[str, str] | None = None) -> dict[str, str]:
    """'data=/a,wal=/b' -> {'data': '/a', 'wal': '/b'} (pure; checks the engine's roles and repeats).
    `refused`: roles the engine cannot place, with the reason it says (InnoDB's index=)."""
    out: dict[str, str] = {}
    if not text:
        return out
    for part in text.split(","):
        if not part.strip():
            continue
        role, sep, path = part.partition("=")
        role = role.strip()
        if not sep or not path.strip():
            raise DbtierError(f"--place: {part!r} is not ROLE=DIR", "for example --place data=/mnt/fast,wal=/mnt/ssd")
        if refused and role in refused:
            raise DbtierError(f"--place {role}={path.strip()}: {refused[role]}",
                              f"the roles are {', '.join(roles)}")
        if role not in roles:
            raise DbtierError(f"--place: unknown role {role!r}", f"roles are {', '.join(roles)}")
        if role in out:
            raise DbtierError(f"--place: {role} is given twice ({out[role]} and {path.strip()})",
                              "give each role once")
        out[role] = path.strip()
    return out


def names(kind: str) -> tuple[str, ...]:
    """The engines that drive a bench kind, in the registry's order."""
    return tuple(n for n in ENGINES if kind in KINDS[n])


def engine_class(name: str, kind: str) -> type[Engine]:
    """The engine class by name, for a bench kind; DbtierError when it does not drive that kind."""
    if name not in ENGINES:
        raise DbtierError(f"unknown engine {name!r}", f"engines: {', '.join(ENGINES)}")
    if kind not in KINDS[name]:
        raise DbtierError(f"the {name} engine does not run `bench {kind}`",
                          f"for bench {kind}, choose from {', '.join(names(kind))}")
    module, _, cls = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def default_options(cls: type[Engine], kind: str) -> EngineOptions:
    """The engine's own options for `bench KIND`, each at its default (as the command has them when none is
    given)."""
    return cls.options_type(kind, **{o.dest: o.default_value() for o in cls.options(kind)})


def run_sweep(engine: Engine, workload: str, clients: list[int], repeat: int, duration_s: float, warmup_s: float,
              warehouses: int, rate: float | None, raw_dir: Path, devices: list[str], step: str,
              on_clients: Callable[[int], None], on_run: Callable[[], None],
              on_point: Callable[[dict[str, Any], dict[str, Any] | None], None]) -> list[dict[str, Any]]:
    """The sweep over client counts, for any engine: `repeat` runs per count (engine.run_point), the
    point the true medians over them with their spread (parsers.oltp.combine_repeats). on_clients(c)
    before a count, on_run() after each run, and on_point(point, knee over the points so far) after
    each count, so the caller saves and prints as the figures come. Raw files are tagged STEP-cN-rR."""
    points: list[dict[str, Any]] = []
    for c in clients:
        on_clients(c)
        reps = []
        for r in range(repeat):
            tag = f"{step}-c{c}-r{r + 1}"
            reps.append(engine.run_point(workload, c, duration_s, warmup_s, warehouses, rate, raw_dir, devices, tag))
            on_run()
        points.append(combine_repeats(reps))
        on_point(points[-1], knee(points))
    return points
