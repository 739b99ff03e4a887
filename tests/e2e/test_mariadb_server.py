"""The managed MariaDB server for real: installed with redo, undo and temp placed in three directories,
reached through its socket as `dbtier`, run as the unprivileged `mysql` user, and leaving nothing running
or on disk after close() -- also when mariadbd was killed with SIGKILL, and when it cannot start."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import have
from dbtier.core.errors import DbtierError
from dbtier.workloads.mariadb import Server, Settings

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not Path("/usr/sbin/mariadbd").exists()
                                 and not have("mariadbd"), reason="MariaDB is not installed")]


def _uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(pid)


def _running(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-a", "-f", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "mariadbd" in line]


def _left(server_id: str, *roots: Path) -> list[str]:
    """Anything named after this server left under roots or the temp directory."""
    found = []
    for root in (*roots, Path(tempfile.gettempdir())):
        found += [str(p) for p in root.iterdir() if server_id in p.name]
    return found


def _gone(server: Server, roots: list[Path]) -> None:
    assert _running(server.id) == []
    assert _left(server.id, *roots) == []
    assert not server.alive()


def test_placed_server_runs_as_mysql_and_leaves_nothing(pg_dir):
    redo, undo, temp = (pg_dir / n for n in ("redo", "undo", "temp"))
    for d in (redo, undo, temp):
        d.mkdir(mode=0o755)
    s = Server(pg_dir, placement={"redo": str(redo), "undo": str(undo), "temp": str(temp)})
    with s:
        pl = s.placement()
        assert Path(pl["redo"]).parent == redo and Path(pl["undo"]).parent == undo
        assert Path(pl["temp"]).parent == temp and Path(pl["data"]).parent.parent == pg_dir
        assert (Path(pl["redo"]) / "ib_logfile0").is_file()
        assert (Path(pl["undo"]) / "undo001").is_file()
        assert (Path(pl["temp"]) / "ibtmp1").is_file()
        assert not (Path(pl["data"]) / "ib_logfile0").exists() and not (Path(pl["data"]) / "undo001").exists()
        assert (Path(pl["data"]) / "ibdata1").is_file()
        # through the socket as dbtier; InnoDB reports the placed directories
        rows = s.query("SELECT CURRENT_USER(), @@innodb_log_group_home_dir, @@innodb_undo_directory, @@tmpdir, "
                       "@@performance_schema, @@innodb_buffer_pool_size")
        assert rows == [["dbtier@localhost", pl["redo"], pl["undo"], pl["temp"], "1", str(128 * 2**20)]]
        s.query("CREATE DATABASE t; CREATE TABLE t.a (id INT PRIMARY KEY, v TEXT) ENGINE=InnoDB; "
                "INSERT INTO t.a VALUES (1, 'x')")
        assert (Path(pl["data"]) / "t" / "a.ibd").is_file()
        # nobody logs in over TCP (dbtier's account is socket-only)
        tcp = subprocess.run(["mariadb", "--no-defaults", "--protocol=TCP", "-h", "127.0.0.1", "-P", str(s.port),
                              "-u", "dbtier", "-e", "SELECT 1"], capture_output=True, text=True)
        assert tcp.returncode != 0
        pids = s.server_pids()
        assert len(pids) == 1 and s.alive()
        if os.geteuid() == 0:
            assert _uid(pids[0]) != 0
            assert s.os_user == "mysql" and _uid(pids[0]) == int(subprocess.run(
                ["id", "-u", "mysql"], capture_output=True, text=True).stdout)
        # a restart with a setting appended: it takes effect, the data is still there
        s.restart({"max_connections": "77"})
        assert s.query("SELECT @@max_connections, (SELECT v FROM t.a WHERE id = 1)") == [["77", "x"]]
    _gone(s, [pg_dir, redo, undo, temp])
    s.close()      # idempotent
    assert sorted(p.name for p in pg_dir.iterdir()) == ["redo", "temp", "undo"]


def test_killed_server_is_seen_dead_and_still_cleaned_up(pg_dir):
    binlog = pg_dir / "binlog"
    binlog.mkdir(mode=0o755)
    s = Server(pg_dir, placement={"binlog": str(binlog)}, settings=Settings(binlog=True, sync_binlog=1))
    with s:
        # the binary log where it was placed (the other test places the rest)
        pl = s.placement()
        assert Path(pl["binlog"]).parent == binlog and (Path(pl["binlog"]) / "mariadb-bin.000001").is_file()
        assert s.query("SELECT @@log_bin, @@sync_binlog") == [["1", "1"]]
        pid = s.server_pids()[0]
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while s.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not s.alive()
        assert s.server_pids() == []
    _gone(s, [pg_dir, binlog])
    assert [p.name for p in pg_dir.iterdir()] == ["binlog"]


def test_a_server_that_cannot_start_says_why_and_leaves_nothing(pg_dir):
    # installed fine, then restarted with a setting mariadbd refuses
    s = Server(pg_dir)
    with s:
        with pytest.raises(DbtierError) as e:
            s.restart({"no_such_dbtier_option": "1"})
        assert "would not start" in e.value.message
        assert "no_such_dbtier_option" in e.value.message      # the error log's tail
        assert not s.alive()
    _gone(s, [pg_dir])
    # refused already by the install: the same kind of message, nothing left
    bad = Server(pg_dir, settings=Settings(extra={"no_such_dbtier_option": "1"}))
    with pytest.raises(DbtierError) as e:
        with bad:
            pass
    assert "no_such_dbtier_option" in str(e.value)
    _gone(bad, [pg_dir])
    assert list(pg_dir.iterdir()) == []


def test_index_placement_is_refused_before_anything_is_made(pg_dir):
    with pytest.raises(DbtierError, match="indexes in the table's own file"):
        Server(pg_dir, placement={"index": str(pg_dir)})
    assert list(pg_dir.iterdir()) == []


def test_dsn_attachment_creates_and_drops_only_its_own_database(pg_dir, monkeypatch):
    """--dsn against a real server (the managed one, given a TCP account): the password comes from
    MYSQL_PWD, never an argument; dbtier's database is made and dropped, the user's stays."""
    from dbtier.workloads.mariadb import Attached
    with Server(pg_dir) as s:
        s.query("CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'pw-in-env'; "
                "GRANT ALL ON *.* TO 'bench'@'127.0.0.1'; CREATE DATABASE users_own")
        monkeypatch.setenv("MYSQL_PWD", "pw-in-env")
        a = Attached(f"mysql://bench@127.0.0.1:{s.port}/")
        assert not any("pw-in-env" in x for x in a.client_args())
        with a:
            assert a.database.startswith("dbtier_")
            assert a.query("SELECT CURRENT_USER()") == [["bench@127.0.0.1"]]
            a.query("CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB", database=a.database)
            dbs = {r[0] for r in s.query("SHOW DATABASES")}
            assert {a.database, "users_own"} <= dbs
        dbs = {r[0] for r in s.query("SHOW DATABASES")}
        assert a.database not in dbs and "users_own" in dbs
        a.close()     # idempotent
        monkeypatch.setenv("MYSQL_PWD", "wrong")
        with pytest.raises(DbtierError) as e:
            Attached(f"mysql://bench@127.0.0.1:{s.port}/").open()
        assert "Access denied" in e.value.message and "wrong" not in str(e.value)
    _gone(s, [pg_dir])
