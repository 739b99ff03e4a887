"""`dbtier bench oltp --engine mariadb --dsn mysql://user@127.0.0.1:PORT/` through the CLI, against a
MariaDB server the test starts (workloads/mariadb.Server) with a TCP user that has a password: the
password from MYSQL_PWD and from ~/.my.cnf, never in the run directory nor on a command line; dbtier
creates its own `dbtier_*` database and drops only it; a wrong password is a clean error; the options
that need the managed server are refused with --dsn. `--place data=DIR` puts dbtier's tables in DIR with
DATA DIRECTORY (seen there during the run, read back into the result, DIR/<db> gone afterwards); a DIR
the server's OS user cannot write is one clean error."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import threading
import tempfile
from pathlib import Path

import jsonschema
import pytest

from conftest import assert_clean_error, have, run_dbtier
from dbtier.results.schema import result_schema

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"),
                                 reason="MariaDB or sysbench is not installed")]

PASSWORD = "Zq7-dsnTest-41x"           # distinctive: found by grep if it leaks anywhere
SHORT = ["--engine", "mariadb", "--workload", "sysbench-rw", "--scale", "1", "--clients", "1",
         "--duration", "2", "--warmup", "0"]


@pytest.fixture
def server(pg_dir):
    """A MariaDB server with 'bench'@'127.0.0.1' (password PASSWORD, all privileges) and a database `keepme`
    the test made; statements logged to mysql.general_log (to see what dbtier ran there)."""
    from dbtier.workloads.mariadb import Server
    with Server(pg_dir) as s:
        s.query(f"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; "
                "GRANT ALL PRIVILEGES ON *.* TO 'bench'@'127.0.0.1'; "
                "CREATE DATABASE keepme; CREATE TABLE keepme.t (id INT PRIMARY KEY); INSERT INTO keepme.t VALUES (7); "
                "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = ON")
        yield s


def databases(s) -> list[str]:
    return sorted(r[0] for r in s.query("SHOW DATABASES"))


def logged(s, like: str) -> list[str]:
    return [r[0] for r in s.query(f"SELECT argument FROM mysql.general_log WHERE argument LIKE '{like}'")]


def files_with(d: Path, needle: str) -> list[str]:
    hits = []
    for f in d.rglob("*"):
        if f.is_file() and needle.encode() in f.read_bytes():
            hits.append(str(f))
    return hits


def check_run(s, d: Path, name: str, env: dict) -> dict:
    dsn = f"mysql://bench@127.0.0.1:{s.port}/"
    r = run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--json", "--out", name, cwd=d, env=env)
    assert r.returncode == 0, r.stderr
    assert PASSWORD not in r.stdout + r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc["status"] == "ok" and doc["engine"] == "mariadb"
    assert doc["params"]["mode"] == "dsn" and doc["params"]["dsn"] == dsn
    assert set(doc["not_measured"]) == {"server_cpu", "server_devices"}
    # durability: the server's own settings, read from it (dbtier set none of its options there)
    want = s.query("SELECT @@innodb_flush_log_at_trx_commit")[0][0]
    assert doc["params"]["settings"]["innodb_flush_log_at_trx_commit"] == want
    assert doc["durability"]["durable"] is (want == "1")
    assert doc["durability"]["reason"].startswith(f"the server's own settings (--dsn): innodb_flush_log_at_trx_commit={want}")
    (p,) = doc["points"]
    assert p["tps"] > 0 and set(p["not_measured"]) == {"server_cpu", "server_devices"}
    assert p["innodb"]["buffer_pool_read_requests"] > 0
    run_dir = d / name
    assert files_with(run_dir, PASSWORD) == []
    raws = list((run_dir / "raw").glob("*.txt"))
    assert raws and any("transactions:" in f.read_text() for f in raws)
    # dbtier's database: created, sysbench's tables loaded into it, dropped; only it
    created = [x for x in logged(s, "CREATE DATABASE%") if "dbtier_" in x]
    assert len(created) == 1, created
    db = created[0].split("`")[1]
    assert db.startswith("dbtier_") and any(db in x for x in logged(s, "DROP DATABASE%"))
    assert databases(s) == ["information_schema", "keepme", "mysql", "performance_schema", "sys"]
    assert s.query("SELECT id FROM keepme.t") == [["7"]]
    s.query("TRUNCATE mysql.general_log")
    rr = run_dbtier("report", str(run_dir), "--format", "both", "--output", f"{name}-report", cwd=d)
    assert rr.returncode == 0, rr.stderr
    assert dsn in (d / f"{name}-report").read_text()
    return doc


def test_dsn_with_password_from_the_environment(server, pg_dir):
    seen: list[str] = []
    import threading
    stop = threading.Event()

    def watch():   # every sysbench command line while the run goes (none may hold the password)
        while not stop.is_set():
            out = subprocess.run(["pgrep", "-a", "sysbench"], capture_output=True, text=True).stdout
            seen.extend(x for x in out.splitlines() if f"--mysql-port={server.port}" in x)
            stop.wait(0.1)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        check_run(server, pg_dir, "env", {"MYSQL_PWD": PASSWORD})
    finally:
        stop.set()
        t.join()
    assert seen, "no sysbench command line was seen"
    assert not [x for x in seen if PASSWORD in x or "mysql-password" in x]
    assert all("--config-file=" in x for x in seen)
    # the config file with the password lived in a private temp directory, removed at the end
    assert not any(Path(x.split("--config-file=")[1].split()[0]).exists() for x in seen)


def test_dsn_with_password_from_my_cnf(server, pg_dir):
    home = Path(tempfile.mkdtemp(prefix="dbtier-home-", dir=pg_dir))
    cnf = home / ".my.cnf"
    cnf.write_text(f"[client]\npassword = {PASSWORD}\n")
    cnf.chmod(0o600)
    # the user's server is not durable, whatever dbtier's own options (durable by default) say
    server.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
    # MYSQL_PWD empty (run_dbtier adds to the environment): the password is the option file's
    doc = check_run(server, pg_dir, "cnf", {"HOME": str(home), "MYSQL_PWD": ""})
    assert doc["durability"]["durable"] is False


def test_dsn_wrong_password_and_refused_options(server, pg_dir):
    dsn = f"mysql://bench@127.0.0.1:{server.port}/"
    r = run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--out", "bad", cwd=pg_dir, env={"MYSQL_PWD": "wrong-pw"})
    err = assert_clean_error(r, dsn, "Access denied")
    assert "wrong-pw" not in err
    assert databases(server) == ["information_schema", "keepme", "mysql", "performance_schema", "sys"]
    # a password in the DSN: refused, and shown masked
    r = run_dbtier("bench", "oltp", *SHORT, "--dsn", f"mysql://bench:{PASSWORD}@127.0.0.1:{server.port}/",
                   cwd=pg_dir)
    err = assert_clean_error(r, "a password in the DSN is refused", "mysql://bench:***@127.0.0.1")
    assert PASSWORD not in err
    env = {"MYSQL_PWD": PASSWORD}
    assert_clean_error(run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--memory", "1G", cwd=pg_dir, env=env),
                       "--memory 1.0 GiB needs the managed cluster, not --dsn")
    assert_clean_error(run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--place", f"redo={pg_dir}", cwd=pg_dir,
                                  env=env), f"--place redo={pg_dir} with --dsn: redo, undo, temp and binlog are "
                       "server-wide settings")
    assert_clean_error(run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--placement-matrix", f"{pg_dir},/tmp",
                                  cwd=pg_dir, env=env), "--placement-matrix needs the managed cluster")
    # the managed server's own options: refused before anything starts (dbtier never changes a user's server)
    assert_clean_error(run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--buffer-pool-size", "1G", cwd=pg_dir,
                                  env=env), "--buffer-pool-size 1G with --dsn: with --dsn dbtier reads your "
                       "server's own settings and never changes them", "set it on your server")
    assert_clean_error(run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--emulate", f"{pg_dir}=150iops",
                                  cwd=pg_dir, env=env), "--emulate needs the managed cluster, not --dsn")
    assert logged(server, "CREATE DATABASE%") == []


def test_dsn_password_with_white_space_is_refused_and_its_database_dropped(server, pg_dir):
    """sysbench's config file cannot hold a password with white space: a clean error after dbtier made its
    database (the mariadb client took the password), and that database dropped on the way out."""
    server.query("CREATE USER 'spacey'@'127.0.0.1' IDENTIFIED BY 'two words'; "
                 "GRANT ALL PRIVILEGES ON *.* TO 'spacey'@'127.0.0.1'")
    r = run_dbtier("bench", "oltp", *SHORT, "--dsn", f"mysql://spacey@127.0.0.1:{server.port}/", "--out", "sp",
                   cwd=pg_dir, env={"MYSQL_PWD": "two words"})
    err = assert_clean_error(r, "the MySQL password contains white space")
    assert "two words" not in err
    created = [x for x in logged(server, "CREATE DATABASE%") if "dbtier_" in x]
    assert len(created) == 1 and any(created[0].split("`")[1] in x for x in logged(server, "DROP DATABASE%"))
    assert databases(server) == ["information_schema", "keepme", "mysql", "performance_schema", "sys"]


def test_dsn_data_directory_puts_dbtiers_tables_there(server, pg_dir):
    data = pg_dir / "tables"
    data.mkdir()
    os_user = pwd.getpwnam(server.os_user)
    os.chown(data, os_user.pw_uid, os_user.pw_gid)
    (data / "theirs.txt").write_text("a file of the user's: left alone")
    seen: set[Path] = set()
    stop = threading.Event()

    def watch():   # the table files while the run goes
        while not stop.is_set():
            try:
                seen.update(p for p in data.rglob("*.ibd"))
            except OSError:
                pass
            stop.wait(0.1)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    dsn = f"mysql://bench@127.0.0.1:{server.port}/"
    try:
        r = run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--place", f"data={data}", "--json", "--out", "dd",
                       cwd=pg_dir, env={"MYSQL_PWD": PASSWORD})
    finally:
        stop.set()
        t.join()
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    created = [x for x in logged(server, "CREATE DATABASE%") if "dbtier_" in x]
    assert len(created) == 1, created
    db = created[0].split("`")[1]
    # every sysbench table was created with DATA DIRECTORY and its file was under DIR/<db> during the run
    assert {p.name for p in seen} == {f"sbtest{i}.ibd" for i in range(1, 5)}
    assert {p.parent for p in seen} == {data / db}
    creates = logged(server, "CREATE TABLE sbtest%")
    assert len(creates) == 4 and all(f"DATA DIRECTORY='{data}'" in c for c in creates)
    # read back from information_schema into the result
    assert doc["params"]["placement_requested"] == {"data": str(data)}
    assert doc["placement"] == {"data": str(data / db), "redo": "server", "undo": "server", "temp": "server"}
    dd = doc["load"]["data_directory"]
    assert dd["tables"] == {f"sbtest{i}": str(data / db / f"sbtest{i}.ibd") for i in range(1, 5)}
    assert dd["local"] is True and dd["device"]       # the server is on this machine: its device is known
    assert any(t.get("path") == str(data) for t in doc["machine"]["targets"])
    # afterwards: dbtier's database and the directory InnoDB made for it gone; the rest untouched
    assert sorted(p.name for p in data.iterdir()) == ["theirs.txt"]
    assert databases(server) == ["information_schema", "keepme", "mysql", "performance_schema", "sys"]
    assert server.query("SELECT id FROM keepme.t") == [["7"]]
    assert any(db in x for x in logged(server, "DROP DATABASE%"))
    # the report's placement table names the directory the tables were in
    rr = run_dbtier("report", str(pg_dir / "dd"), "--format", "html", "--output", "dd-report", cwd=pg_dir)
    assert rr.returncode == 0, rr.stderr
    assert str(data / db) in (pg_dir / "dd-report").read_text()


def test_dsn_data_directory_the_server_cannot_write(server, pg_dir):
    data = pg_dir / "root-only"
    data.mkdir()
    data.chmod(0o755)        # root's; the server's OS user (mysql) cannot create DIR/<db> in it
    dsn = f"mysql://bench@127.0.0.1:{server.port}/"
    r = run_dbtier("bench", "oltp", *SHORT, "--dsn", dsn, "--place", f"data={data}", "--out", "ro", cwd=pg_dir,
                   env={"MYSQL_PWD": PASSWORD})
    err = assert_clean_error(r, "the server could not create dbtier's table", f"in DATA DIRECTORY {data}",
                             f"must own {data} or be able to write it", "AppArmor or SELinux")
    assert err.count("dbtier: error:") == 1
    assert list(data.iterdir()) == []
    assert databases(server) == ["information_schema", "keepme", "mysql", "performance_schema", "sys"]
