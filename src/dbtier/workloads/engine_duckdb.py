"""DuckDB through the engine interface (workloads/engine.py): TPC-H and backups of an embedded database.

There is no server: open() makes `dbtier-dss-<id>/` under the data directory (and
`dbtier-dss-temp-<id>/` under the temp directory when one is placed), close() removes them.
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from dbtier.core.debris import Claim, claim_dir
from dbtier.core.errors import DbtierError
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
