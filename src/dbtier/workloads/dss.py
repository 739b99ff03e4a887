"""TPC-H power runs on DuckDB (embedded) and PostgreSQL (the managed cluster).

Data comes from DuckDB's tpch extension (dbgen), pinned as the
duckdb-extension-tpch package so it loads offline. Every query's answer is
checked against the extension's reference answers where they exist
(SF 0.01, 0.1, 1): a wrong result fails the run instead of being timed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from dbtier.core.errors import DbtierError
from dbtier.core.files import duck_path, sql_str
from dbtier.measure.sampler import Sampler
from dbtier.model.dss import ANSWER_SCALES, QUERIES, check_answer

TPCH_TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")


def tpch_extension() -> str:
    try:
        import duckdb
        import duckdb_extension_tpch
    except ImportError as exc:
        raise DbtierError(f"the TPC-H generator is missing ({exc.name} is not installed)",
                          "install duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 (`uv sync` or `make lab`)") from exc
    default = Path(duckdb_extension_tpch.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "tpch.duckdb_extension"
    path = Path(os.environ.get("DBTIER_TPCH_EXTENSION", default))  # a custom build may be named instead
    if not path.exists():
        raise DbtierError(f"the tpch extension for DuckDB {duckdb.__version__} is missing ({path})",
                          f"install duckdb-extension-tpch=={duckdb.__version__}")
    return str(path)


def drop_caches() -> bool:
    """Empty the OS page cache so the next read is cold (root only)."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def dir_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def tpchgen() -> str:
    import shutil as _sh
    import sys
    exe = Path(sys.executable).parent / "tpchgen-cli"
    found = str(exe) if exe.exists() else _sh.which("tpchgen-cli")
    if not found:
        raise DbtierError("tpchgen-cli is not installed", "install it (`uv sync` installs the pinned one) or pass "
                          "--generator dbgen")
    return found


def generate(scale: float, out: Path, fmt: str = "parquet") -> None:
    from dbtier.measure import executor
    out.mkdir(parents=True, exist_ok=True)
    done = executor.run([tpchgen(), fmt, "-s", f"{scale:g}", "--output-dir", str(out)], timeout_s=24 * 3600)
    if done.returncode != 0:
        msg = (done.stderr or done.stdout).strip().splitlines()
        if any("No space left" in m for m in msg):
            raise DbtierError(f"{out.parent}: the disk filled up while generating TPC-H data",
                              "free space or choose a smaller --scale")
        raise DbtierError(f"tpchgen-cli failed: {msg[-1] if msg else done.returncode}", "see its message above")


def dbgen_csv(scale: float, out: Path) -> None:
    """The tpch extension's dbgen in an in-memory DuckDB, each table written as CSV with a header."""
    import duckdb
    out.mkdir(parents=True, exist_ok=True)
    c = duckdb.connect()
    try:
        c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
        c.execute(f"CALL dbgen(sf = {scale})")
        for t in TPCH_TABLES:
            c.execute(f"COPY {t} TO {sql_str(str(out / (t + '.csv')))} (HEADER, DELIMITER ',')")
    finally:
        c.close()


def answers(scale: float) -> dict[int, str] | None:
    if not any(abs(scale - s) < 1e-9 for s in ANSWER_SCALES):
        return None
    import duckdb
    c = duckdb.connect()
    c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
    rows = c.execute("SELECT query_nr, answer FROM tpch_answers() WHERE abs(scale_factor - ?) < 1e-9", [scale]).fetchall()
    c.close()
    return {int(q): a for q, a in rows}


def queries_text() -> dict[int, str]:
    import duckdb
    c = duckdb.connect()
    c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
    q = {int(n): t for n, t in c.execute("SELECT query_nr, query FROM tpch_queries()").fetchall()}
    c.close()
    return q


class Engine:
    """What power_run needs: connect(), run_query(q), close_conn(); `conn` is the open connection."""
    name = ""
    conn: Any = None

    def close_conn(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class DuckDBEngine(Engine):
    name = "duckdb"

    def __init__(self, data_dir: Path, temp_dir: Path | None, memory_limit: str | None, threads: int | None,
                 compression: str, generator: str = "tpchgen"):
        self.id = uuid.uuid4().hex[:8]
        self.created: list[Path] = []
        self.db_path = self._own(Path(data_dir), f"dbtier-dss-{self.id}") / "tpch.duckdb"
        self.temp_path = self._own(Path(temp_dir), f"dbtier-dss-temp-{self.id}") if temp_dir else \
            self.db_path.parent / "temp"
        self.memory_limit, self.threads, self.compression = memory_limit, threads, compression
        self.generator = generator
        self.conn = None
        # tpchgen-cli's text columns (addresses, comments) differ from dbgen's, so the reference
        # answers, made with dbgen, only apply to dbgen data.

    def _own(self, parent: Path, name: str) -> Path:
        d = parent / name
        try:
            d.mkdir()
        except OSError as exc:
            raise DbtierError(f"{parent} is not writable ({exc.strerror})", "pass a directory you can write to") from exc
        self.created.append(d)
        return d

    def connect(self, limited: bool = True) -> None:
        """limited: apply --memory-limit (the query runs; the load uses DuckDB's default)."""
        import duckdb
        self.close_conn()
        self.conn = duckdb.connect(str(self.db_path))
        self.conn.execute(f"LOAD {sql_str(str(tpch_extension()))}")
        self.conn.execute(f"SET temp_directory = {sql_str(str(self.temp_path))}")
        if self.memory_limit and limited:
            self.conn.execute(f"SET memory_limit = '{self.memory_limit}'")
        if self.threads:
            self.conn.execute(f"SET threads = {int(self.threads)}")
        self.conn.execute("SET preserve_insertion_order = false")

    def load(self, scale: float) -> dict[str, Any]:
        t0 = time.monotonic()
        self.connect(limited=False)
        if self.compression == "off":
            self.conn.execute("SET force_compression = 'uncompressed'")
        if self.generator == "tpchgen":
            # tpchgen-cli (Rust, all cores) writes Parquet beside the database; DuckDB loads it in parallel.
            staging = self.db_path.parent / "staging"
            generate(scale, staging, "parquet")
            for t in TPCH_TABLES:
                self.conn.execute(f"CREATE TABLE {t} AS SELECT * FROM "
                                  f"read_parquet({sql_str(duck_path(staging / (t + '.parquet')))})")
            shutil.rmtree(staging, ignore_errors=True)
        else:
            self.conn.execute(f"CALL dbgen(sf = {scale})")
        self.conn.execute("CHECKPOINT")
        rows = {t: self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TPCH_TABLES}
        return {"seconds": time.monotonic() - t0, "database_bytes": self.db_path.stat().st_size, "rows": rows,
                "generator": "tpchgen-cli (Parquet), loaded by DuckDB" if self.generator == "tpchgen"
                else "duckdb tpch extension dbgen"}

    def run_query(self, q: int) -> list[tuple]:
        return self.conn.execute(f"PRAGMA tpch({q})").fetchall()

    def close(self) -> None:
        self.close_conn()
        for d in reversed(self.created):
            shutil.rmtree(d, ignore_errors=True)
        self.created.clear()


class PostgresEngine(Engine):
    """TPC-H in the managed cluster: tables with the cluster, temp in the temp tablespace."""
    name = "postgres"

    def __init__(self, cluster, memory_limit: str | None, generator: str = "dbgen"):
        from dbtier.workloads.oltp import Database
        self.generator = generator
        self.cluster = cluster
        self.db = Database(cluster)
        self.work_mem = memory_limit or "64MB"
        self.conn = None
        self.temp_path = Path(cluster.placement()["temp"])
        self.db_path = Path(cluster.placement()["data"])
        self.texts = queries_text()

    def connect(self) -> None:
        self.close_conn()
        self.conn = self.db.connect()
        self.conn.execute(f"SET work_mem = '{self.work_mem}'")
        self.conn.execute("SET max_parallel_workers_per_gather = 2")

    def load(self, scale: float) -> dict[str, Any]:
        from importlib import resources
        t0 = time.monotonic()
        self.db.create()
        staging = Path(tempfile.mkdtemp(prefix="dbtier-tpch-", dir=self.cluster.default_dir))
        try:
            if self.generator == "tpchgen":
                generate(scale, staging, "csv")
            else:
                dbgen_csv(scale, staging)
            self.connect()
            self.conn.execute(resources.files("dbtier.workloads").joinpath("sql", "tpch_pg_schema.sql").read_text())
            rows = {}
            for t in TPCH_TABLES:
                with self.conn.cursor() as cur, cur.copy(f"COPY {t} FROM STDIN (FORMAT csv, HEADER true)") as cp, \
                        open(staging / f"{t}.csv", "rb") as f:
                    while chunk := f.read(1 << 20):
                        cp.write(chunk)
                rows[t] = self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        for t, key in (("region", "r_regionkey"), ("nation", "n_nationkey"), ("part", "p_partkey"),
                       ("supplier", "s_suppkey"), ("partsupp", "ps_partkey, ps_suppkey"),
                       ("customer", "c_custkey"), ("orders", "o_orderkey"), ("lineitem", "l_orderkey, l_linenumber")):
            self.conn.execute(f"ALTER TABLE {t} ADD PRIMARY KEY ({key})")
        # Foreign-key indexes, as PostgreSQL TPC-H kits add: without lineitem(l_partkey)
        # the correlated subqueries of Q17 and Q20 rescan lineitem per part.
        for name, cols in (("lineitem_part_supp", "lineitem (l_partkey, l_suppkey)"),
                           ("orders_cust", "orders (o_custkey)"), ("partsupp_supp", "partsupp (ps_suppkey)")):
            self.conn.execute(f"CREATE INDEX {name} ON {cols}")
        self.conn.execute("VACUUM ANALYZE")
        size = self.conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        return {"seconds": time.monotonic() - t0, "database_bytes": size, "rows": rows,
                "generator": f"{self.generator} (CSV), COPY into PostgreSQL",
                "indexes": "primary keys; lineitem (l_partkey, l_suppkey), orders (o_custkey), partsupp (ps_suppkey)"}

    def run_query(self, q: int) -> list[tuple]:
        return self.conn.execute(self.texts[q]).fetchall()

    def close(self) -> None:
        self.close_conn()


class TempWatch:
    """The peak size of the spill directory during a query, polled every 10 ms: spill files
    live only as long as the operator that needs them."""

    def __init__(self, path: Path, interval_s: float = 0.01):
        self.path, self.interval_s, self.peak_bytes = path, interval_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dbtier-tempwatch", daemon=True)

    def _loop(self) -> None:
        while True:
            if self.path.exists():
                self.peak_bytes = max(self.peak_bytes, dir_bytes(self.path))
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> "TempWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def engine_error(exc: BaseException, what: str, engine: str) -> BaseException:
    """An engine's exception as the user should see it (DuckDB turns Ctrl-C into 'interrupted')."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
    if isinstance(exc, (KeyboardInterrupt, DbtierError)):
        return exc
    if "interrupted" in text.lower():
        return KeyboardInterrupt()
    if "No space left" in str(exc) or "out of memory" in str(exc).lower():
        return DbtierError(f"{what} failed on {engine}: {text}",
                           "give the temp directory more space or raise --memory-limit; finished queries are kept")
    return DbtierError(f"{what} failed on {engine}: {text}", "see the result's errors")


def power_run(engine, run_no: int, cold: bool, devices: list[str], expected: dict[int, str] | None,
              on_query: Callable[[dict[str, Any]], None], queries: tuple[int, ...] = QUERIES) -> list[dict[str, Any]]:
    """One single-stream run of the 22 queries; each timed, sampled and checked."""
    dropped = drop_caches() if cold else False
    engine.connect()
    out = []
    for q in queries:
        with TempWatch(engine.temp_path) as temp, Sampler(devices, interval_s=0.2) as s:
            t0 = time.perf_counter()
            try:
                rows = engine.run_query(q)
            except Exception as exc:
                raise engine_error(exc, f"query {q}", engine.name) from exc
            seconds = time.perf_counter() - t0
        overall = s.overall()
        wrong = check_answer(rows, expected[q]) if expected and q in expected else None
        rec = {"query": q, "run": run_no, "cold": cold, "caches_dropped": dropped, "seconds": seconds,
               "rows": len(rows), "temp_bytes": temp.peak_bytes,
               "read_bytes": sum(d["read_bytes"] for d in overall["devices"].values()),
               "write_bytes": sum(d["write_bytes"] for d in overall["devices"].values()),
               "cpu_util": overall["cpu"]["busy_pct"] if overall["cpu"] else None,
               "devices": {n: {"read_bytes": d["read_bytes"], "write_bytes": d["write_bytes"],
                               "busy_pct": d["busy_pct"]} for n, d in overall["devices"].items()},
               "answer_ok": None if not expected else wrong is None}
        out.append(rec)
        on_query(rec)
        if wrong:
            raise DbtierError(f"query {q} returned a wrong answer on {engine.name}: {wrong}",
                              "the result is not timed; check the engine, the data and the extension versions")
    engine.close_conn()
    return out
