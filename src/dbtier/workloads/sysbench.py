"""MariaDB/MySQL's OLTP driver: sysbench's built-in Lua tests load, run one point, clean up.

The counterpart of pgbench.py for the sysbench workloads (`sysbench-rw`, `-ro`, `-wo`, `-point`).
The server is someone else's business (the managed MariaDB server, or the user's by --dsn): this
module gets a `MysqlTarget` (where to connect) and runs sysbench against it. The command lines and
the report's figures are pure (workloads/parsers/sysbench.py); here are the runs, the raw output saved to the
run directory, sysbench's own CPU time, and the failures in words.

Passwords: sysbench reads none from the environment, and `--mysql-password` on the command line is
visible to every user in `ps`. A managed server uses a passwordless user on its private socket (no
password exists); for --dsn, `password_config` writes the password (from the environment or an option
file, read by the caller) to a sysbench --config-file of mode 0600 in the run directory, and the
target names that file.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import time
from pathlib import Path
from typing import Any, Callable, ContextManager

from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.workloads.parsers.sysbench import (TABLES, WORKLOADS, MysqlTarget, layout, parse_sysbench, point_figures,
                                   sysbench_args, sysbench_seconds, table_options_script)

INSTALL_HINT = ("install sysbench: `apt-get install sysbench` (Debian/Ubuntu), `dnf install sysbench` "
                "(Fedora/RHEL, from EPEL); or run `make lab`, which installs it")


def find_sysbench() -> str:
    """sysbench's path, or a DbtierError that says how to install it."""
    try:
        return executor.require("sysbench")
    except DbtierError as exc:
        raise DbtierError("sysbench is not installed (not found on PATH); the MariaDB sysbench workloads "
                          "need it", INSTALL_HINT) from exc


def version(binary: str = "sysbench") -> tuple[int, ...]:
    """sysbench's version as numbers ((1, 0, 20)); () when it does not say."""
    done = executor.run([binary, "--version"], timeout_s=30)
    m = re.search(r"sysbench (\d+(?:\.\d+)*)", done.stdout)
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def native_warmup(ver: tuple[int, ...]) -> bool:
    """--warmup-time exists from sysbench 1.1 (1.0.20 rejects it as an invalid option)."""
    return ver >= (1, 1)


def password_config(run_dir: Path, password: str) -> str:
    """A sysbench --config-file holding only the password, readable by this user alone -> its path.

    Created 0600 before anything is written to it; the caller removes it with the run directory.
    Tested against MariaDB 10.11 with sysbench 1.0.20 (a user with a password over TCP)."""
    # sysbench 1.0.20's config file ends a value at white space (tried: "s3cret x" is refused by the
    # server, "a#b=c" works), so such a password cannot be passed this way.
    if any(c.isspace() for c in password):
        raise DbtierError("the MySQL password contains white space, which a sysbench config file cannot hold",
                          "use a passwordless socket user, or a password without spaces")
    path = run_dir / "sysbench-password.cfg"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"mysql-password={password}\n")
    return str(path)


def _redact(text: str) -> str:
    """Raw output fit to save or show: a password that sysbench echoed (a --config-file line) hidden."""
    return re.sub(r"(mysql-password\s*=\s*)\S+", r"\1***", text)


def _run(argv: list[str], out_path: Path | None, timeout_s: float) -> tuple[executor.Completed, str]:
    done = executor.run(argv, timeout_s=timeout_s)
    text = done.stdout + ("\n--- stderr ---\n" + done.stderr if done.stderr else "")
    if out_path is not None:
        out_path.write_text(_redact(text))
    return done, text


# ------------------------------------------------------------------ loading and cleaning up


def prepare(target: MysqlTarget, workload: str, scale: int, raw_dir: Path, *, tables: int = TABLES,
            binary: str = "sysbench", threads: int | None = None, table_options: str = "") -> dict[str, Any]:
    """Create and fill sysbench's tables (scale x 100,000 rows over `tables`) -> what was loaded.

    `table_options` (e.g. DATA DIRECTORY='/srv/x') end each CREATE TABLE, through a wrapper script of the
    stock test written to raw_dir (parsers.sysbench.table_options_script).
    database_bytes is None here: the engine, which holds a connection, measures the size."""
    n_tables, table_size = layout(scale, tables)
    t0 = time.monotonic()
    loaders = threads or max(1, min(n_tables, os.cpu_count() or 1))   # sysbench loads a table per thread
    script = None
    if table_options:
        script = raw_dir / "sysbench-prepare.lua"
        script.write_text(table_options_script(workload, table_options))
    done, text = _run(sysbench_args(workload, "prepare", target, tables=n_tables, table_size=table_size,
                                    threads=loaders, sysbench=binary, script=str(script) if script else None),
                      raw_dir / "sysbench-prepare.txt", timeout_s=3600)
    if done.returncode != 0 or "FATAL" in text:
        raise DbtierError(f"sysbench prepare failed: {_last_lines(text)}",
                          "see sysbench-prepare.txt and the server log in the run directory")
    return {"workload": workload, "warehouses": None, "scale": scale, "tables": n_tables,
            "table_size": table_size, "rows": n_tables * table_size, "database_bytes": None,
            "load_seconds": time.monotonic() - t0, "generator": f"sysbench {WORKLOADS[workload]} prepare"}


def cleanup(target: MysqlTarget, workload: str, raw_dir: Path, *, tables: int, binary: str = "sysbench") -> None:
    """Drop sysbench's tables (sbtest1..N) in the target database; the database itself is the engine's."""
    done, text = _run(sysbench_args(workload, "cleanup", target, tables=tables, table_size=1, sysbench=binary),
                      raw_dir / "sysbench-cleanup.txt", timeout_s=600)
    if done.returncode != 0:
        raise DbtierError(f"sysbench cleanup failed: {_last_lines(text)}", "see sysbench-cleanup.txt")


# ------------------------------------------------------------------ one point


def run_point(target: MysqlTarget, workload: str, clients: int, duration_s: float, warmup_s: float,
              rate: float | None, raw_dir: Path, tag: str, *, tables: int, table_size: int,
              binary: str = "sysbench", warmup_native: bool = False,
              around: Callable[[], ContextManager[Any]] | None = None,
              alive: Callable[[], bool] | None = None, log_tail: Callable[[], str] | None = None) -> dict[str, Any]:
    """One point: a warm-up run (unless sysbench does it itself), then the measured run -> its figures.

    `around()` gives a context manager entered around the measured run only (the engine's sampler of
    devices, CPU and waits). `alive()` and `log_tail()` let a failure say the server died and how.
    The point has a PostgreSQL point's keys where they apply (point_figures) plus `overhead`:
    sysbench's own CPU (user + system of this process's children over the run) as `client_cpu_cores`."""
    cpus = os.cpu_count() or 1
    args: dict[str, Any] = dict(tables=tables, table_size=table_size, threads=clients, rate=rate, sysbench=binary)
    if warmup_s > 0 and not warmup_native:
        _point_run(sysbench_args(workload, "run", target, seconds=warmup_s, **args),
                   raw_dir / f"{tag}-warmup.txt", clients, rate, alive, log_tail)
    argv = sysbench_args(workload, "run", target, seconds=duration_s, warmup_s=warmup_s,
                         native_warmup=warmup_native, **args)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with (around() if around else contextlib.nullcontext()):
        t0 = time.monotonic()
        text = _point_run(argv, raw_dir / f"{tag}.txt", clients, rate, alive, log_tail)
        wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    parsed = parse_sysbench(text)
    point = point_figures(parsed, clients, duration_s, rate)
    cores = cpu_s / wall if wall > 0 else 0.0
    point.update({
        "warmup_s": warmup_s, "warmup": "sysbench --warmup-time" if warmup_native else "a separate run",
        "wall_s": wall,
        "overhead": {"client_cpu_cores": cores, "client_cpu_s": cpu_s,
                     "client_cpu_pct_of_machine": 100.0 * cores / cpus},
        "raw": f"raw/{tag}.txt",
    })
    return point


def _point_run(argv: list[str], out_path: Path, clients: int, rate: float | None,
               alive: Callable[[], bool] | None, log_tail: Callable[[], str] | None) -> str:
    seconds = sysbench_seconds(float(next(a for a in argv if a.startswith("--time=")).split("=", 1)[1]))
    try:
        done, text = _run(argv, out_path, timeout_s=seconds + 600)
    except executor.TimedOut as exc:
        raise DbtierError(f"sysbench did not finish its {seconds} s point at {clients} clients within "
                          f"{exc.timeout_s:.0f} s and was stopped",
                          "the server may be hung; see the server log in the run directory") from exc
    if done.returncode != 0 or "transactions:" not in done.stdout:
        raise sysbench_failure(text, clients, rate, alive() if alive else True, log_tail() if log_tail else "")
    return done.stdout


def sysbench_failure(text: str, clients: int, rate: float | None, server_alive: bool, log: str) -> DbtierError:
    """A failed sysbench run -> the error in words, the likeliest cause first."""
    if "No space left on device" in text + log or "is full" in log:
        return DbtierError(f"the disk filled up during the {clients}-client point (no space left on device):\n{log}",
                           "free space under the placement directories; finished points are kept")
    if not server_alive:
        return DbtierError(f"MariaDB died during the {clients}-client point; the server log ends:\n{log}",
                           "finished points are kept; see the server log in the run directory")
    if "event queue is full" in text.lower():
        return DbtierError(f"at {clients} clients the server did not keep up with --rate {rate:g}/s: sysbench's "
                           "event queue filled and it stopped the run",
                           "lower --rate, or add clients; finished points are kept")
    if re.search(r"unable to connect|Can't connect|Access denied", text):
        return DbtierError(f"sysbench cannot connect to the server: {_last_lines(text)}",
                           "check the socket or host and port, the user, and that the server runs; a password "
                           "goes in the environment or an option file, never on the command line")
    return DbtierError(f"sysbench failed at {clients} clients: {_last_lines(text)}",
                       "see the raw sysbench output in the run directory")


def _last_lines(text: str, n: int = 3) -> str:
    lines = [x.strip() for x in text.strip().splitlines() if x.strip() and x.strip() != "--- stderr ---"]
    return _redact(" | ".join(lines[-n:])) or "no output"
