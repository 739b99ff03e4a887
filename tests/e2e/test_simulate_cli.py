"""`dbtier simulate` through the real entry point: the JSON contract, the terminal, and every bad input."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, assert_clean_error, call_main, run_dbtier

TRACES = ROOT / "tests" / "data" / "traces"
PROBE = ROOT / "tests" / "data" / "probe" / "quick-ext4-virtio.json"
CLOUDPHYSICS = Path(__file__).resolve().parent.parent / "data" / "traces" / "cloudPhysicsIO.csv.xz"  # real trace

CONTRACT = {"trace", "design", "policy", "read_hit_ratio", "request_hit_ratio", "curve", "latency_us",
            "device_util", "resync"}
CACHE = ["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing", "sas-15k-73gb"]


def ok(tmp_path: Path, *args: str) -> dict:
    r = call_main("simulate", "run", *args, "--json", "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)         # stdout holds only the document


def fails(tmp_path: Path, *args: str) -> str:
    r = call_main("simulate", "run", *args, "--out", "run", cwd=tmp_path)
    err = assert_clean_error(r)
    assert "\n  next: " in err
    assert not (tmp_path / "run").exists()      # refused before the run directory is made
    return err


def _check_contract(doc: dict) -> None:
    assert CONTRACT <= set(doc)
    assert set(doc["trace"]) == {"requests", "reads", "writes", "bytes", "duration_s"}
    assert set(doc["latency_us"]) == {"read", "write"}
    for op in ("read", "write"):
        assert set(doc["latency_us"][op]) == {"p50", "p95", "p99", "p999"}
    if doc["curve"] is not None:
        assert all(set(p) == {"cache_gb", "read_hit_ratio"} for p in doc["curve"])
    if doc["resync"] is not None:
        assert set(doc["resync"]) == {"regions", "bytes", "seconds", "unprotected_seconds"}
    assert doc["command"] == "simulate" and doc["status"] == "ok"


def test_read_cache_json_contract(tmp_path):
    doc = ok(tmp_path, str(TRACES / "policy-17.csv"), *CACHE, "--cache-gb", "0.000032768", "--sweep")
    _check_contract(doc)
    assert doc["design"] == "read-cache" and doc["policy"] == "lru"
    assert doc["trace"] == {"requests": 17, "reads": 17, "writes": 0, "bytes": 17 * 8192, "duration_s": 16.0}
    # 0.000032768 GB = 4 blocks of 8 KiB: the hand-worked LRU count, 5 hits of 17
    assert doc["read_hit_ratio"] == pytest.approx(5 / 17) and doc["request_hit_ratio"] == pytest.approx(5 / 17)
    assert [p["cache_gb"] for p in doc["curve"]][-1] == pytest.approx(8 * 8192 / 1e9)   # the working set
    assert doc["curve"][-1]["read_hit_ratio"] == pytest.approx(9 / 17)
    assert set(doc["device_util"]) == {"cache", "backing"}
    assert doc["resync"] is None
    sim = doc["simulation"]
    assert sim["cache"]["capacity_blocks"] == 4 and sim["baseline"]["device"] == "sas-15k-73gb"
    stored = json.loads((tmp_path / "run" / "result.json").read_text())
    assert stored["read_hit_ratio"] == doc["read_hit_ratio"]


@pytest.mark.slow    # compiles kernels only it needs: the full suite's
def test_s3fifo_policy_on_the_committed_trace(tmp_path):
    # 4 blocks: as in libCacheSim, S3-FIFO admits no block as large as S's share (0.4 blocks): no hit;
    # 16 blocks (S 1.6): A A A B B B C D E F G A B D A E H all fit: every repeat hits, 9 of 17
    doc = ok(tmp_path, str(TRACES / "policy-17.csv"), *CACHE, "--cache-gb", "0.000032768", "--policy", "s3fifo",
             "--sweep", "0.000131072")
    assert doc["policy"] == "s3fifo" and doc["read_hit_ratio"] == 0
    assert doc["curve"] == [{"cache_gb": 0.000032768, "read_hit_ratio": 0},
                            {"cache_gb": 0.000131072, "read_hit_ratio": pytest.approx(9 / 17)}]


@pytest.mark.slow    # compiles kernels only it needs: the full suite's
@pytest.mark.parametrize("policy, hits", [("sieve", 7), ("twoq", 5)])
def test_sieve_and_twoq_policies_on_the_committed_trace(tmp_path, policy, hits):
    # A A A B B B C D E F G A B D A E H with 4 blocks.
    # sieve: A and B are visited by their repeats; E: the hand clears A's and B's marks and evicts C, resting on
    #   D; F evicts D, G evicts E, the hand on F; A and B hit (12, 13); D evicts F; A hits (15); E evicts G; H
    #   evicts D: hits at 2, 3, 5, 6, 12, 13, 15.
    # twoq (Ain's share 1 block, Aout's 2): A..D fill Ain; E, F, G, A, B each push Ain's oldest to Aout (of 2:
    #   A and B are gone from it when they come back: misses); D is in Aout: into Am; A hits in Ain (15); E
    #   from Aout into Am; H: hits at 2, 3, 5, 6, 15.
    doc = ok(tmp_path, str(TRACES / "policy-17.csv"), *CACHE, "--cache-gb", "0.000032768", "--policy", policy)
    assert doc["policy"] == policy and doc["read_hit_ratio"] == pytest.approx(hits / 17)
    assert doc["simulation"]["cache"]["capacity_blocks"] == 4


def test_single_design_has_null_cache_fields(tmp_path):
    doc = ok(tmp_path, str(TRACES / "msr-hm1.csv"), "--design", "single", "--device", "sas-15k-73gb")
    _check_contract(doc)
    assert (doc["policy"], doc["read_hit_ratio"], doc["request_hit_ratio"], doc["curve"], doc["resync"]) == \
        (None, None, None, None, None)
    assert set(doc["device_util"]) == {"device"}
    # a 15K disk (one actuator): the random 32 KiB read at 0 takes 5 ms + 28,672 B / 100 MB/s = 5.287 ms; the
    # read continuing it at 3.5 ms waits for it and then only transfers 32 KiB (328 us): 2.11 ms, the median of
    # the five reads (0.33 ms and 0.66 ms for the other two continuations, 5.61 ms for the random 64 KiB read)
    t1 = 0.0035011
    assert doc["latency_us"]["read"]["p50"] == pytest.approx((5e-3 + 28672 / 100e6 + 32768 / 100e6 - t1) * 1e6)
    assert doc["latency_us"]["read"]["p95"] >= 5000


def test_mirror_with_failure_and_return(tmp_path):
    doc = ok(tmp_path, str(TRACES / "msr-hm1.csv"), "--design", "preferred-read-mirror",
             "--fast", "nvme-enterprise-3.84tb", "--slow", "sas-15k-73gb", "--fail", "fast@1", "--return", "fast@2.5",
             "--tracking", "md-bitmap")
    _check_contract(doc)
    # writes between 1 s and 2.5 s: at 1.3321 s (offset 2567680000), 1.3343 s (2567684096), 1.3443 s
    # (1941307392), 2.3242 s (2567688192) -> 64 MiB regions 38, 38, 28, 38: 2 regions, 134,217,728 bytes,
    # read from the 15K disk (100 MB/s) and written to the NVMe (4,000 MB/s): 100 MB/s on idle devices, less
    # the requests' share. Buckets: the span 3.5687472 s in 4 of w = 0.8921868 s. The copy starts at 2.5 s in
    # bucket 2 [1.784, 2.677), whose disk time is the random 64 KiB read at 1.8193 s (5 ms + 61,440 B/100 MB/s
    # = 5.6144 ms), its 64 KiB continuation (0.65536 ms) and the 4 KiB write continuing 2567684096 (40.96 us);
    # bucket 3 holds the 32 KiB read at 2.8174 s (random on the disk, whose stream was on the NVMe: 5.28672 ms)
    # and the 512 B write at 3.5687 s (5.5 ms on the disk; 1/180,000 s on the NVMe); full rate after that.
    w = 3.5687472 / 4
    u2, u3 = (5.6144e-3 + 0.65536e-3 + 0.04096e-3) / w, (5.28672e-3 + 5.5e-3) / w
    left = 2 * 64 * 2**20 - 100e6 * (1 - u2) * (3 * w - 2.5) - 100e6 * (1 - u3) * w
    secs = 4 * w + left / 100e6 - 2.5
    assert secs == pytest.approx(1.35421287)
    assert doc["resync"] == {"regions": 2, "bytes": 2 * 64 * 2**20, "seconds": pytest.approx(secs),
                             "unprotected_seconds": pytest.approx(1.5 + secs)}
    assert doc["simulation"]["mirror"]["resync_copy"]["seconds_idle"] == pytest.approx(2 * 64 * 2**20 / 100e6)
    assert set(doc["device_util"]) == {"fast", "slow"}
    events = [e["event"] for e in doc["simulation"]["timeline"]["events"]]
    assert events == ["fail", "return", "resynced"]


def test_probe_run_as_the_backing_device(tmp_path):
    doc = ok(tmp_path, str(TRACES / "tencent-cbs.csv"), "--design", "read-cache", "--cache",
             "nvme-enterprise-3.84tb", "--probe", str(PROBE), "--cache-gb", "1")
    assert doc["simulation"]["devices"]["backing"]["id"] == "probe:/tmp/pt"
    assert doc["params"]["probe"] == str(PROBE)


def test_terminal_output(tmp_path):
    r = call_main("simulate", "run", str(TRACES / "policy-17.csv"), *CACHE, "--cache-gb", "0.000032768",
                   "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    flat = " ".join(r.stdout.split())          # the terminal wraps long lines where the width falls
    for text in ("17 requests", "read hit ratio 29.4% of blocks", "latency (queueing model)", "p99.9",
                 "sas-15k-73gb alone", "utilisation: cache", "Run: run", "33 kB lru"):   # 32,768 B: a size, not 3.28e-05 GB
        assert text in flat, r.stdout
    assert (tmp_path / "run" / "result.json").exists()


def test_skip_bad_counts_the_lines(tmp_path):
    bad = tmp_path / "bad.csv"
    lines = (TRACES / "msr-hm1.csv").read_text().splitlines()
    lines[4] = "128166372016504151,hm,1,Write,1941307392"
    bad.write_text("\n".join(lines) + "\n")
    err = fails(tmp_path, str(bad), "--design", "single", "--device", "sas-15k-73gb")
    assert f"dbtier: error: {bad}:5: malformed msr line: 5 fields, expected 7" in err and "--skip-bad" in err
    doc = ok(tmp_path, str(bad), "--design", "single", "--device", "sas-15k-73gb", "--skip-bad")
    assert doc["trace"]["requests"] == 9
    info = doc["simulation"]["trace_info"]
    assert info["skipped_bad_lines"] == 1 and info["skipped_examples"][0]["line"] == 5


def test_cache_larger_than_the_working_set_says_so(tmp_path):
    r = call_main("simulate", "run", str(TRACES / "policy-17.csv"), *CACHE, "--cache-gb", "1", "--json",
                   "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "dbtier: warning: the cache (1 GB, 122,070 blocks) is larger than the trace's working set" in r.stderr
    doc = json.loads(r.stdout)
    assert any("larger than the trace's working set" in n for n in doc["simulation"]["notes"])
    assert doc["read_hit_ratio"] == pytest.approx(9 / 17)          # only the 8 first touches miss


def test_unknown_format(tmp_path):
    odd = tmp_path / "odd.log"
    odd.write_text("GET /index.html 200 5120\n")
    err = fails(tmp_path, str(odd), "--design", "single", "--device", "sas-15k-73gb")
    assert "unknown trace format (first line: 'GET /index.html 200 5120'); known formats: msr" in err
    assert "tencent (Timestamp,Offset,Size,IOType,VolumeID)" in err and "--columns time=COL" in err


def test_time_going_backwards(tmp_path):
    back = tmp_path / "back.csv"
    back.write_text("1538323205,100,8,0,1\n1538323200,200,8,0,1\n")
    err = fails(tmp_path, str(back), "--design", "single", "--device", "sas-15k-73gb")
    assert f"{back}:2: time goes backwards: -5 s after 0 s at line 1" in err and "--sort" in err
    doc = ok(tmp_path, str(back), "--design", "single", "--device", "sas-15k-73gb", "--sort")
    assert doc["trace"]["requests"] == 2 and doc["simulation"]["trace_info"]["sorted_by_time"]


def test_empty_trace(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("Timestamp,Offset,Size,IOType,VolumeID\n")
    err = fails(tmp_path, str(empty), "--design", "single", "--device", "sas-15k-73gb")
    assert "empty trace: no read or write requests" in err


def test_columns_map(tmp_path):
    doc = ok(tmp_path, str(TRACES / "custom-ms.csv"), "--design", "single", "--device", "sas-15k-73gb",
             "--columns", "time=ts_ms,op=rw,offset=lba,length=sectors,volume=lun,time_unit=ms,offset_unit=sectors,"
             "length_unit=sectors,delimiter=semicolon")
    assert doc["trace"]["requests"] == 5 and doc["simulation"]["trace_info"]["format"] == "csv"
    (tmp_path / "again").mkdir()
    err = fails(tmp_path / "again", str(TRACES / "custom-ms.csv"), "--design", "single", "--device",
                "sas-15k-73gb", "--columns", "time=ts_ms,op=rw")
    assert "--columns 'time=ts_ms,op=rw': missing offset, length" in err


@pytest.mark.parametrize("args, needle", [
    (["--design", "single", "--device", "sas-15k-72gb"], "unknown device id 'sas-15k-72gb'; did you mean"),
    (["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--cache-gb", "1"],
     "--design read-cache needs --backing ID"),
    (["--design", "single", "--device", "sas-15k-73gb", "--fast", "nvme-enterprise-3.84tb"],
     "--fast does not apply to --design single"),
    (["--design", "single", "--device", "sas-15k-73gb", "--fail", "fast@1"],
     "--fail applies to --design preferred-read-mirror, not single"),
    (["--design", "single", "--device", "sas-15k-73gb", "--tracking", "md-bitmap"],
     "--tracking applies to --design preferred-read-mirror, not single"),
    (CACHE + ["--cache-gb", "1", "--region-size", "4M"],
     "--region-size applies to --design preferred-read-mirror, not read-cache"),
    (["--design", "preferred-read-mirror", "--fast", "nvme-enterprise-3.84tb", "--slow", "sas-15k-73gb",
      "--fail", "fast@1h"], "--fail at 3600 s is after the trace ends (16 s)"),
    (["--design", "preferred-read-mirror", "--fast", "nvme-enterprise-3.84tb", "--slow", "sas-15k-73gb",
      "--fail", "fast-at-1"], "--fail: 'fast-at-1' is not SIDE@T"),
    (["--design", "preferred-read-mirror", "--fast", "nvme-enterprise-3.84tb", "--slow", "sas-15k-73gb",
      "--fail", "fast@5", "--return", "slow@9"], "only the failed side can return"),
    (CACHE + ["--cache-gb", "1", "--restart-at", "99"], "--restart-at 99 s is outside the trace (0 to 16 s)"),
    (CACHE + ["--cache-gb", "1", "--block-size", "3000"], "--block-size 3000 must be a power of two"),
    (CACHE + ["--cache-gb", "-2"], "--cache-gb must be a positive number, got -2"),
    (["--design", "single", "--device", "sas-15k-73gb", "--catalog", "nope.toml"], "catalog file nope.toml not found"),
])
def test_bad_options(tmp_path, args, needle):
    err = fails(tmp_path, str(TRACES / "policy-17.csv"), *args)
    assert needle in err, err


def test_missing_trace_file(tmp_path):
    err = fails(tmp_path, "nope.csv", "--design", "single", "--device", "sas-15k-73gb")
    assert "trace file nope.csv not found" in err


def test_json_errors_keep_stdout_empty(tmp_path):
    r = call_main("simulate", "run", "nope.csv", "--design", "single", "--device", "sas-15k-73gb", "--json",
                   cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""


@pytest.mark.slow
def test_real_trace_sweep_and_restart(tmp_path):
    doc = ok(tmp_path, str(CLOUDPHYSICS), *CACHE, "--cache-gb", "0.25", "--policy", "s3fifo", "--sweep",
             "0.05,0.1,0.5", "--restart-at", "1h", "--seq-cutoff", "4M", "--jobs", "2")
    _check_contract(doc)
    assert doc["trace"]["requests"] == 113872
    assert [p["cache_gb"] for p in doc["curve"]] == [0.05, 0.1, 0.25, 0.5]
    ratios = [p["read_hit_ratio"] for p in doc["curve"]]
    assert all(0 < r < 1 for r in ratios)
    tl = doc["simulation"]["timeline"]
    series = tl["series"]
    # power-of-two buckets, the narrowest that hold the trace in at most 120: the trace is 2 h (7,200 s)
    assert tl["bucket_s"] == 64.0 and len(series) == 7200 // 64 + 1
    assert sum(p["requests"] for p in series) == 113872
    assert any(p["read_hit_ratio"] is not None for p in series)
    assert doc["simulation"]["timeline"]["events"] == [{"t_s": 3600.0, "event": "restart",
                                                        "label": "cache emptied (restart)"}]
    assert doc["simulation"]["cache"]["bypassed_reqs"] > 0


# -- capture -----------------------------------------------------------------------------------------

KNOWN_REASONS = ("not installed", "needs root", "no block device", "CONFIG_BLK_DEV_IO_TRACE", "lockdown",
                 "debugfs is not mounted", "refused blktrace")


def _disk() -> str | None:
    for name in ("vda", "sda", "nvme0n1", "xvda"):
        if Path(f"/dev/{name}").exists():
            return f"/dev/{name}"
    return None


@pytest.mark.engine  # blktrace on this machine's disk
@pytest.mark.skipif(_disk() is None, reason="no disk device to try")
def test_capture_takes_this_machines_path(tmp_path):
    """Either a real capture (a trace `simulate run` reads) or one clear reason why not."""
    r = run_dbtier("simulate", "capture", _disk(), "--duration", "1", "--mount-debugfs", "--out", "cap",
                   cwd=tmp_path, timeout=120)
    assert "Traceback" not in r.stderr
    if r.returncode == 0:
        doc = json.loads((tmp_path / "cap" / "result.json").read_text())
        assert doc["capture"]["block_device"] == _disk()
        assert (tmp_path / "cap" / "trace.blkparse.txt").exists()
    else:
        err = assert_clean_error(r)
        assert any(k in err for k in KNOWN_REASONS), err
        assert "\n  next: " in err


def test_capture_without_blktrace_installed(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(os.path.realpath(shutil.which("python3") or "/usr/bin/python3"))
    r = call_main("simulate", "capture", str(tmp_path), "--duration", "1", cwd=tmp_path,
                   env={"PATH": str(bin_dir)})
    err = assert_clean_error(r, "cannot capture: blktrace and blkparse not installed")
    assert "apt-get install blktrace" in err


@pytest.mark.skipif(not Path("/dev/shm").is_dir() or shutil.which("blktrace") is None or os.geteuid() != 0,
                    reason="needs blktrace, root and /dev/shm")
def test_capture_on_tmpfs_has_no_block_device(tmp_path):
    r = call_main("simulate", "capture", "/dev/shm", "--duration", "1", cwd=tmp_path)
    assert_clean_error(r, "/dev/shm is on a filesystem with no block device under it (tmpfs)")


def test_capture_options_after_the_target_are_options(tmp_path):
    # `--run` carries the workload; options after the device stay options (not part of a command)
    r = call_main("simulate", "capture", "/no/such/dev", "--duration", "2", "--run", "fio --name=x --size=1M",
                   "--out", "c", cwd=tmp_path)
    assert_clean_error(r, "/no/such/dev does not exist")


def test_capture_of_a_missing_target(tmp_path):
    r = call_main("simulate", "capture", "/no/such/dev", cwd=tmp_path)
    assert_clean_error(r, "/no/such/dev does not exist")


# -- hostile traces through the real entry point (issue 12) -------------------------------------------

def _hostile(tmp_path: Path, kind: str) -> list[str]:
    import gzip
    p = tmp_path / f"{kind}.csv"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "devzero":
        p.symlink_to("/dev/zero")
    elif kind == "truncated-gz":
        data = gzip.compress((TRACES / "msr-hm1.csv").read_bytes() * 50)
        p = tmp_path / "cut.csv.gz"
        p.write_bytes(data[: len(data) // 2])
    elif kind == "2^50-bytes":
        p.write_text("128166372003061629,hm,1,Read,0,4096,1\n128166372003061630,hm,1,Read,0,1125899906842624,1\n")
    elif kind == "nan-time":
        p.write_text("t,op,off,len\n1,R,0,4096\nnan,W,0,4096\n")
        return [str(p), "--columns", "time=t,op=op,offset=off,length=len"]
    elif kind == "columns-twice":
        p.write_text("t,op,off,len\n1,R,0,4096\n")
        return [str(p), "--columns", "time=t,op=op,offset=off,length=len,offset=t"]
    return [str(p)]


@pytest.mark.parametrize("kind, needles", [
    ("fifo", ["fifo.csv: a FIFO (named pipe), not a regular file"]),
    ("devzero", ["devzero.csv: a character device, not a regular file"]),
    ("truncated-gz", ["cut.csv.gz: gzip data damaged", "no request of this trace was used"]),
    ("2^50-bytes", ["2^50-bytes.csv:2: malformed msr line: length 1125899906842624 bytes is more than one request"]),
    ("nan-time", ["nan-time.csv:3: malformed csv line: time 'nan' is not a finite number"]),
    ("columns-twice", ["--columns 'time=t,op=op,offset=off,length=len,offset=t': offset is given twice"]),
])
def test_hostile_traces_are_refused_by_name(tmp_path, kind, needles):
    args = _hostile(tmp_path, kind)
    r = call_main("simulate", "run", *args, "--design", "single", "--device", "sas-15k-73gb", "--out", "run",
                   cwd=tmp_path, timeout=120)          # a FIFO opened would block: the timeout fails the test
    err = assert_clean_error(r, *needles)
    assert "\n  next: " in err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_streamed_run_equals_the_whole_read(tmp_path):
    """The default streams the trace; --in-memory reads it whole first: the same document either way."""
    args = [str(CLOUDPHYSICS), *CACHE, "--cache-gb", "0.1", "--policy", "s3fifo", "--sweep", "auto",
            "--restart-at", "1h", "--seq-cutoff", "1M"]
    streamed = ok(tmp_path, *args)
    r = call_main("simulate", "run", *args, "--in-memory", "--json", "--out", "whole", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    whole = json.loads(r.stdout)
    for k in CONTRACT:
        assert streamed[k] == whole[k], k
    a, b = streamed["simulation"], whole["simulation"]
    for k in ("cache", "curve_detail", "baseline", "cdf_us", "trace_info", "latency_percentiles"):
        assert a[k] == b[k], k
    assert whole["params"]["in_memory"] is True and streamed["params"]["in_memory"] is False
    assert [p["requests"] for p in a["timeline"]["series"]] == [p["requests"] for p in b["timeline"]["series"]]
    assert len(a["curve_detail"]) >= 5            # the automatic sweep: halvings of the working set


def _on_a_terminal(args: list[str], cwd: Path, columns: int = 120) -> str:
    """`dbtier ARGS` with stdout and stderr on a pseudo-terminal of `columns` columns: everything it wrote."""
    import pty
    import subprocess
    import sys
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([sys.executable, "-m", "dbtier", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    try:
        while True:
            try:
                got = os.read(master, 65536)
            except OSError:              # EIO: the child closed the terminal
                break
            if not got:
                break
            out += got
    finally:
        os.close(master)
        assert p.wait(timeout=300) == 0, out.decode(errors="replace")[-2000:]
    return out.decode(errors="replace")


@pytest.mark.slow
def test_the_progress_bar_ends_before_the_summary(tmp_path):
    """On a terminal the replay's progress bar is erased before the summary prints: the summary's first line
    starts a line of its own (it used to follow the bar's elapsed time, `... 0:00:08/path/x.csv (msr): ...`)."""
    import re
    trace = TRACES / "msr-hm1.csv"
    out = _on_a_terminal(["simulate", "run", str(trace), *CACHE, "--cache-gb", "0.001", "--out",
                          str(tmp_path / "run")], tmp_path)         # streamed, as a text trace is by default
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", out)   # colours, cursor moves, links
    at = text.index(f"{trace} (msr):")
    line_start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
    assert text[line_start:at] == "", repr(text[max(0, at - 200):at + 40])
    assert "replaying" in text                    # the bar was shown
