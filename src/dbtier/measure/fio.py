"""fio adapter: build (pure) -> execute (executor) -> parse (pure).

fio's units are converted here, once: KiB/s and ns never leave this module.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.measure import executor

PERCENTILES = ("50", "90", "95", "99", "99.9", "99.99")
_PCT_KEYS = {"50.000000": "p50", "90.000000": "p90", "95.000000": "p95", "99.000000": "p99",
             "99.900000": "p999", "99.990000": "p9999"}


@dataclass(frozen=True)
class FioJob:
    name: str
    rw: str                      # read | write | randread | randwrite | randrw | rw
    bs_bytes: int
    size_bytes: int              # per job (per stream for sequential jobs)
    filename: str | None = None  # one shared file (or a block device)
    directory: str | None = None  # with file_per_job: each job gets its own file here
    iodepth: int = 1
    numjobs: int = 1
    runtime_s: float = 2.0
    ramp_s: float = 0.5
    direct: bool = True
    ioengine: str = "io_uring"
    rwmixread: int | None = None
    fdatasync: int = 0           # fdatasync after every N writes (0: never)
    offset_increment: int | None = None  # sequential streams each take their own region
    filename_format: str = "$jobname.$jobnum"   # with directory: each job's file name
    time_based: bool = True
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def outstanding(self) -> int:
        return self.iodepth * self.numjobs


def build_args(job: FioJob, output_path: str | None = None) -> list[str]:
    """The fio command line for a job (pure)."""
    a = ["fio", f"--name={job.name}", f"--rw={job.rw}", f"--bs={job.bs_bytes}",
         f"--size={job.size_bytes}", f"--ioengine={job.ioengine}", f"--iodepth={job.iodepth}",
         f"--numjobs={job.numjobs}", f"--direct={1 if job.direct else 0}",
         "--group_reporting=1", "--lat_percentiles=1",
         f"--percentile_list={':'.join(PERCENTILES)}",
         "--randrepeat=0", "--norandommap=1", "--refill_buffers=1",
         "--output-format=json"]
    if job.filename:
        a.append(f"--filename={job.filename}")
    if job.directory:
        a += [f"--directory={job.directory}", f"--filename_format={job.filename_format}"]
    if job.time_based:
        a += ["--time_based=1", f"--runtime={_secs(job.runtime_s)}"]
    if job.ramp_s:
        a.append(f"--ramp_time={_secs(job.ramp_s)}")
    if job.rwmixread is not None:
        a.append(f"--rwmixread={job.rwmixread}")
    if job.fdatasync:
        a.append(f"--fdatasync={job.fdatasync}")
    if job.offset_increment:
        a.append(f"--offset_increment={job.offset_increment}")
    for k, v in job.extra:
        a.append(f"--{k}={v}")
    if output_path:
        a.append(f"--output={output_path}")
    return a


def _secs(s: float) -> str:
    # fio takes a time with unit suffix; ms keeps sub-second points exact.
    return f"{int(round(s * 1000))}ms"


def _lat(block: dict[str, Any]) -> dict[str, float | None]:
    lat = block.get("lat_ns") or {}
    has = lat.get("N", 1) != 0   # a block fio did not fill (no lat_ns, or N 0) is missing, never 0 µs

    def us(key: str) -> float | None:
        v = lat.get(key)
        return v / 1000.0 if has and isinstance(v, (int, float)) and not isinstance(v, bool) else None
    out: dict[str, float | None] = {"mean": us("mean"), "min": us("min"), "max": us("max")}
    pct = lat.get("percentile") or {}
    for key, name in _PCT_KEYS.items():
        out[name] = pct[key] / 1000.0 if key in pct else None
    return out


def _dir(block: dict[str, Any]) -> dict[str, Any] | None:
    if not block or not block.get("total_ios"):
        return None
    return {
        "iops": float(block["iops"]),
        "bw_bytes_per_s": float(block["bw_bytes"]),
        "io_bytes": int(block["io_bytes"]),
        "ios": int(block["total_ios"]),
        "lat_us": _lat(block),
    }


def decode(text: str, source: str = "fio output") -> dict[str, Any]:
    """fio's JSON document out of its output (fio prints warnings before it, error lines after it, and in
    client mode `client: host=... disconnected` lines)."""
    start = text.find("{")
    if start < 0:
        raise DbtierError(f"{source}: no JSON in fio's output", "see the raw output file beside result.json")
    try:
        # raw_decode: fio appends error lines after the JSON when a job fails.
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise DbtierError(f"{source}: fio's JSON is malformed ({exc.msg} at line {exc.lineno})",
                          "fio was probably killed mid-run; re-run the probe") from exc
    return data


def parse_output(text: str, source: str = "fio output") -> dict[str, Any]:
    """fio --output-format=json text -> a result dict in dbtier's units (pure).

    Tolerates warnings fio prints before the JSON. With group_reporting there is
    one job; otherwise rates are summed and latency is taken from the busiest job.
    """
    data = decode(text, source)
    jobs = data.get("jobs") or []
    if not jobs:
        raise DbtierError(f"{source}: fio reported no jobs", "see the raw output file")
    res = parse_jobs(jobs)
    res["fio_version"] = data.get("fio version")
    res["disk_util"] = [{"name": d.get("name"), "util_pct": d.get("util")} for d in data.get("disk_util", [])]
    return res


def parse_jobs(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's job entries (a host's, in client mode) -> the result dict in dbtier's units (pure)."""
    busiest = max(jobs, key=lambda j: j["read"]["total_ios"] + j["write"]["total_ios"])
    res: dict[str, Any] = {"error": max(j.get("error", 0) for j in jobs)}
    for d in ("read", "write"):
        parts = [p for p in (_dir(j[d]) for j in jobs) if p]
        if not parts:
            res[d] = None
            continue
        main = _dir(busiest[d]) or parts[0]
        main["iops"] = sum(p["iops"] for p in parts)
        main["bw_bytes_per_s"] = sum(p["bw_bytes_per_s"] for p in parts)
        main["io_bytes"] = sum(p["io_bytes"] for p in parts)
        main["ios"] = sum(p["ios"] for p in parts)
        res[d] = main
    sync = busiest.get("sync") or {}
    sync_lat = sync.get("lat_ns") or {}
    res["sync"] = {"ops": int(sync_lat.get("N", 0)), "lat_us": _lat(sync)} if sync_lat.get("N") else None
    res["iops"] = sum((res[d] or {}).get("iops", 0.0) for d in ("read", "write"))
    res["bw_bytes_per_s"] = sum((res[d] or {}).get("bw_bytes_per_s", 0.0) for d in ("read", "write"))
    numjobs = int(busiest.get("job options", {}).get("numjobs", 1) or 1) if len(jobs) == 1 else len(jobs)
    # The run's length: a group_reporting entry's job_runtime is the sum over its numjobs threads.
    res["runtime_s"] = (jobs[0].get("job_runtime", 0) / numjobs if len(jobs) == 1
                        else max(j.get("job_runtime", 0) for j in jobs)) / 1000.0
    usr = sum(j.get("usr_cpu", 0.0) for j in jobs) / len(jobs)
    sys_ = sum(j.get("sys_cpu", 0.0) for j in jobs) / len(jobs)
    # fio's usr/sys_cpu are per job, in % of one core: cores used = pct/100 * jobs.
    res["cpu_usr_pct"] = usr
    res["cpu_sys_pct"] = sys_
    res["cpu_cores"] = (usr + sys_) / 100.0 * numjobs
    return res


def merged_lat_us(blocks: list[dict[str, Any]]) -> dict[str, float | None]:
    """Latency of several runs together (one direction's `lat_ns` blocks of --output-format=json+, which
    carry fio's latency bins): the bins' counts summed, each percentile the first bin whose cumulative count
    reaches ceil(q x N) -- fio's own rule, so one run's bins give back fio's figures exactly. Not an average
    of percentiles."""
    bins: dict[int, int] = {}
    n = 0
    total_ns = 0.0
    lo: float | None = None
    hi: float | None = None
    for b in blocks:
        lat = b.get("lat_ns") or {}
        if not lat.get("N"):
            continue
        for k, v in (lat.get("bins") or {}).items():
            bins[int(k)] = bins.get(int(k), 0) + int(v)
        n += int(lat["N"])
        total_ns += float(lat.get("mean", 0.0)) * int(lat["N"])
        lo = lat["min"] if lo is None else min(lo, lat["min"])
        hi = lat["max"] if hi is None else max(hi, lat["max"])
    out: dict[str, float | None] = {"mean": total_ns / n / 1000.0 if n else None,
                                    "min": lo / 1000.0 if lo is not None else None,
                                    "max": hi / 1000.0 if hi is not None else None}
    keys = sorted(bins)
    counted = sum(bins.values())
    for key, name in _PCT_KEYS.items():
        out[name] = None
        if not counted:
            continue
        rank = math.ceil(float(key) / 100.0 * counted)
        cum = 0
        for k in keys:
            cum += bins[k]
            if cum >= rank:
                out[name] = k / 1000.0
                break
    return out


def job_file(job: FioJob) -> str:
    """The job as an fio job file (what `fio --client=HOST FILE` sends to a server): build_args' options,
    without the command and its output options."""
    lines = [f"[{job.name}]"]
    for a in build_args(job)[2:]:
        k, _, v = a[2:].partition("=")
        if k not in ("output-format", "output"):
            lines.append(f"{k}={v}")
    return "\n".join(lines) + "\n"


def run(job: FioJob, raw_path: Path, *, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Execute a job, keep its raw JSON at raw_path, return the parsed result."""
    executor.require("fio")
    timeout = job.runtime_s + job.ramp_s + 600  # layout of a big file can take minutes
    done = executor.run(build_args(job, str(raw_path)), env=env, timeout_s=timeout)
    text = raw_path.read_text() if raw_path.exists() else ""
    res = None
    try:
        res = parse_output(text, str(raw_path))
    except DbtierError:
        if done.returncode == 0:
            raise
    if done.returncode != 0 or res is None or res["error"]:
        code = (res or {}).get("error") or done.returncode
        tail = text[text.rfind("}") + 1:] if res else text
        raise fio_failure(job, code, "\n".join(x.strip() for x in (done.stderr, tail) if x and x.strip()))
    return res


_ENOSPC = 28


def fio_failure(job: FioJob, code: int, message: str) -> DbtierError:
    target = job.filename or job.directory
    last = message.splitlines()[-3:] if message else []
    if code == _ENOSPC or "No space left" in message:
        return DbtierError(f"{target}: the disk filled up during {job.name} (no space left on device)",
                           "free space on that filesystem or pass a smaller --size; finished points are kept")
    return DbtierError(f"fio failed on {target} during {job.name} (exit/error {code}): {' | '.join(last)}",
                       "see the raw fio output in the run directory's raw/ folder")
