"""`dbtier probe`: characterise storage under a directory (or a blank raw device) with fio.

Side effects live here: test files, fio runs, cleanup. What to run is decided
by small pure helpers (profiles, load levels, sizing); what it means is decided
in results/probe.py and model/fsync_honesty.py.
"""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping

from dbtier.core.errors import DbtierError
from dbtier.core.stats import snia_steady_state, sweep_should_stop
from dbtier.core.units import GIB, KIB, MIB, human_bytes
from dbtier.measure import executor, fio
from dbtier.measure.fio import FioJob
from dbtier.measure.machine import parse_mountinfo, path_info
from dbtier.model.fsync_honesty import CommitEvidence, judge
from dbtier.results.probe import (
    COMMIT,
    COMMIT_NOSYNC,
    FILL,
    FILL_RAND_WRITE,
    FILL_SEQ_WRITE,
    GROUPS,
    LAYOUT,
    MIX_4K,
    MIX_8K,
    PRECONDITION,
    RANDOM,
    READ_4K,
    READ_8K,
    SEQUENTIAL,
    SUMMARY_SWEEPS,
    WRITE_4K,
    WRITE_8K,
    GROUP_HEADLINES,
    commit_latency,
    knees,
    point_config,
    seq_test,
    spreads,
    summarize,
    sweep_done,
    under_measured,
)
from dbtier.core.debris import Claim, new_dir
from dbtier.measure.reap import sweep_dir
from dbtier.results.cache_suspect import cache_suspect
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RunDir
from dbtier.model.guards import probe_guards

MEMORY_FILESYSTEMS = ("tmpfs", "ramfs", "devtmpfs", "hugetlbfs")
WORKDIR_PREFIX = ".dbtier-probe-"
TESTS = GROUPS


@dataclass(frozen=True)
class Profile:
    name: str
    point_s: float                 # measured seconds per point
    ramp_s: float                  # warm-up seconds per point, excluded by fio
    file_bytes: int                # test file size wanted (capped by free space)
    max_outstanding: int
    seq_streams: tuple[int, ...]
    seq_bs: tuple[int, ...]
    commit_writers: tuple[int, ...]
    commit_file_bytes: int
    full_random_grid: bool         # all of 4k/8k x read/write/mix swept, not just the summary's three
    steady_state: bool             # precondition random writes to SNIA steady state
    ss_round_s: float = 5.0
    ss_max_rounds: int = 25


PROFILES = {
    "quick": Profile("quick", point_s=1.0, ramp_s=0.3, file_bytes=1 * GIB, max_outstanding=128,
                     seq_streams=(1, 2, 4), seq_bs=(128 * KIB, MIB), commit_writers=(1, 4),
                     commit_file_bytes=32 * MIB, full_random_grid=False, steady_state=False),
    "full": Profile("full", point_s=10.0, ramp_s=3.0, file_bytes=16 * GIB, max_outstanding=512,
                    seq_streams=(1, 2, 4, 8), seq_bs=(128 * KIB, MIB), commit_writers=(1, 4, 16),
                    commit_file_bytes=64 * MIB, full_random_grid=True, steady_state=True),
}

# (test name, fio rw, block size, read %) of the random tests.
RANDOM_SWEEPS = {
    READ_4K: ("randread", 4 * KIB, 100),
    WRITE_4K: ("randwrite", 4 * KIB, 0),
    MIX_8K: ("randrw", 8 * KIB, 70),
    READ_8K: ("randread", 8 * KIB, 100),
    WRITE_8K: ("randwrite", 8 * KIB, 0),
    MIX_4K: ("randrw", 4 * KIB, 70),
}


def load_levels(max_outstanding: int, cpus: int) -> list[tuple[int, int]]:
    """(jobs, iodepth) per point: outstanding I/O doubles from 1; past 32 a second
    submitting thread (up to one per CPU) joins, since one io_uring thread stops
    scaling there on fast devices."""
    levels, n = [], 1
    while n <= max_outstanding:
        jobs = max(1, min(cpus, n // 32))
        levels.append((jobs, n // jobs))
        n *= 2
    return levels


def margin_bytes(total_bytes: int, margin_pct: float) -> int:
    """Free space dbtier leaves untouched: margin_pct of the filesystem, and never less than
    512 MiB or 5% of it, whichever is smaller (a floor that --margin-pct 0 cannot remove)."""
    return max(int(total_bytes * margin_pct / 100.0), min(512 * MIB, total_bytes * 5 // 100))


def spare_bytes(path: str, margin_pct: float = 10) -> int:
    """Free space on path's filesystem past dbtier's margin (margin_bytes); negative when inside it."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize - margin_bytes(st.f_blocks * st.f_frsize, margin_pct)


def plan_file_size(avail_bytes: int, total_bytes: int, wanted: int, margin_pct: float) -> int:
    usable = avail_bytes - margin_bytes(total_bytes, margin_pct)
    size = min(wanted, usable)
    return (size // MIB) * MIB  # whole MiB keeps every block size aligned


@dataclass
class Target:
    """One thing being probed and the files dbtier made there (removed by cleanup)."""
    path: str
    kind: str                      # "directory" | "device"
    filesystem: str | None
    mount_options: str | None
    file_bytes: int
    workdir: Path | None = None
    data_file: str = ""
    commit_dir: str | None = None  # per-writer files (directory targets)
    commit_format: str = "$jobname.$jobnum"     # their names in commit_dir (fio's filename_format)
    info: dict[str, Any] = field(default_factory=dict)
    claim: Claim | None = None     # the registry entry of workdir (removed by the watchdog if dbtier dies)

    def cleanup(self) -> None:
        if self.workdir is not None and self.workdir.exists():
            shutil.rmtree(self.workdir, ignore_errors=True)
        if self.claim is not None and (self.workdir is None or not self.workdir.exists()):
            self.claim.release()


# ---------------------------------------------------------------- checks


def check_directory(path: str, profile: Profile, margin_pct: float, size: int | None,
                    buffered: bool, min_bytes: int = 64 * MIB) -> Target:
    p = Path(path)
    if not p.exists():
        raise DbtierError(f"{path}: no such directory", "create it, or pass a directory that exists")
    if not p.is_dir():
        hint = ("to probe a raw block device use --device DEV --destroy-data (it must be blank)"
                if stat.S_ISBLK(p.stat().st_mode) else "probe takes directories")
        raise DbtierError(f"{path}: not a directory", hint)
    info = path_info(path)
    fs = info.get("filesystem")
    swept = sweep_dir(p)        # an earlier probe's files whose dbtier died go first (their space counts)
    if swept:
        info = {**info, "debris_removed": swept}
    workdir = p / f"{WORKDIR_PREFIX}{uuid.uuid4().hex[:8]}"
    try:
        claim = new_dir(workdir, "probe files")
    except OSError as exc:
        raise DbtierError(f"{path} is not writable ({exc.strerror}): dbtier must create its test files there",
                          "pass a directory you can write to") from exc
    try:
        if not buffered and not supports_direct_io(workdir):
            raise DbtierError(
                f"{path} ({fs}) does not support direct I/O: every figure would include the page cache, "
                "measuring memory rather than the device",
                "probe a filesystem that supports O_DIRECT, or pass --buffered to measure through the cache "
                "(the result then says direct_io: false)")
        if fs in MEMORY_FILESYSTEMS and not buffered:
            raise DbtierError(
                f"{path} is on {fs}: that is memory, not storage, so every figure would be RAM speed "
                "and say nothing about a disk",
                "probe a directory on a disk-backed filesystem (or pass --buffered to measure it anyway)")
        st = os.statvfs(workdir)
        avail, total = st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize
        wanted = size if size else profile.file_bytes
        need = max(wanted if size else min_bytes, min_bytes) + profile.commit_file_bytes * max(profile.commit_writers)
        usable = avail - margin_bytes(total, margin_pct)
        if usable < need:
            raise DbtierError(
                f"{path}: not enough free space: {human_bytes(avail)} free, dbtier keeps "
                f"{human_bytes(margin_bytes(total, margin_pct))} free as a margin and needs "
                f"{human_bytes(need)} for its test files",
                "free some space, choose another directory, or lower --size / --margin-pct")
        file_bytes = plan_file_size(avail - profile.commit_file_bytes * max(profile.commit_writers),
                                    total, wanted, margin_pct)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        claim.release()
        raise
    commit_dir = workdir / "commit"
    commit_dir.mkdir()
    return Target(path=str(p.resolve()), kind="directory", filesystem=fs,
                  mount_options=info.get("mount_options"), file_bytes=file_bytes, workdir=workdir,
                  data_file=str(workdir / "data.fio"), commit_dir=str(commit_dir), info=info, claim=claim)


def supports_direct_io(directory: Path) -> bool:
    probe = directory / "direct-io-check"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
    except OSError:
        return False
    try:
        import mmap
        buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT requires
        os.write(fd, buf)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def blank_device_problem(dev: str) -> str | None:
    """Why a raw device must not be written (None when it is blank and unused)."""
    st = os.stat(dev)
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    sysdir = Path(f"/sys/dev/block/{major}:{minor}").resolve()
    devnums = {(major, minor)}
    for child in sysdir.iterdir() if sysdir.exists() else []:
        dev_file = child / "dev"
        if (child / "partition").exists() and dev_file.exists():
            a, b = dev_file.read_text().strip().split(":")
            devnums.add((int(a), int(b)))
    for m in parse_mountinfo(Path("/proc/self/mountinfo").read_text()):
        if (m["major"], m["minor"]) in devnums:
            return f"it is mounted at {m['mount_point']}"
    swaps = Path("/proc/swaps").read_text() if Path("/proc/swaps").exists() else ""
    if any(line.split()[0] == os.path.realpath(dev) for line in swaps.splitlines()[1:] if line.split()):
        return "it is in use as swap"
    holders = sysdir / "holders"
    if holders.exists() and any(holders.iterdir()):
        return "another device (RAID, LVM or device-mapper) holds it"
    if len(devnums) > 1:
        return "it has partitions"
    if shutil.which("blkid") is None:
        return "blkid (util-linux) is not installed, so dbtier cannot prove the device is blank"
    found = executor.run(["blkid", "-p", "-o", "export", dev])
    if found.returncode == 0:
        kv = dict(line.split("=", 1) for line in found.stdout.splitlines() if "=" in line)
        what = kv.get("TYPE") or kv.get("PTTYPE") or "a signature"
        return f"it carries {what} ({'filesystem' if 'TYPE' in kv else 'partition table'} signature)"
    if found.returncode != 2:  # 2: nothing found
        return f"blkid could not probe it: {found.stderr.strip()}"
    return None


def check_device(dev: str, destroy: bool, profile: Profile, size: int | None) -> Target:
    if not destroy:
        raise DbtierError(f"{dev}: refusing to write a raw device without --destroy-data",
                          "add --destroy-data if every byte on it may be overwritten")
    if not os.path.exists(dev) or not stat.S_ISBLK(os.stat(dev).st_mode):
        raise DbtierError(f"{dev}: not a block device", "pass a device node such as /dev/nvme1n1")
    problem = blank_device_problem(dev)
    if problem:
        raise DbtierError(f"{dev}: refusing to overwrite it: {problem}",
                          "dbtier only writes blank, unused devices; wipe it yourself (wipefs -a) if it is free")
    with open(dev, "rb") as f:
        dev_bytes = f.seek(0, os.SEEK_END)
    commit_bytes = profile.commit_file_bytes * max(profile.commit_writers)
    if dev_bytes < commit_bytes + 64 * MIB:
        raise DbtierError(f"{dev}: only {human_bytes(dev_bytes)}, too small to probe",
                          "use a device of at least 1 GiB")
    file_bytes = min(size or profile.file_bytes, dev_bytes - commit_bytes)
    from dbtier.measure.machine import device_info
    return Target(path=dev, kind="device", filesystem=None, mount_options=None,
                  file_bytes=(file_bytes // MIB) * MIB, data_file=dev, info=device_info(dev))


# ---------------------------------------------------------------- the run


class Prober:
    """Runs the tests on one target, appending points to `entry` and saving after each."""

    def __init__(self, target: Target, entry: dict[str, Any], profile: Profile, run_dir: RunDir,
                 save: Callable[[], None], on_point: Callable[[dict[str, Any]], None],
                 max_lat_ms: float, direct: bool, cpus: int):
        self.t, self.entry, self.profile, self.run_dir = target, entry, profile, run_dir
        self.save, self.on_point = save, on_point
        self.max_lat_us = max_lat_ms * 1000.0
        self.direct, self.cpus = direct, cpus
        self.n = 0
        self.recipes: dict[tuple[Any, ...], tuple[Any, ...]] = {}   # point_config -> how it was measured (repeat_headlines)

    def measure(self, job: FioJob, test: str, group: str, read_pct: int, **extra: Any) -> dict[str, Any]:
        """Every fio run goes through here; what ran is kept, so a headline point can be measured again."""
        point = self.run_point(job, test, group, read_pct, **extra)
        self.recipes.setdefault(point_config(point), (job, test, group, read_pct,
                                                      {k: v for k, v in extra.items() if k != "phase"}))
        return point

    def repeat_headlines(self, keys: tuple[str, ...]) -> None:
        """Measure each headline point of `keys` again until it has MIN_MEASUREMENTS runs: a headline figure
        carries its spread. A repeat can lower a point's median below one measured once, which then leads:
        rounds go on until the leaders all have their runs; each round completes at least one point, so
        there are at most as many rounds as points."""
        for _ in range(len(self.entry["points"]) + 1):
            todo = under_measured(self.entry["points"], keys)
            if not todo:
                return
            for p in todo:
                job, test, group, read_pct, extra = self.recipes[point_config(p)]
                self.measure(job, test, group, read_pct, **extra, phase="repeat")

    # One fio run: raw output kept, point recorded, doc saved.
    def run_point(self, job: FioJob, test: str, group: str, read_pct: int, **extra: Any) -> dict[str, Any]:
        self.n += 1
        raw_name = f"{self.entry['index']:02d}-{self.n:03d}-{job.name}.json"
        res = fio.run(job, self.run_dir.raw_path(raw_name))
        point = self.point(job, res, test, group, read_pct, raw_name, **extra)
        self.entry["points"].append(point)
        self.save()
        self.on_point(point)
        return point

    @staticmethod
    def point(job: FioJob, res: dict[str, Any], test: str, group: str, read_pct: int, raw_name: str,
              **extra: Any) -> dict[str, Any]:
        """A point of the document from a job and its parsed result."""
        main_side = "write" if read_pct == 0 else "read"
        point = {
            "test": test, "group": group, "rw": job.rw, "bs_bytes": job.bs_bytes, "read_pct": read_pct,
            "jobs": job.numjobs, "iodepth": job.iodepth, "outstanding": job.outstanding,
            "iops": res["iops"], "bw_bytes_per_s": res["bw_bytes_per_s"],
            "mbps": res["bw_bytes_per_s"] / 1e6,
            "lat_us": (res[main_side] or {}).get("lat_us"),
            "read": res["read"], "write": res["write"], "sync": res["sync"],
            "cpu_cores": res["cpu_cores"], "cpu_usr_pct": res["cpu_usr_pct"], "cpu_sys_pct": res["cpu_sys_pct"],
            "runtime_s": res["runtime_s"], "ramp_s": job.ramp_s, "direct": job.direct,
            "ioengine": job.ioengine, "raw": f"raw/{raw_name}",
        }
        if res["sync"]:
            point["commit_lat_us"] = commit_latency(res["write"]["lat_us"], res["sync"]["lat_us"])
        point.update(extra)
        return point

    def job(self, name: str, **kw: Any) -> FioJob:
        base: dict[str, Any] = dict(name=name, filename=self.t.data_file, size_bytes=self.t.file_bytes,
                    runtime_s=self.profile.point_s, ramp_s=self.profile.ramp_s, direct=self.direct,
                    ioengine="io_uring")
        base.update(kw)
        return FioJob(**base)

    def layout(self) -> None:
        """Write the test region once, so reads hit written blocks (thin volumes return zeros for free)."""
        job = self.job("layout", rw="write", bs_bytes=MIB, iodepth=16, time_based=False, ramp_s=0)
        self.measure(job, LAYOUT, LAYOUT, 0)

    def sweep(self, test: str, levels: list[tuple[int, int]]) -> list[dict[str, Any]]:
        rw, bs, read_pct = RANDOM_SWEEPS[test]
        pts: list[dict[str, Any]] = []
        for jobs, qd in levels:
            mix = read_pct if rw == "randrw" else None
            p = self.measure(self.job(f"{test}-j{jobs}-qd{qd}", rw=rw, bs_bytes=bs, iodepth=qd,
                                      numjobs=jobs, rwmixread=mix), test, RANDOM, read_pct)
            pts.append(p)
            p99 = (p["lat_us"] or {}).get("p99") or 0
            if p99 > self.max_lat_us or sweep_done([q["iops"] for q in pts]):
                break
        return pts + self.confirm(test, max(pts, key=lambda p: p["iops"]))

    def confirm(self, test: str, best: dict[str, Any]) -> list[dict[str, Any]]:
        """Re-measure around the peak with longer points: the same load again, and the same
        outstanding I/O split over twice and over half the threads. One short point is a noisy
        estimate of a peak, and the best split of threads and depth differs between devices."""
        rw, bs, read_pct = RANDOM_SWEEPS[test]
        mix = read_pct if rw == "randrw" else None
        splits = [(best["jobs"], best["iodepth"])]
        if best["outstanding"] >= 32 and best["jobs"] < 2 * self.cpus:
            splits.append((best["jobs"] * 2, best["iodepth"] // 2))
        if best["jobs"] >= 2:  # and over half the threads: one deep queue beats two on some devices
            splits.append((best["jobs"] // 2, best["iodepth"] * 2))
        return [self.measure(self.job(f"{test}-j{jobs}-qd{qd}-confirm", rw=rw, bs_bytes=bs, iodepth=qd,
                                      numjobs=jobs, rwmixread=mix, runtime_s=2 * self.profile.point_s),
                             test, RANDOM, read_pct, phase="confirm")
                for jobs, qd in splits]

    def precondition(self) -> None:
        """SNIA PTS-style: 4 KiB random writes in rounds until steady state (or the round limit)."""
        rounds: list[float] = []
        state = None
        for r in range(self.profile.ss_max_rounds):
            p = self.measure(self.job(f"precondition-r{r + 1}", rw="randwrite", bs_bytes=4 * KIB, iodepth=32,
                                      runtime_s=self.profile.ss_round_s, ramp_s=0),
                             PRECONDITION, PRECONDITION, 0, round=r + 1)
            rounds.append(p["iops"])
            state = snia_steady_state(rounds)
            if state and state.reached:
                break
        self.entry["steady_state"] = {
            "rule": "SNIA PTS: 5-round window, range within 20% and best-fit excursion within 10% of the average",
            "rounds": len(rounds), "round_iops": rounds,
            **(state.as_dict() if state else {"reached": False}),
        }
        self.save()

    def random(self) -> None:
        levels = load_levels(self.profile.max_outstanding, self.cpus)
        if self.profile.full_random_grid:
            for test in RANDOM_SWEEPS:
                self.sweep(test, levels)
            self.repeat_headlines(GROUP_HEADLINES[RANDOM])
            return
        peaks = {}
        for test in SUMMARY_SWEEPS:
            pts = self.sweep(test, levels)
            peaks[test] = max(pts, key=lambda p: p["iops"])
        # The quick profile measures the other block size at QD1 and at the peak's load only.
        for test, like in ((READ_8K, READ_4K), (WRITE_8K, WRITE_4K), (MIX_4K, MIX_8K)):
            rw, bs, read_pct = RANDOM_SWEEPS[test]
            peak = peaks[like]
            for jobs, qd in sorted({(1, 1), (peak["jobs"], peak["iodepth"])}):
                self.measure(self.job(f"{test}-j{jobs}-qd{qd}", rw=rw, bs_bytes=bs, iodepth=qd, numjobs=jobs,
                                      rwmixread=read_pct if rw == "randrw" else None), test, RANDOM, read_pct)
        self.repeat_headlines(GROUP_HEADLINES[RANDOM])

    def sequential(self) -> None:
        for rw in ("read", "write"):
            for bs in self.profile.seq_bs:
                pts: list[dict[str, Any]] = []
                for streams in self.profile.seq_streams:
                    region = (self.t.file_bytes // streams // bs) * bs
                    p = self.measure(self.job(f"seq-{rw}-{bs // KIB}k-s{streams}", rw=rw, bs_bytes=bs,
                                              iodepth=8 if bs <= 128 * KIB else 2, numjobs=streams,
                                              size_bytes=region,
                                              offset_increment=region if streams > 1 else None),
                                     seq_test(rw, bs), SEQUENTIAL, 100 if rw == "read" else 0,
                                     streams=streams)
                    pts.append(p)
                    if sweep_should_stop([q["bw_bytes_per_s"] for q in pts], patience=1, min_gain=0.05):
                        break
        self.repeat_headlines(GROUP_HEADLINES[SEQUENTIAL])

    def commit(self) -> dict[str, Any]:
        """The WAL pattern: 8 KiB buffered write + fdatasync, overwriting a preallocated file."""
        pr = self.profile
        points: dict[tuple[str, int], dict[str, Any]] = {}
        for name, writers, sync in [(COMMIT_NOSYNC, 1, 0)] + [(COMMIT, w, 1) for w in pr.commit_writers]:
            loc: dict[str, Any]
            if self.t.kind == "device":
                loc = dict(filename=self.t.data_file, offset_increment=pr.commit_file_bytes if writers > 1 else None)
            else:
                loc = dict(filename=None, directory=self.t.commit_dir, filename_format=self.t.commit_format)
            job = FioJob(name=f"{name}-w{writers}", rw="write", bs_bytes=8 * KIB, size_bytes=pr.commit_file_bytes,
                         numjobs=writers, iodepth=1, ioengine="psync", direct=False, fdatasync=sync,
                         runtime_s=2 * pr.point_s, ramp_s=pr.ramp_s, **loc)
            p = self.measure(job, name, COMMIT, 0, writers=writers)
            points[(name, writers)] = p
        self.repeat_headlines(GROUP_HEADLINES[COMMIT])
        self.save()
        return honesty(points[(COMMIT, 1)], points[(COMMIT_NOSYNC, 1)], self.t)

    def fill(self, fill_max: int | None, margin_pct: float) -> None:
        """Write performance as the filesystem fills, in tenths of the space dbtier may use."""
        assert self.t.workdir is not None
        st = os.statvfs(self.t.workdir)
        usable = st.f_bavail * st.f_frsize - margin_bytes(st.f_blocks * st.f_frsize, margin_pct)
        budget = min(usable, fill_max) if fill_max else usable
        step = (max(budget // 10, 64 * MIB) // MIB) * MIB
        files: list[str] = []
        self.entry["fill"] = []
        written = 0
        while written + step <= budget:
            f = str(self.t.workdir / f"fill-{len(files):03d}.fio")
            files.append(f)
            seq = self.measure(FioJob(name=f"fill-{len(files)}", rw="write", bs_bytes=MIB, size_bytes=step,
                                      filename=f, iodepth=16, direct=self.direct, time_based=False, ramp_s=0),
                               FILL_SEQ_WRITE, FILL, 0)
            written += step
            rnd = self.measure(self.job(f"fill-{len(files)}-randwrite", rw="randwrite", bs_bytes=4 * KIB,
                                        iodepth=32, filename=":".join(files), size_bytes=written),
                               FILL_RAND_WRITE, FILL, 0)
            st = os.statvfs(self.t.workdir)
            total = st.f_blocks * st.f_frsize
            self.entry["fill"].append({
                "filled_bytes": written,
                "fs_used_pct": 100.0 * (total - st.f_bavail * st.f_frsize) / total,
                "seq_write_mbps": seq["mbps"], "rand_write_iops_4k": rnd["iops"],
                "rand_write_lat_us_p99": (rnd["lat_us"] or {}).get("p99"),
            })
            self.save()


def honesty(one: dict[str, Any], nosync: dict[str, Any], t: Target) -> dict[str, Any]:
    """fsync honesty from the one-writer commit point and the write-only point on target t."""
    bd = t.info.get("block_device") or {}
    return judge(CommitEvidence(
        sync_lat_us_p50=((one["sync"] or {}).get("lat_us") or {}).get("p50"),
        commit_lat_us_p50=one["commit_lat_us"]["p50"],
        write_only_lat_us_p50=nosync["write"]["lat_us"]["p50"],
        commits_per_s_1=one["iops"],
        # the kernel's flag (a virtual disk's `rotational` is null): judge names a virtual disk's flag as such
        rotational=bd.get("rotational_flag", bd.get("rotational")), virtual_disk=bool(bd.get("virtual")),
        mount_options=t.mount_options, ld_preload=os.environ.get("LD_PRELOAD")))


def probe_target(target: Target, entry: dict[str, Any], profile: Profile, run_dir: RunDir,
                 save: Callable[[], None], on_point: Callable[[dict[str, Any]], None], *,
                 tests: tuple[str, ...] = TESTS, max_lat_ms: float = 50.0, direct: bool = True,
                 fill: bool = False, fill_max: int | None = None, margin_pct: float = 10.0,
                 prober: Prober | None = None) -> None:
    """The profile's tests on the target (`prober`: who runs each point; default one fio on this machine)."""
    pr = prober or Prober(target, entry, profile, run_dir, save, on_point, max_lat_ms, direct, os.cpu_count() or 1)
    honesty = None
    try:
        if RANDOM in tests or SEQUENTIAL in tests:
            pr.layout()
        if RANDOM in tests:
            if profile.steady_state:
                pr.precondition()
            pr.random()
        if SEQUENTIAL in tests:
            pr.sequential()
        if COMMIT in tests:
            honesty = pr.commit()
            entry["fsync_honesty"] = honesty
        if fill and target.kind == "directory":
            pr.fill(fill_max, margin_pct)
    finally:
        entry["summary"] = summarize(entry["points"], honesty)
        entry["spread"] = spreads(entry["points"])
        entry["knee"] = knees(entry["points"])   # stored: the report reads it rather than recomputing
        entry["cache_suspect"] = cache_suspect(entry["summary"], entry["points"], target.info.get("block_device"),
                                               target.file_bytes, _memory_bytes())
        save()


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def with_profile(name: str, point_s: float | None) -> Profile:
    if name not in PROFILES:
        raise DbtierError(f"unknown profile {name!r}", f"use one of: {', '.join(PROFILES)}")
    p = PROFILES[name]
    if not point_s:
        return p
    # Steady-state rounds scale with the points, so a short full run stays short.
    return replace(p, point_s=point_s, ramp_s=min(p.ramp_s, point_s / 2),
                   ss_round_s=min(p.ss_round_s, point_s))


# ---------------------------------------------------------------- the library call


@dataclass(frozen=True, kw_only=True)
class ProbeRequest:
    """`dbtier probe`: the directories and blank raw devices to characterise, with `profile`'s tests (those
    of `tests`), each random sweep stopped past `max_lat_ms` at p99; direct I/O unless `direct` is False;
    `fill`: write as the filesystem fills, up to `fill_max` bytes, keeping `margin_pct` free; `size`: the test
    file's bytes (None: the profile's); a device is written only with `destroy_data`."""
    paths: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    profile: Profile
    tests: tuple[str, ...] = TESTS
    max_lat_ms: float = 50.0
    direct: bool = True
    fill: bool = False
    fill_max: int | None = None
    margin_pct: float = 10.0
    size: int | None = None
    destroy_data: bool = False

    def params(self) -> dict[str, Any]:
        """The run's params: what was asked and how it is measured."""
        p = self.profile
        return {"paths": list(self.paths), "devices": list(self.devices), "profile": p.name,
                "tests": list(self.tests), "point_s": p.point_s, "ramp_s": p.ramp_s, "max_lat_ms": self.max_lat_ms,
                "margin_pct": self.margin_pct, "direct_io": self.direct, "fill": self.fill,
                "load_levels": [list(x) for x in load_levels(p.max_outstanding, os.cpu_count() or 1)],
                "engine": "fio", "latency": "fio lat_ns: submission to completion, percentiles per fio",
                "commit_pattern": "8 KiB buffered write + fdatasync per write, psync engine, preallocated file"}


@dataclass(frozen=True, kw_only=True)
class ProbeRun(Result):
    """`probe`'s answer: the document's section (`targets`, each with its points, summary, spread, knee and
    how it ended; `guards`) and the targets that failed ({target, message, hint}: the document's errors)."""
    kind: str = "probe"
    failed: tuple[Mapping[str, Any], ...] = ()


# what the caller shows of one target while it runs: a context per target (its progress), in which each
# point measured is given as it comes
PointShow = Callable[[dict[str, Any]], None]
TargetShow = Callable[[str], ContextManager[PointShow]]


def check_targets(req: ProbeRequest) -> list[Target]:
    """Every target checked and its test files made, before anything is measured (a bad one: nothing is
    left of the others)."""
    targets: list[Target] = []
    try:
        for path in req.paths:
            targets.append(check_directory(path, req.profile, req.margin_pct, req.size, not req.direct))
        for dev in req.devices:
            targets.append(check_device(dev, req.destroy_data, req.profile, req.size))
    except BaseException:
        for t in targets:
            t.cleanup()
        raise
    return targets


def probe(req: ProbeRequest, targets: list[Target], start: Callable[[], RunDir],
          save: Callable[[dict[str, Any], list[dict[str, Any]]], None], show: TargetShow,
          on_error: Callable[[DbtierError], None] = lambda _exc: None) -> ProbeRun:
    """The request's tests on `targets` (check_targets'), one after the other; each target's files removed as
    it ends, whatever happens. `start()` makes the run's directory (the raw fio outputs go there) once the
    targets are checked; `save(section, errors)` after every point, with the section so far, so that what is
    measured survives what comes after; a target that fails is recorded (`on_error` told) and the next one
    runs; Ctrl-C marks the running target interrupted and stops."""
    try:
        run_dir = start()
    except BaseException:
        for t in targets:
            t.cleanup()
        raise
    section: dict[str, Any] = {"targets": [], "guards": probe_guards({"params": {"direct_io": req.direct}})}
    errors: list[dict[str, Any]] = []
    save(section, errors)       # the caller's document holds these lists from here on: a target added shows there
    try:
        for i, t in enumerate(targets):
            entry: dict[str, Any] = {"path": t.path, "kind": t.kind, "index": i, "status": "running",
                                     "direct_io": req.direct, "file_bytes": t.file_bytes,
                                     "filesystem": t.filesystem, "points": [], "summary": None,
                                     "steady_state": None, "fill": None, "fsync_honesty": None}
            section["targets"].append(entry)
            try:
                with show(t.path) as on_point:
                    probe_target(t, entry, req.profile, run_dir, lambda: save(section, errors), on_point,
                                 tests=req.tests, max_lat_ms=req.max_lat_ms, direct=req.direct, fill=req.fill,
                                 fill_max=req.fill_max, margin_pct=req.margin_pct)
                entry["status"] = "ok"
            except DbtierError as exc:
                entry["status"] = "failed"
                errors.append({"target": t.path, "message": exc.message, "hint": exc.hint})
                on_error(exc)
            finally:
                t.cleanup()
                save(section, errors)
    except BaseException as exc:
        # the caller ends the run; the target that was running says how it ended
        for t in targets:
            t.cleanup()
        for e in section["targets"]:
            if e["status"] == "running":
                e["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        raise
    return ProbeRun(section=Frozen(section), failed=tuple(errors))
