"""DuckDB statements that Ctrl-C stops cleanly (run_sql): used by the DuckDB engine, the TPC-H
generation and DuckDB's backup, which import nothing of each other for it."""

from __future__ import annotations

import signal
import threading
from typing import Any


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
