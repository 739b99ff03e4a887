"""What a managed throw-away server (PostgreSQL's Cluster, MariaDB's Server) shares: it runs as an
unprivileged OS user, creates every directory it uses (and records it), and `close()` stops it and
removes exactly those -- on exit, on Ctrl-C and on failure (the context manager).

Each server is also one registry entry (dbtier.core.debris) listing its directories (each with an owner
marker, but for a tablespace's, which must stay empty) and, once it runs, its processes: if dbtier is
killed, the watchdog stops the server and removes the directories within seconds."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
import pwd
import shutil
from pathlib import Path

from dbtier.core.closing import ClosedOnFailure
from dbtier.core.debris import Claim, claim_dir, mark_dir
from dbtier.core.errors import DbtierError
from dbtier.core.owner import start_ticks
from dbtier.measure import executor


class ThrowAway(ClosedOnFailure, ABC):
    """The base of a managed server. Subclasses set `product` (the name in messages), `noun` (cluster,
    server) and `os_user`, and implement init(), start() and stop()."""
    product = ""
    noun = "server"
    os_user = ""
    created: list[Path]
    _claim: Claim | None = None

    @abstractmethod
    def init(self) -> None:
        """Create the data directory (initdb, mariadb-install-db), recording what it creates."""

    @abstractmethod
    def start(self) -> None:
        """Start the server and wait until it answers."""

    @abstractmethod
    def stop(self, discard: bool = False) -> None:
        """Stop the server if it runs (idempotent). discard: its files are removed next, so no clean shutdown
        is owed (a server whose disk filled cannot write one, and would be waited for a minute)."""

    def opening(self) -> None:
        self.init()
        self.start()

    # -------------------------------------------------------------- setup
    def _created(self, d: Path, marker: bool = True) -> None:
        """Record a directory this server made (removed by close), and claim it in the registry."""
        self.created.append(d)
        what = f"{self.product} {self.noun}"
        if self._claim is None:
            self._claim = claim_dir(d, what, marker)
            self._claim.update(product=self.product)
            return
        if marker:
            mark_dir(d, what, self._claim.owner)
        self._claim.update(dirs=[*self._claim.what.get("dirs", []), str(d.resolve())])

    def _claim_processes(self, procs: list[tuple[int, bool, str]]) -> None:
        """The running server's processes, (pid, whether it leads its process group, name), for the watchdog."""
        if self._claim is not None:
            self._claim.update(pids=[{"pid": p, "start_ticks": start_ticks(p), "group": g, "name": n}
                                     for p, g, n in procs if start_ticks(p) is not None])

    def _as_user(self, argv: list[str]) -> list[str]:
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                raise DbtierError(f"runuser (util-linux) is needed to run {self.product} as an unprivileged user",
                                  "apt-get install util-linux")
            return ["runuser", "-u", self.os_user, "--", *argv]
        return argv

    def _give(self, d: Path) -> None:
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam(self.os_user)
            except KeyError as exc:
                raise DbtierError(f"there is no OS user {self.os_user!r} to run {self.product} as",
                                  f"create one (useradd --system {self.os_user}) or pass --os-user NAME") from exc
            os.chown(d, pw.pw_uid, pw.pw_gid)

    def _make_dir(self, parent: Path, name: str, marker: bool = True) -> Path:
        if not parent.exists():
            raise DbtierError(f"{parent}: no such directory", f"create it, or place the {self.noun} elsewhere")
        if not parent.is_dir():
            raise DbtierError(f"{parent}: not a directory", "pass a directory")
        d = parent / name
        try:
            d.mkdir(mode=0o700)
        except OSError as exc:
            raise DbtierError(f"{parent} is not writable ({exc.strerror}): dbtier must create a directory there",
                              "pass a directory you can write to") from exc
        self._created(d, marker)
        self._give(d)
        if os.geteuid() == 0:
            check = executor.run(self._as_user(["test", "-w", str(d), "-a", "-x", str(d)]))
            if check.returncode != 0:
                raise DbtierError(
                    f"the {self.os_user} OS user cannot reach {d}: a parent directory is not searchable by others",
                    f"place the {self.noun} under a directory every user can traverse (chmod o+x on its parents)")
        return d

    def _sub(self, parent: Path, name: str) -> Path:
        d = parent / name
        d.mkdir(mode=0o700)
        self._give(d)
        return d

    # -------------------------------------------------------------- teardown
    def close(self) -> None:
        """Stop the server and remove every directory it created (idempotent)."""
        try:
            self.stop(discard=True)
        finally:
            for d in reversed(self.created):
                shutil.rmtree(d, ignore_errors=True)
            if self._claim is not None and not any(d.exists() for d in self.created):
                self._claim.release()
            self.created.clear()

