"""A real Prometheus stack for the tests: Debian's `prometheus` (2.42), `prometheus-pushgateway` and
`prometheus-node-exporter`, started on free 127.0.0.1 ports, shared by the whole session.

Fixture (session scope; a test that asks for it is marked `engine` by conftest.ENGINE_FIXTURES):

- `prom_stack` -> `PromStack`, skipped with the reason when a binary (`prometheus`, `promtool`,
  `prometheus-pushgateway`, `prometheus-node-exporter`) is not on PATH; yielded once Prometheus has
  scraped both targets (its target discovery takes about 5 s, once a session). It holds:
  - `prometheus_url`, `pushgateway_url`, `node_exporter_url`: base URLs (`http://127.0.0.1:PORT`);
  - `scrape_interval_s` (1): Prometheus scrapes node_exporter (`job="node"`) and the Pushgateway
    (`job="pushgateway"`, `honor_labels: true`, so a pushed group's `job` label is kept) every second;
  - `textfile_dir`: node_exporter's textfile collector directory (its `*.prom` files become series of
    `job="node"`);
  - `data_dir`: Prometheus' TSDB directory (retention 100 years: backfilled old blocks are kept);
  - `query(promql, time=None)` -> the API's `data.result` list (an instant query);
  - `query_range(promql, start, end, step)` -> `data.result` (a matrix);
  - `wait_for(promql, timeout_s=30, range_=None)` -> the first non-empty result, polled every 0.2 s
    (`range_=(start, end, step)` polls a range query); a timeout fails the test with the last answer;
  - `backfill(openmetrics_file)`: `promtool tsdb create-blocks-from openmetrics FILE DATA_DIR` run as
    the stack's user, then `restart_prometheus()` — Prometheus 2.42 loads new blocks on startup (or at its
    next one-minute reload, too slow for a test); the restart keeps the data dir, the ports and the WAL;
  - `restart_prometheus()`: stop it (SIGTERM) and start it again on the same port and data dir; it returns
    once both targets are scraped again (about 5 s: the scrape after a restart has a gap that long).

The processes run as the `prometheus` OS user the Debian package creates (else `nobody`) when the tests run
as root, each in a session of its own with a parent-death signal (a SIGKILL of pytest takes them with it).
Their directories live under /var/tmp/dbtier-promstack-* (traversable by that user), each with an `owner`
file naming pytest's pid: the session end (a pass, a failure, Ctrl-C) stops them and removes it, and the
next session removes what a killed one left. The services the Debian packages install are never used.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BINARIES = ("prometheus", "promtool", "prometheus-pushgateway", "prometheus-node-exporter")
PREFIX = "dbtier-promstack-"
SCRAPE_S = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for name in ("prometheus", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


def _die_with_pytest(parent: int):
    def preexec() -> None:      # after the uid change (Popen user=): a credential change clears it
        _libc.prctl(1, signal.SIGTERM, 0, 0, 0)     # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
    return preexec


def _sweep_stale() -> None:
    """Remove what an earlier, killed session left (its owner pid is gone)."""
    for d in Path("/var/tmp").glob(PREFIX + "*"):
        try:
            pid = int((d / "owner").read_text())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
            continue
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(d, ignore_errors=True)


def _get_json(url: str, timeout_s: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout_s) as r:
        return json.loads(r.read())


@dataclass
class _Proc:
    name: str
    argv: list[str]
    log: Path
    ready_url: str
    popen: subprocess.Popen | None = None


@dataclass
class PromStack:
    root: Path
    user: pwd.struct_passwd | None
    prometheus_url: str = ""
    pushgateway_url: str = ""
    node_exporter_url: str = ""
    scrape_interval_s: int = SCRAPE_S
    procs: dict[str, _Proc] = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        return self.root / "prometheus-data"

    @property
    def textfile_dir(self) -> Path:
        return self.root / "textfile"

    # -- processes ------------------------------------------------------------------------------------

    def _dir(self, name: str) -> Path:
        d = self.root / name
        d.mkdir(mode=0o755, exist_ok=True)
        if self.user is not None:
            os.chown(d, self.user.pw_uid, self.user.pw_gid)
        return d

    def _popen(self, argv: list[str], stdout, **kw) -> subprocess.Popen:
        creds = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []} if self.user else {}
        return subprocess.Popen(argv, stdout=stdout, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_die_with_pytest(os.getpid()),
                                **creds, **kw)

    def _start(self, p: _Proc, timeout_s: float = 30) -> None:
        with open(p.log, "ab") as log:
            p.popen = self._popen(p.argv, log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if p.popen.poll() is not None:
                raise RuntimeError(f"{p.name} exited ({p.popen.returncode}) at start:\n{p.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(p.ready_url, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{p.name} not ready at {p.ready_url} after {timeout_s} s:\n{p.log.read_text()[-3000:]}")

    def _stop(self, p: _Proc) -> None:
        if p.popen is None or p.popen.poll() is not None:
            return
        try:
            os.killpg(p.popen.pid, signal.SIGTERM)
            p.popen.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(p.popen.pid, signal.SIGKILL)
            p.popen.wait(5)
        except ProcessLookupError:
            pass

    def start(self) -> None:
        node_port, push_port, prom_port = _free_port(), _free_port(), _free_port()
        self.node_exporter_url = f"http://127.0.0.1:{node_port}"
        self.pushgateway_url = f"http://127.0.0.1:{push_port}"
        self.prometheus_url = f"http://127.0.0.1:{prom_port}"
        self._dir("textfile")
        self._dir("prometheus-data")
        config = self.root / "prometheus.yml"
        config.write_text(
            f"global:\n  scrape_interval: {SCRAPE_S}s\n  scrape_timeout: {SCRAPE_S}s\n"
            f"  evaluation_interval: {SCRAPE_S}s\n"
            "scrape_configs:\n"
            f"  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{node_port}']\n"
            "  - job_name: pushgateway\n    honor_labels: true\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{push_port}']\n")
        config.chmod(0o644)
        self.procs = {
            "node_exporter": _Proc("prometheus-node-exporter", [
                "prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{node_port}",
                f"--collector.textfile.directory={self.textfile_dir}"],
                self.root / "node_exporter.log", f"{self.node_exporter_url}/metrics"),
            "pushgateway": _Proc("prometheus-pushgateway", [
                "prometheus-pushgateway", f"--web.listen-address=127.0.0.1:{push_port}",
                "--persistence.file="],            # Debian's default persists to /var/lib/prometheus
                self.root / "pushgateway.log", f"{self.pushgateway_url}/-/ready"),
            "prometheus": _Proc("prometheus", [
                "prometheus", f"--config.file={config}", f"--storage.tsdb.path={self.data_dir}",
                f"--web.listen-address=127.0.0.1:{prom_port}", "--web.enable-admin-api",
                "--storage.tsdb.retention.time=100y"],     # backfilled blocks of old runs are kept
                self.root / "prometheus.log", f"{self.prometheus_url}/-/ready"),
        }
        for p in self.procs.values():
            self._start(p)
        self._wait_scraped()

    def _wait_scraped(self) -> None:
        # Prometheus hands new targets to its scrapers every 5 s: ready once both have been scraped since
        # now (after a restart the last scrapes before it still answer `up` for 5 minutes)
        since = time.time()
        self.wait_for(f'count(up{{job=~"node|pushgateway"}} == 1 and timestamp(up) > {since:.3f}) == 2',
                      timeout_s=30)

    def stop(self) -> None:
        for p in reversed(list(self.procs.values())):
            self._stop(p)

    def restart_prometheus(self) -> None:
        p = self.procs["prometheus"]
        self._stop(p)
        self._start(p)
        self._wait_scraped()

    # -- queries --------------------------------------------------------------------------------------

    def _api(self, path: str, **params) -> list:
        url = f"{self.prometheus_url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        doc = _get_json(url)
        assert doc.get("status") == "success", doc
        return doc["data"]["result"]

    def query(self, promql: str, time: float | None = None) -> list:
        return self._api("query", query=promql, **({"time": time} if time is not None else {}))

    def query_range(self, promql: str, start: float, end: float, step: float) -> list:
        return self._api("query_range", query=promql, start=start, end=end, step=step)

    def wait_for(self, promql: str, timeout_s: float = 30, range_: tuple[float, float, float] | None = None) -> list:
        deadline = time.monotonic() + timeout_s
        last: object = None
        while True:
            try:
                last = self.query_range(promql, *range_) if range_ else self.query(promql)
                if last:
                    return last
            except OSError as exc:
                last = exc
            if time.monotonic() > deadline:
                pytest.fail(f"{promql!r} returned nothing within {timeout_s} s (last: {last!r})")
            time.sleep(0.2)

    def backfill(self, openmetrics_file: Path, timeout_s: float = 120) -> subprocess.CompletedProcess:
        """Blocks from an OpenMetrics file into the data dir (as the stack's user, so that Prometheus can
        compact and delete them), then a restart that loads them. A refused file fails the test."""
        src = self.root / f"backfill-{time.monotonic_ns()}.om"
        shutil.copyfile(openmetrics_file, src)       # readable by the stack's user wherever the test put it
        src.chmod(0o644)
        r = self._run_as(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(src), str(self.data_dir)],
                         timeout_s)
        if r.returncode != 0:
            pytest.fail(f"promtool create-blocks-from openmetrics failed ({r.returncode}):\n{r.stdout}")
        self.restart_prometheus()
        return r

    def _run_as(self, argv: list[str], timeout_s: float) -> subprocess.CompletedProcess:
        p = self._popen(argv, subprocess.PIPE, cwd=self.root)
        try:
            out, _ = p.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
        return subprocess.CompletedProcess(argv, p.returncode, out.decode(errors="replace"), "")


@pytest.fixture(scope="session")
def prom_stack():
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not on PATH: apt-get install prometheus prometheus-pushgateway "
                    "prometheus-node-exporter (scripts/bootstrap.sh --test installs them)")
    _sweep_stale()
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir="/var/tmp"))
    root.chmod(0o755)
    (root / "owner").write_text(str(os.getpid()))
    stack = PromStack(root, _user())
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)
