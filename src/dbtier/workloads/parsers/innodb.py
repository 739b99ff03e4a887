"""Pure InnoDB maths: MariaDB's status counters as per-second figures, and its wait events as classes.

Nothing here touches the server: the inputs are the rows of workloads/sql/mariadb_status.sql (SHOW
GLOBAL STATUS) sampled before and after a point, and the rows of workloads/sql/mariadb_waits.sql
(performance_schema) sampled during it, so every rule is tested on saved output of a real MariaDB
10.11 (tests/data/innodb/).

What MariaDB 10.11 has (checked on 10.11.19, the Debian 12 package):
- status: Innodb_data_reads/_writes (I/O requests) and Innodb_data_read/_written (bytes),
  Innodb_data_fsyncs (every InnoDB fsync, data files and redo log: 10.11 has no Innodb_os_log_fsyncs),
  Innodb_os_log_written (redo bytes), Innodb_log_writes (redo writes), Innodb_log_waits (waits for
  room in the log buffer), Innodb_buffer_pool_reads (pages read from disk: with innodb_flush_method
  O_DIRECT, 10.11's default, these bypass the OS page cache) vs Innodb_buffer_pool_read_requests
  (pages asked of the buffer pool), Innodb_row_lock_waits and Innodb_row_lock_time (ms),
  Com_commit/Com_rollback (explicit COMMIT/ROLLBACK statements only: autocommit statements count
  none) and Handler_commit/Handler_rollback (commits inside the server, one per statement as well as
  one per COMMIT: sysbench's oltp_write_only, 4 statements and a COMMIT, counts 5 per transaction;
  neither counter is the transaction count, which comes from the driver).
- performance_schema wait instruments: wait/io/file/innodb/innodb_data_file and innodb_temp_file,
  but no innodb_log_file: the redo log's writes and fsyncs are not instrumented, and neither is an
  InnoDB row lock wait. A session in its commit shows PROCESSLIST_STATE 'Commit' with no wait in
  progress; one waiting for a row lock shows INNODB_TRX.trx_state 'LOCK WAIT' inside its table access
  (wait/io/table/sql/handler). `classify_session` reads those; `classify_wait` the instrument names.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from dbtier.model.guards import read_path
from dbtier.workloads.parsers.oltp import Evidence, bottleneck

# SHOW GLOBAL STATUS names sampled around a point, spelled as SHOW STATUS spells them
# (information_schema.GLOBAL_STATUS gives them in capitals: `status_values` maps them back).
STATUS_COUNTERS = (
    "Innodb_data_reads", "Innodb_data_writes", "Innodb_data_read", "Innodb_data_written", "Innodb_data_fsyncs",
    "Innodb_os_log_written", "Innodb_log_writes", "Innodb_log_write_requests", "Innodb_log_waits",
    "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_wait_free",
    "Innodb_pages_read", "Innodb_pages_written", "Innodb_dblwr_writes", "Innodb_dblwr_pages_written",
    "Innodb_row_lock_waits", "Innodb_row_lock_time", "Innodb_deadlocks",
    "Com_commit", "Com_rollback", "Handler_commit", "Handler_rollback", "Questions", "Uptime",
)
_CANONICAL = {n.lower(): n for n in STATUS_COUNTERS}

MB = 1e6   # as the device sampler's mbps


def status_values(rows: Iterable[tuple[Any, Any]]) -> dict[str, float]:
    """(name, value) rows of SHOW GLOBAL STATUS or information_schema.GLOBAL_STATUS -> {name: number}.

    Names in any case come back as STATUS_COUNTERS spells them (others as given); non-numeric values
    (Innodb_buffer_pool_load_status ...) are left out."""
    out: dict[str, float] = {}
    for name, value in rows:
        try:
            x = float(value)
        except (TypeError, ValueError):
            continue
        out[_CANONICAL.get(str(name).lower(), str(name))] = x
    return out


def counters_delta(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float | None]:
    """after - before for every counter in both samples. A counter that went down (the server
    restarted, or FLUSH STATUS ran, between the samples) says nothing about the window: None."""
    out: dict[str, float | None] = {}
    for k in after:
        if k in before:
            d = after[k] - before[k]
            out[k] = d if d >= 0 else None
    return out


def _get(delta: Mapping[str, float | None], name: str) -> float | None:
    v = delta.get(name)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _per_s(x: float | None, seconds: float) -> float | None:
    return None if x is None else x / seconds


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


def innodb_figures(delta: Mapping[str, float | None], seconds: float,
                   transactions: float | None = None) -> dict[str, float | None]:
    """A point's counter deltas over its measured seconds -> InnoDB's figures, units in the names.

    A figure whose counter is missing (another server version) or went backwards is None, never 0.
    - buffer_pool_hit_ratio: 1 - pages read from disk / pages asked of the buffer pool;
    - row_lock_wait_sessions_avg: row lock wait ms per second / 1000: how many sessions were waiting
      for a row lock on average over the window (8 clients and 2.2: a quarter of their time), the
      counter's check on the sampled `lock` share;
    - log_bytes_per_transaction, fsyncs_per_transaction: over the driver's `transactions` (the status
      counters have no transaction count: Handler_commit counts statements too); None without it."""
    if not (isinstance(seconds, (int, float)) and seconds > 0):
        raise ValueError(f"the window must be positive seconds, not {seconds!r}")
    def g(n: str) -> float | None:
        return _get(delta, n)

    def mb(n: str) -> float | None:
        v = g(n)
        return None if v is None else v / MB / seconds

    reads, requests = g("Innodb_buffer_pool_reads"), g("Innodb_buffer_pool_read_requests")
    waits, lock_ms = g("Innodb_row_lock_waits"), g("Innodb_row_lock_time")
    return {
        "data_reads_per_s": _per_s(g("Innodb_data_reads"), seconds),
        "data_writes_per_s": _per_s(g("Innodb_data_writes"), seconds),
        "data_read_mb_per_s": mb("Innodb_data_read"),
        "data_written_mb_per_s": mb("Innodb_data_written"),
        "fsyncs_per_s": _per_s(g("Innodb_data_fsyncs"), seconds),
        "log_written_mb_per_s": mb("Innodb_os_log_written"),
        "log_writes_per_s": _per_s(g("Innodb_log_writes"), seconds),
        "log_waits_per_s": _per_s(g("Innodb_log_waits"), seconds),
        "log_bytes_per_transaction": _ratio(g("Innodb_os_log_written"), transactions),
        "fsyncs_per_transaction": _ratio(g("Innodb_data_fsyncs"), transactions),
        "buffer_pool_reads_per_s": _per_s(reads, seconds),
        "buffer_pool_read_requests_per_s": _per_s(requests, seconds),
        "buffer_pool_hit_ratio": (None if reads is None or requests is None or requests <= 0
                                  else 1.0 - reads / requests),
        "buffer_pool_wait_free_per_s": _per_s(g("Innodb_buffer_pool_wait_free"), seconds),
        "doublewrite_pages_per_s": _per_s(g("Innodb_dblwr_pages_written"), seconds),
        "row_lock_waits_per_s": _per_s(waits, seconds),
        "row_lock_wait_avg_ms": _ratio(lock_ms, waits),
        "row_lock_wait_sessions_avg": None if lock_ms is None else lock_ms / 1000.0 / seconds,
        "deadlocks_per_s": _per_s(g("Innodb_deadlocks"), seconds),
        "handler_commits_per_s": _per_s(g("Handler_commit"), seconds),
        "handler_rollbacks_per_s": _per_s(g("Handler_rollback"), seconds),
        "com_commit_per_s": _per_s(g("Com_commit"), seconds),
        "com_rollback_per_s": _per_s(g("Com_rollback"), seconds),
    }


# innodb_flush_method values whose data-file reads bypass the OS page cache (MariaDB 10.11's default
# is O_DIRECT; fsync and littlesync go through the page cache).
DIRECT_FLUSH_METHODS = {"O_DIRECT", "O_DIRECT_NO_FSYNC", "ALL_O_DIRECT"}


def bypasses_page_cache(flush_method: str | None) -> bool:
    return (flush_method or "").upper() in DIRECT_FLUSH_METHODS


def innodb_read_path(delta: Mapping[str, float | None], device_read_ios: float | None, remote: bool = False,
                     devices_measured: bool = True) -> dict[str, Any]:
    """The cache guard's read_path for an InnoDB point: Innodb_buffer_pool_reads (pages InnoDB read
    from its files because the buffer pool missed) against the devices' read I/Os. With O_DIRECT
    (`bypasses_page_cache`) each of those reads is a device read, so a small fraction means other
    readers' I/O is missing from the sample, not the page cache; with fsync it may be a page-cache hit,
    as PostgreSQL's blks_read."""
    return read_path(_get(delta, "Innodb_buffer_pool_reads"), device_read_ios, remote=remote,
                     devices_measured=devices_measured)


# MariaDB's performance_schema wait instruments grouped as oltp.classify_wait groups PostgreSQL's:
#   commit  - the commit's log reaching the device: the redo log file (innodb_log_file: MySQL and
#             MariaDB before 10.8; 10.11 has no such instrument), the binary log's files and its group
#             commit (MYSQL_BIN_LOG / TC_LOG / wait_for_commit, with log_bin on), InnoDB's log write
#             and flush mutexes of older versions;
#   storage - InnoDB's data and temporary files, and any other file I/O of the server;
#   lock    - contention in memory: table and metadata locks, and every mutex, rwlock, sxlock and
#             condition other than the commit ones (InnoDB's index_tree_rw_lock, lock_latch,
#             buf_pool_mutex ...);
#   client  - `idle` (the session waits for its client's next statement) and socket I/O;
#   cpu     - wait/io/table/...: the table access itself (the handler call running in the engine);
#             what it waits on is nested under it, and classify_session reads the innermost event;
#   other   - anything not above.
_COMMIT_PREFIXES = (
    "wait/io/file/innodb/innodb_log_file", "wait/io/file/sql/binlog", "wait/io/file/sql/tclog",
    "wait/synch/mutex/sql/MYSQL_BIN_LOG::", "wait/synch/cond/sql/MYSQL_BIN_LOG::",
    "wait/synch/mutex/sql/TC_LOG", "wait/synch/cond/sql/TC_LOG", "wait/synch/cond/sql/wait_for_commit::",
    "wait/synch/cond/sql/COND_group_commit_orderer", "wait/synch/mutex/sql/LOCK_commit_ordered",
    "wait/synch/mutex/sql/LOCK_prepare_ordered", "wait/synch/mutex/sql/LOCK_after_binlog_sync",
    "wait/synch/mutex/innodb/log_sys_write_mutex", "wait/synch/mutex/innodb/log_flush_order_mutex",
)


def classify_wait(event_name: str | None) -> str:
    """One performance_schema instrument name -> storage | commit | lock | cpu | client | other."""
    e = event_name or ""
    if e == "idle" or e.startswith("wait/io/socket/"):
        return "client"
    if e.startswith(_COMMIT_PREFIXES):
        return "commit"
    if e.startswith("wait/io/file/"):
        return "storage"
    if e.startswith("wait/io/table/"):
        return "cpu"
    if e.startswith(("wait/lock/", "wait/synch/")):
        return "lock"
    return "other"


def classify_session(command: str | None, state: str | None, trx_state: str | None,
                     events: Iterable[Mapping[str, Any]]) -> str:
    """One session of one sample (its rows of mariadb_waits.sql) -> its class.

    In order: a session with no statement (command Sleep) or idle waits for its client; an InnoDB
    transaction in LOCK WAIT waits for a row lock (not instrumented); else the innermost wait in
    progress decides (the highest EVENT_ID: nested events come after the table access holding them),
    unless it is the table access itself; else a session in state 'Commit' is writing and syncing
    its redo log (not instrumented in 10.11); else it is running: cpu."""
    if command == "Sleep":
        return "client"
    if trx_state == "LOCK WAIT":
        return "lock"
    live = [e for e in events if e.get("event_name") and _true(e.get("in_progress"))]
    if live:
        inner = max(live, key=lambda e: int(e.get("event_id") or 0))
        kind = classify_wait(inner["event_name"])
        if kind != "cpu":
            return kind
    if state == "Commit":
        return "commit"
    if state and state.startswith("Waiting for") and "lock" in state:
        return "lock"
    return "cpu"


def _true(x: Any) -> bool:
    return x in (1, True, "1")


def session_classes(rows: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """One sample's rows (mariadb_waits.sql, as dicts) -> Counter of classes, one per session."""
    by_conn: dict[Any, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_conn.setdefault(r.get("conn_id"), []).append(r)
    out: Counter[str] = Counter()
    for rs in by_conn.values():
        first = rs[0]
        out[classify_session(first.get("command"), first.get("state"), first.get("trx_state"), rs)] += 1
    return out


def innodb_bottleneck(ev: Evidence, driver: str = "sysbench") -> tuple[str, str]:
    """oltp.bottleneck's verdict and evidence for a MariaDB point: the same rules over the same classes;
    the words name the driver and MariaDB's sessions instead of pgbench and backends."""
    kind, why = bottleneck(ev)
    return kind, why.replace("pgbench", driver).replace("backend", "session")
