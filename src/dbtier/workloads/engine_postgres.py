"""PostgreSQL through the engine interface (workloads/engine.py): OLTP with pgbench, TPC-H, pg_basebackup.

The managed server is workloads/postgres.Cluster (initdb as an unprivileged OS user, a private
socket and port, tablespaces for placed indexes and temp, WAL with initdb -X); `--dsn` attaches to
the user's server, where dbtier creates one `dbtier_*` database and drops only it. psycopg loads
when a server is opened, not at start-up.
"""

from __future__ import annotations

import shutil
import time
from importlib import resources
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from dbtier.core.debris import temp_dir
from dbtier.core.errors import expect
from dbtier.workloads.parsers.oltp import WORKLOADS, pgbench_seconds
from dbtier.model.placement import MATRIX
from dbtier.workloads.backup import PG_METHODS
from dbtier.workloads.engine import Engine, ServerSpec
from dbtier.workloads.postgres import ROLES, Cluster, Settings, find_bindir
from dbtier.workloads.settings import PG_SHARED_BUFFERS, EngineOptions, Option, pg_memory, pg_memory_bytes, pg_time

if TYPE_CHECKING:
    import psycopg

    from dbtier.workloads.pgbench import Database


@dataclass(frozen=True)
class PostgresOptions(EngineOptions):
    """PostgreSQL's options as given: `bench oltp` takes all four, `bench dss` shared_buffers alone (its
    default there 256MB), `bench backup` none."""
    shared_buffers: str = "128MB"
    synchronous_commit: str = "on"
    checkpoint_timeout: str = "5min"
    max_wal_size: str = "1GB"


def _given(opts: EngineOptions) -> PostgresOptions:
    """opts as PostgreSQL's (options another engine's, or none: each at its default)."""
    return opts if isinstance(opts, PostgresOptions) else PostgresOptions(opts.kind)


# What the DSS indexes are, as the load record says.
TPCH_PG_INDEXES = "primary keys; lineitem (l_partkey, l_suppkey), orders (o_custkey), partsupp (ps_suppkey)"


class PostgresEngine(Engine):
    name = "postgres"
    label = "pgbench (PostgreSQL)"
    kinds = ("oltp", "dss", "backup")
    roles = ROLES
    backup_methods = tuple(PG_METHODS)
    workloads = WORKLOADS
    matrix = MATRIX
    buffer_name = "shared_buffers"
    dsn_place_refused = ("on your server dbtier creates only its own database: placing PostgreSQL's parts takes "
                         "tablespaces and a WAL directory, which dbtier makes only in a cluster it created")
    options_type = PostgresOptions

    def __init__(self, spec: ServerSpec) -> None:
        super().__init__(spec)
        self.cluster: Cluster | None = None
        self.db: Database | None = None
        self.conn: psycopg.Connection | None = None
        self.texts: dict[int, str] = {}
        self.db_path: Path | None = None
        self.temp_path: Path | None = None
        self.scale: int | None = None    # the pgbench scale loaded (None for tpcc): each point checks it

    # Set by open(): the database (either mode) and the managed cluster (without --dsn); by connect(): the
    # DSS query connection. Each read as a RuntimeError, a fault in the caller, before it is set.
    @property
    def _db(self) -> Database:
        return expect(self.db, "the PostgreSQL engine is not open")

    @property
    def _cluster(self) -> Cluster:
        return expect(self.cluster, "no managed PostgreSQL cluster: the engine is not open, or is on --dsn")

    @property
    def _conn(self) -> psycopg.Connection:
        return expect(self.conn, "no PostgreSQL query connection: connect() makes it")

    # ------------------------------------------------------------------ options
    @classmethod
    def check(cls) -> None:
        find_bindir()

    @classmethod
    def options(cls, kind: str) -> tuple[Option, ...]:
        if kind == "oltp":
            return (Option("--shared-buffers", "128MB", parse=PG_SHARED_BUFFERS,
                           help="default 128MB; under a memory budget at most a quarter of it"),
                    Option("--synchronous-commit", "on", choices=("on", "off", "local", "remote_write")),
                    Option("--checkpoint-timeout", "5min", parse=pg_time(30, 86400),
                           help="PostgreSQL checkpoint_timeout, 30s to 1d (default 5min)"),
                    Option("--max-wal-size", "1GB", parse=pg_memory(32 * 1024, 2**31 * 1024.0, example="1GB"),
                           help="PostgreSQL max_wal_size, at least 32MB (default 1GB)"))
        if kind == "dss":
            return (Option("--shared-buffers", "256MB", parse=PG_SHARED_BUFFERS,
                           help="postgres: shared_buffers (default 256MB)"),)
        return ()

    @classmethod
    def settings(cls, opts: EngineOptions, clients: list[int]) -> dict[str, Any]:
        """The server's settings as postgresql.auto.conf gets them (the result keeps them)."""
        o = _given(opts)
        s = Settings(shared_buffers=o.shared_buffers)
        if o.kind == "oltp":
            s = Settings(shared_buffers=o.shared_buffers, synchronous_commit=o.synchronous_commit,
                         checkpoint_timeout=o.checkpoint_timeout, max_wal_size=o.max_wal_size,
                         max_connections=max(clients) + 10)
        return s.conf()

    @classmethod
    def durability(cls, settings: dict[str, Any]) -> tuple[bool, str]:
        """Not durable when synchronous_commit is off (the last commits are lost on a crash) or fsync off
        (the database itself may be corrupt after one)."""
        if str(settings.get("fsync", "on")).lower() in ("off", "false", "0"):
            return False, "fsync=off: PostgreSQL never flushes to the device; a crash can corrupt the database"
        if str(settings.get("synchronous_commit", "on")).lower() in ("off", "false", "0"):
            return False, ("synchronous_commit=off: a commit returns before its WAL is flushed (the last "
                           "commits are lost on a crash)")
        return True, f"synchronous_commit={settings.get('synchronous_commit', 'on')}, fsync on"

    @classmethod
    def method(cls, duration_s: float, rate: float | None) -> dict[str, str]:
        out = {"latency": "per-transaction pgbench logs" + ("; from the scheduled start (open loop)" if rate else "")}
        if duration_s != pgbench_seconds(duration_s):
            # pgbench -T takes whole seconds; every rate divides by the time pgbench measured
            out["duration_note"] = (f"pgbench -T takes whole seconds: --duration {duration_s:g} ran "
                                    f"{pgbench_seconds(duration_s)} s per point; TPS, TPM and NOPM divide by the "
                                    "time pgbench measured (duration_s of each point)")
        return out

    @classmethod
    def buffer_text(cls, opts: EngineOptions) -> str:
        return str(_given(opts).shared_buffers)

    @classmethod
    def buffer_request_bytes(cls, opts: EngineOptions) -> int | None:
        return pg_memory_bytes(_given(opts).shared_buffers, plain_kb=8)

    @classmethod
    def log_reserve_bytes(cls, opts: EngineOptions) -> int:
        return pg_memory_bytes(_given(opts).max_wal_size, plain_kb=1024)

    # ------------------------------------------------------------------ server
    def open(self) -> None:
        from dbtier.workloads.pgbench import Database
        if self.spec.dsn:
            self.db = Database(dsn=self.spec.dsn)
        else:
            self.cluster = Cluster(self.spec.dir, self.spec.placement, Settings(extra=dict(self.spec.settings)),
                                   port=self.spec.port, os_user=self.spec.os_user)
            self.cluster.__enter__()
            self.db = Database(self.cluster)
            self.db_path = Path(self.cluster.placement()["data"])
            self.temp_path = Path(self.cluster.placement()["temp"])
        self.db.create()

    def placement(self) -> dict[str, str]:
        if self.cluster is None:
            return {r: "server" for r in ROLES}
        return self.cluster.placement()

    # The user's server's settings that decide durability and what dbtier otherwise sets (--dsn).
    SERVER_SETTINGS = ("synchronous_commit", "fsync", "full_page_writes", "shared_buffers", "checkpoint_timeout",
                       "max_wal_size", "max_connections")

    def server_settings(self) -> dict[str, Any] | None:
        """--dsn: the user's server's own settings, read with SHOW (dbtier set none of them there)."""
        if self.cluster is not None or self.db is None:
            return None
        from dbtier.workloads.pgbench import one_row
        with self.db.connect() as c:
            return {n: one_row(c.execute(f"SHOW {n}"))[0] for n in self.SERVER_SETTINGS}

    def alive(self) -> bool:
        return self.db.alive() if self.db is not None else False

    def server_log(self) -> Path | None:
        return Path(self.cluster.log_path) if self.cluster and self.cluster.log_path else None

    def close(self) -> None:
        try:
            self.close_conn()
        finally:
            if self.cluster is not None:
                self.cluster.close()
            elif self.db is not None:
                self.db.drop()

    # ------------------------------------------------------------------ OLTP
    def load(self, workload: str, warehouses: int, scale: int, log: Callable[[str], None]) -> dict[str, Any]:
        from dbtier.workloads.pgbench import load
        done = load(self._db, workload, warehouses, scale, log)
        self.scale = done["scale"]
        return done

    def bound_memory(self, procs: str, buffer_bytes: int | None, before_start: Callable[[], object]) -> None:
        cluster = self._cluster
        cluster.cgroup_procs = procs
        cluster.restart({"shared_buffers": f"{buffer_bytes // 1024}kB"} if buffer_bytes else None,
                        before_start=before_start)

    def run_point(self, workload: str, clients: int, duration_s: float, warmup_s: float, warehouses: int,
                  rate: float | None, raw_dir: Path, devices: list[str], tag: str) -> dict[str, Any]:
        from dbtier.workloads.pgbench import run_point
        return run_point(self._db, workload, clients, duration_s, warmup_s, warehouses, rate, raw_dir, devices, tag,
                         scale=self.scale, throttles=self.spec.options.get("throttles"))

    # ------------------------------------------------------------------ DSS: TPC-H in the managed cluster
    def connect(self) -> None:
        self.close_conn()
        self.conn = self._db.connect()
        self.conn.execute(f"SET work_mem = '{self.spec.options.get('memory_limit') or '64MB'}'")
        self.conn.execute("SET max_parallel_workers_per_gather = 2")

    def load_tpch(self, scale: float) -> dict[str, Any]:
        from dbtier.workloads.dss import TPCH_TABLES, dbgen_csv, generate, queries_text
        from dbtier.workloads.pgbench import one_row
        t0 = time.monotonic()
        generator = self.spec.options.get("generator") or "dbgen"
        self.texts = queries_text()
        staging, claim = temp_dir("dbtier-tpch-", "TPC-H staging", self._cluster.default_dir)
        try:
            if generator == "tpchgen":
                generate(scale, staging, "csv")
            else:
                dbgen_csv(scale, staging)
            self.connect()
            conn = self._conn
            conn.execute(resources.files("dbtier.workloads").joinpath("sql", "tpch_pg_schema.sql").read_text())
            rows = {}
            for t in TPCH_TABLES:
                with conn.cursor() as cur, cur.copy(f"COPY {t} FROM STDIN (FORMAT csv, HEADER true)") as cp, \
                        open(staging / f"{t}.csv", "rb") as f:
                    while chunk := f.read(1 << 20):
                        cp.write(chunk)
                rows[t] = one_row(conn.execute(f"SELECT count(*) FROM {t}"))[0]
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            claim.release()
        for t, key in (("region", "r_regionkey"), ("nation", "n_nationkey"), ("part", "p_partkey"),
                       ("supplier", "s_suppkey"), ("partsupp", "ps_partkey, ps_suppkey"),
                       ("customer", "c_custkey"), ("orders", "o_orderkey"), ("lineitem", "l_orderkey, l_linenumber")):
            conn.execute(f"ALTER TABLE {t} ADD PRIMARY KEY ({key})")
        # Foreign-key indexes, as PostgreSQL TPC-H kits add: without lineitem(l_partkey)
        # the correlated subqueries of Q17 and Q20 rescan lineitem per part.
        for name, cols in (("lineitem_part_supp", "lineitem (l_partkey, l_suppkey)"),
                           ("orders_cust", "orders (o_custkey)"), ("partsupp_supp", "partsupp (ps_suppkey)")):
            conn.execute(f"CREATE INDEX {name} ON {cols}")
        conn.execute("VACUUM ANALYZE")
        size = one_row(conn.execute("SELECT pg_database_size(current_database())"))[0]
        return {"seconds": time.monotonic() - t0, "database_bytes": size, "rows": rows,
                "generator": f"{generator} (CSV), COPY into PostgreSQL", "indexes": TPCH_PG_INDEXES}

    def run_query(self, q: int) -> list[tuple]:
        return self._conn.execute(self.texts[q]).fetchall()

    # ------------------------------------------------------------------ backup
    def backup_source(self, scale: float) -> dict[str, Any]:
        return self.load("tpcb", 1, int(scale), lambda m: None)

    def backup(self, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
        from dbtier.workloads.backup import pg_backups
        return pg_backups(self._cluster, to_dir, methods, devices, src_dev, dst_dev, on_result, repeat)
