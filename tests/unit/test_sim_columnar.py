"""The Parquet copy round-trips: written chunk by chunk (any chunking) and read back whole or one volume,
every array equals the trace's own (or Trace.only_volume's)."""

import numpy as np
import pytest

from dbtier.sim.trace import columnar
from dbtier.sim.trace.chunks import chunks_of
from dbtier.sim.trace.traces import from_arrays


def _trace():
    rng = np.random.default_rng(5)
    n = 5000
    t = np.cumsum(rng.exponential(1e-3, n))
    return from_arrays(t, rng.integers(0, 2, n), rng.integers(0, 1 << 30, n) * 512, rng.integers(1, 64, n) * 512,
                       volume=rng.integers(0, 3, n))


def _same(a, b):
    for k in ("time_s", "op", "offset_bytes", "length_bytes", "volume"):
        x, y = getattr(a, k), getattr(b, k)
        assert x.dtype == y.dtype and np.array_equal(x, y), k


@pytest.mark.slow
def test_written_in_chunks_read_back_whole_and_per_volume(tmp_path):
    tr = _trace()
    tr.volumes = ("a", "b", "c")
    for size in (7, 1000, 1 << 20):
        run = tmp_path / f"run{size}"
        run.mkdir()
        m = columnar.write_chunks(chunks_of(tr, size), lambda: tr, run / columnar.CONVERTED, {"path": "x"})
        assert m["requests"] == len(tr) and m["summary"] == tr.summary()
        assert sorted(f["requests"] for f in m["files"]) == sorted(np.bincount(tr.volume).tolist())
        back = columnar.read(run)
        _same(back, tr)
        assert back.volumes == tr.volumes
        for name in tr.volumes:
            _same(columnar.read(run, name), tr.only_volume(name))
