"""`dbtier probe --hosts`: real `fio --server` processes on loopback addresses of this machine (127.0.0.2,
.3, .4), each host with its own directory; per-host and aggregate figures against fio's raw output and a
single-host probe; a server killed mid-run; an unreachable host."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import assert_clean_error, call_main

pytestmark = pytest.mark.engine      # real fio servers on this machine

FAST = ["--only", "sequential", "--point-seconds", "0.2", "--size", "64M"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.2", 0))
        return s.getsockname()[1]


@pytest.fixture
def servers(tmp_path):
    """Three fio servers on 127.0.0.2-4 (one port), each with a directory: {address: (proc, dir)}."""
    port = _free_port()
    out = {}
    for i, addr in enumerate(("127.0.0.2", "127.0.0.3", "127.0.0.4")):
        d = tmp_path / f"host{i}"
        d.mkdir()
        proc = subprocess.Popen(["fio", f"--server=ip:{addr},{port}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        out[addr] = (proc, d)
    deadline = time.monotonic() + 10
    for addr in out:
        while True:
            try:
                socket.create_connection((addr, port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"fio --server on {addr} did not start"
                time.sleep(0.05)
    yield port, out
    for proc, _ in out.values():
        _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)        # the server and the children it forked for clients
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


def _wait_points(out: Path, n: int) -> None:
    """Until the run's document holds n aggregate points (or 300 s)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if len(json.loads((out / "result.json").read_text())["aggregate"]["points"]) >= n:
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)


def _merged_p50_us(raw: Path) -> float:
    """The aggregate's p50 recomputed from the raw client-mode json+ output (a reference, not dbtier's code)."""
    data = json.loads(raw.read_text()[raw.read_text().find("{"):])
    bins: dict[int, int] = {}
    for j in data["client_stats"]:
        if j["jobname"] != "All clients":
            side = j["read"] if j["read"]["total_ios"] else j["write"]
            for k, v in side["lat_ns"]["bins"].items():
                bins[int(k)] = bins.get(int(k), 0) + v
    values = sorted(v for v, c in bins.items() for _ in range(c))
    return values[math.ceil(0.5 * len(values)) - 1] / 1000.0


def test_two_hosts_at_once(tmp_path, servers):
    port, srv = servers
    (a, da), (b, db) = [(k, v[1]) for k, v in list(srv.items())[:2]]
    # the random sweeps cut to their first point (p99 is always over 1 ns), so --hosts-step stays short
    r = call_main("probe", "--hosts", f"{a}:{port},{b}:{port}", f"{a}:{port}={da}", f"{b}:{port}={db}", *FAST,
                  "--only", "sequential,random", "--max-lat-ms", "0.000001", "--hosts-step", "--json", "--out",
                  "fleet", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    agg = doc["aggregate"]
    assert agg["hosts"] == 2 and agg["complete"] is True and doc["targets"] == [agg]
    assert [h["host"] for h in doc["hosts"]] == [f"{a}:{port}", f"{b}:{port}"]
    assert all(h["status"] == "ok" and h["checks"] == "local" for h in doc["hosts"])
    pts = [h["targets"][0]["points"] for h in doc["hosts"]]
    assert len(pts[0]) == len(pts[1]) == len(agg["points"]) >= 5
    for i, p in enumerate(agg["points"]):
        assert p["hosts"] == 2
        assert p["iops"] == pytest.approx(pts[0][i]["iops"] + pts[1][i]["iops"])
        assert p["bw_bytes_per_s"] == pytest.approx(pts[0][i]["bw_bytes_per_s"] + pts[1][i]["bw_bytes_per_s"])
        assert p["raw"] == pts[0][i]["raw"]
        if p["test"] != "layout":
            assert p["lat_us"]["p50"] == _merged_p50_us(tmp_path / "fleet" / p["raw"])
            lo, hi = sorted(q[i]["lat_us"]["p50"] for q in pts)
            assert lo <= p["lat_us"]["p50"] <= hi          # a merged median lies between the hosts' own
    single = doc["hosts"][0]["targets"][0]["summary"]
    assert set(agg["summary"]) == set(single)                  # the single-host probe's summary keys
    assert agg["summary"]["read_mbps_seq"] == pytest.approx(
        sum(h["targets"][0]["summary"]["read_mbps_seq"] for h in doc["hosts"]), rel=0.35)
    # one host alone (a single-host probe of its directory): the pair on one disk shares what it gives
    r1 = call_main("probe", str(da), *FAST, "--json", "--out", "alone", cwd=tmp_path, timeout=600)
    alone = json.loads(r1.stdout)["targets"][0]["summary"]
    for key in ("read_mbps_seq", "write_mbps_seq"):
        per_host = [h["targets"][0]["summary"][key] for h in doc["hosts"]]
        assert max(per_host) <= 1.5 * alone[key]       # sharing never makes a host faster than alone
        assert agg["summary"][key] >= 0.3 * alone[key]
    assert not any(da.iterdir()) and not any(db.iterdir())       # test files removed
    assert doc["fleet"]["left_behind"] == []
    sc = doc["fleet"]["scaling"]
    assert [s["hosts"] for s in sc["steps"]] == [1, 2]
    assert sc["steps"][1]["iops"] == pytest.approx(sum(sc["steps"][1]["host_iops"]))
    assert sc["verdict"].startswith("each host's 4 KiB random reads ")
    assert (sc["degraded_at_hosts"] is None) == ("hold up" in sc["verdict"])
    assert not [p for p in agg["points"] if p.get("phase") == "scaling"]      # not in the curves


def test_a_host_that_dies_mid_run_is_named_and_the_rest_kept(tmp_path, servers):
    port, srv = servers
    hosts = ",".join(f"{a}:{port}" for a in srv)
    targets = [f"{a}:{port}={d}" for a, (_, d) in srv.items()]
    out = tmp_path / "fleet"
    # --hosts-remote: none of the local checks, files named in the target and removed by fio (unlink=1), as on
    # hosts of other machines
    proc = subprocess.Popen(["dbtier", "probe", "--hosts", hosts, *targets, *FAST, "--hosts-remote", "--json",
                             "--out", str(out)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    victim = "127.0.0.4"
    _wait_points(out, 2)
    _kill(srv[victim][0])
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1, stderr
    doc = json.loads(stdout)
    agg = doc["aggregate"]
    assert agg["complete"] is False and agg["status"] == "incomplete"
    assert any(victim in e["message"] for e in doc["errors"])
    dead = next(h for h in doc["hosts"] if h["address"] == victim)
    assert dead["status"] == "dropped"
    assert agg["points"][0]["hosts"] == 3 and agg["points"][-1]["hosts"] == 2
    alive = [h for h in doc["hosts"] if h["address"] != victim]
    assert all(len(h["targets"][0]["points"]) == len(agg["points"]) for h in alive)
    assert all(h["targets"][0]["summary"] for h in alive)
    assert all(h["checks"].startswith("none") for h in doc["hosts"])
    for addr, (_, d) in srv.items():
        left = sorted(p.name for p in d.iterdir())
        if addr == victim:      # its files stay (it stopped answering) and are listed
            assert left and all(n.startswith(".dbtier-probe-") for n in left)
            assert sorted(x.rsplit("/", 1)[1] for x in doc["fleet"]["left_behind"]) == left
        else:
            assert left == []   # removed by the unlink job


def test_an_unreachable_host_is_refused_by_name(tmp_path, servers):
    port, _ = servers
    r = call_main("probe", "--hosts", f"127.0.0.2:{port},127.0.0.9:{port}", str(tmp_path), *FAST, "--out", "x",
                  cwd=tmp_path, timeout=120)
    err = assert_clean_error(r, "127.0.0.9", "fio --server")
    assert "\n  next: " in err
    assert not (tmp_path / "x").exists()


def test_sigterm_mid_run_stops_the_hosts_and_removes_their_files(tmp_path, servers):
    port, srv = servers
    pairs = list(srv.items())[:2]
    out = tmp_path / "fleet"
    proc = subprocess.Popen(["dbtier", "probe", "--hosts", ",".join(f"{a}:{port}" for a, _ in pairs),
                             *[f"{a}:{port}={d}" for a, (_, d) in pairs], *FAST, "--hosts-remote", "--out", str(out)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_points(out, 2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "interrupted" and doc["aggregate"]["status"] == "interrupted"
    assert doc["fleet"]["left_behind"] == []
    for _, (_, d) in pairs:
        assert list(d.iterdir()) == []          # the unlink job ran on each host after the stop
