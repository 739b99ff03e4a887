"""mariadb-backup's pipelines and what its saved real log says it copied (tests/data/mariadb-backup)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.workloads import backup
from dbtier.workloads.backup import MARIADB_METHODS, mariadb_backup_read, mariadb_backup_stages, mariadb_source_bytes

DATA = Path(__file__).resolve().parent.parent / "data" / "mariadb-backup"
CLIENT = ["--no-defaults", "--socket=/tmp/s/mysqld.sock", "--user=dbtier"]
PLACED = {"data": "/d/data", "redo": "/r/redo", "undo": "/u/undo", "temp": "/t"}
DATADIR = "/var/tmp/mybackup-exp/dbtier-mariadb-d81c63f3/data"


def test_methods_are_the_contracts():
    assert list(MARIADB_METHODS) == ["plain", "stream", "stream-gzip"]


def test_plain_writes_its_directory_with_the_placed_innodb_dirs(tmp_path):
    dest = tmp_path / "b-plain"
    stages, out = mariadb_backup_stages("/usr/bin/mariadb-backup", CLIENT, PLACED, "plain", "dir", dest)
    assert out is None
    assert stages == [["/usr/bin/mariadb-backup", *CLIENT, "--backup", "--datadir=/d/data",
                       "--innodb-log-group-home-dir=/r/redo", "--innodb-undo-directory=/u/undo",
                       f"--target-dir={dest}"]]
    with pytest.raises(DbtierError, match="no null sink"):
        mariadb_backup_stages("mb", CLIENT, PLACED, "plain", "null", dest)


def test_unplaced_redo_and_undo_are_the_datadir(tmp_path):
    stages, _ = mariadb_backup_stages("mb", CLIENT, {"data": "/d"}, "plain", "dir", tmp_path / "x")
    assert "--innodb-log-group-home-dir=/d" in stages[0] and "--innodb-undo-directory=/d" in stages[0]


def test_streams_to_null_and_to_a_file_beside_the_scratch_dir(tmp_path):
    dest = tmp_path / "b-stream"
    stages, out = mariadb_backup_stages("mb", CLIENT, PLACED, "stream", "null", dest)
    assert out is None and len(stages) == 1 and stages[0][-1] == "--stream=xbstream"
    assert stages[0][1:4] == CLIENT                      # --no-defaults must come first
    stages, out = mariadb_backup_stages("mb", CLIENT, PLACED, "stream", "dir", dest)
    assert out == tmp_path / "b-stream.xb"
    stages, out = mariadb_backup_stages("mb", CLIENT, PLACED, "stream-gzip", "dir", dest)
    assert stages[1] == ["gzip", "-1"] and "--stream=xbstream" in stages[0] and out == tmp_path / "b-stream.xb.gz"
    stages, out = mariadb_backup_stages("mb", CLIENT, PLACED, "stream-gzip", "null", dest)
    assert len(stages) == 2 and out is None
    with pytest.raises(DbtierError, match="not one of plain, stream, stream-gzip"):
        mariadb_backup_stages("mb", CLIENT, PLACED, "tar", "dir", dest)


def test_the_plain_log_names_every_copied_file_and_counts_the_rest():
    r = mariadb_backup_read((DATA / "plain.stderr").read_text())
    assert r["datadir"] == DATADIR
    files = r["files"]
    assert len(files) == len(set(files))
    for f in ("ibdata1", "./t/a.ibd", "./t/a.frm", f"{DATADIR}/undo001", f"{DATADIR}/undo003",
              "./mysql/help_keyword.MAI", f"{DATADIR}//aria_log_control"):
        assert f in files
    assert "./mysql/slow_log.CSM" not in files            # counted with its logged size instead
    # redo from LSN 24954024 to 51649419; aria log tail copies 409600 + 0 + 0 + 8192;
    # log tables: general_log.CSM and slow_log.CSM 35 bytes each, the CSVs 0
    assert r["counted_bytes"] == (51649419 - 24954024) + 409600 + 8192 + 35 + 35


def test_the_stream_log_reads_the_same_way():
    plain = mariadb_backup_read((DATA / "plain.stderr").read_text())
    stream = mariadb_backup_read((DATA / "stream-null.stderr").read_text())
    assert stream["datadir"] == DATADIR
    assert {"ibdata1", "./t/a.ibd", "./t/a.frm", f"{DATADIR}/undo002"} <= set(stream["files"])
    assert set(plain["files"]) <= set(stream["files"])
    assert stream["counted_bytes"] == (51650175 - 35379087) + 409600 + 8192 + 35 + 35


def test_a_log_without_its_totals_is_refused():
    with pytest.raises(DbtierError, match="does not say what it copied"):
        mariadb_backup_read((DATA / "full-plain.stderr").read_text())


def test_source_bytes_add_the_files_sizes_now(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.ibd").write_bytes(b"x" * 1000)
    (tmp_path / "undo001").write_bytes(b"x" * 300)
    read = {"datadir": str(tmp_path), "files": ["./t/a.ibd", str(tmp_path / "undo001"), "./gone.ibd"],
            "counted_bytes": 7}
    assert mariadb_source_bytes(read) == 1000 + 300 + 7


def test_full_disk_is_the_clean_message():
    for name in ("full-plain.stderr", "full-stream.stderr"):
        e = backup._failure((DATA / name).read_text(), "dir", "stream", Path("/mnt/b"), "mariadb-backup")
        assert "filled up during the stream backup" in str(e)
        assert "free space there or choose another --to; finished backups are kept" in e.hint
    e = backup._failure("[00] FATAL ERROR: something else\n", "null", "stream", Path("/mnt/b"), "mariadb-backup")
    assert str(e).startswith("mariadb-backup (stream to null) failed")


# ------------------------------------------------------------------ the loop over methods, with a fake mariadb-backup
class FakeServer:
    def __init__(self, datadir: Path):
        self.datadir = datadir

    def placement(self) -> dict[str, str]:
        return {"data": str(self.datadir)}

    def client_args(self) -> list[str]:
        return CLIENT

    def client_env(self) -> dict[str, str]:
        return {}


def _fake(datadir: Path, calls: list, fail_on: tuple[str, str] | None = None):
    from dbtier.measure.executor import Completed
    log = (f"[00] 2026-11-23 18:45:08 cd to {datadir}/\n[00] 2026-11-23 18:45:09 Copying ./t/a.ibd to X\n"
           "[00] 2026-11-23 18:45:09 Redo log (from LSN 100 to 1100) was copied.\n[00] 2026-11-23 18:45:09 completed OK!\n")

    def pipeline(stages, *, stdout_path=None, env=None, timeout_s=None):
        target_dir = Path(next(a for a in stages[0] if a.startswith("--target-dir="))[len("--target-dir="):])
        calls.append((stages, stdout_path))
        if stdout_path is not None:
            Path(stdout_path).write_bytes(b"z" * 700)
        elif "--stream=xbstream" not in stages[0]:
            (target_dir / "a.ibd").write_bytes(b"y" * 5000)
        method = "stream-gzip" if len(stages) > 1 else ("stream" if "--stream=xbstream" in stages[0] else "plain")
        if fail_on == (method, "dir" if stdout_path or method == "plain" else "null"):
            err = "mariadb-backup: Error writing file 'UNKNOWN' (errno: 28 \"No space left on device\")\n"
            return [Completed(tuple(s), 1 if i == 0 else 0, "", err if i == 0 else "", 0.1) for i, s in enumerate(stages)]
        return [Completed(tuple(s), 0, "", log if i == 0 else "", 0.1) for i, s in enumerate(stages)]
    return pipeline


@pytest.fixture
def fake_env(tmp_path, monkeypatch):
    datadir = tmp_path / "data"
    (datadir / "t").mkdir(parents=True)
    (datadir / "t" / "a.ibd").write_bytes(b"x" * 4000)
    to = tmp_path / "to"
    to.mkdir()
    monkeypatch.setattr(backup, "drop_caches", lambda: False)
    return datadir, to


def test_every_method_to_null_then_dir_with_source_bytes_and_nothing_left(fake_env, monkeypatch):
    datadir, to = fake_env
    calls: list = []
    monkeypatch.setattr(backup.executor, "pipeline", _fake(datadir, calls))
    seen: list = []
    recs = backup.mariadb_backups(FakeServer(datadir), to, list(MARIADB_METHODS), [], None, None, seen.append)
    assert seen == recs
    # plain (no null sink of its own) last: it is judged against stream's null sink, measured before it
    assert [(r["method"], r["target"], r["compressed"]) for r in recs] == [
        ("mariadb-backup stream", "null", False), ("mariadb-backup stream", "dir", False),
        ("mariadb-backup stream-gzip", "null", True), ("mariadb-backup stream-gzip", "dir", True),
        ("mariadb-backup plain", "dir", False)]
    assert {r["bytes"] for r in recs} == {4000 + 1000}          # a.ibd's size + the redo's LSN range
    assert [r["output_bytes"] for r in recs] == [None, 700, None, 700, 5000]
    assert all(r["bottleneck"] and r["mbps"] > 0 for r in recs)
    assert recs[4]["null_mbps"] == recs[0]["mbps"] and recs[4]["null_method"] == "mariadb-backup stream"
    assert recs[1]["null_mbps"] == recs[0]["mbps"] and "null_method" not in recs[1]
    # the first (stream to null) also warms up once, unmeasured: the series' first backup is the slow one
    assert [c[1] is None for c in calls] == [True, True, False, True, False, True]
    assert list(to.iterdir()) == []


def test_a_full_target_keeps_the_finished_records_and_removes_its_files(fake_env, monkeypatch):
    datadir, to = fake_env
    monkeypatch.setattr(backup.executor, "pipeline", _fake(datadir, [], fail_on=("stream", "dir")))
    seen: list = []
    with pytest.raises(DbtierError) as e:
        backup.mariadb_backups(FakeServer(datadir), to, ["plain", "stream"], [], None, None, seen.append)
    assert str(e.value).startswith(f"{to} filled up during the stream backup (no space left on device)")
    assert e.value.hint == "free space there or choose another --to; finished backups are kept"
    assert [(r["method"], r["target"]) for r in seen] == [("mariadb-backup stream", "null")]
    assert list(to.iterdir()) == []


def test_an_unknown_method_is_refused_before_anything_runs(fake_env, monkeypatch):
    datadir, to = fake_env
    calls: list = []
    monkeypatch.setattr(backup.executor, "pipeline", _fake(datadir, calls))
    with pytest.raises(DbtierError, match="not one of plain, stream, stream-gzip"):
        backup.mariadb_backups(FakeServer(datadir), to, ["stream", "tar"], [], None, None, lambda r: None)
    assert calls == []
