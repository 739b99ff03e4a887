"""TPC-H power runs on any engine that runs `bench dss` (workloads/engine.py): data, answers, timing.

Data comes from DuckDB's tpch extension (dbgen), pinned as the
duckdb-extension-tpch package so it loads offline. Every query's answer is
checked against the extension's reference answers where they exist
(SF 0.01, 0.1, 1): a wrong result fails the run instead of being timed.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from dbtier.core.debris import MARKER
from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
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


def dir_bytes(path: Path, skip: frozenset[str] = frozenset()) -> int:
    """The size of the files under path, those named in `skip` left out."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f in skip:
                continue
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


# dbtier's own files in a spill directory: the clean-up registry's owner marker (core/debris.py)
OWN_FILES = frozenset({MARKER})


def spill_bytes(path: Path) -> int:
    """What the engine has spilled into its temp directory: every file there but dbtier's own."""
    return dir_bytes(path, OWN_FILES)


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
    from dbtier.workloads.duck_sql import run_sql    # Ctrl-C stops DuckDB before it goes on
    out.mkdir(parents=True, exist_ok=True)
    c = duckdb.connect()
    try:
        c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
        run_sql(c, f"CALL dbgen(sf = {scale})")
        for t in TPCH_TABLES:
            run_sql(c, f"COPY {t} TO {sql_str(str(out / (t + '.csv')))} (HEADER, DELIMITER ',')")
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


class TempWatch:
    """The peak size of the spill directory during a query (dbtier's own files left out), polled every
    10 ms: spill files live only as long as the operator that needs them."""

    def __init__(self, path: Path, interval_s: float = 0.01):
        self.path, self.interval_s, self.peak_bytes = path, interval_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dbtier-tempwatch", daemon=True)

    def _loop(self) -> None:
        while True:
            if self.path.exists():
                self.peak_bytes = max(self.peak_bytes, spill_bytes(self.path))
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


def proc_io(pid: int | None) -> tuple[int, int] | None:
    """(write_bytes, cancelled_write_bytes) of a process from /proc/PID/io: the bytes it dirtied for the
    storage, and those removed (a deleted or truncated file) before writeback wrote them; None unreadable."""
    if pid is None:
        return None
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return None
    vals = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    try:
        return int(vals["write_bytes"]), int(vals["cancelled_write_bytes"])
    except (KeyError, ValueError):
        return None


def written_between(a: tuple[int, int] | None, b: tuple[int, int] | None) -> int | None:
    """What a process's writes that were not cancelled came to between two proc_io readings: what it sent
    on to the device (or will: still dirty at b), its own alone whatever else writes to that device."""
    if a is None or b is None:
        return None
    return max(0, (b[0] - a[0]) - (b[1] - a[1]))


def power_run(engine, run_no: int, cold: bool, devices: list[str], expected: dict[int, str] | None,
              on_query: Callable[[dict[str, Any]], None], queries: tuple[int, ...] = QUERIES,
              temp_device: str | None = None) -> list[dict[str, Any]]:
    """One single-stream run of the 22 queries; each timed, sampled and checked. temp_bytes is the peak
    spill in the temp directory; temp_device_write_bytes what the temp directory's device wrote meanwhile;
    query_written_bytes what the process running the query wrote and did not cancel (/proc/PID/io; None
    where the engine's process is not known: PostgreSQL's backend)."""
    dropped = drop_caches() if cold else False
    engine.connect()
    out = []
    for q in queries:
        pid = engine.query_pid() if hasattr(engine, "query_pid") else None
        with TempWatch(engine.temp_path) as temp, Sampler(devices, interval_s=0.2) as s:
            io0 = proc_io(pid)
            t0 = time.perf_counter()
            try:
                rows = engine.run_query(q)
            except Exception as exc:
                raise engine_error(exc, f"query {q}", engine.name) from exc
            seconds = time.perf_counter() - t0
            io1 = proc_io(pid)
        overall = s.overall()
        wrong = check_answer(rows, expected[q]) if expected and q in expected else None
        rec = {"query": q, "run": run_no, "cold": cold, "caches_dropped": dropped, "seconds": seconds,
               "rows": len(rows), "temp_bytes": temp.peak_bytes,
               "read_bytes": sum(d["read_bytes"] for d in overall["devices"].values()),
               "write_bytes": sum(d["write_bytes"] for d in overall["devices"].values()),
               "cpu_util": overall["cpu"]["busy_pct"] if overall["cpu"] else None,
               "devices": {n: {"read_bytes": d["read_bytes"], "write_bytes": d["write_bytes"],
                               "busy_pct": d["busy_pct"]} for n, d in overall["devices"].items()},
               "temp_device_write_bytes": overall["devices"][temp_device]["write_bytes"]
               if temp_device in overall["devices"] else None,
               "query_written_bytes": written_between(io0, io1),
               "answer_ok": None if not expected else wrong is None}
        out.append(rec)
        on_query(rec)
        if wrong:
            raise DbtierError(f"query {q} returned a wrong answer on {engine.name}: {wrong}",
                              "the result is not timed; check the engine, the data and the extension versions")
    engine.close_conn()
    return out


def emulate(tier, placement: dict[str, str], est: dict[str, float], doc: dict[str, Any]) -> dict[str, str]:
    """Make the emulated tier (measure/slowtier.py, as bench oltp --emulate) and put every role placed in
    its directory on it instead; doc["emulated"] and doc["emulated_roles"] say so."""
    tier.open_for(3 * est["disk_gb"] * 1e9)      # the database and its spill, three times over
    doc["emulated"] = tier.describe()
    out = tier.place(placement)
    doc["emulated_roles"] = sorted(r for r, d in out.items() if d == tier.mount)
    return out


def memory_record(engine, budget_bytes: int | None) -> dict[str, Any]:
    """How the queries' memory was bounded: {budget_bytes, mechanism (cgroup1, cgroup2, none), reason,
    oom_kills}; an engine without a budgeted worker (PostgreSQL) runs unbounded here."""
    mem = dict(getattr(engine, "memory", None) or {})
    mem.setdefault("budget_bytes", budget_bytes)
    if not budget_bytes:
        unbounded = ("no budget (--memory none, or no --memory-limit): the queries' page cache is unbounded, so "
                     "their spill may stay in memory" if hasattr(engine, "memory") else
                     "the queries run in the server's own processes, which a TPC-H run does not bound (--memory-limit "
                     "sets work_mem: when a sort or hash spills, not where): the page cache is unbounded, so their "
                     "spill may stay in memory")
        mem.update(mechanism="none", reason=mem.get("reason") or unbounded)
    return mem
