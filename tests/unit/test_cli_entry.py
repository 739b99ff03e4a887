"""The dbtier process's entry: no cyclic collection while the modules load or a simulate run replays, no
OpenBLAS thread pool, and a caller that calls main itself keeps its collector as it was."""

from __future__ import annotations

import pytest

import gc
import os
import subprocess
import sys
from pathlib import Path

from conftest import call_main

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
RUN = ["simulate", "run", str(DATA / "msr-hm1.csv"), "--design", "read-cache", "--cache", "nvme-enterprise-3.84tb",
       "--backing", "sas-15k-73gb", "--cache-gb", "1", "--json"]

_CHILD = """
import gc, sys
seen = []
gc.callbacks.append(lambda phase, info: phase == "start" and seen.append(info["generation"]))
from dbtier.cli import entry
sys.argv = ["dbtier", *sys.argv[1:]]
seen.clear()            # the package's own imports, before main can turn the collector off, are not counted
try:
    rc = entry.main()
finally:
    import os
    print("collections", len(seen), "enabled", gc.isenabled(), "blas", os.environ.get("OPENBLAS_NUM_THREADS"),
          file=sys.stderr)
"""


@pytest.mark.slow
def test_the_own_process_collects_nothing_while_it_loads_and_replays(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    r = subprocess.run([sys.executable, "-c", _CHILD, *RUN, "--out", str(tmp_path / "run")], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert '"read_hit_ratio"' in r.stdout
    assert "collections 0 enabled True" in r.stderr
    assert "blas 1" in r.stderr                     # set before numpy loaded: no OpenBLAS pool spinning beside it


def test_a_caller_keeps_its_collector(tmp_path):
    enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    r = call_main(*RUN, "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert gc.isenabled() == enabled
    assert gc.get_freeze_count() <= frozen          # nothing of the caller's was frozen (freed ones leave it)
    gc.disable()
    try:
        assert call_main(*RUN, "--out", str(tmp_path / "run2"), cwd=tmp_path).returncode == 0
        assert not gc.isenabled()           # left off, as the caller had it
    finally:
        if enabled:
            gc.enable()
