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
