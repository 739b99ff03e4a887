"""MariaDB/InnoDB through the engine interface (workloads/engine.py): OLTP with sysbench, backups.

The managed server is workloads/mariadb.Server (mariadb-install-db as the unprivileged `mysql` user, a
private socket and port, InnoDB's parts placed: data, redo, undo, temp, binlog); `--dsn mysql://...`
attaches to the user's server (mariadb.Attached), where dbtier creates one `dbtier_*` database and
drops only it; there `--place data=DIR` creates dbtier's tables with DATA DIRECTORY='DIR' (the one
placement a user's server allows without changing its settings), reads back where each table's file is,
and removes the DIR/<database> directory InnoDB left (when the server is local and it is empty). The driver is sysbench (workloads/sysbench.py) for the sysbench workloads and
workloads/mariadb_tpcc.py for tpcc (imported when used).

A point: sysbench's own figures, with the device and CPU Sampler around the measured run and, as its
`extra`, the wait sampler (workloads/sql/mariadb_waits.sql on its own client session, every half
second -> parsers.innodb.session_classes); InnoDB's counters (mariadb_status.sql) before and after. The
point is assembled by `innodb_point`, pure, with the PostgreSQL point's keys where `pg` becomes
`innodb`.
"""

from __future__ import annotations

import configparser
import contextlib
import os
import re
import shutil
from collections import Counter
from importlib import resources
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from dbtier.core.debris import Claim, temp_dir
from dbtier.core.errors import DbtierError, expect
from dbtier.measure import executor
from dbtier.workloads.parsers.innodb import (bypasses_page_cache, counters_delta, innodb_bottleneck, innodb_figures, innodb_read_path,
                                 session_classes, status_values)
from dbtier.workloads.parsers.oltp import NOT_MEASURED_REMOTE, Evidence, throttles_of, wait_shares
from dbtier.model.placement import INNODB_MATRIX
from dbtier.workloads.parsers.sysbench import WORKLOADS as SYSBENCH_WORKLOADS, MysqlTarget, layout, sysbench_seconds
from dbtier.workloads.backup import MARIADB_METHODS
from dbtier.workloads.engine import Engine, ServerSpec
from dbtier.workloads.settings import BadValue, EngineOptions, Option
from dbtier.workloads.mariadb import (DATA_DIRECTORY_ROLES, DSN_PLACE_REFUSED, FLUSH_METHODS, INDEX_REFUSED, ROLES,
                                      TABLE_FILES_MARIADB, TABLE_FILES_MYSQL, USER, Attached, Server, Settings,
                                      data_directory_clause, data_directory_failure, durable, find_binaries,
                                      local_host, parse_dsn, redact_mysql_dsn, table_placement)

DATABASE = "dbtier_bench"          # the managed server's benchmark database
# innodb_log_file_size's default in MariaDB 10.11 (dbtier does not change it): the redo kept on disk
REDO_BYTES = 96 * 2**20
# The raw deltas kept with the InnoDB figures: point["innodb"][key] <- SHOW GLOBAL STATUS name
RAW_DELTAS = {"buffer_pool_reads": "Innodb_buffer_pool_reads",
              "buffer_pool_read_requests": "Innodb_buffer_pool_read_requests",
              "data_reads": "Innodb_data_reads", "data_writes": "Innodb_data_writes",
              "log_bytes": "Innodb_os_log_written", "fsyncs": "Innodb_data_fsyncs",
              "row_lock_waits": "Innodb_row_lock_waits"}
WAIT_COLUMNS = ("conn_id", "command", "state", "trx_state", "event_id", "in_progress", "event_name", "operation",
                "nesting_event_id")
_SIZE = re.compile(r"(\d+)([KMGT]?)", re.I)


def _sql(name: str) -> str:
    return resources.files("dbtier.workloads").joinpath("sql", name).read_text()


def size_bytes(text: str) -> int:
    """MariaDB's size syntax (128M, 1G, 134217728) -> bytes."""
    m = _SIZE.fullmatch(text.strip())
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())


def buffer_pool_size(text: str) -> str:
    """--buffer-pool-size: a MariaDB size of at least 8M, as MariaDB spells it (an option's check)."""
    try:
        n = size_bytes(text)
    except ValueError:
        raise BadValue(f"{text!r} is not a size: a number with an optional K, M, G or T, e.g. 128M") from None
    if n < 8 * 2**20:
        raise BadValue(f"{text!r}: InnoDB's buffer pool needs at least 8M")
    return text.strip().upper()


def whole(text: str) -> int:
    """A whole number >= 0 (an option's check)."""
    try:
        n = int(text)
    except ValueError:
        raise BadValue(f"{text!r} is not a whole number") from None
    if not 0 <= n < 2**32:
        raise BadValue(f"{text!r}: from 0 to 4294967295")
    return n


def on_off(text: str) -> bool:
    t = text.strip().lower()
    if t not in ("on", "off"):
        raise BadValue(f"{text!r}: on or off")
    return t == "on"


@dataclass(frozen=True)
class MariaDBOptions(EngineOptions):
    """MariaDB's options as given to `bench oltp` (`bench backup` takes none: the defaults)."""
    buffer_pool_size: str = "128M"
    flush_log_at_trx_commit: int = 1
    sync_binlog: int = 1
    doublewrite: bool = True
    flush_method: str = "O_DIRECT"
    binlog: bool = False


def _given(opts: EngineOptions) -> MariaDBOptions:
    """opts as MariaDB's (options another engine's, or none: each at its default)."""
    return opts if isinstance(opts, MariaDBOptions) else MariaDBOptions(opts.kind)


def settings_of(conf: Mapping[str, str]) -> Settings:
    """The [mariadbd] settings dict (Settings.conf(), as the result keeps it) -> Settings again (pure).
    The binary log is on exactly when sync_binlog is in it (conf() writes it only then)."""
    known = {"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_doublewrite", "innodb_flush_method",
             "performance_schema", "max_connections", "performance-schema-instrument",
             "performance-schema-consumer-events-waits-current", "sync_binlog", "binlog_format"}
    d = Settings()
    return Settings(
        innodb_buffer_pool_size=str(conf.get("innodb_buffer_pool_size", d.innodb_buffer_pool_size)),
        innodb_flush_log_at_trx_commit=int(conf.get("innodb_flush_log_at_trx_commit", d.innodb_flush_log_at_trx_commit)),
        sync_binlog=int(conf.get("sync_binlog", d.sync_binlog)),
        innodb_doublewrite=str(conf.get("innodb_doublewrite", "ON")).upper() == "ON",
        innodb_flush_method=str(conf.get("innodb_flush_method", d.innodb_flush_method)),
        binlog="sync_binlog" in conf,
        performance_schema=str(conf.get("performance_schema", "ON")).upper() == "ON",
        max_connections=int(conf.get("max_connections", d.max_connections)),
        extra={k: str(v) for k, v in conf.items() if k not in known})


def dsn_password(env: Mapping[str, str], home: Path) -> str | None:
    """The password for --dsn: MYSQL_PWD, else `password` of [client] or [mysql] in ~/.my.cnf (pure but for
    reading that file); None when neither has one."""
    if env.get("MYSQL_PWD"):
        return env["MYSQL_PWD"]
    cnf = home / ".my.cnf"
    if not cnf.is_file():
        return None
    cp = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None)
    try:
        cp.read_string(cnf.read_text(errors="replace"))
    except configparser.Error:
        return None
    for section in ("client", "mysql"):
        if cp.has_option(section, "password") and cp.get(section, "password"):
            return cp.get(section, "password").strip().strip("'\"")
    return None


# The user's server's variables that decide durability (--dsn), read with SHOW GLOBAL VARIABLES
SERVER_VARIABLES = ("innodb_flush_log_at_trx_commit", "innodb_doublewrite", "innodb_flush_method",
                    "innodb_buffer_pool_size", "log_bin", "sync_binlog")


def server_conf(rows: list[list[str]]) -> dict[str, str]:
    """SHOW GLOBAL VARIABLES rows (name, value) of a user's MySQL or MariaDB server -> Settings.conf()'s
    shape, so settings_of() and durable() read it (pure). MySQL 8.0.30+'s doublewrite modes:
    DETECT_AND_RECOVER repairs torn pages (ON), DETECT_ONLY does not (OFF). A variable the server lacks
    (innodb_flush_method is deprecated in MariaDB 11) is left out; sync_binlog only with log_bin ON."""
    v = {r[0].lower(): r[1] for r in rows if len(r) >= 2}
    out: dict[str, str] = {}
    for name in ("innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_flush_method"):
        if v.get(name) not in (None, ""):
            out[name] = v[name]
    if "innodb_doublewrite" in v:
        out["innodb_doublewrite"] = "ON" if v["innodb_doublewrite"].upper() in ("ON", "1", "DETECT_AND_RECOVER") else "OFF"
    if v.get("log_bin", "OFF").upper() in ("ON", "1"):
        out["sync_binlog"] = v.get("sync_binlog", "0")
    return out


def parse_wait_rows(text: str) -> list[dict[str, str | None]]:
    """mariadb --batch --skip-column-names output of mariadb_waits.sql -> row dicts (NULL -> None)."""
    rows = []
    for line in text.splitlines():
        if line.strip():
            f = line.split("\t")
            rows.append({k: (None if v == "NULL" else v) for k, v in zip(WAIT_COLUMNS, f)})
    return rows


def innodb_point(driven: dict[str, Any], overall: dict[str, Any], series: list[dict[str, Any]],
                 wait_counts: Mapping[str, int], wait_samples: int, wait_error: str | None,
                 before: Mapping[str, float], after: Mapping[str, float], cpus: int, remote: bool,
                 sampler_cpu_s: float, driver: str = "sysbench",
                 throttles: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
    """One MariaDB point (pure): the driver's figures (workloads/sysbench.run_point's point), the Sampler's
    overall() and series(), the sessions' wait classes counted over the samples, and SHOW GLOBAL STATUS
    before and after -> the point with pgbench.run_point's keys, `innodb` where PostgreSQL has `pg`.
    `throttles`: an emulated tier's limits by device ({read_iops, write_iops}), for the bottleneck."""
    dev_figs = [{"device": d, "iops": v["iops"], "read_iops": v["read_iops"], "read_ios": v["read_ios"],
                 "write_iops": v["write_iops"], "read_merged_iops": v.get("read_merged_iops", 0.0),
                 "write_merged_iops": v.get("write_merged_iops", 0.0), "mbps": v["mbps"], "await_ms": v["await_ms"],
                 "busy_pct": v["busy_pct"], "queue": v["queue"], "read_bytes": v["read_bytes"],
                 "write_bytes": v["write_bytes"]} for d, v in (overall.get("devices") or {}).items()]
    worst = max(dev_figs, key=lambda d: d["busy_pct"], default={"await_ms": 0.0, "busy_pct": 0.0, "queue": 0.0})
    cpu = overall.get("cpu") or {"busy_pct": 0.0, "iowait_pct": 0.0, "user_pct": 0.0, "system_pct": 0.0}
    clients = int(driven["clients"])
    overhead = dict(driven.get("overhead") or {})
    client_cores = float(overhead.get("client_cpu_cores") or 0.0)
    shares = wait_shares(dict(wait_counts))
    states = sum(wait_counts.values())
    kind, why = innodb_bottleneck(Evidence(cpu["busy_pct"], cpu["iowait_pct"], client_cores, max(1, min(clients, cpus)),
                                           shares, worst["await_ms"], worst["busy_pct"], worst["queue"],
                                           wait_samples=states, wait_error=wait_error, remote=remote,
                                           devices_measured=bool(dev_figs), cpus=cpus,
                                           throttles=throttles_of(dev_figs, throttles)), driver=driver)
    delta = counters_delta(before, after)
    seconds = driven.get("duration_s") or driven.get("wall_s") or overall.get("seconds") or 0.0
    figures = innodb_figures(delta, seconds, driven.get("transactions") or None) if seconds > 0 else {}
    innodb = {**figures, **{k: delta.get(name) for k, name in RAW_DELTAS.items()}}
    wall = driven.get("wall_s") or overall.get("seconds") or 0.0
    overhead["sampler_cpu_pct_of_machine"] = 100.0 * sampler_cpu_s / wall / cpus if wall > 0 else None
    return {
        **driven,
        "cpu_util": cpu, "devices": dev_figs, "bottleneck": kind, "bottleneck_evidence": why,
        "waits": shares, "wait_samples": {"backend_states": states, "samples": wait_samples, "error": wait_error},
        "not_measured": list(NOT_MEASURED_REMOTE) if remote else [],
        "sampled_s": overall.get("seconds"),
        # the cache guard's evidence: pages InnoDB read from its files against the devices' read I/Os
        "read_path": innodb_read_path(delta, sum(d["read_ios"] for d in dev_figs), remote=remote,
                                      devices_measured=bool(dev_figs)),
        "innodb": innodb,
        "overhead": overhead,
        "series": series,
    }


class WaitSession:
    """One mariadb client session kept open for the wait samples (its own connection, so sampling opens
    no connection per sample and its CPU is not counted as the driver's)."""

    MARK = "--dbtier-end--"

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.sql = _sql("mariadb_waits.sql")
        self.proc = executor.start([*argv, "--batch", "--skip-column-names", "--unbuffered"], env=env, stdin=True)

    def sample(self) -> Counter:
        try:
            out = self.proc.exchange(f"{self.sql}\nSELECT '{self.MARK}';\n", self.MARK, timeout_s=10)
        except OSError as exc:
            raise RuntimeError(f"the wait sampling session ended ({self._stderr() or exc})") from None
        return session_classes(parse_wait_rows(out))

    def _stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        try:
            return " | ".join(self.proc.communicate(timeout_s=2)[1].strip().splitlines()[-2:])
        except Exception:  # noqa: BLE001 - only for the message
            return ""

    def close(self) -> None:
        self.proc.stop(grace_s=2)


class MariaDBEngine(Engine):
    name = "mariadb"
    label = "sysbench (MariaDB)"
    kinds = ("oltp", "backup")
    roles = ROLES
    backup_methods = tuple(MARIADB_METHODS)
    refused_roles = {"index": INDEX_REFUSED}
    dsn_roles = DATA_DIRECTORY_ROLES
    dsn_place_refused = DSN_PLACE_REFUSED
    workloads = ("tpcc", *SYSBENCH_WORKLOADS)
    matrix = INNODB_MATRIX
    buffer_name = "innodb_buffer_pool_size"
    options_type = MariaDBOptions
    # mariadbd's memory outside the buffer pool (performance_schema's tables, log buffer, threads): a
    # 140 MiB budget with a 32 MiB pool was OOM-killed at start; the memory budget adds this on top
    server_base_bytes = 256 * 2**20

    def __init__(self, spec: ServerSpec) -> None:
        super().__init__(spec)
        self.server: Server | None = None
        self.attached: Attached | None = None
        self.target: MysqlTarget | None = None
        self.work: Path | None = None         # prepare's output and the --dsn password file, until close
        self._work_claim: Claim | None = None
        self.loaded: dict[str, Any] = {}
        self.copied: set[Path] = set()
        # --dsn --place data=DIR: the tables' directory, the DIR/<database> InnoDB makes (a local server's,
        # None when it was there before or the server is elsewhere) and where each table's file really is
        self.data_dir: str | None = None
        self.db_dir: Path | None = None
        self.table_files: dict[str, str | None] = {}

    # Set by open(): the managed server (without --dsn) or the user's (with it), sysbench's target and
    # working directory. Each read as a RuntimeError, a fault in the caller, before it is set.
    @property
    def _server(self) -> Server:
        return expect(self.server, "no managed MariaDB server: the engine is not open, or is on --dsn")

    @property
    def _attached(self) -> Attached:
        return expect(self.attached, "no --dsn MariaDB server: the engine is not open, or manages its own")

    @property
    def _target(self) -> MysqlTarget:
        return expect(self.target, "the MariaDB engine is not open")

    @property
    def _work(self) -> Path:
        return expect(self.work, "the MariaDB engine is not open (or already closed)")

    # ------------------------------------------------------------------ options
    @classmethod
    def check(cls) -> None:
        from dbtier.workloads.sysbench import find_sysbench
        find_binaries()
        find_sysbench()

    @classmethod
    def options(cls, kind: str) -> tuple[Option, ...]:
        if kind != "oltp":
            return ()
        g = "MariaDB (--engine mariadb)"
        return (Option("--buffer-pool-size", "128M", parse=buffer_pool_size, group=g,
                       help="innodb_buffer_pool_size (default 128M, small so that reads reach the storage)"),
                Option("--flush-log-at-trx-commit", 1, parse=int, choices=(1, 2, 0), group=g,
                       help="innodb_flush_log_at_trx_commit: 1 durable (default); 2 and 0 lose up to a second"),
                Option("--sync-binlog", 1, parse=whole, metavar="N", group=g,
                       help="sync_binlog with --binlog on (default 1: durable)"),
                Option("--doublewrite", True, parse=on_off, metavar="on|off", group=g,
                       help="innodb_doublewrite (default on; off: a torn page cannot be repaired)"),
                Option("--flush-method", "O_DIRECT", choices=FLUSH_METHODS, group=g,
                       help="innodb_flush_method (default O_DIRECT)"),
                Option("--binlog", False, parse=on_off, metavar="on|off", group=g,
                       help="the binary log (default off)"))

    @classmethod
    def settings(cls, opts: EngineOptions, clients: list[int]) -> dict[str, Any]:
        """The [mariadbd] settings of the managed server's my.cnf (the result keeps them)."""
        o = _given(opts)
        s = Settings(innodb_buffer_pool_size=o.buffer_pool_size,
                     innodb_flush_log_at_trx_commit=o.flush_log_at_trx_commit, sync_binlog=o.sync_binlog,
                     innodb_doublewrite=o.doublewrite, innodb_flush_method=o.flush_method, binlog=o.binlog,
                     max_connections=max(clients) + 10)
        s.check()
        return s.conf()

    @classmethod
    def durability(cls, settings: Mapping[str, Any]) -> tuple[bool, str]:
        return durable(settings_of(settings))

    @classmethod
    def method(cls, duration_s: float, rate: float | None) -> dict[str, str]:
        out = {"latency": "sysbench's per-transaction histogram" + (
            "; under --rate service time only: the time a transaction queued in sysbench is not counted "
            "(its queue length is kept as max_queue_length)" if rate else "")}
        if duration_s != sysbench_seconds(duration_s):
            out["duration_note"] = (f"sysbench --time takes whole seconds: --duration {duration_s:g} ran "
                                    f"{sysbench_seconds(duration_s)} s per point; TPS divides by the time sysbench "
                                    "measured (duration_s of each point)")
        return out

    @classmethod
    def check_dsn(cls, dsn: str) -> None:
        parse_dsn(dsn)

    @classmethod
    def shown_dsn(cls, dsn: str) -> str:
        return redact_mysql_dsn(dsn)

    @classmethod
    def dsn_is_local(cls, dsn: str) -> bool:
        return local_host(parse_dsn(dsn).host)

    @classmethod
    def buffer_share(cls, settings: dict[str, Any]) -> int:
        """With O_DIRECT (10.11's default) InnoDB reads bypass the page cache: the pool is all the cache
        there is, so it gets the whole cache part, whose default is then a quarter of the data at least 32 MiB
        (measure.cgroup.budget_parts: the data set stays 4x the cache). Through the page cache, a quarter, as
        PostgreSQL."""
        return 1 if bypasses_page_cache(settings.get("innodb_flush_method")) else 4

    @classmethod
    def buffer_text(cls, opts: EngineOptions) -> str:
        return str(_given(opts).buffer_pool_size)

    @classmethod
    def buffer_request_bytes(cls, opts: EngineOptions) -> int | None:
        return size_bytes(_given(opts).buffer_pool_size)

    @classmethod
    def log_reserve_bytes(cls, opts: EngineOptions) -> int:
        return REDO_BYTES

    # ------------------------------------------------------------------ server
    def open(self) -> None:
        if self.spec.dsn:
            self.attached = Attached(self.spec.dsn)
            self.attached.open()
            self.work, self._work_claim = temp_dir("dbtier-mariadb-", "sysbench working directory")
            pw = dsn_password(os.environ, Path.home())
            from dbtier.workloads.sysbench import password_config
            d = self.attached.dsn
            self.target = MysqlTarget(user=d.user or os.environ.get("USER") or "root", db=self.attached.database,
                                      host=d.host, port=d.port,
                                      config_file=password_config(self.work, pw) if pw else None)
            self.data_dir = self.spec.placement.get("data")
            if self.data_dir and local_host(d.host):
                mine = Path(self.data_dir) / self.attached.database
                self.db_dir = None if mine.exists() else mine   # removed at close only if InnoDB made it
            return
        self.server = Server(self.spec.dir, self.spec.placement, settings_of(self.spec.settings),
                             port=self.spec.port, os_user=self.spec.os_user)
        self.server.__enter__()
        self.work, self._work_claim = temp_dir("dbtier-mariadb-", "sysbench working directory")
        self.server.query(f"CREATE DATABASE `{DATABASE}`")
        self.target = MysqlTarget(user=USER, db=DATABASE, socket=str(self.server.socket))

    def placement(self) -> dict[str, str]:
        if self.server is None:
            out = {r: "server" for r in ROLES if r != "binlog"}
            if self.data_dir:   # DATA DIRECTORY: the tables' directory, read back after the load
                dirs = {os.path.dirname(f) for f in self.table_files.values() if f}
                out["data"] = dirs.pop() if len(dirs) == 1 else os.path.join(self.data_dir, self._attached.database)
            return out
        return self.server.placement()

    def server_settings(self) -> dict[str, str] | None:
        """--dsn: the user's server's durability settings (server_conf), read from it."""
        if self.attached is None:
            return None
        names = ", ".join(f"'{n}'" for n in SERVER_VARIABLES)
        return server_conf(self.attached.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})"))

    def alive(self) -> bool:
        if self.server is not None:
            return self.server.alive()
        return self.attached is not None

    def server_log(self) -> Path | None:
        return Path(self.server.log_path) if self.server and self.server.log_path else None

    def close(self) -> None:
        try:
            if self.server is not None:
                self.server.close()
            elif self.attached is not None:
                self.attached.close()
                if self.db_dir is not None:
                    with contextlib.suppress(OSError):   # only the directory InnoDB made, only when empty
                        self.db_dir.rmdir()
        finally:
            if self.work is not None:
                shutil.rmtree(self.work, ignore_errors=True)
                self.work = None
                assert self._work_claim is not None     # temp_dir() set both
                self._work_claim.release()

    def query(self, sql: str) -> list[list[str]]:
        """SQL in the benchmark database; a dead managed server is said in words."""
        try:
            if self.attached is not None:
                return self.attached.query(sql, database=self.attached.database)
            return self._server.query(f"USE `{DATABASE}`; {sql}")
        except DbtierError:
            if self.server is not None and not self.server.alive():
                raise DbtierError(f"MariaDB is no longer running; the server log ends:\n{self.server.log_tail(12)}",
                                  "finished points are kept; see the server log in the run directory") from None
            raise

    def client_argv(self) -> tuple[list[str], dict[str, str]]:
        if self.attached is not None:
            return ([self.attached.bin["mariadb"], *self.attached.client_args(),
                     f"--database={self.attached.database}"], dict(os.environ))
        server = self._server
        return ([server.bin["mariadb"], *server.client_args(), f"--database={DATABASE}"], server.client_env())

    # ------------------------------------------------------------------ OLTP
    def load(self, workload: str, warehouses: int, scale: int, log: Callable[[str], None]) -> dict[str, Any]:
        options = data_directory_clause(self.data_dir) if self.data_dir else ""
        try:
            if workload == "tpcc":
                from dbtier.workloads import mariadb_tpcc
                argv, env = self.client_argv()
                # the client's connection options (socket or host/port, user), without --database
                rec = mariadb_tpcc.load(self._target, argv[1:-1], env, warehouses, self._work, log,
                                        table_options=options)
            else:
                from dbtier.workloads import sysbench
                rec = sysbench.prepare(self._target, workload, scale, self._work, binary=sysbench.find_sysbench(),
                                       table_options=options)
                tables = ", ".join(f"`sbtest{i}`" for i in range(1, rec["tables"] + 1))
                self.query(f"ANALYZE TABLE {tables}")   # fresh statistics: information_schema's sizes come from them
        except DbtierError as exc:
            said = exc.message + (self.work / "sysbench-prepare.txt").read_text(errors="replace") \
                if self.work and (self.work / "sysbench-prepare.txt").exists() else exc.message
            failure = data_directory_failure(self.data_dir, said) if self.data_dir else None
            if failure is not None:
                raise failure from exc
            raise
        if self.data_dir:
            rec["data_directory"] = self._read_back_tables(self.data_dir)
        self.loaded = rec
        rows = self.query("SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.TABLES "
                          "WHERE table_schema = DATABASE()")
        rec["database_bytes"] = int(float(rows[0][0])) if rows and rows[0] else None
        return rec

    def _read_back_tables(self, data_dir: str) -> dict[str, Any]:
        """Where each of dbtier's tables' files really is (information_schema), all in DATA DIRECTORY's
        DIR/<database>/, else a DbtierError; with the device under it when the server is local."""
        from dbtier.measure.machine import devices_for
        try:
            rows = self.query(TABLE_FILES_MARIADB)
        except DbtierError:   # MySQL 8 names them differently
            rows = self.query(TABLE_FILES_MYSQL)
        tables = [r[0] for r in self.query("SELECT TABLE_NAME FROM information_schema.TABLES "
                                           "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'")]
        attached = self._attached
        db = attached.database
        self.table_files, outside = table_placement(tables, rows, data_dir, db)
        if outside:
            where = "; ".join(f"{t}: {self.table_files[t] or 'no file of its own'}" for t in outside[:3])
            raise DbtierError(f"the server did not put dbtier's tables in DATA DIRECTORY {data_dir} ({where})",
                              "DATA DIRECTORY needs innodb_file_per_table=ON on your server; or leave --place out")
        directory = os.path.join(data_dir, db)
        local = local_host(attached.dsn.host) and os.path.isdir(directory)   # as dsn_is_local(spec.dsn)
        devices = devices_for([directory]) if local else []
        return {"requested": data_dir, "directory": directory, "tables": dict(sorted(self.table_files.items())),
                "local": local, "device": devices[0] if devices else None,
                "source": "information_schema.INNODB_SYS_TABLESPACES (MariaDB) or INNODB_DATAFILES (MySQL 8)"}

    def bound_memory(self, procs: str, buffer_bytes: int | None, before_start: Callable[[], object]) -> None:
        server = self._server
        server.cgroup_procs = procs
        server.restart({"innodb_buffer_pool_size": str(buffer_bytes)} if buffer_bytes else None,
                       before_start=before_start)

    def status(self) -> dict[str, float]:
        rows = self.query(_sql("mariadb_status.sql"))
        return status_values((r[0], r[1]) for r in rows if len(r) >= 2)

    def _keep_load_output(self, raw_dir: Path) -> None:
        for f in sorted(self.work.glob("*.txt")) if self.work else []:
            if f not in self.copied:
                shutil.copy(f, raw_dir / f.name)
                self.copied.add(f)

    def run_point(self, workload: str, clients: int, duration_s: float, warmup_s: float, warehouses: int,
                  rate: float | None, raw_dir: Path, devices: list[str], tag: str) -> dict[str, Any]:
        from dbtier.measure.sampler import Sampler
        self._keep_load_output(raw_dir)
        before = self.status()
        argv, env = self.client_argv()
        waits = WaitSession(argv, env)
        box: dict[str, Sampler] = {}

        @contextlib.contextmanager
        def around():
            with Sampler(devices, interval_s=0.5, extra=waits.sample) as s:
                box["s"] = s
                yield s
        server = self.server
        log_tail = (lambda: server.log_tail(12)) if server else (lambda: "")
        try:
            if workload == "tpcc":
                from dbtier.workloads import mariadb_tpcc
                driven = mariadb_tpcc.run_point(self._target, clients, duration_s, warmup_s, warehouses, rate, raw_dir,
                                                tag, around=around, alive=self.alive, log_tail=log_tail,
                                                query=self.query)
            else:
                from dbtier.workloads import sysbench
                n_tables, table_size = layout(self.loaded["scale"], self.loaded["tables"])
                driven = sysbench.run_point(self._target, workload, clients, duration_s, warmup_s, rate, raw_dir, tag,
                                            tables=n_tables, table_size=table_size, binary=sysbench.find_sysbench(),
                                            around=around, alive=self.alive, log_tail=log_tail)
        finally:
            waits.close()
        after = self.status()
        s = box["s"]
        counts: Counter = sum((x.extra for x in s.samples if x.extra), Counter())
        return innodb_point(driven, s.overall(), s.series(), counts,
                            sum(1 for x in s.samples if x.extra is not None), s.extra_error, before, after,
                            os.cpu_count() or 1, remote=self.server is None, sampler_cpu_s=s.cpu_s,
                            throttles=self.spec.options.get("throttles"))

    # ------------------------------------------------------------------ backup
    def backup_source(self, scale: float) -> dict[str, Any]:
        return self.load("sysbench-rw", 1, max(1, int(scale)), lambda m: None)

    def backup(self, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
        from dbtier.workloads.backup import mariadb_backups
        if self.server is None:
            raise DbtierError("bench backup --engine mariadb needs the managed server",
                              "mariadb-backup reads the server's files; leave --dsn out")
        return mariadb_backups(self.server, to_dir, methods, devices, src_dev, dst_dev, on_result, repeat)

