"""Full-backup throughput to a directory and to a null sink, with the limiting side named.

PostgreSQL: pg_basebackup of the managed cluster (plain, tar, tar + gzip).
DuckDB: EXPORT DATABASE (Parquet) and a copy of the database file.
MariaDB: mariadb-backup of the managed server (a directory; xbstream; xbstream + gzip).
The OS page cache is dropped before each backup when dbtier runs as root, so
the source is really read; the result says whether it was.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.core.stats import representative, spread
from dbtier.measure import executor
from dbtier.measure.sampler import Sampler
from dbtier.model.dss import backup_bottleneck
from dbtier.workloads.dss import dir_bytes, drop_caches

PG_METHODS = {"plain": ["-Fp"], "tar": ["-Ft"], "tar-gzip": ["-Ft", "-z", "-Z", "1"]}


def _measure(fn: Callable[[], tuple[int, int | None]], devices: list[str]) -> dict[str, Any]:
    """Time fn -> (source bytes, bytes written or None). MB/s counts source bytes, as the backup
    studies did (pages backed up per second), so compressed and null targets compare."""
    dropped = drop_caches()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    self0 = time.process_time()
    with Sampler(devices, interval_s=0.5) as s:
        t0 = time.monotonic()
        nbytes, written = fn()
        secs = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cores = ((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime) + time.process_time() - self0) / secs
    o = s.overall()
    return {"bytes": nbytes, "output_bytes": written, "seconds": secs, "mbps": nbytes / secs / 1e6 if secs else None,
            "proc_cpu_cores": cores, "caches_dropped": dropped, "cpu_util": o["cpu"],
            "devices": {n: {"busy_pct": d["busy_pct"], "read_bytes": d["read_bytes"], "write_bytes": d["write_bytes"],
                            "mbps": d["mbps"]} for n, d in o["devices"].items()}}


def _measure_runs(fn: Callable[[], tuple[int, int | None]], cleanup: Callable[[], None], devices: list[str],
                  repeat: int) -> dict[str, Any]:
    """fn measured `repeat` times (each from a dropped page cache; cleanup() after each, whatever happens) -> the
    record of the run in the middle by MB/s (its CPU and devices), its `mbps` the median of the runs', with
    `runs`, `mbps_runs` and `mbps_spread` ({median, min, max, n, spread_pct})."""
    recs = []
    for _ in range(repeat):
        try:
            recs.append(_measure(fn, devices))
        finally:
            cleanup()
    mbps = [r["mbps"] if r["mbps"] is not None else 0.0 for r in recs]
    rec = dict(recs[representative(mbps)])
    sp = spread(mbps)
    rec.update({"mbps": sp["median"], "runs": len(recs), "mbps_runs": mbps, "mbps_spread": sp})
    return rec


def _judge(rec: dict[str, Any], src_dev: str | None, dst_dev: str | None, null_mbps: float | None) -> None:
    busy = lambda d: rec["devices"].get(d, {}).get("busy_pct", 0.0) if d else 0.0  # noqa: E731
    kind, why = backup_bottleneck(rec["target"], rec["compressed"], rec["proc_cpu_cores"], busy(src_dev),
                                  busy(dst_dev) if rec["target"] == "dir" else 0.0, rec["mbps"] or 0.0, null_mbps)
    rec["bottleneck"], rec["bottleneck_evidence"] = kind, why


def _keep(rec: dict[str, Any], label: dict[str, Any], src_dev: str | None, dst_dev: str | None,
          null_mbps: float | None, out: list[dict[str, Any]], on_result: Callable[[dict[str, Any]], None]
          ) -> float | None:
    """Label a measured backup, judge its limiting side against the null sink's MB/s, keep and report it
    -> the null sink's MB/s (this record's, when it is the null sink)."""
    rec.update(label)
    if rec["target"] == "null":
        null_mbps = rec["mbps"]
    _judge(rec, src_dev, dst_dev, null_mbps)
    out.append(rec)
    on_result(rec)
    return null_mbps


def pg_backups(cluster, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
    base = [f"{cluster.bindir}/pg_basebackup", "-h", str(cluster.dirs["socket"]), "-p", str(cluster.port),
            "-U", "dbtier", "-X", "fetch", "-c", "fast", "-P", "-v"]
    out = []
    for method in methods:
        null_mbps = None
        for target in (["null", "dir"] if method != "plain" else ["dir"]):
            dest = to_dir / f"dbtier-backup-{uuid.uuid4().hex[:8]}-{method}"

            def go() -> int:
                argv = base + PG_METHODS[method] + ["-D", "-" if target == "null" else str(dest)]
                if target == "dir":
                    dest.mkdir()
                done = executor.run(argv, discard_stdout=target == "null", timeout_s=6 * 3600)
                if done.returncode != 0:
                    raise _failure(done.stderr, target, method, to_dir)
                return _progress_bytes(done.stderr), (dir_bytes(dest) if target == "dir" else None)
            rec = _measure_runs(go, lambda: shutil.rmtree(dest, ignore_errors=True), devices, repeat)
            null_mbps = _keep(rec, {"target": target, "method": f"pg_basebackup {method}",
                                    "compressed": "gzip" in method}, src_dev, dst_dev, null_mbps, out, on_result)
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
    out = []
    null_mbps = None
    for target in ("null", "dir"):
        dest = to_dir / f"dbtier-backup-{uuid.uuid4().hex[:8]}.duckdb"

        def copy() -> int:
            with open(db_path, "rb") as src, open(os.devnull if target == "null" else dest, "wb") as dst:
                shutil.copyfileobj(src, dst, 8 << 20)
                if target == "dir":
                    dst.flush()
                    os.fsync(dst.fileno())
            size = db_path.stat().st_size
            return size, (size if target == "dir" else None)
        try:
            rec = _measure_runs(copy, lambda: dest.unlink(missing_ok=True), devices, repeat)
        except OSError as exc:
            raise DbtierError(f"{to_dir}: copying the database file failed ({exc.strerror})",
                              "free space there or choose another --to") from exc
        null_mbps = _keep(rec, {"target": target, "method": "file copy", "compressed": False}, src_dev, dst_dev,
                          null_mbps, out, on_result)
    dest = to_dir / f"dbtier-export-{uuid.uuid4().hex[:8]}"

    def export() -> int:
        from dbtier.workloads.duck_sql import run_sql    # Ctrl-C stops DuckDB before it goes on
        c = duckdb.connect(str(db_path), read_only=True)
        try:
            run_sql(c, f"EXPORT DATABASE {sql_str(str(dest))} (FORMAT parquet)")
        finally:
            c.close()
        return db_path.stat().st_size, dir_bytes(dest)
    try:
        rec = _measure_runs(export, lambda: shutil.rmtree(dest, ignore_errors=True), devices, repeat)
    except duckdb.Error as exc:
        raise DbtierError(f"EXPORT DATABASE to {to_dir} failed: {str(exc).splitlines()[0]}",
                          "free space there or choose another --to") from exc
    rec.update({"target": "dir", "method": "EXPORT DATABASE parquet", "compressed": True})
    _judge(rec, src_dev, dst_dev, None)
    out.append(rec)
    on_result(rec)
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
    total = read["counted_bytes"]
    for name in read["files"]:
        try:
            total += (base / name).stat().st_size
        except OSError:
            pass       # dropped since (a temporary table): it was copied, its size is gone
    return total


def mariadb_backups(server, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
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
    out = []
    for method in methods:
        null_mbps = None
        opts, compress = MARIADB_METHODS[method]
        for target in (["null", "dir"] if opts else ["dir"]):
            dest = to_dir / f"dbtier-backup-{uuid.uuid4().hex[:8]}-{method}"
            stages, out_file = mariadb_backup_stages(binary, server.client_args(), placement, method, target, dest)

            def go() -> tuple[int, int | None]:
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
                    written = out_file.stat().st_size if out_file else dir_bytes(dest)
                return mariadb_source_bytes(mariadb_backup_read(done[0].stderr)), written
            def cleanup() -> None:
                shutil.rmtree(dest, ignore_errors=True)
                if out_file is not None:
                    out_file.unlink(missing_ok=True)
            rec = _measure_runs(go, cleanup, devices, repeat)
            null_mbps = _keep(rec, {"target": target, "method": f"mariadb-backup {method}",
                                    "compressed": compress is not None}, src_dev, dst_dev, null_mbps, out, on_result)
    return out
