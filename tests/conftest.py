"""Shared test plumbing: run the real `dbtier` entry point (a new process, or `main(argv)` in this one),
make loop devices and mounts, and mark the tests that start an engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from promstack import prom_stack  # noqa: F401 - the real Prometheus stack (tests/promstack.py)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


# Fixtures that only engine tests use: a test asking for one is marked `engine` whatever its module says
# (tests/unit/test_markers.py checks the rest: every test that runs an engine is marked).
ENGINE_FIXTURES = frozenset({"pg_dir", "loop_device", "mount_point", "prom_stack"})


@pytest.fixture(autouse=True)
def own_registry(tmp_path_factory, monkeypatch):
    """Each test its own registry of what dbtier makes (dbtier.core.debris): a test's commands never reap
    (nor list) another's, or the machine's own."""
    monkeypatch.setenv("DBTIER_STATE_DIR", str(tmp_path_factory.mktemp("state")))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if ENGINE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.engine)


def pytest_collection_finish(session):
    """The modules and tests collected are kept for the whole run: frozen, Python's collector no longer walks
    them (nor numba's objects of every kernel loaded) at each full collection."""
    import gc
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 50)


def run_dbtier(*args: str, cwd: Path, env: dict | None = None, timeout: float = 600,
               prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    return subprocess.run([*(prefix or []), sys.executable, "-m", "dbtier", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=full_env)


class Hang(BaseException):
    """call_main's timeout."""


def call_main(*args: str, cwd: Path, env: dict | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """`dbtier ARGS` in this interpreter: `dbtier.cli.main.main(argv)` with stdout and stderr captured,
    in `cwd`, with `env` over os.environ; the exit code as returncode, argparse's SystemExit included.
    Same answer shape as run_dbtier, without an interpreter start (~1 s) per call. The signal handlers
    main() installs and the working directory are put back afterwards. `timeout`: a SIGALRM after that
    many seconds fails the test (a read blocked on a FIFO is interrupted), as run_dbtier's timeout would."""
    import contextlib
    import io
    import signal
    from dbtier.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_sig = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}

    def hang(signum, frame):  # a BaseException: main() does not turn it into an exit code
        raise Hang(f"dbtier {' '.join(args)} still running after {timeout} s: a hang")
    os.environ.update({"COLUMNS": "120", **(env or {})})
    try:
        os.chdir(cwd)
        if timeout:
            signal.signal(signal.SIGALRM, hang)
            signal.setitimer(signal.ITIMER_REAL, timeout)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for s, h in saved_sig.items():
            signal.signal(s, h)
    return subprocess.CompletedProcess(["dbtier", *args], code, out.getvalue(), err.getvalue())


def assert_clean_error(r: subprocess.CompletedProcess, *needles: str) -> str:
    """A user-facing failure: non-zero exit, one `dbtier: error:` message, no traceback."""
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    assert r.stderr.startswith("dbtier: error: "), r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr
    return r.stderr


def refused_with(needle: str, call):
    """The DbtierError `call()` raises: its one message holds `needle`, and it names the next step."""
    from dbtier.core.errors import DbtierError
    with pytest.raises(DbtierError) as e:
        call()
    assert needle in e.value.message, e.value.message
    assert e.value.hint
    return e.value


def stored_doc(tmp_path: Path, *args: str) -> dict:
    """The document a command stores (--out run), checked to be the one it prints with --json."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    r = call_main(*args, "--json", "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "run" / "result.json").read_text())
    assert json.loads(r.stdout) == doc
    return doc


def load_doc(run_dir: Path) -> dict:
    return json.loads((run_dir / "result.json").read_text())


def history_imported(tmp_path: Path, source: str, *args: object) -> dict:
    """`dbtier history import ARGS --json --out tmp_path/run`: exit 0, the printed document the one stored,
    read as `source` (sniffed unless ARGS say it)."""
    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "run"
    r = call_main("history", "import", *map(str, args), "--json", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == load_doc(out) and doc["params"]["source"] == source
    return doc


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mounts")


def _sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def loop_device(tmp_path):
    """Factory: a loop device over a file of `size_mb` MiB (optionally formatted); detached afterwards."""
    made: list[str] = []
    mounts: list[Path] = []

    def make(size_mb: int = 256, fs: str | None = None, mount: bool = False,
             where: Path | None = None) -> tuple[str, Path | None]:
        backing = tmp_path / f"loop{len(made)}.img"
        with open(backing, "wb") as f:
            f.truncate(size_mb * 1024 * 1024)
        if fs:
            _sh(f"mkfs.{fs}", "-q", "-F", str(backing)) if fs.startswith("ext") else _sh(f"mkfs.{fs}", str(backing))
        dev = _sh("losetup", "--find", "--show", str(backing))
        made.append(dev)
        mnt = None
        if mount:
            mnt = (where or tmp_path) / f"mnt{len(made)}"
            mnt.mkdir()
            _sh("mount", dev, str(mnt))
            mounts.append(mnt)
        return dev, mnt

    yield make
    for m in mounts:
        subprocess.run(["umount", "-l", str(m)], capture_output=True)
    for d in made:
        subprocess.run(["losetup", "-d", d], capture_output=True)


@pytest.fixture
def mount_point(tmp_path):
    """Factory: mount a filesystem (`mount -t TYPE -o OPTS`) on a fresh directory; unmounted afterwards."""
    mounts: list[Path] = []

    def make(fstype: str, opts: str | None = None, bind_from: Path | None = None) -> Path:
        mnt = tmp_path / f"{fstype}{len(mounts)}"
        mnt.mkdir()
        if bind_from is not None:
            _sh("mount", "--bind", str(bind_from), str(mnt))
            mounts.append(mnt)
            if opts:
                _sh("mount", "-o", f"remount,bind,{opts}", str(mnt))
        else:
            _sh("mount", "-t", fstype, *(["-o", opts] if opts else []), fstype, str(mnt))
            mounts.append(mnt)
        return mnt

    yield make
    for m in reversed(mounts):
        subprocess.run(["umount", "-l", str(m)], capture_output=True)


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


@pytest.fixture
def pg_dir():
    """A directory the unprivileged PostgreSQL user can traverse (pytest's tmp dirs are mode 700)."""
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="dbtier-test-", dir="/var/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def postgres_processes(marker: str) -> list[str]:
    """Command lines of running postgres processes whose arguments mention marker."""
    out = subprocess.run(["pgrep", "-a", "-f", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "postgres" in line or "pgbench" in line]


def with_timeout(fn, seconds: float = 20.0, what: str = "the call"):
    """fn() in a thread: its value, or its exception re-raised; a hang fails the test (readers must never
    block on a FIFO or loop on /dev/zero) instead of blocking the suite."""
    import threading
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            box["exc"] = exc
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail(f"{what} still running after {seconds} s: a hang")
    if "exc" in box:
        raise box["exc"]
    return box.get("value")


@pytest.fixture
def unguarded(monkeypatch):
    """The verdict with its evidence guards lowered to nothing: for tests of a sentence's wording on saved
    real documents, whose runs are short and single (the guards themselves: tests/unit/test_verdict_evidence.py)."""
    from dbtier.report.verdict import rules as verdict_rules
    for name, value in (("MIN_RUNS", 1), ("MAX_SPREAD_PCT", float("inf")), ("MIN_PROBE_POINT_S", 0.0),
                        ("MIN_OLTP_POINT_S", 0.0), ("MIN_DSS_RUN_S", 0.0)):
        monkeypatch.setattr(verdict_rules, name, value)
