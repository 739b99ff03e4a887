"""TPC-C-like on MariaDB/MySQL: PostgreSQL's `tpcc` workload loaded with LOAD DATA, driven by sysbench.

The data is workloads/tpcc.py's (the same generator, cardinalities and C_LAST constants as PostgreSQL's
load). Its COPY text rows are already what LOAD DATA reads by default (fields split by tabs, rows by
newlines, `\\N` for NULL, backslash escapes; the generated values hold no tab, newline or backslash),
so they are written to files as they are and loaded with `LOAD DATA LOCAL INFILE` through the `mariadb`
client (the server's client options and environment: no password on any command line). Warehouses
load in parallel: one writes its files (Python, holding the GIL) while another's client loads.

The five transactions are stored procedures (sql/tpcc_mysql_procedures.sql, created after the load:
one CALL a transaction, as PostgreSQL's PL/pgSQL functions are one SELECT). The run is sysbench with
dbtier's own Lua (workloads/lua/tpcc.lua: the inputs, the mix, the 1% new-order rollback, deadlock
retries); each sysbench thread prints its counts per transaction type, added up here as the point's `mix`. NOPM is the change of
SUM(d_next_o_id) over the measured run when a `query` function is given (the engine's), else the
Lua's own count of committed new orders; both are divided by the minutes sysbench measured.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import re
import resource
import shutil
import tempfile
import threading
import time
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator

from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.workloads.parsers.sysbench import MysqlTarget, parse_sysbench, point_figures, sysbench_seconds
from dbtier.workloads import tpcc
from dbtier.workloads.mariadb import sql_string
from dbtier.workloads.sysbench import sysbench_failure

TRANSACTIONS = ("new_order", "payment", "order_status", "delivery", "stock_level")
MIX_PCT = {"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}
# the nine tables, in the order of tpcc_mysql_schema.sql's columns = the generator's fields
TABLE_COLUMNS = {"warehouse": 9, "district": 11, "customer": 21, "history": 8, "orders": 8, "new_order": 3,
                 "order_line": 10, "item": 5, "stock": 17}
# What the MariaDB tpcc workload is not: tpcc.DEVIATIONS with sysbench and InnoDB in the place of pgbench and
# PL/pgSQL (the result document's `deviations` for --engine mariadb).
DEVIATIONS = tuple(
    d.replace("each pgbench client", "each sysbench thread")
    .replace("as the rollback is a PL/pgSQL exception block (a subtransaction), PostgreSQL counts the call as a "
             "commit", "the stored procedure runs ROLLBACK after the unused item's empty lookup")
    .replace("(each takes the oldest new order left, no SKIP LOCKED)",
             "(each locks the oldest new order left with FOR UPDATE, no SKIP LOCKED)")
    for d in tpcc.DEVIATIONS) + (
    "the transactions are stored procedures, one CALL each from sysbench's Lua (READ COMMITTED), as PostgreSQL's "
    "are server-side functions; the Lua draws the inputs (a new order's lines as comma-separated lists) and reads "
    "nothing back but a rolled-back new order's -1",
    "a deadlock (1213) or lock wait timeout (1205) rolls the transaction back and runs it again; each retry is "
    "counted in `failed` and `retries`, not in TPM",
)
GENERATOR = "python + LOAD DATA LOCAL INFILE: random alphanumeric a-strings (TPC-C 4.3.2.2)"


def _sql(name: str) -> str:
    return resources.files("dbtier.workloads").joinpath("sql", name).read_text()


def lua_path() -> str:
    return str(resources.files("dbtier.workloads").joinpath("lua", "tpcc.lua"))


# ------------------------------------------------------------------ pure parts


def copy_table(statement: str) -> str:
    """'COPY stock FROM STDIN' -> 'stock'."""
    m = re.fullmatch(r"COPY (\w+) FROM STDIN", statement)
    if not m:
        raise ValueError(f"not a COPY statement of tpcc.py: {statement!r}")
    return m.group(1)


def load_data_sql(table: str, path: str | Path) -> str:
    """LOAD DATA for one table's file of COPY text rows: MySQL's default field and line format is COPY's."""
    if table not in TABLE_COLUMNS:
        raise ValueError(f"unknown tpcc table {table!r}")
    return (f"LOAD DATA LOCAL INFILE {sql_string(str(path))} INTO TABLE {table} CHARACTER SET latin1 "
            "FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'")


def with_table_options(schema: str, options: str) -> str:
    """The schema's CREATE TABLE statements with InnoDB table options (DATA DIRECTORY='...') after each
    `ENGINE=InnoDB`; the schema unchanged without options."""
    if not options:
        return schema
    out, n = re.subn(r"ENGINE=InnoDB\b", lambda m: f"ENGINE=InnoDB {options}", schema)
    if n != len(re.findall(r"^CREATE TABLE ", schema, re.M)):
        raise ValueError("every CREATE TABLE of the schema must say ENGINE=InnoDB")
    return out


def write_rows(chunks: Iterable[bytes], path: Path) -> int:
    """The generator's chunks of rows into a file -> its bytes."""
    n = 0
    with open(path, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
            n += len(chunk)
    return n


# Not anchored to a line: sysbench's threads print at the same time, and one thread's line can run on
# into the next's ("...new_order_rollbacks=3tpcc-mix: thread=1 ..."; seen at 4 clients).
_MIX_LINE = re.compile(r"tpcc-mix: thread=\d+((?: [a-z_]+=\d+)+)")


def parse_mix(text: str) -> dict[str, Any]:
    """tpcc.lua's per-thread `tpcc-mix:` lines -> {mix: {type: count}, retries: {type: count}, rollbacks, threads}.

    A type's count is its finished transactions, a new order rolled back by TPC-C's unused item
    included (it is a transaction: TPM counts it, NOPM does not)."""
    mix = dict.fromkeys(TRANSACTIONS, 0)
    retries = dict.fromkeys(TRANSACTIONS, 0)
    rollbacks = threads = 0
    for m in _MIX_LINE.finditer(text):
        threads += 1
        for key, value in (kv.split("=", 1) for kv in m.group(1).split()):
            if key == "new_order_rollbacks":
                rollbacks += int(value)
            elif key.endswith("_retries") and key[:-8] in retries:
                retries[key[:-8]] += int(value)
            elif key in mix:
                mix[key] += int(value)
    return {"mix": mix, "retries": retries, "rollbacks": rollbacks, "threads": threads}


def tpcc_args(target: MysqlTarget, *, threads: int, seconds: float, warehouses: int, rate: float | None = None,
              percentile: int = 95, histogram: bool = True, report_interval_s: int = 1,
              sysbench: str = "sysbench", lua: str | None = None) -> list[str]:
    """sysbench's command line for one tpcc run (pure): parsers/sysbench.py's options and target, our script."""
    a = [sysbench, lua or lua_path(), "--db-driver=mysql", *target.args(), f"--warehouses={int(warehouses)}",
         f"--threads={max(1, int(threads))}", f"--time={sysbench_seconds(seconds)}",
         f"--report-interval={int(report_interval_s)}", f"--percentile={int(percentile)}",
         f"--histogram={'on' if histogram else 'off'}"]
    if rate:
        a.append(f"--rate={max(1, round(rate))}")
    return a + ["run"]


def nopm_from(new_orders: float | None, measured_s: float | None) -> float | None:
    """New orders committed over the measured minutes."""
    if new_orders is None or not measured_s:
        return None
    return new_orders / (measured_s / 60.0)


# ------------------------------------------------------------------ loading


class _Client:
    """The mariadb client on the target database, with the server's client options and environment."""

    def __init__(self, target: MysqlTarget, client_args: list[str], client_env: dict):
        self.bin = executor.require("mariadb")
        self.args, self.env, self.db = list(client_args), dict(client_env), target.db

    def run(self, sql: str, what: str, timeout_s: float = 3600) -> list[list[str]]:
        done = executor.run([self.bin, *self.args, "--local-infile=1", "--batch", "--skip-column-names",
                             f"--database={self.db}", "-e", sql], env=self.env, timeout_s=timeout_s)
        if done.returncode != 0:
            err = " | ".join(done.stderr.strip().splitlines()[-3:]) or "the client failed"
            full = "is full" in err or "No space" in err or "errno: 28" in err
            raise DbtierError(f"{what} failed: {err}",
                              "free space under the placement directories and run again" if full else
                              "see the server log in the run directory")
        return [line.split("\t") for line in done.stdout.splitlines()]


def _load_files(client: _Client, copies: list[tuple[str, Iterator[bytes]]], where: Path, what: str,
                lock: threading.Lock | None = None) -> None:
    """Write each table's rows to a file, then load them all in one client session (holding `lock`, when
    given, while it loads); remove the files."""
    where.mkdir()
    try:
        stmts = ["SET unique_checks = 0", "SET foreign_key_checks = 0"]
        for stmt, chunks in copies:
            table = copy_table(stmt)
            path = where / f"{table}.tsv"
            write_rows(chunks, path)
            stmts.append(load_data_sql(table, path))
        with lock or contextlib.nullcontext():
            client.run(";\n".join(stmts), f"loading the tpcc tables ({what})")
    finally:
        shutil.rmtree(where, ignore_errors=True)


def load(target: MysqlTarget, client_args: list[str], client_env: dict, warehouses: int, raw_dir: Path,
         log: Callable[[str], None], table_options: str = "") -> dict[str, Any]:
    """Schema, TPC-C's initial rows and the indexes in `target.db` -> the load record.

    The rows go through files in a private directory under raw_dir, removed as each is loaded.
    `table_options` (DATA DIRECTORY='...') end each CREATE TABLE (with_table_options)."""
    t0 = time.monotonic()
    c_load, c_run = tpcc.c_last_constants()
    now = datetime.now()
    client = _Client(target, client_args, client_env)
    client.run(with_table_options(_sql("tpcc_mysql_schema.sql"), table_options) + f"\nINSERT INTO tpcc_c_last VALUES ({int(c_load)}, {int(c_run)});",
               "creating the tpcc schema")
    stage = Path(tempfile.mkdtemp(prefix="tpcc-load-", dir=raw_dir))
    try:
        _load_files(client, [tpcc.item_copy(tpcc.Gen())], stage / "item", "items")
        log("items loaded")

        # Warehouses are generated side by side but loaded one at a time: two sessions' LOAD DATA into the
        # same tables can deadlock in InnoDB (ERROR 1213, seen loading 2 warehouses on a throttled tier).
        loading = threading.Lock()

        def one(w: int) -> None:
            _load_files(client, tpcc.warehouse_copies(w, tpcc.Gen(), c_load, now), stage / f"w{w}", f"warehouse {w}",
                        loading)
            log(f"warehouse {w} loaded")

        workers = max(1, min(warehouses, os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, range(1, warehouses + 1)))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    client.run(_sql("tpcc_mysql_indexes.sql"), "creating the tpcc indexes")
    client.run(_sql("tpcc_mysql_procedures.sql"), "creating the tpcc procedures")
    size = client.run("SELECT SUM(data_length + index_length) FROM information_schema.tables "
                      "WHERE table_schema = DATABASE()", "measuring the database")
    return {"workload": "tpcc", "warehouses": warehouses, "scale": None,
            "database_bytes": int(float(size[0][0])) if size and size[0][0] not in ("NULL", "") else None,
            "load_seconds": time.monotonic() - t0, "generator": GENERATOR,
            "c_last": {"c_load": c_load, "c_run": c_run}}


# ------------------------------------------------------------------ one point


def _point_run(argv: list[str], out_path: Path, clients: int, rate: float | None,
               alive: Callable[[], bool] | None, log_tail: Callable[[], str] | None) -> str:
    """One sysbench run, its output saved (a config file's password hidden) -> stdout; a failure in words."""
    seconds = sysbench_seconds(float(next(a for a in argv if a.startswith("--time=")).split("=", 1)[1]))
    try:
        done = executor.run(argv, timeout_s=seconds + 600)
    except executor.TimedOut as exc:
        raise DbtierError(f"sysbench did not finish its {seconds} s tpcc point at {clients} clients within "
                          f"{exc.timeout_s:.0f} s and was stopped",
                          "the server may be hung; see the server log in the run directory") from exc
    text = done.stdout + ("\n--- stderr ---\n" + done.stderr if done.stderr else "")
    out_path.write_text(re.sub(r"(mysql-password\s*=\s*)\S+", r"\1***", text))
    if done.returncode != 0 or "transactions:" not in done.stdout:
        raise sysbench_failure(text, clients, rate, alive() if alive else True, log_tail() if log_tail else "")
    return done.stdout


def new_orders(query: Callable[[str], list[list[str]]], database: str | None = None) -> float:
    """SUM(d_next_o_id): new orders committed since the load, plus a constant (NOPM counts its change)."""
    table = f"`{database}`.district" if database else "district"
    rows = query(f"SELECT SUM(d_next_o_id) FROM {table}")
    return float(rows[0][0])


def run_point(target: MysqlTarget, clients: int, duration_s: float, warmup_s: float, warehouses: int,
              rate: float | None, raw_dir: Path, tag: str, *, binary: str = "sysbench",
              around: Callable[[], ContextManager[Any]] | None = None,
              alive: Callable[[], bool] | None = None, log_tail: Callable[[], str] | None = None,
              query: Callable[[str], list[list[str]]] | None = None) -> dict[str, Any]:
    """One tpcc point: a warm-up run, then the measured run -> workloads/sysbench.run_point's keys plus
    `nopm`, `tpm`, `mix`, `new_order_rollbacks`, `retries` and `nopm_source`.

    `query(sql) -> rows` (the engine's, on any database: names are qualified) reads SUM(d_next_o_id)
    before and after; without it NOPM is the Lua's count of committed new orders."""
    cpus = os.cpu_count() or 1
    args: dict[str, Any] = dict(threads=clients, warehouses=warehouses, rate=rate, sysbench=binary)
    if warmup_s > 0:
        _point_run(tpcc_args(target, seconds=warmup_s, **args), raw_dir / f"{tag}-warmup.txt", clients, rate,
                   alive, log_tail)
    before = new_orders(query, target.db) if query else None
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with (around() if around else contextlib.nullcontext()):
        t0 = time.monotonic()
        text = _point_run(tpcc_args(target, seconds=duration_s, **args), raw_dir / f"{tag}.txt", clients, rate,
                          alive, log_tail)
        wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    after = new_orders(query, target.db) if query else None
    cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    point = point_figures(parse_sysbench(text), clients, duration_s, rate)
    counts = parse_mix(text)
    lua_new = counts["mix"]["new_order"] - counts["rollbacks"]
    if before is not None and after is not None:
        delta, source = after - before, "SUM(d_next_o_id)"
    else:
        delta, source = float(lua_new), "tpcc.lua committed new orders"
    cores = cpu_s / wall if wall > 0 else 0.0
    point.update({
        "nopm": nopm_from(delta, point["duration_s"]), "nopm_source": source,
        "mix": counts["mix"], "new_order_rollbacks": counts["rollbacks"], "retries": counts["retries"],
        "failed": point["failed"] + sum(counts["retries"].values()),
        "warmup_s": warmup_s, "warmup": "a separate run", "wall_s": wall,
        "overhead": {"client_cpu_cores": cores, "client_cpu_s": cpu_s,
                     "client_cpu_pct_of_machine": 100.0 * cores / cpus},
        "raw": f"raw/{tag}.txt",
    })
    return point
