"""How close `simulate run`'s cloud-volume model comes to a real rate-limited device: this machine's loop device
throttled by the cgroup v1 blkio controller (as `bench oltp --emulate` makes an emulated slow tier).

    sudo uv run python bench/cloud_volume_vs_blkio.py                   # 3,000 IOPS, 20 s a rate
    sudo uv run python bench/cloud_volume_vs_blkio.py --iops 1000 --seconds 30 --dir /srv/scratch
    sudo uv run python bench/cloud_volume_vs_blkio.py --json fig.json    # the figures also as JSON (default runs/bench/)

What it does, once:
1. a file of --file-mib MiB in a new directory under --dir, filled with data (reads of a hole or of
   unwritten extents would never reach the disk), made a loop device with direct I/O to the file (where
   the file system allows it: not on tmpfs);
2. the base latency: fio, 4 KiB random reads at queue depth 1 (libaio), at a tenth of the limit,
   unthrottled, for 10 s: the p50 of fio's total latency (`lat`, issue to completion);
3. a child blkio cgroup whose blkio.throttle.read_iops_device caps the loop device at --iops; the loads run
   in it (a shell writes its pid into the group's cgroup.procs, then execs the load at nice -10);
4. per arrival rate (--below and --above x the limit), for --seconds, two loads of 4 KiB random reads in
   the throttled group, each replayed by `dbtier simulate run` (format fio) as it was really issued, on
   cloud:aws:gp3:size=1000,iops=LIMIT,latency_us=BASE (io2 below gp3's 3,000 IOPS minimum):
   - fio: rate_iops with rate_process=poisson (libaio, direct=1, an iodepth above the largest backlog),
     recording what it issued (write_iolog, µs timestamps); fio's clat and lat percentiles;
   - open loop: Poisson arrivals planned here and submitted at their times through Linux AIO whatever is in
     flight (bench/_aio_replay.py), recording each read's submission and completion;
5. each load's percentiles beside the simulation's of the same reads, and how bursty the arrivals were.

Why both: fio 3.33 cannot offer a constant rate above the limit. Its read_iolog replay sleeps between timed
I/Os without reaping completions, so an async engine's latencies come out as iodepth / rate (the time until
its queue fills); and rate_iops with io_submit_mode=inline waits for every I/O in flight whenever it is
ahead of schedule (io_u_quiesce), so above the limit it stalls until the throttle has drained the backlog
and then catches up in a burst (its arrivals follow its completions). Replaying fio's own record keeps the
comparison fair (the model sees the reads fio really issued); the open-loop replayer gives the arrivals the
model's closed forms assume, a backlog that grows linearly above the limit.

Everything it made (the cgroup, the loop device, the file and its directory) is removed on exit, on an error
or Ctrl-C too. Needs root, fio, losetup and a writable cgroup v1 blkio hierarchy: without them it says so
and exits 0 (it is one of `make bench`'s scripts). Figures printed and written as JSON (bench/_figures.py).

Expect the tail to differ below the limit: blk-throttle (cgroup v1) is not a fluid limiter. It grants a
budget of IOPS x slice per time slice (the slice is 100 ms on a rotational queue, 20 ms on a non-rotational
one), so arrivals that bunch within a slice pass unpaced while the model spaces every read 1/IOPS apart; and
it dispatches held reads from a timer (jiffies: the kernel's HZ), so waits come in steps.

Measured once here (2026-11-26, runs/bench/cloud_volume_vs_blkio-20261126T130247Z.json, not committed: a
2-CPU VM with other work at load ~3; loop device with direct I/O on the root disk, 100 ms slices, HZ 250;
base 68 µs; 20 s a rate), simulation over measurement at p50 / p95 / p99 / p99.9:
- above the limit (3,600/s on 3,000 IOPS): open loop 1.03 / 1.01 / 1.01 / 1.01 (p50 2.0 s, the linear
  backlog), fio 1.12 / 1.00 / 1.01 / 1.01 (the throttle served 3,006/s);
- below (2,400/s): the median 29x the open loop's and 35x fio's (1.6-1.75 ms against 50-56 µs: blk-throttle
  let most reads through unpaced), the open loop's tail 0.87 / 0.85 / 1.17, fio's 8.8 / 9.1 / 2.7 (its
  catch-up bursts, which the slice budget absorbs and the fluid limiter spaces out).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

BLKIO = Path("/sys/fs/cgroup/blkio")
BS = 4096
PCTS = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9))


def missing() -> str | None:
    """Why this machine cannot run the measurement, or None."""
    if os.geteuid() != 0:
        return "needs root (a loop device and a blkio cgroup)"
    for tool in ("fio", "losetup"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    if not (BLKIO / "blkio.throttle.read_iops_device").exists() or not os.access(BLKIO, os.W_OK):
        return f"needs a writable cgroup v1 blkio hierarchy at {BLKIO}"
    return None


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r


def fill(path: Path, mib: int) -> None:
    """Real data in every block (reads of holes or unwritten extents would not touch the disk)."""
    block = np.random.default_rng(7).integers(0, 256, 2**20, dtype=np.uint8).tobytes()
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())


def fio_json(stdout: str) -> dict:
    """fio's JSON (anything it prints before the document, e.g. warnings, skipped)."""
    return json.loads(stdout[stdout.index("{"):])


def read_pcts(job: dict, key: str) -> dict[str, float]:
    """Percentiles (µs) of fio's read `clat_ns` or `lat_ns`."""
    p = job["read"][key]["percentile"]
    return {name: p[f"{q:.6f}"] / 1e3 for name, q in PCTS}


def fio_args(dev: str) -> list[str]:
    return ["fio", "--name=r", f"--filename={dev}", "--direct=1", "--rw=randread", f"--bs={BS}", "--ioengine=libaio",
            "--output-format=json", "--lat_percentiles=1",
            "--percentile_list=" + ":".join(f"{q:g}" for _, q in PCTS)]


def base_latency_us(dev: str, rate: float, seconds: float) -> tuple[float, dict]:
    """QD1 4 KiB random reads at `rate`, unthrottled: the p50 of fio's total latency, and its percentiles."""
    r = run([*fio_args(dev), "--iodepth=1", f"--rate_iops={rate:.0f}", "--time_based", f"--runtime={seconds:g}"])
    lat = read_pcts(fio_json(r.stdout)["jobs"][0], "lat_ns")
    return lat["p50"], lat


def fio_at_rate(cg: Path, dev: str, rate: float, seconds: float, iodepth: int, record: Path, seed: int) -> dict:
    """fio in the throttled cgroup: Poisson arrivals at `rate` for `seconds`, what it issued written to `record`."""
    cmd = [*fio_args(dev), f"--iodepth={iodepth}", f"--rate_iops={rate:.0f}", "--rate_process=poisson",
           "--time_based", f"--runtime={seconds:g}", f"--write_iolog={record}", f"--randseed={seed}"]
    r = run(in_group(cg, cmd), timeout=seconds * 20 + 120)
    return fio_json(r.stdout)["jobs"][0]


def in_group(cg: Path, cmd: list[str]) -> list[str]:
    """`cmd` run inside the cgroup (a shell moves itself in, then execs it), at nice -10: the machine's other
    work delays its arrivals less."""
    return ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec nice -n -10 "$@"', "sh", *cmd]


def stream(record: Path) -> dict[str, float]:
    """The reads fio issued (its write_iolog, v3: µs): how many, at what rate, how bursty."""
    t_us = np.array([int(f[0]) for f in (line.split() for line in record.read_text().splitlines()[1:])
                     if len(f) == 5 and f[2] == "read"], dtype=np.int64)
    gap_s = np.diff(t_us) / 1e6
    span = (t_us[-1] - t_us[0]) / 1e6
    return {"reads": int(t_us.size), "rate_per_s": (t_us.size - 1) / span, "gap_cv": float(gap_s.std() / gap_s.mean()),
            "gap_max_ms": float(gap_s.max() * 1e3)}


def simulate(record: Path, device_id: str, out: Path) -> dict:
    r = run([sys.executable, "-m", "dbtier", "simulate", "run", str(record), "--format", "fio", "--design", "single",
             "--device", device_id, "--json", "--out", str(out)])
    doc = json.loads(r.stdout)
    return {"latency_us": doc["latency_us"]["read"], "util": doc["device_util"]["device"]}


def open_loop(cg: Path, dev: str, rate: float, seconds: float, dev_bytes: int, work: Path, seed: int
              ) -> tuple[dict[str, float], Path, dict[str, float]]:
    """Poisson reads at `rate` submitted on time in the throttled group (bench/_aio_replay.py): their latency
    percentiles (µs, linear interpolation as the simulation's), a fio v3 iolog of the actual submissions (for
    the simulation) and the arrivals' figures."""
    rng = np.random.default_rng(seed)
    n = int(rate * seconds)
    t_s = np.concatenate([[0.0], np.cumsum(rng.exponential(1.0 / rate, n - 1))])
    off = rng.integers(0, dev_bytes // BS, n) * BS
    plan, out = work / f"plan-{seed}.npz", work / f"aio-{seed}.npz"
    np.savez(plan, device=dev, t_s=t_s, offset=off, nbytes=BS)
    run(in_group(cg, [sys.executable, str(Path(__file__).with_name("_aio_replay.py")), str(plan), str(out)]),
        timeout=seconds * 20 + 120)
    got = np.load(out)
    sub_s, lat_s = got["submit_s"], got["latency_s"]
    record = work / f"aio-{seed}.iolog"
    sub_us = np.round((sub_s - sub_s[0]) * 1e6).astype(np.int64)
    with open(record, "w") as f:
        f.write(f"fio version 3 iolog\n0 {dev} add\n0 {dev} open\n")
        f.writelines(f"{t} {dev} read {o} {BS}\n" for t, o in zip(sub_us, off))
    pcts = {name: float(v) * 1e6 for (name, _), v in zip(PCTS, np.quantile(lat_s, [q / 100 for _, q in PCTS]))}
    lag = sub_s - t_s
    return pcts, record, {**stream(record), "late_ms_p99": float(np.quantile(lag, 0.99) * 1e3),
                          "late_ms_max": float(lag.max() * 1e3)}


def cloud_id(iops: int, base_us: float) -> str:
    if iops >= 3000:
        return f"cloud:aws:gp3:size=1000,iops={iops},latency_us={base_us:.1f}"
    return f"cloud:aws:io2:size={max(4, math.ceil(iops / 1000))},iops={iops},latency_us={base_us:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iops", type=int, default=3000, help="the throttle and the model's IOPS limit (default 3000)")
    ap.add_argument("--below", type=float, default=0.8, help="the rate below the limit, x the limit (default 0.8)")
    ap.add_argument("--above", type=float, default=1.2, help="the rate above the limit, x the limit (default 1.2)")
    ap.add_argument("--seconds", type=float, default=20.0, help="arrivals per rate (default 20)")
    ap.add_argument("--file-mib", type=int, default=512, help="the loop device's size in MiB (default 512)")
    ap.add_argument("--dir", default=None, help="where the backing file goes (default the system's temp directory)")
    ap.add_argument("--seed", type=int, default=1)
    _figures.add_option(ap)
    args = ap.parse_args()
    why = missing()
    if why:
        print(f"skipped: {why}")
        return 0
    if not 100 <= args.iops <= 256_000 or not 0 < args.below < 1 < args.above:
        ap.error("--iops 100..256000, --below in (0, 1), --above > 1")
    signal.signal(signal.SIGTERM, _interrupt)       # as Ctrl-C: the finally below cleans up either way
    work = Path(tempfile.mkdtemp(prefix="dbtier-cloudbench-", dir=args.dir))
    cg = BLKIO / f"dbtier-cloudbench-{os.getpid()}"
    loop = None
    figures: dict = {}
    try:
        backing = work / "backing"
        fill(backing, args.file_mib)
        try:
            loop = run(["losetup", "--find", "--show", "--direct-io=on", str(backing)]).stdout.strip()
        except RuntimeError:        # a file system without O_DIRECT (tmpfs): through its page cache
            loop = run(["losetup", "--find", "--show", str(backing)]).stdout.strip()
        rdev = os.stat(loop).st_rdev
        sysq = Path("/sys/block") / Path(loop).name
        rot = (sysq / "queue" / "rotational").read_text().strip() == "1"
        dio = (sysq / "loop" / "dio").read_text().strip() == "1"
        low = max(50.0, args.iops / 10)
        base_us, base_pcts = base_latency_us(loop, low, 10)
        print(f"{loop} ({args.file_mib} MiB file in {work}, direct I/O {'on' if dio else 'off'}, rotational "
              f"{int(rot)}): QD1 4 KiB random reads at {low:,.0f}/s, unthrottled: p50 {base_us:,.1f} µs, "
              f"p99 {base_pcts['p99']:,.1f} µs")
        cg.mkdir()
        (cg / "blkio.throttle.read_iops_device").write_text(f"{os.major(rdev)}:{os.minor(rdev)} {args.iops}\n")
        device_id = cloud_id(args.iops, base_us)
        figures = {"loop_device": loop, "backing_dir": str(work.parent), "direct_io": dio, "rotational": rot,
                   "throttle_read_iops": args.iops, "throttle_slice_ms": 100 if rot else 20, "hz": _hz(),
                   "base_latency_rate_per_s": low, "base_latency_us": base_us, "base_latency_pcts_us": base_pcts,
                   "device_id": device_id, "load_average_1m_before": os.getloadavg()[0], "runs": []}
        print(f"throttle: {args.iops:,} read IOPS (blkio v1, {cg}); model: {device_id}\n")
        print(f"{'offered':>16} {'':>22} " + " ".join(f"{n:>10}" for n, _ in PCTS))
        for k, x in enumerate((args.below, args.above)):
            rate = x * args.iops
            backlog = max(0.0, (rate - args.iops) * args.seconds)
            iodepth = int(min(32768, max(4096, 1.3 * backlog + 1024)))
            record = work / f"fio-{k}.iolog"
            job = fio_at_rate(cg, loop, rate, args.seconds, iodepth, record, args.seed + k)
            clat, lat = read_pcts(job, "clat_ns"), read_pcts(job, "lat_ns")
            fio_sim = simulate(record, device_id, work / f"sim-fio-{k}")
            ol, ol_record, ol_stream = open_loop(cg, loop, rate, args.seconds, args.file_mib * 2**20, work,
                                                 args.seed + 100 + k)
            ol_sim = simulate(ol_record, device_id, work / f"sim-open-{k}")
            rows = {"fio clat": clat, "fio lat": lat, "simulate (fio's reads)": fio_sim["latency_us"],
                    "open loop": ol, "simulate (same reads)": ol_sim["latency_us"]}
            ratio = {"fio": {n: fio_sim["latency_us"][n] / clat[n] for n, _ in PCTS},
                     "open_loop": {n: ol_sim["latency_us"][n] / ol[n] for n, _ in PCTS}}
            figures["runs"].append({
                "offered_rate_per_s": rate, "offered_x_limit": x,
                "fio": {"iodepth": iodepth, "issued": stream(record), "clat_us": clat, "lat_us": lat,
                        "read_iops": job["read"]["iops"], "runtime_s": job["read"]["runtime"] / 1e3,
                        "sim_latency_us": fio_sim["latency_us"], "sim_util": fio_sim["util"]},
                "open_loop": {"issued": ol_stream, "latency_us": ol, "sim_latency_us": ol_sim["latency_us"],
                              "sim_util": ol_sim["util"]},
                "sim_over_measured": ratio})
            label = f"{rate:,.0f}/s ({x:g}x)"
            for what, v in rows.items():
                print(f"{label:>16} {what:>22} " + " ".join(f"{_us(v[n]):>10}" for n, _ in PCTS))
                label = ""
                if what == "simulate (fio's reads)":
                    print(f"{'':>16} {'sim / fio clat':>22} " + " ".join(f"{ratio['fio'][n]:>10.3f}" for n, _ in PCTS))
            print(f"{'':>16} {'sim / open loop':>22} " + " ".join(f"{ratio['open_loop'][n]:>10.3f}" for n, _ in PCTS))
            fs = figures["runs"][-1]["fio"]["issued"]
            print(f"{'':>16} fio issued {fs['reads']:,} reads at {fs['rate_per_s']:,.0f}/s (gaps: cv "
                  f"{fs['gap_cv']:.2f}, longest {fs['gap_max_ms']:,.1f} ms), the throttle served "
                  f"{job['read']['iops']:,.0f}/s; the open loop {ol_stream['reads']:,} at "
                  f"{ol_stream['rate_per_s']:,.0f}/s (cv {ol_stream['gap_cv']:.2f}, p99 {ol_stream['late_ms_p99']:.2f} "
                  "ms late)\n")
    finally:
        if cg.exists():
            try:
                cg.rmdir()
            except OSError as e:
                print(f"could not remove {cg}: {e}", file=sys.stderr)
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    _figures.write("cloud_volume_vs_blkio", args, figures)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _us(v: float) -> str:
    return f"{v / 1e3:,.2f} ms" if v >= 1e3 else f"{v:,.0f} µs"


def _hz() -> int | None:
    """The kernel's timer frequency (blk-throttle dispatches on jiffies), from its config when readable."""
    for p in (Path(f"/boot/config-{os.uname().release}"),):
        if p.exists():
            for line in p.read_text().splitlines():
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=")[1])
    try:
        import gzip
        with gzip.open("/proc/config.gz", "rt") as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=")[1])
    except OSError:
        pass
    return None


if __name__ == "__main__":
    sys.exit(main())
