"""Full-backup throughput to a directory and to a null sink, with the limiting side named.

PostgreSQL: pg_basebackup of the managed cluster (plain, tar, tar + gzip).
DuckDB: EXPORT DATABASE (Parquet) and a copy of the database file.
MariaDB: mariadb-backup of the managed server (a directory; xbstream; xbstream + gzip).
The OS page cache is dropped before each backup when dbtier runs as root, so
the source is really read; the result says whether it was. Every write to a directory is durable
before the clock stops: pg_basebackup syncs what it wrote (its default), and dbtier fsyncs the file
copy, EXPORT DATABASE's files and mariadb-backup's output (and their directories) inside the timed
window, so the page cache never makes a target look faster than it is.

Each measured backup's program output (pg_basebackup's progress and messages, mariadb-backup's log,
the EXPORT DATABASE statement and the files it wrote) is in its record's `raw_outputs` {file name:
text}, for the caller to keep in the run's raw/ directory.

`dbtier bench backup` as a library call: `BackupRequest` (every option, checked as it is made) and
`run(req, start, save, ...) -> BenchBackup`, which builds the engine's source, backs it up by each
method, keeps each backup's program output in the run's raw/ directory and hands the document's section
to `save` after each step; the terminal is the caller's (callbacks).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import resource
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager

from dbtier.core.errors import DbtierError, expect
from dbtier.core.files import sql_str
from dbtier.core.stats import representative, spread
from dbtier.measure import executor, slowtier
from dbtier.measure.machine import devices_for
from dbtier.measure.sampler import Sampler
from dbtier.model.dss import BACKUP_RULE, backup_bottleneck, estimate, near_throttle
from dbtier.model.guards import backup_guards

if TYPE_CHECKING:
    from dbtier.workloads.mariadb import Server
    from dbtier.workloads.postgres import Cluster
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RunDir
from dbtier.workloads.dss import dir_bytes, drop_caches
from dbtier.workloads.engine import Engine, ServerSpec, engine_class
from dbtier.workloads.settings import EngineOptions

PG_METHODS = {"plain": ["-Fp"], "tar": ["-Ft"], "tar-gzip": ["-Ft", "-z", "-Z", "1"]}


Backup = Callable[[], "tuple[int, int | None, str | None]"]   # -> (source bytes, bytes written or None, raw output)


def fsync_tree(path: Path) -> None:
    """fsync every file under path (or path itself, a file), then every directory up to and including
    path's parent: the backup is on the device, names included."""
    if path.is_file():
        files, dirs = [path], [path.parent]
    else:
        files, dirs = [], []
        for root, _, names in os.walk(path):
            dirs.append(Path(root))
            files += [Path(root, n) for n in names]
        dirs.append(path.parent)
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for d in dirs:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _measure(fn: Backup, devices: list[str]) -> dict[str, Any]:
    """Time fn -> (source bytes, bytes written or None, raw output). MB/s counts source bytes, as the
    backup studies did (pages backed up per second), so compressed and null targets compare."""
    dropped = drop_caches()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    self0 = time.process_time()
    with Sampler(devices, interval_s=0.5) as s:
        t0 = time.monotonic()
        nbytes, written, raw = fn()
        secs = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cores = ((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime) + time.process_time() - self0) / secs
    o = s.overall()
    return {"bytes": nbytes, "output_bytes": written, "seconds": secs, "mbps": nbytes / secs / 1e6 if secs else None,
            "proc_cpu_cores": cores, "caches_dropped": dropped, "cpu_util": o["cpu"],
            "devices": {n: {"busy_pct": d["busy_pct"], "read_bytes": d["read_bytes"], "write_bytes": d["write_bytes"],
                            "mbps": d["mbps"], "read_iops": d["read_iops"], "write_iops": d["write_iops"],
                            "read_merged_iops": d["read_merged_iops"], "write_merged_iops": d["write_merged_iops"]}
                        for n, d in o["devices"].items()}, "_raw": raw}


def _measure_runs(fn: Backup, cleanup: Callable[[], None], devices: list[str], repeat: int,
                  warmup: bool = False) -> dict[str, Any]:
    """fn measured `repeat` times (each from a dropped page cache; cleanup() after each, whatever happens) -> the
    record of the run in the middle by MB/s (for an even count the lower middle: core.stats.representative):
    its bytes, seconds and MB/s (so bytes / seconds = mbps), CPU and devices, with `run` (its number, from 1),
    `runs`, `mbps_runs`, `seconds_runs` and `mbps_spread` ({median, min, max, n, spread_pct}: the median MB/s
    is there, stated as the median).

    `warmup`: one run first, not measured (`warmup_runs` 1). The first backup after the load is the slow one
    whatever the cache state inside the machine (on a 2-core VM: 362 MB/s to null, then 796 and 828 with the
    page cache dropped before each), so the first method of a series warms up and the spread is the runs'."""
    if warmup:
        try:
            _measure(fn, devices)
        finally:
            cleanup()
    recs = []
    for _ in range(repeat):
        try:
            recs.append(_measure(fn, devices))
        finally:
            cleanup()
    mbps = [r["mbps"] if r["mbps"] is not None else 0.0 for r in recs]
    k = representative(mbps)
    rec = dict(recs[k])
    rec.update({"run": k + 1, "runs": len(recs), "mbps_runs": mbps, "seconds_runs": [r["seconds"] for r in recs],
                "mbps_spread": spread(mbps), "warmup_runs": int(warmup), "_raw": [r["_raw"] for r in recs]})
    return rec


def _tier_rate(rec: dict[str, Any], dev: str | None, limit: dict[str, Any] | None, write: bool
               ) -> tuple[float, float, str] | None:
    """(the rate through an emulated tier, its throttle's limit, unit) for backup_bottleneck, or None.

    limit: {read_bps, write_bps, read_iops, write_iops} of the tier (0: no limit that way). The rate is the
    tier device's own bytes (or I/Os) over the backup's seconds; without the device's figures, the bytes the
    backup read or wrote."""
    if not limit or not rec.get("seconds"):
        return None
    way = "write" if write else "read"
    d = rec.get("devices", {}).get(dev or "", {})
    secs = rec["seconds"]
    if limit.get(f"{way}_bps"):
        moved = d.get(f"{way}_bytes") or (rec.get("output_bytes") if write else rec.get("bytes")) or 0
        return moved / secs / 1e6, limit[f"{way}_bps"] / 1e6, "MB/s"
    if limit.get(f"{way}_iops") and f"{way}_iops" in d:     # submitted I/Os, as the throttle counts them
        return d[f"{way}_iops"] + d.get(f"{way}_merged_iops", 0.0), float(limit[f"{way}_iops"]), "IOPS"
    return None


def judge(rec: dict[str, Any], src_dev: str | None, dst_dev: str | None,
          src_limit: dict[str, Any] | None = None, dst_limit: dict[str, Any] | None = None) -> None:
    """Set rec's `bottleneck` and `bottleneck_evidence` (model.dss.backup_bottleneck) from its figures, its
    `null_mbps` (the null sink's, same method) and, for a source or target on an emulated tier, its throttle."""
    def busy(d: str | None) -> Any:
        return rec["devices"].get(d, {}).get("busy_pct", 0.0) if d else 0.0
    to_dir = rec["target"] == "dir"
    median = (rec.get("mbps_spread") or {}).get("median")
    dst_t = _tier_rate(rec, dst_dev, dst_limit, True) if to_dir else None
    src_t = _tier_rate(rec, src_dev, src_limit, False)
    kind, why = backup_bottleneck(rec["target"], rec["compressed"], rec["proc_cpu_cores"], busy(src_dev),
                                  busy(dst_dev) if to_dir else 0.0, median or rec["mbps"] or 0.0,
                                  rec.get("null_mbps"), medians=rec.get("runs", 1) > 1,
                                  null_of=rec.get("null_method"), dst_throttle=dst_t, src_throttle=src_t)
    rec["bottleneck"], rec["bottleneck_evidence"] = kind, why
    # a rate at an emulated tier's throttle is its own evidence: the null sink's runs are not needed for it
    rec["at_throttle"] = near_throttle(dst_t) or near_throttle(src_t)


def null_first(methods: list[str], plain: str = "plain") -> list[str]:
    """The methods in the order given, the one without a null sink (`plain`) last: it is judged against the
    uncompressed stream's null sink, which reads the same files the same way."""
    return [m for m in methods if m != plain] + [m for m in methods if m == plain]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _keep(rec: dict[str, Any], label: dict[str, Any], src_dev: str | None, dst_dev: str | None,
          null_mbps: float | None, out: list[dict[str, Any]], on_result: Callable[[dict[str, Any]], None],
          null_method: str | None = None) -> float | None:
    """Label a measured backup, judge its limiting side against the null sink's MB/s, keep and report it
    -> the null sink's MB/s (this record's, when it is the null sink). A directory run's `null_mbps` is the
    null sink's of the same method, or of `null_method` (`null_method` says so) for a method that has no
    null sink of its own; None without one."""
    rec.update(label)
    if rec["target"] == "null":     # the reference: the median of its runs (the run's MB/s for one run)
        null_mbps = (rec.get("mbps_spread") or {}).get("median") or rec["mbps"]
    rec["null_mbps"] = null_mbps if rec["target"] == "dir" else None
    if rec["null_mbps"] is not None and null_method:
        rec["null_method"] = null_method
    raw = rec.pop("_raw", None) or []
    rec["raw_outputs"] = {f"backup-{_slug(rec['method'])}-{rec['target']}-run{i}.txt": text
                          for i, text in enumerate(raw, start=1) if text}
    judge(rec, src_dev, dst_dev)
    out.append(rec)
    on_result(rec)
    return null_mbps


def pg_backups(cluster: Cluster, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
    base = [f"{cluster.bindir}/pg_basebackup", "-h", str(cluster.dirs["socket"]), "-p", str(cluster.port),
            "-U", "dbtier", "-X", "fetch", "-c", "fast", "-P", "-v"]
    import psycopg
    with psycopg.connect(cluster.conninfo("postgres"), autocommit=True, connect_timeout=15) as c:
        c.execute("CHECKPOINT")     # the load's dirty pages written now: no backup's `-c fast` checkpoint pays it
    out: list[dict[str, Any]] = []
    refs: dict[str, float | None] = {}
    for method in null_first(methods):
        null_mbps = refs.get("tar") if method == "plain" else None
        for target in (["null", "dir"] if method != "plain" else ["dir"]):
            dest = to_dir / f"dbtier-backup-{uuid.uuid4().hex[:8]}-{method}"

            def go() -> tuple[int, int | None, str]:
                # pg_basebackup syncs a directory or tar backup itself before it exits (its default)
                argv = base + PG_METHODS[method] + ["-D", "-" if target == "null" else str(dest)]
                if target == "dir":
                    dest.mkdir()
                done = executor.run(argv, discard_stdout=target == "null", timeout_s=6 * 3600)
                if done.returncode != 0:
                    raise _failure(done.stderr, target, method, to_dir)
                return (_progress_bytes(done.stderr), (dir_bytes(dest) if target == "dir" else None),
                        " ".join(argv) + "\n" + done.stderr)
            rec = _measure_runs(go, lambda: shutil.rmtree(dest, ignore_errors=True), devices, repeat, warmup=not out)
            null_mbps = _keep(rec, {"target": target, "method": f"pg_basebackup {method}",
                                    "compressed": "gzip" in method}, src_dev, dst_dev, null_mbps, out, on_result,
                              "pg_basebackup tar" if method == "plain" else None)
        refs[method] = null_mbps
    return out


def _progress_bytes(stderr: str) -> int:
    """pg_basebackup -P's last 'N/M kB' line: the bytes it sent."""
    found = re.findall(r"(\d+)/(\d+) kB", stderr)
    if not found:
        raise DbtierError("pg_basebackup did not report its progress", "see the raw output")
    return int(found[-1][0]) * 1024


def _failure(stderr: str, target: str, method: str, to_dir: Path, tool: str = "pg_basebackup") -> DbtierError:
    if "No space left" in stderr:
        return DbtierError(f"{to_dir} filled up during the {method} backup (no space left on device)",
                           "free space there or choose another --to; finished backups are kept")
    last = " | ".join(stderr.strip().splitlines()[-2:])
    return DbtierError(f"{tool} ({method} to {target}) failed: {last}", "see the server log in the run directory")


def duckdb_backups(db_path: Path, to_dir: Path, devices: list[str], src_dev: str | None, dst_dev: str | None,
                   on_result: Callable[[dict[str, Any]], None], repeat: int = 1) -> list[dict[str, Any]]:
    import duckdb
    out: list[dict[str, Any]] = []
    null_mbps = None
    for target in ("null", "dir"):
        dest = to_dir / f"dbtier-backup-{uuid.uuid4().hex[:8]}.duckdb"

        def copy() -> tuple[int, int | None, None]:
            with open(db_path, "rb") as src, open(os.devnull if target == "null" else dest, "wb") as dst:
                shutil.copyfileobj(src, dst, 8 << 20)
            if target == "dir":
                fsync_tree(dest)
            size = db_path.stat().st_size
            return size, (size if target == "dir" else None), None
        try:
            rec = _measure_runs(copy, lambda: dest.unlink(missing_ok=True), devices, repeat, warmup=not out)
        except OSError as exc:
            raise DbtierError(f"{to_dir}: copying the database file failed ({exc.strerror})",
                              "free space there or choose another --to") from exc
        null_mbps = _keep(rec, {"target": target, "method": "file copy", "compressed": False}, src_dev, dst_dev,
                          null_mbps, out, on_result)
    dest = to_dir / f"dbtier-export-{uuid.uuid4().hex[:8]}"

    def export() -> tuple[int, int, str]:
        from dbtier.workloads.duck_sql import run_sql    # Ctrl-C stops DuckDB before it goes on
        sql = f"EXPORT DATABASE {sql_str(str(dest))} (FORMAT parquet)"
        c = duckdb.connect(str(db_path), read_only=True)
        try:
            run_sql(c, sql)
        finally:
            c.close()
        fsync_tree(dest)       # DuckDB leaves the exported files in the page cache
        files = sorted((str(f.relative_to(dest)), f.stat().st_size) for f in dest.rglob("*") if f.is_file())
        return db_path.stat().st_size, dir_bytes(dest), sql + "\n" + "".join(f"{n}\t{b}\n" for n, b in files)
    try:
        rec = _measure_runs(export, lambda: shutil.rmtree(dest, ignore_errors=True), devices, repeat)
    except duckdb.Error as exc:
        raise DbtierError(f"EXPORT DATABASE to {to_dir} failed: {str(exc).splitlines()[0]}",
                          "free space there or choose another --to") from exc
    _keep(rec, {"target": "dir", "method": "EXPORT DATABASE parquet", "compressed": True}, src_dev, dst_dev, None,
          out, on_result)
    return out


# ------------------------------------------------------------------ MariaDB (mariadb-backup)
# method -> (mariadb-backup's options, the compressor its stream is piped through or None).
# plain: a directory as mariadb-backup writes it (no null sink: it needs a directory). The timing stops
# when --backup ends: a restore would first run --prepare (applying the copied redo), which is not part
# of taking the backup and is not timed. stream: xbstream on stdout, to /dev/null and to a file.
# stream-gzip: xbstream through `gzip -1` (as pg_basebackup's tar-gzip: -Z 1), to null and to a file.
MARIADB_METHODS: dict[str, tuple[list[str], list[str] | None]] = {
    "plain": ([], None),
    "stream": (["--stream=xbstream"], None),
    "stream-gzip": (["--stream=xbstream"], ["gzip", "-1"]),
}


def mariadb_backup_stages(binary: str, client_args: list[str], placement: dict[str, str], method: str,
                          target: str, dest: Path) -> tuple[list[list[str]], Path | None]:
    """The pipeline of one backup -> (stages, the file the last stage's stdout goes to, None for null).

    client_args come first (mariadb-backup takes --no-defaults only there). The InnoDB directories are
    passed from the server's placement (redo and undo may live outside the datadir). --target-dir is
    the backup for plain; for a stream it is a scratch directory under --to (mariadb-backup names it in
    its log but writes nothing there), so nothing lands in the working directory."""
    if method not in MARIADB_METHODS:
        raise DbtierError(f"backup method {method!r}: not one of {', '.join(MARIADB_METHODS)}")
    opts, compress = MARIADB_METHODS[method]
    if target == "null" and not opts:
        raise DbtierError("a plain mariadb-backup writes a directory: it has no null sink", "use stream")
    argv = [binary, *client_args, "--backup", f"--datadir={placement['data']}",
            f"--innodb-log-group-home-dir={placement.get('redo', placement['data'])}",
            f"--innodb-undo-directory={placement.get('undo', placement['data'])}",
            f"--target-dir={dest}", *opts]
    stages = [argv] + ([list(compress)] if compress else [])
    if not opts:
        return stages, None          # mariadb-backup writes the directory itself; stdout is empty
    suffix = ".xb.gz" if compress else ".xb"
    return stages, (dest.parent / (dest.name + suffix) if target == "dir" else None)


_PREFIX = r"^(?:\[\d+\] )?(?:[\d-]+ [\d:]+ )?"
_COPIED = re.compile(_PREFIX + r"(?:Copying (\S+) to |Streaming (\S+)(?: to <STDOUT>)?$"
                     r"|aria table file (\S+) is copied successfully)", re.M)
_LOG_TABLE = re.compile(_PREFIX + r"Copied file (\S+) for log table .*, (\d+) bytes$", re.M)
_TAIL = re.compile(r"Stop copying aria log file tail: .*, copied (\d+) bytes$", re.M)
_REDO = re.compile(r"Redo log \(from LSN (\d+) to (\d+)\) was copied")
_CD = re.compile(_PREFIX + r"cd to (\S+?)/?$", re.M)


def mariadb_backup_read(stderr: str) -> dict[str, Any]:
    """What mariadb-backup --backup says it copied, from its log (stderr) -> {datadir, files, counted_bytes}.

    files: the files it copied whole, as it names them (absolute, or relative to datadir, the
    directory it changed to); their sizes are not in the log. counted_bytes: what the log counts
    itself: the copied redo (the LSN range: an LSN counts bytes), the aria log's tail copies and the
    log tables' files (CSV), named with their sizes. A file named twice counts once."""
    m = _CD.search(stderr)
    redo = _REDO.search(stderr)
    if m is None or redo is None:
        raise DbtierError("mariadb-backup's log does not say what it copied (no `cd to` or `Redo log ... was "
                          "copied` line)", "see the raw output")
    files: list[str] = []
    for g in _COPIED.findall(stderr):
        name = next(x for x in g if x)
        if name not in files:
            files.append(name)
    logged = {name: int(n) for name, n in _LOG_TABLE.findall(stderr)}
    files = [f for f in files if f not in logged]
    counted = int(redo.group(2)) - int(redo.group(1)) + sum(int(n) for n in _TAIL.findall(stderr)) + sum(logged.values())
    return {"datadir": m.group(1), "files": files, "counted_bytes": counted}


def mariadb_source_bytes(read: dict[str, Any]) -> int:
    """The bytes mariadb-backup read: the sizes of the files it copied whole (as they are now, just after
    the backup) plus what its log counts (mariadb_backup_read)."""
    base = Path(read["datadir"])
    total = int(read["counted_bytes"])
    for name in read["files"]:
        try:
            total += (base / name).stat().st_size
        except OSError:
            pass       # dropped since (a temporary table): it was copied, its size is gone
    return total


def mariadb_backups(server: Server, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
                    dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
                    ) -> list[dict[str, Any]]:
    """mariadb-backup of a managed MariaDB server (workloads/mariadb.Server: it reads the server's files,
    so the server is local) per method in MARIADB_METHODS, to null first (the reference) and then to a
    directory under to_dir; one record per backup, with pg_backups' keys (method "mariadb-backup METHOD").

    bytes (and MB/s) count what mariadb-backup read, from its log (mariadb_backup_read: the files it
    names, their sizes, plus the redo and log tails it counts), the same for null, file and gzip, so the
    three compare; output_bytes is what landed under to_dir. mariadb-backup runs as dbtier's own OS user
    (root: it reads the mysql-owned files) with the server's client args (socket, user dbtier): the dbtier account has every privilege (RELOAD, PROCESS, LOCK TABLES,
    BINLOG MONITOR among them), so nothing is granted here. Everything written under to_dir is removed
    after each backup; a full disk there is a DbtierError (the finished records are kept by on_result)."""
    binary = shutil.which("mariadb-backup") or shutil.which("mariadb-backup", path="/usr/bin:/usr/local/bin")
    if binary is None:
        raise DbtierError("mariadb-backup is not installed", "apt-get install mariadb-backup (Debian/Ubuntu) or "
                          "dnf install mariadb-backup (Fedora/RHEL)")
    unknown = [m for m in methods if m not in MARIADB_METHODS]
    if unknown:          # before any backup runs
        raise DbtierError(f"backup method {unknown[0]!r}: not one of {', '.join(MARIADB_METHODS)}")
    if any(MARIADB_METHODS[m][1] for m in methods):
        executor.require("gzip")
    placement = server.placement()
    out: list[dict[str, Any]] = []
    refs: dict[str, float | None] = {}
    for method in null_first(methods):
        null_mbps = refs.get("stream") if method == "plain" else None
        opts, compress = MARIADB_METHODS[method]
        for target in (["null", "dir"] if opts else ["dir"]):
            dest = to_dir / f"dbtier-backup-{uuid.uuid4().hex[:8]}-{method}"
            stages, out_file = mariadb_backup_stages(binary, server.client_args(), placement, method, target, dest)

            def go() -> tuple[int, int | None, str | None]:
                try:
                    dest.mkdir()
                    done = executor.pipeline(stages, stdout_path=out_file, env=server.client_env(),
                                             timeout_s=6 * 3600)
                except OSError as exc:
                    if exc.errno == errno.ENOSPC:
                        raise _failure("No space left", target, method, to_dir, "mariadb-backup") from exc
                    raise DbtierError(f"{to_dir}: cannot write the {method} backup there ({exc.strerror})",
                                      "choose another --to") from exc
                said = "\n".join(d.stderr for d in done)
                if any(d.returncode != 0 for d in done) or "completed OK!" not in done[0].stderr:
                    raise _failure(said, target, method, to_dir, "mariadb-backup")
                written = None
                if target == "dir":
                    fsync_tree(out_file or dest)
                    written = out_file.stat().st_size if out_file else dir_bytes(dest)
                raw = " | ".join(" ".join(st) for st in stages) + "\n" + said
                return mariadb_source_bytes(mariadb_backup_read(done[0].stderr)), written, raw
            def cleanup() -> None:
                shutil.rmtree(dest, ignore_errors=True)
                if out_file is not None:
                    out_file.unlink(missing_ok=True)
            rec = _measure_runs(go, cleanup, devices, repeat, warmup=not out)
            null_mbps = _keep(rec, {"target": target, "method": f"mariadb-backup {method}",
                                    "compressed": compress is not None}, src_dev, dst_dev, null_mbps, out, on_result,
                              "mariadb-backup stream" if method == "plain" else None)
        refs[method] = null_mbps
    return out


# ------------------------------------------------------------------ the library call: dbtier bench backup

# The source's size per unit of scale, to size an emulated tier: pgbench 16 MB a scale (with WAL and
# indexes), sysbench's 4 tables of 100,000 rows a scale (with InnoDB's own files), TPC-H per SF (model.dss).
_SOURCE_BYTES_PER_SCALE = {"postgres": 24e6, "mariadb": 128e6}

METHOD = ("each backup timed end to end, its writes synced to the device before the clock stops; "
          "OS page cache dropped first when root; null sink: pg_basebackup tar / mariadb-backup "
          "xbstream to stdout discarded / file read to /dev/null")


@dataclass(frozen=True, kw_only=True)
class BackupRequest:
    """`dbtier bench backup`: `engine`'s source of `scale` (pgbench or sysbench scale, at least 1; TPC-H SF for
    duckdb) built in `data`, backed up by `methods` (None: all of the engine's; an engine without a choice
    takes none) to the directory `to` and to a null sink, each `repeat` times; `emulate` DIR=RATE: `to` or
    `data` made an emulated tier throttled to RATE; `port`, `os_user`: the managed server's; `options`: the
    engine's own settings (None: their defaults).

    Checked as it is made, with the wording the command's options have: the methods, the scale, both
    directories (made absolute: what the result says) and `emulate` (parsed into `emulation`)."""
    engine: str = "postgres"
    to: str
    data: str
    scale: float = 20
    methods: tuple[str, ...] | None = None
    repeat: int = 1
    emulate: str | None = None
    port: int | None = None
    os_user: str | None = None
    options: EngineOptions | None = None
    emulation: slowtier.Emulation | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        cls = engine_class(self.engine, "backup")
        if self.methods is not None and not cls.backup_methods:
            raise DbtierError(f"--methods does not apply to {self.engine} (it runs {', '.join(cls.backup_fixed)})",
                              "leave --methods out")
        methods = tuple(self.methods) if self.methods is not None else cls.backup_methods
        bad = [m for m in methods if m not in cls.backup_methods]
        if cls.backup_methods and (bad or not methods):
            raise DbtierError(f"--methods: unknown method {', '.join(bad) or '(none)'}",
                              f"choose from {', '.join(cls.backup_methods)}")
        if not (self.scale > 0):
            raise DbtierError(f"--scale must be positive, got {self.scale}", "for example --scale 20")
        if self.engine != "duckdb" and not (self.scale >= 1):
            raise DbtierError(f"--scale {self.scale:g}: the {self.engine} source is pgbench/sysbench data, whose "
                              "scale is at least 1", "for example --scale 20")
        for flag, d in (("--to", self.to), ("--data", self.data)):
            if not Path(d).is_dir():
                raise DbtierError(f"{flag} {d}: no such directory", "create it, or pass an existing directory")
        object.__setattr__(self, "methods", methods)
        object.__setattr__(self, "to", os.path.abspath(self.to))        # what the result and report say
        object.__setattr__(self, "data", os.path.abspath(self.data))
        if self.options is None:
            object.__setattr__(self, "options", cls.options_type("backup"))
        object.__setattr__(self, "emulation", self._emulation())

    def _emulation(self) -> slowtier.Emulation | None:
        """`emulate` DIR=RATE, DIR one of `to` and `data` (checked before anything is built), or None."""
        if not self.emulate:
            return None
        emu = slowtier.parse(self.emulate, allow_bps=True)
        here = os.path.realpath(emu.dir)
        if here not in (os.path.realpath(self.to), os.path.realpath(self.data)):
            raise DbtierError(f"--emulate {self.emulate}: {emu.dir} is neither --to ({self.to}) nor --data "
                              f"({self.data})",
                              "emulate the backup target (--emulate TO_DIR=40MiBps) or the source's directory")
        return emu


@dataclass(frozen=True, kw_only=True)
class BenchBackup(Result):
    """`bench backup`'s answer: the document's section (`bench`, `engine`, `source`, `targets`: one record per
    backup with its figures and limiting side, `emulated`, `guards`, and `notes` when there are any)."""
    kind: str = "bench.backup"


def run(req: BackupRequest, start: Callable[[dict[str, Any]], RunDir], save: Callable[[dict[str, Any]], None],
        on_result: Callable[[dict[str, Any]], None] = lambda _rec: None,
        on_note: Callable[[str], None] = lambda _note: None,
        progress: Callable[[str], ContextManager[object]] = lambda _what: contextlib.nullcontext()
        ) -> BenchBackup:
    """The request's backups. `start(params)` makes the run's directory (each backup's program output goes to
    its raw/) once the engine's tools are checked, before anything is built; `save(section)` after each step
    with the section so far (and once more with it when the call fails, for the caller to end its run with);
    `on_note(text)` for a note added to the section, `on_result(rec)` for each backup as it is kept, and
    `progress(what)` a context around building the source and the backups. An emulated tier is removed
    whatever happens; what of it could not be is in the section's notes."""
    cls = engine_class(req.engine, "backup")
    cls.check()
    params = {"engine": req.engine, "to": req.to, "data": req.data, "scale": req.scale,
              "methods": list(req.methods or ()) or list(cls.backup_fixed), "repeat": req.repeat,
              "emulate": req.emulate, "method": METHOD, "limit_rule": BACKUP_RULE}
    run_dir = start(params)
    section: dict[str, Any] = {"bench": "backup", "engine": req.engine, "source": None, "targets": [],
                               "emulated": None}
    tier = slowtier.SlowTier(req.emulation) if req.emulation else None
    left: list[str] = []
    try:
        try:
            data, to = req.data, req.to
            if tier:
                per = _SOURCE_BYTES_PER_SCALE.get(req.engine) or estimate("duckdb", 1)["disk_gb"] * 1e9
                tier.open_for(2 * req.scale * per)
                section["emulated"] = tier.describe()
                placed = tier.place({"source": req.data, "target": req.to})
                data, to = placed["source"], placed["target"]
                section["emulated"]["roles"] = [r for r, d in (("source", data), ("target", to)) if d == tier.mount]
                section.setdefault("notes", []).append(section["emulated"]["note"])
                on_note(section["emulated"]["note"])
                save(section)
            _backups(req, cls, section, run_dir, save, on_result, progress, data, to, tier)
        finally:
            if tier:
                left = [f"the emulated tier could not be removed whole: {x}" for x in tier.close()]
                if left:
                    section.setdefault("notes", []).extend(left)
    except BaseException:
        with contextlib.suppress(Exception):    # a full disk must not hide what ended the call
            save(section)
        raise
    if left:
        save(section)
    return BenchBackup(section=Frozen(section))


def _backups(req: BackupRequest, cls: type[Engine], section: dict[str, Any], run_dir: RunDir,
             save: Callable[[dict[str, Any]], None], on_result: Callable[[dict[str, Any]], None],
             progress: Callable[[str], ContextManager[object]], data: str, to: str,
             tier: slowtier.SlowTier | None) -> None:
    """The engine's source built in `data` and backed up to `to` (each where an emulated tier put it)."""
    src_dev = next(iter(devices_for([data])), None)
    dst_dev = next(iter(devices_for([to])), None)
    devices = [d for d in dict.fromkeys([src_dev, dst_dev]) if d]
    limit = {k: getattr(tier.emu, k) for k in ("read_bps", "write_bps", "read_iops", "write_iops")} if tier else None

    def kept(rec: dict[str, Any]) -> None:
        raw = rec.pop("raw_outputs", None) or {}
        for name, text in raw.items():
            run_dir.raw_path(name).write_text(text)
        rec["raw_files"] = [f"raw/{name}" for name in raw]
        if tier:       # the limiting side against the throttle of the side that is emulated
            judge(rec, src_dev, dst_dev, limit if data == tier.mount else None, limit if to == tier.mount else None)
        section["targets"].append(rec)
        section["guards"] = backup_guards(section["targets"])
        save(section)
        on_result(rec)
    opts = expect(req.options, "BackupRequest.__post_init__ sets the engine's options")
    engine = cls(ServerSpec(Path(data), {}, port=req.port, os_user=req.os_user, settings=cls.settings(opts, [1])))
    try:
        with progress(f"building the {req.engine} source"):
            engine.open()
            section["source"] = engine.backup_source(req.scale)
            save(section)
            engine.backup(Path(to), list(req.methods or ()), devices, src_dev, dst_dev, kept, req.repeat)
    finally:
        engine.close()
