"""A throw-away MariaDB server that dbtier owns, with InnoDB's parts placed; or the user's server by DSN.

The managed `Server` is the MariaDB counterpart of postgres.Cluster. It runs as an unprivileged OS user
(`mysql` when dbtier runs as root, else the current user; never root), listens on 127.0.0.1 at its own
port and on a private socket, and is stopped and removed by `close()`, which the context manager calls
on exit, on Ctrl-C and on failure.

Every directory it writes is one it created: `<DIR>/dbtier-mariadb-<id>/...` inside each placement
directory, plus a short private home under the temp directory (socket, my.cnf, error log, pid file);
nothing else is touched or removed.

How clients connect (the managed server): user `dbtier`, no password, over the socket only
(`Server.socket`, or `Server.client_args()` for the mariadb client, mariadb-admin, mariadb-backup and
sysbench's `--mysql-socket`/`--mysql-user`), run with `Server.client_env()` (the environment without
MYSQL_PWD, which the client would otherwise send). `dbtier`@`localhost` is created at install time with all
privileges; the server runs with skip-name-resolve, so `localhost` matches socket connections only and
nobody can log in over TCP (the install makes no anonymous users and no test database; root and the
server's OS user authenticate by unix_socket, i.e. only as those OS users). The socket's directory is
mode 0700 and owned by the server's OS user: like PostgreSQL's trust on a private socket directory,
reaching the socket is the authentication (root, or the user dbtier runs as).

Placement (roles): `data` (datadir: tables and their indexes, the system tablespace, doublewrite),
`redo` (innodb_log_group_home_dir), `undo` (innodb_undo_directory; MariaDB 10.11 creates separate undo
tablespaces only at install time, so the server is always installed with INNODB_UNDO_TABLESPACES of them,
in the datadir unless placed), `temp` (tmpdir and the InnoDB temporary tablespace ibtmp1), `binlog`
(log_bin, only with binary logging on). `index` is refused: InnoDB keeps a table's indexes in the
table's own file.

`--dsn mysql://user@host:port/` attaches to an existing MySQL or MariaDB server (`Attached`): the
password comes only from MYSQL_PWD or the option files (~/.my.cnf), which the mariadb client reads
itself; a DSN with a password is refused. dbtier creates one database there, `dbtier_<random>`, and
drops only it.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from dbtier.core.closing import ClosedOnFailure
from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.workloads.throwaway import ThrowAway
from dbtier.workloads.postgres import free_port, port_in_use

ROLES = ("data", "redo", "undo", "temp", "binlog")
BINARIES = ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin")
MARIADB_HINT = ("install MariaDB: `apt-get install mariadb-server` (Debian/Ubuntu) or "
                "`dnf install mariadb-server` (Fedora/RHEL); `make lab` installs it")
INDEX_REFUSED = ("InnoDB keeps a table's indexes in the table's own file (the clustered index holds the "
                 "rows): indexes cannot be placed apart from their table")
USER = "dbtier"                     # the managed server's client user (socket only, no password)
INNODB_UNDO_TABLESPACES = 3         # fixed at install time in 10.11; the same for every placement step
START_TIMEOUT_S = 120.0
FLUSH_METHODS = ("fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC")
NOT_DURABLE_FLUSH = ("nosync", "littlesync")    # MariaDB's test-only methods: they skip fsyncs


def find_binaries() -> dict[str, str]:
    """name -> path of mariadbd, mariadb-install-db, mariadb and mariadb-admin. DBTIER_MARIADB_BINDIR,
    when set, is the only place looked at; else PATH, /usr/sbin and /usr/bin."""
    env = os.environ.get("DBTIER_MARIADB_BINDIR")
    found: dict[str, str] = {}
    for b in BINARIES:
        if env:
            p: str | None = os.path.join(env, b) if os.access(os.path.join(env, b), os.X_OK) else None
        else:
            p = shutil.which(b) or shutil.which(b, path="/usr/sbin:/usr/bin:/usr/local/bin")
        if p:
            found[b] = p
    missing = [b for b in BINARIES if b not in found]
    if missing:
        where = f" in DBTIER_MARIADB_BINDIR={env}" if env else ""
        raise DbtierError(f"MariaDB is not installed ({', '.join(missing)} not found{where})", MARIADB_HINT)
    return found


# ------------------------------------------------------------------ settings (pure)
@dataclass
class Settings:
    """The server's InnoDB and durability settings. The buffer pool is small by default so that reads
    reach the storage under test."""
    innodb_buffer_pool_size: str = "128M"
    innodb_flush_log_at_trx_commit: int = 1      # 1 durable; 2 write at commit, fsync ~1/s; 0 both ~1/s
    sync_binlog: int = 1                         # fsync the binary log every N commits (0: the OS decides)
    innodb_doublewrite: bool = True
    innodb_flush_method: str = "O_DIRECT"        # 10.11's default
    binlog: bool = False                         # binary logging (log_bin)
    performance_schema: bool = True              # wait events for the bottleneck
    max_connections: int = 200
    extra: dict[str, str] = field(default_factory=dict)

    def check(self) -> None:
        """A DbtierError naming the first bad value."""
        if self.innodb_flush_log_at_trx_commit not in (0, 1, 2):
            raise DbtierError(f"innodb_flush_log_at_trx_commit {self.innodb_flush_log_at_trx_commit!r}: "
                              "must be 1, 2 or 0", "1 is durable; 2 and 0 lose up to a second of commits")
        if not isinstance(self.sync_binlog, int) or self.sync_binlog < 0:
            raise DbtierError(f"sync_binlog {self.sync_binlog!r}: must be a whole number >= 0",
                              "1 fsyncs the binary log at every commit (durable)")
        if self.innodb_flush_method not in FLUSH_METHODS:
            raise DbtierError(f"innodb_flush_method {self.innodb_flush_method!r}: not one of "
                              f"{', '.join(FLUSH_METHODS)}", "O_DIRECT is the default")
        if not re.fullmatch(r"\d+[KMGT]?", self.innodb_buffer_pool_size, re.I):
            raise DbtierError(f"innodb_buffer_pool_size {self.innodb_buffer_pool_size!r}: not a size",
                              "a number of bytes with an optional K, M, G or T, e.g. 128M")
        if self.max_connections < 1:
            raise DbtierError(f"max_connections {self.max_connections}: must be at least 1")

    def conf(self) -> dict[str, str]:
        """The [mariadbd] settings, name -> value (my.cnf lines `name = value`, see cnf_lines)."""
        c = {
            "innodb_buffer_pool_size": self.innodb_buffer_pool_size,
            "innodb_flush_log_at_trx_commit": str(self.innodb_flush_log_at_trx_commit),
            "innodb_doublewrite": "ON" if self.innodb_doublewrite else "OFF",
            "innodb_flush_method": self.innodb_flush_method,
            "performance_schema": "ON" if self.performance_schema else "OFF",
            "max_connections": str(self.max_connections),
        }
        if self.performance_schema:
            # wait events (I/O, locks, redo) for the bottleneck; the counters are on by default
            c["performance-schema-instrument"] = "'wait/%=ON'"
            c["performance-schema-consumer-events-waits-current"] = "ON"
        if self.binlog:
            c["sync_binlog"] = str(self.sync_binlog)
            c["binlog_format"] = "ROW"
        c.update(self.extra)
        return c


def cnf_lines(conf: dict[str, str]) -> list[str]:
    """`name = value` lines of an option file section (the last of a name wins)."""
    return [f"{k} = {v}" for k, v in conf.items()]


def durable(settings: Settings) -> tuple[bool, str]:
    """Whether a commit survives a power loss with these settings, and why (the reason names the first
    setting that breaks it, or says what makes it durable)."""
    if settings.innodb_flush_log_at_trx_commit != 1:
        return False, (f"innodb_flush_log_at_trx_commit={settings.innodb_flush_log_at_trx_commit}: the redo log "
                       "is not flushed at each commit (up to a second of commits lost)")
    if not settings.innodb_doublewrite:
        return False, "innodb_doublewrite=OFF: a torn page write cannot be repaired after a crash"
    if settings.innodb_flush_method in NOT_DURABLE_FLUSH:
        return False, f"innodb_flush_method={settings.innodb_flush_method}: InnoDB skips its fsyncs"
    if settings.binlog and settings.sync_binlog != 1:
        return False, (f"sync_binlog={settings.sync_binlog} with the binary log on: committed transactions "
                       "can be missing from the binary log after a crash")
    return True, ("innodb_flush_log_at_trx_commit=1, doublewrite on"
                  + (", sync_binlog=1" if settings.binlog else ", binary log off"))


def check_placement(placement: dict[str, str], binlog: bool) -> None:
    """A DbtierError for a role InnoDB cannot place (index, with the reason) or does not know, and for a
    binary-log directory with binary logging off."""
    for role in placement:
        if role == "index":
            raise DbtierError(f"index={placement[role]}: {INDEX_REFUSED}",
                              "place `data` (the tables with their indexes) instead")
        if role not in ROLES:
            raise DbtierError(f"{role}={placement[role]}: MariaDB has no role {role!r}",
                              f"the roles are {', '.join(ROLES)}")
    if "binlog" in placement and not binlog:
        raise DbtierError(f"binlog={placement['binlog']}: binary logging is off, there is no binary log to place",
                          "turn the binary log on, or leave binlog= out")


# ------------------------------------------------------------------ DATA DIRECTORY on a --dsn server (pure)
DATA_DIRECTORY_ROLES = ("data",)     # what --place takes with --dsn: dbtier's own tables, per table
DSN_PLACE_REFUSED = ("redo, undo, temp and binlog are server-wide settings (the server's my.cnf), which dbtier "
                     "never changes on your server; only data=DIR is taken there (dbtier's own tables, created "
                     "with DATA DIRECTORY='DIR')")
# 10.11 (MariaDB >= 10.6 has no INNODB_SYS_DATAFILES): each file-per-table tablespace's file, by `db/table`
TABLE_FILES_MARIADB = ("SELECT NAME, FILENAME FROM information_schema.INNODB_SYS_TABLESPACES "
                       "WHERE SUBSTRING_INDEX(NAME, '/', 1) = DATABASE()")
# MySQL 8 (untested here: no MySQL server on this machine): INNODB_TABLESPACES has no path, INNODB_DATAFILES has
TABLE_FILES_MYSQL = ("SELECT t.NAME, f.PATH FROM information_schema.INNODB_TABLESPACES t JOIN "
                     "information_schema.INNODB_DATAFILES f ON f.SPACE = t.SPACE "
                     "WHERE SUBSTRING_INDEX(t.NAME, '/', 1) = DATABASE()")
_CANT_CREATE = re.compile(r"Can't create table (\S+) \(errno: (\d+)( \"[^\"]*\")?\)")


def sql_string(text: str) -> str:
    """A MySQL string literal (backslash and quote escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def data_directory_clause(directory: str) -> str:
    """InnoDB's table option that puts a table's file (DIR/<database>/<table>.ibd) in `directory`."""
    return f"DATA DIRECTORY={sql_string(directory)}"


def data_directory_failure(directory: str, text: str) -> DbtierError | None:
    """A CREATE TABLE the server refused under DATA DIRECTORY (its error text, from the client or sysbench)
    -> the error in words with the next step; None when the text is not that failure. The client sees only
    InnoDB's generic errno 168; the OS error (13: permission) is in the server's error log."""
    m = _CANT_CREATE.search(text)
    if not m:
        return None
    return DbtierError(
        f"the server could not create dbtier's table {m.group(1)} in DATA DIRECTORY {directory} "
        f"(errno {m.group(2)}{m.group(3) or ''}; the server's error log has the operating system's error)",
        f"on the server's host, the server's OS user (mysql) must own {directory} or be able to write it "
        f"(InnoDB creates {directory.rstrip('/')}/<database>/ there), e.g. `chown mysql {directory}`; AppArmor or "
        "SELinux may also block it: allow the directory in mariadbd's profile, or label it mysqld_db_t")


def table_placement(tables: list[str], rows: list[list[str]], directory: str, database: str
                    ) -> tuple[dict[str, str | None], list[str]]:
    """Where each of dbtier's tables' files is (rows: TABLE_FILES_* rows, `db/table`, path) and the tables
    not in `directory`/`database`/ (outside it, or without a file of their own: innodb_file_per_table off)."""
    files = {r[0].split("/", 1)[1]: r[1] for r in rows if len(r) >= 2 and "/" in r[0]}
    want = os.path.normpath(os.path.join(directory, database))
    placed: dict[str, str | None] = {t: files.get(t) for t in tables}
    outside = [t for t, f in placed.items() if f is None or os.path.normpath(os.path.dirname(f)) != want]
    return placed, outside


# ------------------------------------------------------------------ DSN (pure)
@dataclass(frozen=True)
class Dsn:
    user: str | None
    host: str
    port: int

    def shown(self) -> str:
        return f"mysql://{self.user + '@' if self.user else ''}{self.host}:{self.port}/"


DSN_HINT = ("mysql://USER@HOST:PORT/ (the password goes in MYSQL_PWD or the [client] section of ~/.my.cnf, "
            "never the command line; dbtier creates its own database there)")
_USERINFO_PW = re.compile(r"^([a-z]+://[^:/@]*):[^@]*@", re.I)


def redact_mysql_dsn(dsn: str) -> str:
    """The DSN fit to print: a password in it replaced by ***."""
    return _USERINFO_PW.sub(r"\1:***@", dsn)


def parse_dsn(dsn: str) -> Dsn:
    """`mysql://user@host:port/` (or mariadb://) -> Dsn; the port defaults to 3306. Refused: a password
    in it, a database name (dbtier makes its own), query options, another scheme, no host."""
    shown = redact_mysql_dsn(dsn.strip())

    def bad(why: str) -> DbtierError:
        return DbtierError(f"--dsn {shown!r}: {why}", DSN_HINT)
    try:
        u = urlsplit(dsn.strip())
        port = u.port
    except ValueError as exc:
        raise bad(f"not a valid URL ({redact_mysql_dsn(str(exc))})") from None
    if u.scheme.lower() not in ("mysql", "mariadb"):
        raise bad("not a mysql:// URL")
    if u.password is not None:
        raise bad("a password in the DSN is refused (it would show in the process list and the shell history)")
    if not u.hostname:
        raise bad("no host")
    if u.path not in ("", "/"):
        raise bad(f"a database name ({u.path.strip('/')!r}): dbtier creates its own database, dbtier_<random>, "
                  "and drops only it")
    if u.query or u.fragment:
        raise bad("options after ? or # are not taken")
    return Dsn(unquote(u.username) if u.username else None, u.hostname, port or 3306)


def local_host(host: str) -> bool:
    """A DSN host that is this machine (the loopback names)."""
    return host.lower() in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")


# ------------------------------------------------------------------ the managed server
class Server(ThrowAway):
    """mariadb-install-db -> mariadbd -> (use) -> close. Use as a context manager."""
    product, noun = "MariaDB", "server"

    def __init__(self, default_dir: str | Path = ".", placement: dict[str, str] | None = None,
                 settings: Settings | None = None, port: int | None = None, os_user: str | None = None,
                 home_parent: str | Path | None = None):
        self.bin = find_binaries()
        self.id = uuid.uuid4().hex[:8]
        self.settings = settings or Settings()
        self.settings.check()
        self.placement_in = dict(placement or {})
        check_placement(self.placement_in, self.settings.binlog)
        self.default_dir = Path(default_dir).resolve()
        self.home_parent = str(home_parent or tempfile.gettempdir())
        me = pwd.getpwuid(os.geteuid()).pw_name
        self.os_user = os_user or ("mysql" if os.geteuid() == 0 else me)
        if self.os_user == "root" or (os.geteuid() == 0 and _uid(self.os_user) == 0):
            raise DbtierError("dbtier never runs MariaDB as root", "pass an unprivileged --os-user (mysql)")
        if os.geteuid() != 0 and self.os_user != me:
            raise DbtierError(f"running as {me}, dbtier cannot start MariaDB as {self.os_user}",
                              "run as root, or leave --os-user out")
        if port is not None and port_in_use(port):
            raise DbtierError(f"port {port} is in use on 127.0.0.1 (another MySQL, MariaDB or service)",
                              "pick another with --port, or leave --port out and dbtier picks a free one")
        self.port = port or free_port()
        self.created: list[Path] = []
        self.dirs: dict[str, Path] = {}
        self.running = False
        self.proc: executor.Background | None = None
        self.log_path: Path | None = None
        self.cnf_path: Path | None = None
        self.socket: Path | None = None
        self.pid_path: Path | None = None
        # When set, the server starts inside this memory cgroup (its cgroup.procs file; children inherit).
        self.cgroup_procs: str | None = None

    # -------------------------------------------------------------- setup
    def layout_conf(self) -> dict[str, str]:
        """The settings that place InnoDB's parts and make the server private (after init's dirs exist)."""
        d = self.dirs
        c = {
            "datadir": str(d["data"]),
            "socket": str(self.socket),
            "port": str(self.port),
            "bind-address": "127.0.0.1",
            "skip-name-resolve": "ON",           # `localhost` accounts match the socket only
            "pid-file": str(self.pid_path),
            "log-error": str(self.log_path),
            "innodb_log_group_home_dir": str(d.get("redo", d["data"])),
            "innodb_undo_directory": str(d.get("undo", d["data"])),
            "innodb_undo_tablespaces": str(INNODB_UNDO_TABLESPACES),
            "tmpdir": str(d.get("temp", d["tmp"])),
        }
        if "temp" in d:
            c["innodb_temp_data_file_path"] = f"{d['temp'] / 'ibtmp1'}:12M:autoextend"
        if self.settings.binlog:
            c["log_bin"] = str(d.get("binlog", d["data"]) / "mariadb-bin")
        return c

    def init(self) -> None:
        base = f"dbtier-mariadb-{self.id}"
        # Socket, my.cnf, log and pid: a short private path (sockets have a ~100-byte path limit).
        home = Path(tempfile.mkdtemp(prefix=f"{base}-", dir=self.home_parent))
        self._created(home)
        os.chmod(home, 0o755)
        self._give(home)
        self.dirs["home"] = home
        self.dirs["run"] = self._sub(home, "run")          # socket and pid file: 0700, the server's user
        self.socket = self.dirs["run"] / "mysqld.sock"
        self.pid_path = self.dirs["run"] / "mariadbd.pid"
        self.log_path = home / "error.log"
        self.cnf_path = home / "my.cnf"
        root = self._make_dir(Path(self.placement_in.get("data", self.default_dir)), base)
        self.dirs["data"] = self._sub(root, "data")
        self.dirs["tmp"] = self._sub(root, "tmp")           # tmpdir unless temp is placed: beside the data
        for role in ("redo", "undo", "temp", "binlog"):
            if role in self.placement_in:
                self.dirs[role] = self._make_dir(Path(self.placement_in[role]), f"{base}-{role}")
        conf = {**self.settings.conf(), **self.layout_conf()}
        self.cnf_path.write_text("[mariadbd]\n" + "".join(line + "\n" for line in cnf_lines(conf)))
        os.chmod(self.cnf_path, 0o644)
        # the dbtier user, created by the install (socket only: see the module docstring)
        extra = home / "init.sql"
        # (the bootstrap runs without grant tables, so no CREATE USER: the row, as the install writes root's)
        extra.write_text(f"INSERT INTO mysql.global_priv (Host, User, Priv) VALUES ('localhost', '{USER}', "
                         "'{\"access\":18446744073709551615}');\n")
        os.chmod(extra, 0o644)
        argv = [self.bin["mariadb-install-db"], f"--defaults-file={self.cnf_path}", f"--datadir={self.dirs['data']}",
                "--auth-root-authentication-method=socket", "--skip-test-db", "--skip-name-resolve",
                f"--extra-file={extra}"]
        done = executor.run(self._as_user(argv), timeout_s=300)
        if done.returncode != 0:
            # its stderr ends with boilerplate (bug-report addresses); mariadbd's own errors are in the log
            said = self.log_tail() if self.log_tail().strip() != "(empty)" else "    " + _tail(done.stderr or done.stdout)
            raise DbtierError(f"mariadb-install-db failed; the error log ends:\n{said}",
                              "fix the cause above (a setting, or a placement directory without space or access)")

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        argv = self._as_user([self.bin["mariadbd"], f"--defaults-file={self.cnf_path}"])
        if self.cgroup_procs:
            # As root, before runuser: the launching shell joins the cgroup, then execs runuser, whose
            # mariadbd inherits it.
            argv = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self.cgroup_procs, *argv]
        self.proc = executor.start(argv)
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                self._reap()
                raise DbtierError(f"MariaDB would not start; the error log ends:\n{self.log_tail()}",
                                  f"fix the cause above (full log: {self.log_path})")
            if self.server_pids() and self.query_ok():
                # the launcher's group (runuser and mariadbd) and the server itself
                self._claim_processes([(self.proc.pid, True, "mariadb launcher")]
                                      + [(p, False, "mariadbd") for p in self.server_pids()])
                break
            if time.monotonic() > deadline:
                self.stop()
                raise DbtierError(f"MariaDB did not accept connections within {timeout_s:.0f} s; the error log "
                                  f"ends:\n{self.log_tail()}", f"full log: {self.log_path}")
            time.sleep(0.2)
        self.running = True

    def restart(self, conf: dict[str, str] | None = None, before_start=None) -> None:
        """Stop, append `conf` to my.cnf's [mariadbd] section (the last setting wins), call
        `before_start()` (the server is down: its files are clean), start again (inside `cgroup_procs`
        when set)."""
        self.stop()
        if conf:
            with open(self.cnf_path, "a") as f:   # type: ignore[arg-type]
                f.write("".join(line + "\n" for line in cnf_lines(conf)))
        if before_start:
            before_start()
        self.start()

    # -------------------------------------------------------------- use
    def client_args(self) -> list[str]:
        """Options for the mariadb client, mariadb-admin and mariadb-backup to reach this server as dbtier."""
        return ["--no-defaults", f"--socket={self.socket}", f"--user={USER}"]

    def client_env(self) -> dict[str, str]:
        """The environment for this server's clients: without MYSQL_PWD (a user's password for their own
        server, which the client would send, and dbtier's socket account has none to match)."""
        return {k: v for k, v in os.environ.items() if k != "MYSQL_PWD"}

    def query(self, sql: str, timeout_s: float = 600) -> list[list[str]]:
        """Run SQL through the socket as dbtier; the rows of the last result (tab-separated fields)."""
        done = executor.run([self.bin["mariadb"], *self.client_args(), "--batch", "--skip-column-names",
                             "-e", sql], env=self.client_env(), timeout_s=timeout_s)
        if done.returncode != 0:
            raise DbtierError(f"MariaDB query failed: {_tail(done.stderr)}")
        return [line.split("\t") for line in done.stdout.splitlines()]

    def query_ok(self) -> bool:
        done = executor.run([self.bin["mariadb"], *self.client_args(), "--connect-timeout=2", "-e", "SELECT 1"],
                            env=self.client_env(), timeout_s=30)
        return done.returncode == 0

    def server_pids(self) -> list[int]:
        """mariadbd's pid (from its pid file, checked to be this server's), or [] when it is not running."""
        try:
            pid = int(Path(self.pid_path).read_text().split()[0])     # type: ignore[arg-type]
        except (OSError, ValueError, IndexError, TypeError):
            return []
        return [pid] if self._ours(pid) else []

    def _ours(self, pid: int) -> bool:
        """pid is a live mariadbd started with this server's my.cnf (never signal anyone else's)."""
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return f"--defaults-file={self.cnf_path}".encode() in cmd and _state(pid) not in ("Z", "X", None)

    def alive(self) -> bool:
        return bool(self.server_pids())

    def log_tail(self, n: int = 8) -> str:
        try:
            lines = Path(self.log_path).read_text(errors="replace").splitlines() if self.log_path else []
        except OSError:
            lines = []
        return "\n".join("    " + x for x in lines[-n:]) or "    (empty)"

    def placement(self) -> dict[str, str]:
        """Where each role really is (directories dbtier created)."""
        d = self.dirs["data"]
        out = {"data": str(d), "redo": str(self.dirs.get("redo", d)), "undo": str(self.dirs.get("undo", d)),
               "temp": str(self.dirs.get("temp", self.dirs["tmp"]))}
        if self.settings.binlog:
            out["binlog"] = str(self.dirs.get("binlog", d))
        return out

    # -------------------------------------------------------------- teardown
    def stop(self, discard: bool = False) -> None:
        """mariadb-admin shutdown; then SIGTERM, then SIGKILL of the mariadbd this server started (discard:
        SIGKILL at once)."""
        pids = self.server_pids()
        if pids:
            if not discard:
                executor.run([self.bin["mariadb-admin"], *self.client_args(), "--connect-timeout=5",
                              "--shutdown-timeout=60", "shutdown"], env=self.client_env(), timeout_s=90)
            steps = ((signal.SIGKILL, 10.0),) if discard else ((None, 30.0), (signal.SIGTERM, 30.0),
                                                                (signal.SIGKILL, 10.0))
            for sig, wait_s in steps:
                pids = self.server_pids()
                if not pids:
                    break
                if sig is not None:
                    try:
                        os.kill(pids[0], sig)
                    except ProcessLookupError:
                        break
                _wait_gone(lambda: not self.server_pids(), wait_s)
        self._reap()
        self.running = False

    def _reap(self) -> None:
        """The launcher (runuser, sh) and what is left in its process group: stopped and waited for."""
        if self.proc is not None:
            self.proc.stop(grace_s=5)
            try:
                self.proc.communicate(timeout_s=5)
            except Exception:  # noqa: BLE001 - the pipes may already be closed
                pass
            self.proc = None


# ------------------------------------------------------------------ the user's server (--dsn)
class Attached(ClosedOnFailure):
    """The user's MySQL or MariaDB server: dbtier creates `dbtier_<random>` there and drops only it. The
    mariadb client reads the password itself (MYSQL_PWD, ~/.my.cnf): it is never on a command line."""

    def __init__(self, dsn: str):
        self.dsn = parse_dsn(dsn)          # refused before anything else
        self.bin = find_binaries()
        self.database = f"dbtier_{uuid.uuid4().hex[:12]}"
        self.created_db = False

    def client_args(self) -> list[str]:
        a = [f"--host={self.dsn.host}", f"--port={self.dsn.port}", "--protocol=TCP"]
        return a + ([f"--user={self.dsn.user}"] if self.dsn.user else [])

    def query(self, sql: str, database: str | None = None, timeout_s: float = 600) -> list[list[str]]:
        db = [f"--database={database}"] if database else []
        done = executor.run([self.bin["mariadb"], *self.client_args(), *db, "--connect-timeout=10", "--batch",
                             "--skip-column-names", "-e", sql], timeout_s=timeout_s)
        if done.returncode != 0:
            raise DbtierError(f"--dsn {self.dsn.shown()!r}: {_tail(done.stderr) or 'the query failed'}",
                              "check the server is reachable and the password is in MYSQL_PWD or ~/.my.cnf")
        return [line.split("\t") for line in done.stdout.splitlines()]

    def open(self) -> None:
        self.query(f"CREATE DATABASE `{self.database}`")
        self.created_db = True

    def close(self) -> None:
        """Drop dbtier's own database (only it), when this created it (idempotent)."""
        if self.created_db:
            self.query(f"DROP DATABASE IF EXISTS `{self.database}`")
            self.created_db = False

    def opening(self) -> None:
        self.open()


def _uid(user: str) -> int | None:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def _state(pid: int) -> str | None:
    """The process state letter from /proc/<pid>/stat (Z: a zombie), or None when there is none."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _wait_gone(done, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.1)


def _tail(text: str, n: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-n:])
