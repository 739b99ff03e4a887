"""DuckDB through the engine interface (workloads/engine.py): TPC-H and backups of an embedded database.

There is no server: open() makes `dbtier-dss-<id>/` under the data directory (and
`dbtier-dss-temp-<id>/` under the temp directory when one is placed), close() removes them.

With a memory budget (options["memory_budget_bytes"]) the TPC-H queries run in a worker process inside a
memory cgroup of that size (measure/cgroup.py), so the page cache that holds DuckDB's spill files is
bounded with DuckDB's own memory and the spill reaches the temp directory's device; the load and the
backups run in this process. The OOM killer can then only end the worker, which is reported, not dbtier.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from dbtier.core.debris import Claim, new_dir
from dbtier.core.errors import DbtierError, expect
from dbtier.core.files import duck_path, sql_str
from dbtier.workloads.duck_sql import run_sql
from dbtier.workloads.engine import Engine, ServerSpec


class DuckDBEngine(Engine):
    name = "duckdb"
    label = "DuckDB (embedded)"
    kinds = ("dss", "backup")
    roles = ("data", "temp")
    backup_fixed = ("file copy", "EXPORT DATABASE parquet")

    def __init__(self, spec: ServerSpec):
        super().__init__(spec)
        o = spec.options
        self.memory_limit, self.threads = o.get("memory_limit"), o.get("threads")
        self.compression, self.generator = o.get("compression") or "on", o.get("generator") or "tpchgen"
        # tpchgen-cli's text columns (addresses, comments) differ from dbgen's, so the reference
        # answers, made with dbgen, only apply to dbgen data.
        self.id = uuid.uuid4().hex[:8]
        self.created: list[Path] = []
        self.claims: list[Claim] = []     # registry entries of `created` (the watchdog's, if dbtier dies)
        self.conn = None
        self.db_path: Path | None = None
        self.temp_path: Path | None = None
        self.budget_bytes = o.get("memory_budget_bytes")
        self.cgroup = None                 # the queries' memory cgroup (measure/cgroup.py), made on first use
        self.worker: QueryWorker | None = None
        self.memory: dict[str, Any] = {"budget_bytes": self.budget_bytes,
                                       "mechanism": None if self.budget_bytes else "none", "reason": None}

    @classmethod
    def check(cls) -> None:
        from dbtier.workloads.dss import tpch_extension
        tpch_extension()

    def _own(self, parent: Path, name: str) -> Path:
        d = parent / name
        try:
            claim = new_dir(d, "DuckDB database")
        except OSError as exc:
            raise DbtierError(f"{parent} is not writable ({exc.strerror})", "pass a directory you can write to") from exc
        self.created.append(d)
        self.claims.append(claim)
        return d

    def open(self) -> None:
        pl = self.spec.placement
        self.db_path = self._own(Path(pl.get("data") or self.spec.dir), f"dbtier-dss-{self.id}") / "tpch.duckdb"
        self.temp_path = self._own(Path(pl["temp"]), f"dbtier-dss-temp-{self.id}") if pl.get("temp") else \
            self.db_path.parent / "temp"

    def placement(self) -> dict[str, str]:
        return {"data": str(self.db_path), "temp": str(self.temp_path)}

    @property
    def _db_file(self) -> Path:
        """`db_path`, set by open(); a RuntimeError, a fault in the caller, before it."""
        return expect(self.db_path, "the DuckDB engine is not open")

    def connect(self, limited: bool = True) -> None:
        """limited: apply --memory-limit (the query runs; the load uses DuckDB's default), in the budgeted
        worker when there is a memory budget and a cgroup can be made for it."""
        from dbtier.workloads.dss import tpch_extension
        self.close_conn()
        if limited and self.budget_bytes and self._cgroup() is not None:
            self.worker = QueryWorker(self._settings(limited), self.cgroup)
            return
        self.conn = _connect(self._settings(limited), tpch_extension())

    def _settings(self, limited: bool) -> dict[str, Any]:
        return {"db": str(self.db_path), "temp": str(self.temp_path), "threads": self.threads,
                "memory_limit": self.memory_limit if limited else None}

    def _cgroup(self):
        """The queries' memory cgroup, made once (None, with memory["reason"], where none can be)."""
        from dbtier.measure.cgroup import MemoryCgroup
        if self.cgroup is None and self.memory.get("reason") is None:
            cg = MemoryCgroup(self.budget_bytes).open()
            if cg.created:
                self.cgroup = cg
            else:
                self.memory.update(mechanism="none", reason=f"no memory cgroup can be made ({cg.reason}): the "
                                   "queries run unbounded, so their spill may stay in the page cache")
        if self.cgroup is not None:
            self.memory.update(mechanism=self.cgroup.mechanism, reason=None)
        return self.cgroup

    def query_pid(self) -> int:
        """The process the queries run in (the budgeted worker, or this one): its /proc/PID/io."""
        return self.worker.pid if self.worker is not None else os.getpid()

    def close_conn(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        super().close_conn()

    def load_tpch(self, scale: float) -> dict[str, Any]:
        from dbtier.workloads.dss import TPCH_TABLES, generate
        t0 = time.monotonic()
        self.connect(limited=False)
        if self.compression == "off":
            self.conn.execute("SET force_compression = 'uncompressed'")
        if self.generator == "tpchgen":
            # tpchgen-cli (Rust, all cores) writes Parquet beside the database; DuckDB loads it in parallel.
            staging = self._db_file.parent / "staging"
            generate(scale, staging, "parquet")
            for t in TPCH_TABLES:
                run_sql(self.conn, f"CREATE TABLE {t} AS SELECT * FROM "
                        f"read_parquet({sql_str(duck_path(staging / (t + '.parquet')))})")
            shutil.rmtree(staging, ignore_errors=True)
        else:
            run_sql(self.conn, f"CALL dbgen(sf = {scale})")
        run_sql(self.conn, "CHECKPOINT")
        rows = {t: self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TPCH_TABLES}
        return {"seconds": time.monotonic() - t0, "database_bytes": self._db_file.stat().st_size, "rows": rows,
                "generator": "tpchgen-cli (Parquet), loaded by DuckDB" if self.generator == "tpchgen"
                else "duckdb tpch extension dbgen"}

    def run_query(self, q: int) -> list[tuple]:
        if self.worker is not None:
            return self.worker.query(q)
        rows = run_sql(self.conn, f"PRAGMA tpch({q})", fetch=True)
        assert rows is not None     # fetch=True: the rows, a list
        return rows

    def backup_source(self, scale: float) -> dict[str, Any]:
        rec = self.load_tpch(scale)
        self.close_conn()     # the file copy reads a closed, checkpointed database
        return rec

    def backup(self, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
        from dbtier.workloads.backup import duckdb_backups
        return duckdb_backups(self._db_file, to_dir, devices, src_dev, dst_dev, on_result, repeat)

    def close(self) -> None:
        self.close_conn()
        if self.cgroup is not None:
            self.memory["oom_kills"] = self.cgroup.oom_count()
            self.cgroup.close()
            self.cgroup = None
        for d in reversed(self.created):
            shutil.rmtree(d, ignore_errors=True)
        for c, d in zip(self.claims, self.created):
            if not d.exists():
                c.release()
        self.created.clear()
        self.claims.clear()


def _connect(settings: dict[str, Any], extension: str):
    import duckdb
    conn = duckdb.connect(settings["db"])
    conn.execute(f"LOAD {sql_str(extension)}")
    conn.execute(f"SET temp_directory = {sql_str(settings['temp'])}")
    if settings.get("memory_limit"):
        conn.execute(f"SET memory_limit = '{settings['memory_limit']}'")
    if settings.get("threads"):
        conn.execute(f"SET threads = {int(settings['threads'])}")
    conn.execute("SET preserve_insertion_order = false")
    return conn


def _worker_main(pipe, settings: dict[str, Any], extension: str) -> None:
    """The worker: waits until it is inside the cgroup, connects, then runs each query number it is sent
    and sends back ("ok", rows) or ("error", text). Ctrl-C is its parent's to handle: the parent kills it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pipe.recv()
    try:
        conn = _connect(settings, extension)
    except Exception as exc:  # noqa: BLE001 - reported by the parent
        pipe.send(("error", str(exc)))
        return
    pipe.send(("ready", None))
    while True:
        q = pipe.recv()
        if q is None:
            break
        try:
            pipe.send(("ok", conn.execute(f"PRAGMA tpch({int(q)})").fetchall()))
        except Exception as exc:  # noqa: BLE001 - reported by the parent
            pipe.send(("error", str(exc)))
    conn.close()


class QueryWorker:
    """A DuckDB connection in a child process inside a memory cgroup (a fresh interpreter: spawn)."""

    def __init__(self, settings: dict[str, Any], cgroup):
        from dbtier.workloads.dss import tpch_extension
        ctx = multiprocessing.get_context("spawn")
        self.cgroup = cgroup
        self.busy = False          # a query was sent and its answer not received (interrupted): kill, not wait
        self.pipe, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, settings, tpch_extension()),
                                name="dbtier-duckdb-worker", daemon=True)
        self.proc.start()
        child.close()
        try:
            Path(cgroup.plan.procs).write_text(str(self.proc.pid))   # before it connects: all it uses is charged
            self.pipe.send("go")
            self._reply("connecting")
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        """The worker's process id: it was started in __init__, so it has one."""
        pid = self.proc.pid
        assert pid is not None
        return pid

    def _reply(self, what: str) -> Any:
        try:
            kind, value = self.pipe.recv()
        except (EOFError, OSError):
            self.proc.join(timeout=5)
            kills = self.cgroup.oom_count()
            budget = self.cgroup.limit_bytes / 2**20
            if kills:
                raise DbtierError(f"{what}: the kernel killed DuckDB for want of memory in its {budget:,.0f} MiB "
                                  f"budget (memory cgroup; exit {self.proc.exitcode})",
                                  "raise --memory (the budget) or lower --memory-limit") from None
            raise DbtierError(f"{what}: the DuckDB worker ended (exit {self.proc.exitcode})",
                              "see the messages above") from None
        if kind == "error" and what == "connecting":
            raise DbtierError(f"DuckDB could not open the database in its worker: {value}", "see the message")
        if kind == "error":
            raise RuntimeError(value)      # worded by workloads.dss.engine_error, as an in-process error is
        return value

    def query(self, q: int) -> list[tuple]:
        self.busy = True
        self.pipe.send(int(q))
        rows = self._reply(f"query {q}")
        self.busy = False
        return rows

    def close(self) -> None:
        if self.proc.is_alive() and not self.busy:
            try:
                self.pipe.send(None)
            except OSError:
                pass
            self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()      # an interrupted query: the database is only read, nothing to save
            self.proc.join(timeout=10)
        self.pipe.close()
