"""Full-backup throughput to a directory and to a null sink, with the limiting side named.

PostgreSQL: pg_basebackup of the managed cluster (plain, tar, tar + gzip).
DuckDB: EXPORT DATABASE (Parquet) and a copy of the database file.
The OS page cache is dropped before each backup when dbtier runs as root, so
the source is really read; the result says whether it was.
"""

from __future__ import annotations

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


def _judge(rec: dict[str, Any], src_dev: str | None, dst_dev: str | None, null_mbps: float | None) -> None:
    busy = lambda d: rec["devices"].get(d, {}).get("busy_pct", 0.0) if d else 0.0  # noqa: E731
    kind, why = backup_bottleneck(rec["target"], rec["compressed"], rec["proc_cpu_cores"], busy(src_dev),
                                  busy(dst_dev) if rec["target"] == "dir" else 0.0, rec["mbps"] or 0.0, null_mbps)
    rec["bottleneck"], rec["bottleneck_evidence"] = kind, why


def pg_backups(cluster, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
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
            try:
                rec = _measure(go, devices)
            finally:
                shutil.rmtree(dest, ignore_errors=True)
            rec.update({"target": target, "method": f"pg_basebackup {method}", "compressed": "gzip" in method})
            if target == "null":
                null_mbps = rec["mbps"]
            _judge(rec, src_dev, dst_dev, null_mbps)
            out.append(rec)
            on_result(rec)
    return out


def _progress_bytes(stderr: str) -> int:
    """pg_basebackup -P's last 'N/M kB' line: the bytes it sent."""
    found = re.findall(r"(\d+)/(\d+) kB", stderr)
    if not found:
        raise DbtierError("pg_basebackup did not report its progress", "see the raw output")
    return int(found[-1][0]) * 1024


def _failure(stderr: str, target: str, method: str, to_dir: Path) -> DbtierError:
    if "No space left" in stderr:
        return DbtierError(f"{to_dir} filled up during the {method} backup (no space left on device)",
                           "free space there or choose another --to; finished backups are kept")
    last = " | ".join(stderr.strip().splitlines()[-2:])
    return DbtierError(f"pg_basebackup ({method} to {target}) failed: {last}", "see the server log in the run directory")


def duckdb_backups(db_path: Path, to_dir: Path, devices: list[str], src_dev: str | None, dst_dev: str | None,
                   on_result: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
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
            rec = _measure(copy, devices)
        except OSError as exc:
            raise DbtierError(f"{to_dir}: copying the database file failed ({exc.strerror})",
                              "free space there or choose another --to") from exc
        finally:
            dest.unlink(missing_ok=True)
        rec.update({"target": target, "method": "file copy", "compressed": False})
        if target == "null":
            null_mbps = rec["mbps"]
        _judge(rec, src_dev, dst_dev, null_mbps)
        out.append(rec)
        on_result(rec)
    dest = to_dir / f"dbtier-export-{uuid.uuid4().hex[:8]}"

    def export() -> int:
        c = duckdb.connect(str(db_path), read_only=True)
        try:
            c.execute(f"EXPORT DATABASE {sql_str(str(dest))} (FORMAT parquet)")
        finally:
            c.close()
        return db_path.stat().st_size, dir_bytes(dest)
    try:
        rec = _measure(export, devices)
    except duckdb.Error as exc:
        raise DbtierError(f"EXPORT DATABASE to {to_dir} failed: {str(exc).splitlines()[0]}",
                          "free space there or choose another --to") from exc
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    rec.update({"target": "dir", "method": "EXPORT DATABASE parquet", "compressed": True})
    _judge(rec, src_dev, dst_dev, None)
    out.append(rec)
    on_result(rec)
    return out
