"""A run directory on a filesystem that fills: the run ends `failed` with one message naming the filesystem
and how much more it needed (never "this is a bug"), and the document on disk says so (the 64 KiB kept free
for the final status); inputs copied into raw/ are removed again when they were what filled it.

Each command writes its run onto a tmpfs with 72 KiB free (its document, raw outputs or copies do not fit)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import DATA, call_main

pytestmark = pytest.mark.engine          # mounts a tmpfs (root)

H = DATA / "history"
PROBE_DOC = DATA / "probe" / "quick-ext4-virtio.json"


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        shutil.copy(PROBE_DOC, d / "result.json")
    return a, b


COMMANDS = {
    "plan size": lambda t: ["plan", "size", "--read-iops", "20000", "--write-iops", "15000", "--write-mbps", "200",
                            "--capacity-gb", "4000", "--top", "40"],
    "plan equivalent": lambda t: ["plan", "equivalent", "--reference", "fusionio-iodrive-duo-1.2tb", "--using",
                                  "sas-15k-73gb"],
    "catalog list": lambda t: ["catalog", "list"],
    "show": lambda t: ["show", str(_runs(t)[0])],
    "compare": lambda t: ["compare", *map(str, _runs(t))],
    "report": lambda t: ["report", *map(str, _runs(t))],
    "history import": lambda t: ["history", "import", "--source", "awr", str(H / "awr" / "awr_sysstat_PROD.csv"),
                                 str(H / "awr" / "awr_iostat_filetype_PROD.csv")],
    "history consolidate": lambda t: ["history", "consolidate", str(_import(t))],
    "history requirement": lambda t: ["history", "requirement", str(_import(t)), "--database", "PROD"],
    "plan budget": lambda t: ["plan", "budget", "--usd", "20000", "--devices", "fusionio-iodrive-duo-1.2tb",
                              "sas-15k-73gb", "nvme-enterprise-3.84tb"],
    "plan value": lambda t: ["plan", "value", "--result", str(_runs(t)[0]), "--config", "sas-15k-73gb:8:raid10"],
    "simulate run": lambda t: ["simulate", "run", str(DATA / "traces" / "msr-hm1.csv"), "--design", "read-cache",
                               "--cache", "nvme-enterprise-3.84tb", "--backing", "sas-15k-73gb", "--cache-gb", "0.001"],
    "simulate mrc": lambda t: ["simulate", "mrc", str(DATA / "objects" / "cloudPhysicsIO.oracleGeneral.bin"),
                               "--policy", "lru,fifo"],
    "cleanup": lambda t: ["cleanup", "--dry-run"],
}


def _import(tmp_path: Path) -> Path:
    """A history import run elsewhere (its own filesystem), for the commands that read one."""
    out = tmp_path / "imported"
    r = call_main("history", "import", "--source", "awr", str(H / "awr" / "awr_sysstat_PROD.csv"),
                  str(H / "awr" / "awr_iostat_filetype_PROD.csv"), "--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_run_directory_fails_with_the_filesystem_named(tmp_path, mount_point, name):
    small = mount_point("tmpfs", "size=256k,mode=755")
    # leave the 64 KiB kept for the final status and a little: the first document does not fit (for history
    # import, 72 KiB: its first document fits, the copies of its inputs into raw/ do not)
    st = os.statvfs(small)
    leave = (72 if name == "history import" else 66) * 1024
    (small / "filler").write_bytes(b"x" * (st.f_bavail * st.f_frsize - leave))
    args = COMMANDS[name](tmp_path)
    r = call_main(*args, "--out", str(small / "run"), cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr)
    assert "Traceback" not in r.stderr and "this is a bug" not in r.stderr, r.stderr
    assert r.stderr.startswith("dbtier: error: ") and f"the filesystem at {small} is full" in r.stderr, r.stderr
    doc = json.loads((small / "run" / "result.json").read_text())
    assert doc["status"] == "failed"
    assert any(f"the filesystem at {small} is full" in e["message"] for e in doc["errors"])
    assert not (small / "run" / ".dbtier-reserve").exists()
    if name == "history import":
        # the copies of the inputs (or the series) filled it: no copy is left in raw/
        assert not list((small / "run").glob("raw/*.csv"))


def test_no_room_even_for_the_run_directory_is_one_message(tmp_path, mount_point):
    tiny = mount_point("tmpfs", "size=4k,mode=755")      # less than the 64 KiB kept for the final status
    r = call_main("plan", "size", "--capacity-gb", "100", "--out", str(tiny / "run"), cwd=tmp_path)
    assert r.returncode == 2 and "is full" in r.stderr and "Traceback" not in r.stderr, r.stderr
