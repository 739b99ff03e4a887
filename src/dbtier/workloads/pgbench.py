"""PostgreSQL's OLTP driver: pgbench (and the TPC-C-like scripts) loads, runs one point, samples, judges.

A `Database` is either a managed throw-away cluster (dbtier created it and
removes it) or the user's server by DSN, where dbtier creates and later drops
only its own `dbtier_*` database.
"""

from __future__ import annotations

import concurrent.futures
import glob
import os
import resource
import time
import uuid
from collections import Counter
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import psycopg

from dbtier.core.errors import DbtierError, expect
from dbtier.measure import executor
from dbtier.measure.sampler import Sampler
from dbtier.model.guards import read_path
from dbtier.workloads.parsers.oltp import (NOT_MEASURED_REMOTE, Evidence, bottleneck, check_scale, classify_wait, throttles_of,
                               latency_summary,
                               measured_window, parse_pgbench_log, parse_pgbench_summary, pgbench_seconds, rates,
                               redact, wait_shares)
from dbtier.workloads import tpcc
from dbtier.workloads.dsn import HINT as DSN_HINT, dsn_problem, redact_dsn, shown_dsn
from dbtier.workloads.postgres import Cluster, find_bindir

TPCC_MIX = (("tpcc_new_order", 45), ("tpcc_payment", 43), ("tpcc_order_status", 4), ("tpcc_delivery", 4),
            ("tpcc_stock_level", 4))
READMIX = (("readmix_read", 80), ("readmix_write", 20))


def _sql(name: str) -> str:
    return resources.files("dbtier.workloads").joinpath("sql", name).read_text()


def script_path(name: str) -> str:
    return str(resources.files("dbtier.workloads").joinpath("pgbench", f"{name}.sql"))


def one_row(cur: psycopg.Cursor[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The row of the query just run on `cur` (`one_row(c.execute(sql))`), for a query that always returns
    one: an aggregate without GROUP BY, or SHOW. fetchone() says None when there is no row; here that is a
    fault in the query, named as such."""
    return expect(cur.fetchone(), "a PostgreSQL query that always returns a row returned none")


def _dsn_error(dsn: str, exc: Exception) -> DbtierError:
    problem = dsn_problem(dsn) or redact((str(exc).strip().splitlines() or ["not a connection string"])[0])
    return DbtierError(f"--dsn {shown_dsn(dsn)!r}: not a valid connection string: {problem}", DSN_HINT)


class Database:
    """Where the benchmark database lives; `close()` removes only what dbtier made."""

    def __init__(self, cluster: Cluster | None = None, dsn: str | None = None):
        self.cluster, self.dsn = cluster, dsn
        self.name = "dbtier_bench" if cluster else f"dbtier_{uuid.uuid4().hex[:8]}"
        self.created_db = False
        self.bindir = find_bindir()

    def conninfo(self, dbname: str | None = None) -> str:
        db = dbname or self.name
        if self.cluster:
            return self.cluster.conninfo(db)
        dsn = self._dsn
        try:
            return psycopg.conninfo.make_conninfo(dsn, dbname=db)
        except psycopg.Error as exc:    # ProgrammingError for a string libpq cannot parse
            raise _dsn_error(dsn, exc) from exc

    @property
    def _dsn(self) -> str:
        """`dsn`, for a Database without a cluster (it has one or the other); a RuntimeError, a fault in
        the caller, when it has neither."""
        return expect(self.dsn, "a Database needs a cluster or a DSN")

    def admin_conninfo(self) -> str:
        """Where CREATE/DROP DATABASE run: the cluster's postgres db, or the DSN as the user gave it."""
        return self.cluster.conninfo("postgres") if self.cluster else self._dsn

    def connect(self, dbname: str | None = None, autocommit: bool = True, admin: bool = False) -> psycopg.Connection:
        try:
            return psycopg.connect(self.admin_conninfo() if admin else self.conninfo(dbname),
                                   autocommit=autocommit, connect_timeout=15)
        except psycopg.ProgrammingError as exc:     # a connection string libpq cannot parse
            if not self.dsn:
                raise
            raise _dsn_error(self.dsn, exc) from exc
        except psycopg.OperationalError as exc:
            where = f"--dsn {redact_dsn(self.dsn)!r}" if self.dsn else "the managed cluster"
            msg = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else "connection failed")
            raise DbtierError(f"cannot connect to PostgreSQL at {where}: {msg}",
                              "check the DSN, that the server runs, and that a password (if any) is in "
                              "PGPASSWORD or ~/.pgpass; dbtier never takes one on the command line") from exc

    def create(self) -> None:
        with self.connect(admin=True) as c:
            if self.cluster:
                for stmt in self.cluster.tablespaces_sql():
                    c.execute(stmt)
            c.execute(f'CREATE DATABASE "{self.name}"')
            self.created_db = True

    def drop(self) -> None:
        if not self.created_db or self.cluster:
            return
        # Only the database dbtier created in this run, and only by its own generated name.
        assert self.name.startswith("dbtier_")
        with self.connect(admin=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self.created_db = False

    def alive(self) -> bool:
        return self.cluster.alive() if self.cluster else True

    def pgbench_target(self) -> list[str]:
        return [self.conninfo()]

    def index_tablespace(self) -> str | None:
        return "dbtier_index" if self.cluster and "index" in self.cluster.dirs else None


# ------------------------------------------------------------------ loading


def load(db: Database, workload: str, warehouses: int, scale: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Create and fill the schema; returns what was loaded and how long it took."""
    t0 = time.monotonic()
    its = db.index_tablespace()
    extra: dict[str, Any] = {}
    if workload == "tpcc":
        extra = _load_tpcc(db, warehouses, log)
        with db.connect() as c:
            c.execute(_sql("tpcc_indexes.sql").replace("{ts}", f" USING INDEX TABLESPACE {its}" if its else "")
                      .replace("{its}", f" TABLESPACE {its}" if its else ""))
            c.execute("VACUUM (ANALYZE)")
            size = one_row(c.execute("SELECT pg_database_size(current_database())"))[0]
    else:
        argv = [f"{db.bindir}/pgbench", "-i", "-q", "-I", "dtGvp", "-s", str(scale)]
        if its:
            argv += ["--index-tablespace", its]
        done = executor.run(argv + db.pgbench_target(), timeout_s=3600)
        if done.returncode != 0:
            raise DbtierError(f"pgbench -i failed: {redact(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else '')}",
                              "see the server log in the run directory")
        with db.connect() as c:
            size = one_row(c.execute("SELECT pg_database_size(current_database())"))[0]
    return {"workload": workload, "warehouses": warehouses if workload == "tpcc" else None,
            "scale": scale if workload != "tpcc" else None, "database_bytes": size,
            "load_seconds": time.monotonic() - t0, **extra}


def _load_tpcc(db: Database, warehouses: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Schema, functions and TPC-C's initial rows (generated by workloads/tpcc.py, streamed with COPY)."""
    c_load, c_run = tpcc.c_last_constants()
    now = datetime.now()
    with db.connect() as c:
        c.execute(_sql("tpcc_schema.sql"))
        # NURand's run-time C for C_LAST, fixed for this database (clause 2.1.6.1); an int, not text.
        c.execute(f"CREATE FUNCTION tpcc_c_last_run() RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT {int(c_run)}'")
        c.execute(_sql("tpcc_functions.sql"))

    def copy(copies: list[tuple[str, Any]], what: str) -> None:
        stmt = ""
        try:
            with db.connect(autocommit=False) as c:
                with c.cursor() as cur:
                    for stmt, chunks in copies:
                        with cur.copy(stmt) as cp:
                            for chunk in chunks:
                                cp.write(chunk)
                c.commit()
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or ["the server closed the connection"])[0]
            space = "no space" in first.lower() or "could not extend" in first.lower()
            raise DbtierError(f"loading the tpcc {stmt.split()[1] if stmt else ''} table ({what}) failed: "
                              f"{redact(first)}",
                              "free space under the placement directories and run again" if space else
                              "see the server log in the run directory") from exc

    # The items, then the warehouses in parallel, one connection (and generator) each.
    copy([tpcc.item_copy(tpcc.Gen())], "items")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(warehouses, os.cpu_count() or 1))) as pool:
        def one(w: int) -> None:
            copy(tpcc.warehouse_copies(w, tpcc.Gen(), c_load, now), f"warehouse {w}")
            log(f"warehouse {w} loaded")
        list(pool.map(one, range(1, warehouses + 1)))
    return {"generator": "python + COPY: random alphanumeric a-strings (TPC-C 4.3.2.2)",
            "c_last": {"c_load": c_load, "c_run": c_run}}


# ------------------------------------------------------------------ one point


def pgbench_args(bindir: str, workload: str, clients: int, seconds: float, warehouses: int,
                 log_prefix: str | None, rate: float | None, cpus: int, scale: int | None = None) -> list[str]:
    """The pgbench command line for one point (pure).

    A custom script's `:scale` is pgbench's -s (without it, 1: readmix at --scale 40 would touch the
    first 100,000 of 4,000,000 accounts), so readmix gets the scale the database was loaded at. The
    built-in scripts take theirs from pgbench_branches (pgbench ignores -s there, with a warning)."""
    threads = max(1, min(clients, cpus))
    a = [f"{bindir}/pgbench", "-n", "-c", str(clients), "-j", str(threads), "-T", str(pgbench_seconds(seconds)),
         "-M", "prepared"]
    if workload == "tpcc":
        a += ["-D", f"warehouses={warehouses}"]
        a += [f"--file={script_path(n)}@{w}" for n, w in TPCC_MIX]
    elif workload == "readmix":
        if scale is None:
            raise ValueError("readmix needs the scale the database was loaded at")
        a += ["-s", str(scale)]
        a += [f"--file={script_path(n)}@{w}" for n, w in READMIX]
    else:
        a += ["-b", {"tpcb": "tpcb-like", "select-only": "select-only"}[workload]]
    if rate:
        a += ["-R", str(rate)]
    if log_prefix:
        a += ["-l", f"--log-prefix={log_prefix}"]
    return a


_COUNTERS_SQL = """
SELECT d.blks_read, d.blks_hit, d.temp_bytes, d.xact_commit, d.xact_rollback,
       w.wal_bytes, w.wal_sync, w.wal_sync_time, w.wal_write, w.wal_write_time,
       b.checkpoints_timed + b.checkpoints_req AS checkpoints, b.buffers_backend_fsync
FROM pg_stat_database d, pg_stat_wal w, pg_stat_bgwriter b WHERE d.datname = current_database()
"""


def counters(c: psycopg.Connection, workload: str) -> dict[str, float]:
    cur = c.execute(_COUNTERS_SQL)
    assert cur.description is not None      # a SELECT's result has columns
    row = dict(zip([d.name for d in cur.description], one_row(cur)))
    if workload == "tpcc":
        row["new_orders"] = one_row(c.execute("SELECT sum(d_next_o_id) FROM district"))[0]
    return {k: float(v or 0) for k, v in row.items()}


def run_point(db: Database, workload: str, clients: int, duration_s: float, warmup_s: float, warehouses: int,
              rate: float | None, raw_dir: Path, devices: list[str], tag: str, scale: int | None = None,
              throttles: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
    """One point; `scale`: what the database was loaded at (pgbench's "scaling factor" must say it);
    `throttles`: device -> {read_iops, write_iops} limits of an emulated tier (the bottleneck's evidence)."""
    cpus = os.cpu_count() or 1
    if warmup_s > 0:
        warm = _pgbench(db, pgbench_args(db.bindir, workload, clients, warmup_s, warehouses, None, rate, cpus, scale),
                        raw_dir / f"{tag}-warmup.txt", clients)
        check_scale(parse_pgbench_summary(warm)["scaling_factor"], scale, workload, clients)
    prefix = str(raw_dir / f"{tag}-log")
    wait_conn = db.connect()
    with db.connect() as c:
        before = counters(c, workload)

    def waits() -> Counter:
        rows = wait_conn.execute(
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        ).fetchall()
        return Counter(classify_wait(*r) for r in rows)

    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        with Sampler(devices, interval_s=0.5, extra=waits) as sampler:
            t_run = time.monotonic()
            out = _pgbench(db, pgbench_args(db.bindir, workload, clients, duration_s, warehouses, prefix, rate, cpus,
                                            scale), raw_dir / f"{tag}.txt", clients)
            run_wall = time.monotonic() - t_run
    finally:
        wait_conn.close()
    wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with db.connect() as c:
        after = counters(c, workload)
    summary = parse_pgbench_summary(out)
    check_scale(summary["scaling_factor"], scale, workload, clients)
    lat: list[float] = []
    failed = 0
    for f in sorted(glob.glob(prefix + ".*")):
        with open(f) as fh:
            l, fl = parse_pgbench_log(fh, with_lag=bool(rate))
        lat += l
        failed += fl
    # Rates divide by the time pgbench measured, not the duration asked for: -T is whole seconds.
    measured_s, measured_by = measured_window(summary, run_wall)
    delta = {k: after[k] - before[k] for k in after}
    done = len(lat) if lat else (summary["transactions"] or 0.0)
    r = rates(done, delta["new_orders"] if workload == "tpcc" else None, measured_s)
    overall = sampler.overall()
    remote = db.cluster is None
    wait_counts: Counter[str] = sum((s.extra for s in sampler.samples if s.extra), Counter())
    shares = wait_shares(wait_counts)
    dev_figs = [{"device": d, "iops": v["iops"], "read_iops": v["read_iops"],
                 "read_ios": v["read_ios"], "write_iops": v["write_iops"],
                 "read_merged_iops": v["read_merged_iops"], "write_merged_iops": v["write_merged_iops"],
                 "mbps": v["mbps"], "await_ms": v["await_ms"],
                 "busy_pct": v["busy_pct"], "queue": v["queue"], "read_bytes": v["read_bytes"],
                 "write_bytes": v["write_bytes"]} for d, v in overall["devices"].items()]
    worst = max(dev_figs, key=lambda d: d["busy_pct"], default={"await_ms": 0.0, "busy_pct": 0.0, "queue": 0.0})
    cpu = overall["cpu"] or {"busy_pct": 0.0, "iowait_pct": 0.0, "user_pct": 0.0, "system_pct": 0.0}
    client_cores = ((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)) / wall
    kind, why = bottleneck(Evidence(cpu["busy_pct"], cpu["iowait_pct"], client_cores, max(1, min(clients, cpus)),
                                    shares, worst["await_ms"], worst["busy_pct"], worst["queue"],
                                    wait_samples=sum(wait_counts.values()), wait_error=sampler.extra_error,
                                    remote=remote, devices_measured=bool(dev_figs), cpus=cpus,
                                    throttles=throttles_of(dev_figs, throttles)))
    return {
        "clients": clients, "tps": r["tps"] or 0.0, "tpm": r["tpm"] or 0.0, "nopm": r["nopm"],
        "lat_ms": latency_summary(lat), "transactions": len(lat), "failed": failed + int(summary["failed"]),
        "cpu_util": cpu, "devices": dev_figs, "bottleneck": kind, "bottleneck_evidence": why,
        "waits": shares, "wait_samples": {"backend_states": sum(wait_counts.values()),
                                          "samples": sum(1 for s in sampler.samples if s.extra is not None),
                                          "error": sampler.extra_error},
        "not_measured": list(NOT_MEASURED_REMOTE) if remote else [],
        "rate": rate, "duration_s": measured_s, "duration_source": measured_by, "requested_s": duration_s,
        "pgbench_T_s": pgbench_seconds(duration_s), "sampled_s": overall["seconds"], "warmup_s": warmup_s,
        # pgbench's "scaling factor", checked against the loaded scale (tpcc's scripts take none)
        "pgbench_scale": None if workload == "tpcc" else int(summary["scaling_factor"]),
        # the cache guard's evidence: page reads asked of the OS against read I/Os that reached the devices
        "read_path": read_path(delta["blks_read"], sum(d["read_ios"] for d in dev_figs), remote=remote,
                               devices_measured=bool(dev_figs)),
        "pg": {"blks_read": delta["blks_read"], "blks_hit": delta["blks_hit"],
               "hit_ratio": delta["blks_hit"] / (delta["blks_hit"] + delta["blks_read"])
               if delta["blks_hit"] + delta["blks_read"] else None,
               "wal_bytes": delta["wal_bytes"], "temp_bytes": delta["temp_bytes"],
               "wal_syncs": delta["wal_sync"], "wal_sync_ms": delta["wal_sync_time"],
               "checkpoints": delta["checkpoints"], "backend_fsyncs": delta["buffers_backend_fsync"],
               "commits": delta["xact_commit"], "rollbacks": delta["xact_rollback"]},
        "overhead": {"client_cpu_cores": client_cores, "client_cpu_pct_of_machine": 100.0 * client_cores / cpus,
                     "sampler_cpu_pct_of_machine": 100.0 * sampler.cpu_s / wall / cpus},
        "series": sampler.series(),
        "raw": f"raw/{tag}.txt",
    }


def _pgbench(db: Database, argv: list[str], out_path: Path, clients: int) -> str:
    done = executor.run(argv + db.pgbench_target(), timeout_s=float(argv[argv.index("-T") + 1]) + 600)
    text = done.stdout + ("\n--- stderr ---\n" + done.stderr if done.stderr else "")
    out_path.write_text(redact(text))
    if done.returncode != 0 or "actually processed" not in done.stdout:
        raise pgbench_failure(db, done.stderr or done.stdout, clients)
    return done.stdout


def pgbench_failure(db: Database, text: str, clients: int) -> DbtierError:
    log = db.cluster.log_tail(12) if db.cluster else ""
    if "No space left on device" in text + log:
        return DbtierError(f"the disk filled up during the {clients}-client point (no space left on device):\n{log}",
                           "free space under the placement directories; finished points are kept")
    if not db.alive():
        return DbtierError(f"PostgreSQL died during the {clients}-client point; the server log ends:\n{log}",
                           "finished points are kept; see the server log in the run directory")
    last = [x for x in text.strip().splitlines() if x.strip()][-3:]
    return DbtierError(f"pgbench failed at {clients} clients: {redact(' | '.join(last))}",
                       "see the raw pgbench output in the run directory")
