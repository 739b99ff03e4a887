"""`dbtier simulate run` with a cloud volume device (cloud:...): the queueing delay above its IOPS limit in the
result's latency percentiles, and a bad ID refused before the run directory is made."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_clean_error, call_main

GP3 = "cloud:aws:gp3:size=1000,iops=3000,latency_us=800"


def trace(path: Path, rate: float, n: int) -> Path:
    """n random 4 KiB reads every 1/rate s, as an Alibaba block trace (timestamps in µs)."""
    rng = np.random.default_rng(1)
    off = rng.integers(0, 2**28, n) * 4096
    t_us = (np.arange(n) * 1e6 / rate).round().astype(np.int64) + 1_577_808_000_000_000
    path.write_text("".join(f"7,R,{o},4096,{t}\n" for o, t in zip(off, t_us)))
    return path


def run(tmp_path: Path, tr: Path, device: str) -> dict:
    r = call_main("simulate", "run", str(tr), "--format", "alibaba", "--design", "single", "--device", device,
                  "--json", "--out", tr.stem, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_queueing_delay_of_a_cloud_volume_shows_in_the_percentiles(tmp_path):
    # below the limit (2,000/s on 3,000 IOPS): every read takes the base latency
    doc = run(tmp_path, trace(tmp_path / "below.csv", 2000, 2000), GP3)
    assert doc["latency_us"]["read"]["p50"] == pytest.approx(800) and doc["latency_us"]["read"]["p99"] == \
        pytest.approx(800)
    dev = doc["simulation"]["devices"]["device"]
    assert dev["limits"]["iops"] == 3000 and dev["limits"]["iops_binds"] == "the volume"
    assert doc["device_util"]["device"] == pytest.approx(2000 / 3000, rel=2e-3)
    # above (4,000/s for 1 s): the k-th read waits k (1/3,000 - 1/4,000) s; latencies are linear in k, so the
    # q-quantile of the n reads (linear interpolation) is 800 µs + q (n - 1)(1/3,000 - 1/4,000) s
    n = 4000
    doc = run(tmp_path, trace(tmp_path / "above.csv", 4000, n), GP3)
    step_us = (1 / 3000 - 1 / 4000) * 1e6
    for key, q in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99)):
        assert doc["latency_us"]["read"][key] == pytest.approx(800 + q * (n - 1) * step_us, rel=1e-6), key


def test_a_bad_cloud_id_is_refused_before_the_run(tmp_path):
    tr = trace(tmp_path / "t.csv", 100, 10)
    r = call_main("simulate", "run", str(tr), "--design", "single", "--device", "cloud:aws:gp3:size=10,iops=6000",
                  "--out", "run", cwd=tmp_path)
    err = assert_clean_error(r)
    assert "device ID 'cloud:aws:gp3:size=10,iops=6000': iops=6,000 is above what aws:gp3 allows" in err
    assert not (tmp_path / "run").exists()
