"""DuckDB through the engine interface (workloads/engine.py): TPC-H and backups of an embedded database.

There is no server: open() makes `dbtier-dss-<id>/` under the data directory (and
`dbtier-dss-temp-<id>/` under the temp directory when one is placed), close() removes them.
"""

from __future__ import annotations

import shutil
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from dbtier.core.debris import Claim, claim_dir
from dbtier.core.errors import DbtierError
from dbtier.core.files import duck_path, sql_str
from dbtier.workloads.engine import Engine, ServerSpec


def run_sql(conn, sql: str, fetch: bool = False) -> list[tuple] | None:
    """conn.execute(sql) (and its rows, with fetch) in a helper thread while this thread waits, so that
    Ctrl-C (or SIGTERM) stops DuckDB before it reaches the caller.

    Run in the main thread, DuckDB's Python client checks for a signal only between its own steps of a
    query: a dbgen or a long query running on its worker threads goes on after the client has raised
    "Query interrupted", the connection's close() returns with the database still open, and the
    interpreter exits while a worker still runs, into what exit has freed (SIGSEGV at exit, one Ctrl-C
    in four to eight during `bench dss`'s load); when the main thread itself runs the dbgen task, Ctrl-C is
    not seen until the generation is over. Here the signal is taken at once, the query is interrupted
    (conn.interrupt(), which DuckDB's tasks, dbgen's included, check) and waited for before the interrupt
    goes on: by then nothing runs in DuckDB, and close() ends the database and its threads.

    Thread.join is not used: in Python 3.11 a join interrupted by a signal marks a running thread
    finished."""
    box: dict[str, Any] = {}
    done = threading.Event()
    claim = threading.Lock()          # taken by the thread that runs the statement, or by the caller giving up

    def work() -> None:
        if not claim.acquire(blocking=False):   # interrupted before this thread began: nothing is run
            return
        try:
            cur = conn.execute(sql)
            box["rows"] = cur.fetchall() if fetch else None
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["exc"] = exc
        finally:
            done.set()

    try:
        threading.Thread(target=work, name="dbtier-duckdb", daemon=True).start()
        while not done.wait(1.0):
            pass
    except BaseException:
        if claim.acquire(blocking=False):       # the statement never started
            raise
        _interrupt_and_wait(conn, done)
        raise
    if "exc" in box:
        raise box["exc"]
    return box["rows"]


def _interrupt_and_wait(conn, done: threading.Event) -> None:
    """Interrupt the running statement and wait for its end. A further Ctrl-C or SIGTERM meanwhile
    interrupts it again instead of raising: leaving now would leave DuckDB running."""
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            saved[sig] = signal.signal(sig, lambda *_: conn.interrupt())
    try:
        conn.interrupt()
        while not done.wait(0.1):
            conn.interrupt()       # again: a statement just starting resets the flag
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


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

    @classmethod
    def check(cls) -> None:
        from dbtier.workloads.dss import tpch_extension
        tpch_extension()

    def _own(self, parent: Path, name: str) -> Path:
        d = parent / name
        try:
            d.mkdir()
        except OSError as exc:
            raise DbtierError(f"{parent} is not writable ({exc.strerror})", "pass a directory you can write to") from exc
        self.created.append(d)
        self.claims.append(claim_dir(d, "DuckDB database"))
        return d

    def open(self) -> None:
        pl = self.spec.placement
        self.db_path = self._own(Path(pl.get("data") or self.spec.dir), f"dbtier-dss-{self.id}") / "tpch.duckdb"
        self.temp_path = self._own(Path(pl["temp"]), f"dbtier-dss-temp-{self.id}") if pl.get("temp") else \
            self.db_path.parent / "temp"

    def placement(self) -> dict[str, str]:
        return {"data": str(self.db_path), "temp": str(self.temp_path)}

    def connect(self, limited: bool = True) -> None:
        """limited: apply --memory-limit (the query runs; the load uses DuckDB's default)."""
        import duckdb
        from dbtier.workloads.dss import tpch_extension
        self.close_conn()
        self.conn = duckdb.connect(str(self.db_path))
        self.conn.execute(f"LOAD {sql_str(str(tpch_extension()))}")
        self.conn.execute(f"SET temp_directory = {sql_str(str(self.temp_path))}")
        if self.memory_limit and limited:
            self.conn.execute(f"SET memory_limit = '{self.memory_limit}'")
        if self.threads:
            self.conn.execute(f"SET threads = {int(self.threads)}")
        self.conn.execute("SET preserve_insertion_order = false")

    def load_tpch(self, scale: float) -> dict[str, Any]:
        from dbtier.workloads.dss import TPCH_TABLES, generate
        t0 = time.monotonic()
        self.connect(limited=False)
        if self.compression == "off":
            self.conn.execute("SET force_compression = 'uncompressed'")
        if self.generator == "tpchgen":
            # tpchgen-cli (Rust, all cores) writes Parquet beside the database; DuckDB loads it in parallel.
            staging = self.db_path.parent / "staging"
            generate(scale, staging, "parquet")
            for t in TPCH_TABLES:
                run_sql(self.conn, f"CREATE TABLE {t} AS SELECT * FROM "
                        f"read_parquet({sql_str(duck_path(staging / (t + '.parquet')))})")
            shutil.rmtree(staging, ignore_errors=True)
        else:
            run_sql(self.conn, f"CALL dbgen(sf = {scale})")
        run_sql(self.conn, "CHECKPOINT")
        rows = {t: self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TPCH_TABLES}
        return {"seconds": time.monotonic() - t0, "database_bytes": self.db_path.stat().st_size, "rows": rows,
                "generator": "tpchgen-cli (Parquet), loaded by DuckDB" if self.generator == "tpchgen"
                else "duckdb tpch extension dbgen"}

    def run_query(self, q: int) -> list[tuple]:
        return run_sql(self.conn, f"PRAGMA tpch({q})", fetch=True)

    def backup_source(self, scale: float) -> dict[str, Any]:
        rec = self.load_tpch(scale)
        self.close_conn()     # the file copy reads a closed, checkpointed database
        return rec

    def backup(self, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
        from dbtier.workloads.backup import duckdb_backups
        return duckdb_backups(self.db_path, to_dir, devices, src_dev, dst_dev, on_result, repeat)

    def close(self) -> None:
        self.close_conn()
        for d in reversed(self.created):
            shutil.rmtree(d, ignore_errors=True)
        for c, d in zip(self.claims, self.created):
            if not d.exists():
                c.release()
        self.created.clear()
        self.claims.clear()
