"""mariadb-backup for real: a managed MariaDB server with ~100 MB of InnoDB data backed up by each method
to a directory and to null (records with bytes, MB/s and a limiting side; nothing left under --to; the
server closed), and a small loop-device target filling up with the clean message."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import have, needs_root
from dbtier.core.errors import DbtierError
from dbtier.measure.machine import devices_for
from dbtier.workloads.backup import MARIADB_METHODS, mariadb_backups
from dbtier.workloads.mariadb import Server

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not have("mariadb-backup"),
                                 reason="MariaDB or mariadb-backup is not installed")]

ROWS = 100_000          # 224 bytes of hex each: ~60 MB with the redo, undo and system files; gzip gets ~2:1


@pytest.fixture(scope="module")
def loaded():
    d = Path(tempfile.mkdtemp(prefix="dbtier-test-", dir="/var/tmp"))
    d.chmod(0o755)
    s = Server(d)
    try:
        with s:
            s.query("CREATE DATABASE b; CREATE TABLE b.t (id INT PRIMARY KEY, v VARCHAR(255)) ENGINE=InnoDB; "
                    "INSERT INTO b.t SELECT seq, CONCAT(MD5(seq), MD5(seq + 1), SHA2(seq, 512), "
                    f"MD5(seq + 2)) FROM b.seq_1_to_{ROWS}", timeout_s=900)
            yield s, d
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert not s.alive() and not s.created


def test_each_method_to_null_and_to_a_directory(loaded, tmp_path):
    server, root = loaded
    to = root / "to"
    to.mkdir()
    devs = devices_for([str(root)])
    seen = []
    recs = mariadb_backups(server, to, list(MARIADB_METHODS), devs, (devs or [None])[0], (devs or [None])[0],
                           seen.append)
    assert seen == recs
    got = [(r["method"], r["target"]) for r in recs]
    # plain (no null sink of its own) last: judged against stream's null sink, which reads the same files
    assert got == [("mariadb-backup stream", "null"), ("mariadb-backup stream", "dir"),
                   ("mariadb-backup stream-gzip", "null"), ("mariadb-backup stream-gzip", "dir"),
                   ("mariadb-backup plain", "dir")]
    assert recs[-1]["null_method"] == "mariadb-backup stream" and recs[-1]["null_mbps"] == recs[0]["mbps"]
    for r in recs:
        assert r["bytes"] > 30e6 and r["mbps"] > 0 and r["seconds"] > 0
        assert r["bottleneck"] in ("source", "target", "cpu", "undetermined") and r["bottleneck_evidence"]
        assert "completed OK!" in next(iter(r["raw_outputs"].values()))     # mariadb-backup's log, for raw/
        assert r["compressed"] == ("gzip" in r["method"])
        if r["target"] == "dir":
            assert r["output_bytes"] > 0
        else:
            assert r["output_bytes"] is None
    by = {(r["method"], r["target"]): r for r in recs}
    # the same source counted whichever the sink (the redo range moves a little between backups)
    assert abs(by[("mariadb-backup stream", "dir")]["bytes"] - by[("mariadb-backup plain", "dir")]["bytes"]) < 0.1 * \
        by[("mariadb-backup plain", "dir")]["bytes"]
    # the directory holds about what was read; gzip writes less than it read
    plain = by[("mariadb-backup plain", "dir")]
    assert 0.9 * plain["bytes"] < plain["output_bytes"] < 1.1 * plain["bytes"]
    gz = by[("mariadb-backup stream-gzip", "dir")]
    assert gz["output_bytes"] < 0.8 * gz["bytes"]
    assert list(to.iterdir()) == []
    for r in recs:
        print(f"{r['method']:28} {r['target']:5} {r['bytes'] / 1e6:7.1f} MB {r['mbps']:8.1f} MB/s "
              f"cpu {r['proc_cpu_cores']:.2f} cores caches dropped {r['caches_dropped']} -> {r['bottleneck']}")


@needs_root
def test_a_target_filling_up_is_the_clean_message(loaded, loop_device):
    server, root = loaded
    _, mnt = loop_device(48, fs="ext4", mount=True, where=root)
    for method in ("plain", "stream"):
        seen = []
        with pytest.raises(DbtierError) as e:
            mariadb_backups(server, mnt, [method], [], None, None, seen.append)
        assert f"{mnt} filled up during the {method} backup (no space left on device)" in str(e.value)
        assert e.value.hint == "free space there or choose another --to; finished backups are kept"
        assert [p.name for p in mnt.iterdir() if p.name != "lost+found"] == []
        # stream: the null backup finished before the file one filled the disk, and was reported
        assert [r["target"] for r in seen] == ([] if method == "plain" else ["null"])
    assert server.alive()
