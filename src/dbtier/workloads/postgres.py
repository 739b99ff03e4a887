"""A throw-away PostgreSQL cluster that dbtier owns, with data, indexes, WAL and temp placed.

The cluster runs as an unprivileged OS user (the `postgres` user when dbtier
runs as root, else the current user), listens on 127.0.0.1 at its own port
and on a private socket directory, and is stopped and removed by `close()`,
which the context manager calls on exit, on Ctrl-C and on failure.

Every directory it writes is one it created: `<DIR>/dbtier-pg-<id>/...` inside
each placement directory, and nothing else is touched or removed.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.measure import executor
from dbtier.workloads.throwaway import ThrowAway

ROLES = ("data", "index", "wal", "temp")
PG_HINT = ("install PostgreSQL 15: `apt-get install postgresql` (Debian/Ubuntu) or "
           "`dnf install postgresql-server` (Fedora/RHEL); `make lab` installs it")


def find_bindir() -> str:
    """Where initdb, pg_ctl, postgres and pgbench live (newest version first)."""
    env = os.environ.get("DBTIER_PG_BINDIR")  # when set, the only place looked at
    candidates = [env] if env else []
    if not env:
        candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
        candidates += sorted(glob.glob("/usr/pgsql-*/bin"), key=_version_key, reverse=True)
        which = shutil.which("pg_ctl")
        if which:
            candidates.append(str(Path(which).resolve().parent))
    for c in candidates:
        if c and all(os.access(os.path.join(c, b), os.X_OK) for b in ("initdb", "pg_ctl", "postgres", "pgbench")):
            return c
    raise DbtierError("PostgreSQL is not installed (initdb, pg_ctl, postgres and pgbench not found)", PG_HINT)


def _version_key(path: str) -> float:
    digits = "".join(ch if ch.isdigit() or ch == "." else " " for ch in path).split()
    try:
        return float(digits[0]) if digits else 0.0
    except ValueError:
        return 0.0


@dataclass
class Settings:
    shared_buffers: str = "128MB"
    synchronous_commit: str = "on"
    checkpoint_timeout: str = "5min"
    max_wal_size: str = "1GB"
    max_connections: int = 100
    extra: dict[str, str] = field(default_factory=dict)

    def conf(self) -> dict[str, str]:
        c = {
            "shared_buffers": self.shared_buffers,
            "synchronous_commit": self.synchronous_commit,
            "checkpoint_timeout": self.checkpoint_timeout,
            "max_wal_size": self.max_wal_size,
            "max_connections": str(self.max_connections),
            "track_io_timing": "on",
            "track_wal_io_timing": "on",
            "log_checkpoints": "on",
            "fsync": "on",
            "full_page_writes": "on",
        }
        c.update(self.extra)
        return c


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster(ThrowAway):
    """initdb → start → (use) → close. Use as a context manager."""
    product, noun = "PostgreSQL", "cluster"

    def __init__(self, default_dir: str | Path = ".", placement: dict[str, str] | None = None,
                 settings: Settings | None = None, port: int | None = None, os_user: str | None = None,
                 home_parent: str | Path | None = None):
        self.bindir = find_bindir()
        self.id = uuid.uuid4().hex[:8]
        self.settings = settings or Settings()
        self.placement_in = dict(placement or {})
        self.default_dir = Path(default_dir).resolve()
        self.home_parent = str(home_parent or tempfile.gettempdir())
        self.os_user = os_user or ("postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name)
        if port is not None and port_in_use(port):
            raise DbtierError(f"port {port} is in use on 127.0.0.1 (another PostgreSQL or service)",
                              "pick another with --port, or leave --port out and dbtier picks a free one")
        self.port = port or free_port()
        self.created: list[Path] = []
        self.running = False
        self.dirs: dict[str, Path] = {}
        self.log_path: Path | None = None
        # When set, the server starts inside this memory cgroup (its cgroup.procs file; children inherit).
        self.cgroup_procs: str | None = None

    # -------------------------------------------------------------- setup
    def init(self) -> None:
        base = f"dbtier-pg-{self.id}"
        # Socket and log: a short private path (sockets have a ~100-byte path limit).
        home = Path(tempfile.mkdtemp(prefix=f"{base}-", dir=self.home_parent))
        self._created(home)
        os.chmod(home, 0o755)
        self._give(home)
        self.dirs["home"] = home
        self.dirs["socket"] = self._sub(home, "socket")
        self.log_path = home / "server.log"
        # The cluster directory (catalog, tables, and whatever is not placed elsewhere).
        cluster_root = self._make_dir(Path(self.placement_in.get("data", self.default_dir)), base)
        self.dirs["cluster"] = cluster_root / "pgdata"
        argv = [f"{self.bindir}/initdb", "-D", str(self.dirs["cluster"]), "-U", "dbtier", "--auth=trust",
                "-E", "UTF8", "--locale=C", "--no-sync"]
        if "wal" in self.placement_in:
            self.dirs["wal"] = self._make_dir(Path(self.placement_in["wal"]), f"{base}-wal") / "pg_wal"
            argv += ["-X", str(self.dirs["wal"])]
        for role in ("index", "temp"):
            if role in self.placement_in:
                # a tablespace's directory must be empty: no marker (its dbtier- name and the registry mark it)
                self.dirs[role] = self._make_dir(Path(self.placement_in[role]), f"{base}-{role}", marker=False)
        done = executor.run(self._as_user(argv), timeout_s=300)
        if done.returncode != 0:
            raise DbtierError(f"initdb failed: {_tail(done.stderr or done.stdout)}",
                              "check that the placement directories are writable and have space")
        conf = self.settings.conf()
        if "temp" in self.dirs:
            conf["temp_tablespaces"] = "dbtier_temp"
        conf.update({"listen_addresses": "127.0.0.1", "port": str(self.port),
                     "unix_socket_directories": str(self.dirs["socket"])})
        with open(self.dirs["cluster"] / "postgresql.auto.conf", "a") as f:
            f.write("".join(f"{k} = {_quote(v)}\n" for k, v in conf.items()))

    def start(self) -> None:
        argv = [f"{self.bindir}/pg_ctl", "-D", str(self.dirs["cluster"]), "-l", str(self.log_path), "-w",
                "-t", "120", "start"]
        argv = self._as_user(argv)
        if self.cgroup_procs:
            # As root, before runuser: the launching shell joins the cgroup, then execs pg_ctl, whose
            # postmaster and every backend inherit it.
            argv = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self.cgroup_procs, *argv]
        done = executor.run(argv, timeout_s=180)
        if done.returncode != 0:
            raise DbtierError(f"PostgreSQL would not start; the server log ends:\n{self.log_tail()}",
                              f"fix the cause above (full log: {self.log_path})")
        self.running = True
        # pg_ctl starts the postmaster in a session of its own: its process group holds every backend
        self._claim_processes([(p, True, "postgres") for p in self.server_pids()])

    def restart(self, conf: dict[str, str] | None = None, before_start=None) -> None:
        """Stop, append `conf` to postgresql.auto.conf (the last setting wins), call `before_start()`
        (the server is down: its files are clean), start again (inside `cgroup_procs` when set)."""
        self.stop()
        if conf:
            with open(self.dirs["cluster"] / "postgresql.auto.conf", "a") as f:
                f.write("".join(f"{k} = {_quote(v)}\n" for k, v in conf.items()))
        if before_start:
            before_start()
        self.start()

    def server_pids(self) -> list[int]:
        """The postmaster's pid (from postmaster.pid), or [] when it is not running."""
        try:
            return [int((self.dirs["cluster"] / "postmaster.pid").read_text().split()[0])]
        except (OSError, ValueError, IndexError, KeyError):
            return []

    def log_tail(self, n: int = 8) -> str:
        try:
            lines = Path(self.log_path).read_text(errors="replace").splitlines() if self.log_path else []
        except OSError:
            lines = []
        return "\n".join("    " + x for x in lines[-n:]) or "    (empty)"

    # -------------------------------------------------------------- use
    def conninfo(self, dbname: str = "postgres") -> str:
        return f"host={self.dirs['socket']} port={self.port} user=dbtier dbname={dbname}"

    def pg_env(self) -> dict[str, str]:
        return {"PGHOST": str(self.dirs["socket"]), "PGPORT": str(self.port), "PGUSER": "dbtier"}

    def alive(self) -> bool:
        pid_file = self.dirs["cluster"] / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, 0)
            return True
        except (OSError, ValueError, IndexError):
            return False

    def tablespaces_sql(self) -> list[str]:
        """CREATE TABLESPACE for the placed roles: indexes go to `dbtier_index`, temp to `dbtier_temp`."""
        return [f"CREATE TABLESPACE dbtier_{role} LOCATION {sql_str(str(self.dirs[role]))}"
                for role in ("index", "temp") if role in self.dirs]

    def placement(self) -> dict[str, str]:
        """Where each role really is (directories dbtier created)."""
        c = self.dirs["cluster"]
        return {"data": str(c), "index": str(self.dirs.get("index", c)),
                "wal": str(self.dirs.get("wal", c / "pg_wal")), "temp": str(self.dirs.get("temp", c))}

    # -------------------------------------------------------------- teardown
    def stop(self, discard: bool = False) -> None:
        if not self.dirs.get("cluster") or not (self.dirs["cluster"] / "postmaster.pid").exists():
            self.running = False
            return
        # fast: a shutdown checkpoint, which a full WAL disk never completes (pg_ctl's minute, then immediate)
        for mode in ("immediate",) if discard else ("fast", "immediate"):
            done = executor.run(self._as_user([f"{self.bindir}/pg_ctl", "-D", str(self.dirs["cluster"]), "-m", mode,
                                               "-w", "-t", "60", "stop"]), timeout_s=90)
            if done.returncode == 0:
                break
        self.running = False


def _quote(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


def _tail(text: str, n: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-n:])
