"""Nothing left behind when dbtier itself dies: real commands, real SIGKILL, then the machine is checked.

Each test starts dbtier as its own process (its own registry: DBTIER_STATE_DIR), waits until it has made
what the test is about (a probe's test files with fio writing them, a managed server with its client, an
emulated tier's mount, a spill directory), kills it with SIGKILL (what the OOM killer, a CI timeout or a
closed SSH session does) and checks, within 10 s, that its watchdog has stopped every process and removed
every file and device, and that the run directory (kept) reads `abandoned`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import have, run_dbtier
from test_probe_fleet import servers  # noqa: F401,F811 (the fixture: fio servers on loopback addresses)

pytestmark = pytest.mark.engine

WITHIN_S = 10.0


def spawn(*args: str, cwd: Path, state: Path, env: dict | None = None) -> subprocess.Popen:
    full = {**os.environ, "DBTIER_STATE_DIR": str(state), "COLUMNS": "120", **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "dbtier", *args], cwd=cwd, env=full,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for(cond, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"dbtier ended (exit {proc.returncode}) before {what}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.1)
    pytest.fail(f"not within {timeout:.0f} s: {what}")


def kill9(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def holders(path: Path) -> list[str]:
    """Processes with a file under `path` open (or it as their working directory)."""
    prefix = str(path)
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            links = [os.readlink(f"/proc/{pid}/cwd")] + [os.readlink(f"/proc/{pid}/fd/{fd}")
                                                         for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if any(x.startswith(prefix) for x in links):
            out.append(f"{pid} {open(f'/proc/{pid}/cmdline', 'rb').read().replace(chr(0).encode(), b' ')[:120]!r}")
    return out


def processes(marker: str) -> list[str]:
    """Command lines of running processes (not zombies) whose arguments mention marker."""
    out = subprocess.run(["pgrep", "-a", "-f", marker], capture_output=True, text=True).stdout
    live = []
    for line in out.splitlines():
        try:
            if open(f"/proc/{line.split()[0]}/stat").read().rsplit(")", 1)[-1].split()[0] != "Z":
                live.append(line)
        except OSError:
            pass            # gone meanwhile
    return live


def registry(state: Path) -> list[str]:
    return sorted(p.name for p in state.glob("*.json")) if state.exists() else []


def test_sigkill_mid_probe_removes_the_test_files_and_the_run_reads_abandoned(tmp_path):
    target, state = tmp_path / "target", tmp_path / "state"
    target.mkdir()
    p = spawn("probe", str(target), "--profile", "quick", "--out", "run", cwd=tmp_path, state=state)
    wait_for(lambda: any(target.glob(".dbtier-probe-*/data.fio")) and holders(target), 60,
             "fio writing its test file", p)
    kill9(p)
    wait_for(lambda: not list(target.iterdir()) and not holders(target), WITHIN_S,
             "the test files removed and fio stopped")
    r = run_dbtier("show", str(tmp_path / "run"), cwd=tmp_path, env={"DBTIER_STATE_DIR": str(state)})
    assert r.returncode == 0 and "abandoned" in r.stdout and "last written" in r.stdout, r.stdout + r.stderr
    doc = json.loads((tmp_path / "run" / "result.json").read_text())
    assert doc["status"] == "abandoned" and doc["abandoned"]["pid"] == p.pid      # the watchdog marked it
    assert registry(state) == []


def _oltp_kill(pg_dir: Path, engine: str, marker: str, client: str) -> None:
    state = pg_dir / "state"
    before = set(Path("/tmp").glob(f"{marker}*"))
    p = spawn("bench", "oltp", "--engine", engine, "--workload", "tpcc", "--warehouses", "1", "--clients", "1",
              "--duration", "60", "--repeat", "1", "--dir", str(pg_dir), "--out", str(pg_dir / "run"),
              cwd=pg_dir, state=state)

    def running() -> bool:      # the server up (its command line names its directory) and the run going
        return bool(processes(marker)) and any(pg_dir.glob(f"{marker}*"))
    wait_for(running, 180, f"{engine} running", p)
    time.sleep(2)               # into the load or the run: the client (pgbench, sysbench) may be up
    homes = [str(d) for d in set(Path("/tmp").glob(f"{marker}*")) - before] + [str(d) for d in pg_dir.glob(f"{marker}*")]
    kill9(p)
    wait_for(lambda: not processes(str(pg_dir)) and not processes(client)
             and not processes(marker)
             and not list(pg_dir.glob(f"{marker}*")) and not any(Path(h).exists() for h in homes),
             WITHIN_S, f"no {engine} server or client left, its directories removed")
    cgroups = list(Path("/sys/fs/cgroup/memory").glob("dbtier-*")) if Path("/sys/fs/cgroup/memory").is_dir() else []
    assert cgroups == [], cgroups
    doc = json.loads((pg_dir / "run" / "result.json").read_text())
    assert doc["status"] == "abandoned"
    assert registry(state) == []


def test_sigkill_mid_oltp_on_postgres_stops_the_cluster_and_pgbench(pg_dir):
    _oltp_kill(pg_dir, "postgres", "dbtier-pg-", "pgbench")


@pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"), reason="MariaDB or sysbench missing")
def test_sigkill_mid_oltp_on_mariadb_stops_the_server_and_sysbench(pg_dir):
    _oltp_kill(pg_dir, "mariadb", "dbtier-mariadb-", "sysbench")


def test_a_live_runs_things_are_never_cleaned_away(tmp_path):
    """A second dbtier (a concurrent run) is alive: `cleanup` and other commands leave its files alone."""
    target, state = tmp_path / "target", tmp_path / "state"
    target.mkdir()
    p = spawn("probe", str(target), "--profile", "quick", "--out", "run", cwd=tmp_path, state=state)
    try:
        wait_for(lambda: any(target.glob(".dbtier-probe-*/data.fio")), 60, "the probe's test file", p)
        r = run_dbtier("cleanup", "--json", "--out", "c", cwd=tmp_path, env={"DBTIER_STATE_DIR": str(state)})
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["removed"] == [] and doc["live"] >= 2        # the probe's run and its test files
        assert any(target.glob(".dbtier-probe-*"))
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
    assert not list(target.iterdir())                         # its own Ctrl-C cleanup


def test_cleanup_removes_what_a_dead_dbtier_left_when_the_watchdog_could_not(tmp_path):
    """The watchdog killed with dbtier (its whole session): `cleanup --dry-run` lists, `cleanup` removes."""
    target, state = tmp_path / "target", tmp_path / "state"
    target.mkdir()
    p = spawn("probe", str(target), "--profile", "quick", "--out", "run", cwd=tmp_path, state=state,
              env={"DBTIER_NO_WATCHDOG": "1"})
    wait_for(lambda: any(target.glob(".dbtier-probe-*/data.fio")), 60, "the probe's test file", p)
    kill9(p)
    time.sleep(1)
    assert any(target.glob(".dbtier-probe-*"))             # no watchdog: still there
    env = {"DBTIER_STATE_DIR": str(state)}
    dry = json.loads(run_dbtier("cleanup", "--dry-run", "--json", "--out", "d", cwd=tmp_path, env=env).stdout)
    assert any("would remove" in line and ".dbtier-probe-" in line for e in dry["removed"] for line in e["removed"])
    assert any(target.glob(".dbtier-probe-*"))
    # the next command, whatever it is, removes it first and says so
    r = run_dbtier("plan", "size", "--capacity-gb", "100", "--out", "next", cwd=tmp_path, env=env)
    assert r.returncode == 0 and "removed what an earlier dbtier left when it died" in r.stderr, r.stderr
    assert not list(target.iterdir()) and registry(state) == []
    assert json.loads((tmp_path / "run" / "result.json").read_text())["status"] == "abandoned"


def test_sigkill_mid_fleet_probe_names_the_hosts_files_and_the_next_fleet_probe_removes_them(tmp_path, servers):  # noqa: F811
    """Files on another host (--hosts-remote: the loopback fio servers taken as remote) cannot be removed by
    the watchdog (fio's protocol needs dbtier's client): the registry names them, and the next fleet probe of
    the same host removes them first."""
    from test_probe_fleet import FAST
    port, srv = servers
    (addr, (_, d)), = list(srv.items())[:1]
    state = tmp_path / "state"
    args = ["probe", "--hosts", f"{addr}:{port}", f"{addr}:{port}={d}", *FAST, "--hosts-remote"]
    p = spawn(*args, "--out", "run1", cwd=tmp_path, state=state)
    wait_for(lambda: any(d.glob(".dbtier-probe-*")), 60, "test files on the host", p)
    kill9(p)
    left = sorted(x.name for x in d.glob(".dbtier-probe-*"))
    assert left
    env = {"DBTIER_STATE_DIR": str(state)}
    dry = json.loads(run_dbtier("cleanup", "--dry-run", "--json", "--out", "d", cwd=tmp_path, env=env).stdout)
    named = [x for e in dry["removed"] for x in e["left"] if f"on {addr}:{port}" in x]
    assert named and all(n in named[0] for n in left) and "next fleet probe" in named[0]
    r = run_dbtier(*args, "--out", "run2", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert "removed the test files an earlier fleet probe left" in r.stderr
    assert list(d.iterdir()) == [] and registry(state) == []


def test_sigkill_mid_emulate_leaves_no_mount_loop_device_or_throttle_line(pg_dir):
    from test_bench_oltp_emulate import CAN, _gone, _throttled, _tiers
    if not CAN:
        pytest.skip("needs root, loop devices and the cgroup v1 blkio controller")
    fast, slow = _tiers(pg_dir)
    state = pg_dir / "state"
    p = spawn("bench", "oltp", "--workload", "tpcc", "--warehouses", "1", "--clients", "1", "--duration", "30",
              "--warmup", "0", "--memory", "64MiB", "--placement-matrix", f"{fast},{slow}",
              "--emulate", f"{slow}=150riops,1500wiops", "--dir", str(fast), "--out", "run", cwd=pg_dir, state=state)

    def throttled_loop() -> str | None:
        for line in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout.splitlines():
            if str(slow) in line:
                dev = os.path.basename(line.split(":")[0])
                majmin = Path(f"/sys/block/{dev}/dev").read_text().strip()
                return dev if majmin + " " in _throttled() and f"{slow}/" in Path("/proc/self/mountinfo").read_text() \
                    else None
        return None
    wait_for(lambda: throttled_loop() is not None, 120, "the emulated tier mounted and throttled", p)
    device = throttled_loop()
    time.sleep(1)
    kill9(p)

    def gone() -> bool:
        try:
            _gone(slow, device)
            return not processes(str(pg_dir))
        except AssertionError:
            return False
    wait_for(gone, WITHIN_S, "no server, mount, loop device, throttle line or directory of the tier left")
    assert registry(state) == []


def test_sigkill_mid_simulate_mrc_and_history_import_removes_their_working_directories(tmp_path):
    import numpy as np
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    # a trace of 20 M requests (oracleGeneral records): long enough to be caught mid-spill
    n = 20_000_000
    rec = np.zeros(n, dtype=[("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])
    rng = np.random.default_rng(7)
    rec["t"] = np.arange(n) // 1000
    rec["id"] = rng.zipf(1.2, n) % 5_000_000
    rec["size"] = 4096
    rec["next"] = -1
    trace = tmp_path / "big.oracleGeneral.bin"
    rec.tofile(trace)
    env = {"DBTIER_TMPDIR": str(work)}
    p = spawn("simulate", "mrc", str(trace), "--policy", "lru,fifo,s3fifo,clock,arc", "--out", "mrc",
              cwd=tmp_path, state=state, env=env)
    # killed while the curves run: the spill is made and the run directory too
    wait_for(lambda: any(work.glob("dbtier-*")) and (tmp_path / "mrc" / "result.json").exists(), 120,
             "the spill directory and the run", p)
    kill9(p)
    wait_for(lambda: not list(work.iterdir()), WITHIN_S, "the spill directory removed")
    assert json.loads((tmp_path / "mrc" / "result.json").read_text())["status"] == "abandoned"
    # history import: its DuckDB working directory
    big = tmp_path / "diskstats.txt"
    one = (Path(__file__).parent.parent / "data" / "history" / "real" / "diskstats-vm.txt").read_text()
    times = [float(x) for x in re.findall(r"\btime=([0-9.]+)", one)]
    span = max(times) - min(times) + 60          # the sample's snapshots again and again, later each time
    with open(big, "w") as f:
        for k in range(400):
            f.write(re.sub(r"\btime=([0-9.]+)", lambda m: f"time={float(m.group(1)) + k * span:.9f}", one))
    p = spawn("history", "import", "--source", "diskstats", str(big), "--out", "hist", cwd=tmp_path, state=state,
              env=env)
    wait_for(lambda: any(work.glob("dbtier-*")), 60, "the history working directory", p)
    kill9(p)
    wait_for(lambda: not list(work.iterdir()), WITHIN_S, "the working directory removed")
    assert not list(work.iterdir()) and registry(state) == []
