"""The sysbench driver's plumbing (workloads/sysbench.py) with sysbench replaced by saved output:
the warm-up as its own run, the raw files, the sampler entered around the measured run only, sysbench's
CPU, the password file and the failures in words."""

import contextlib
import os
import stat
from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.workloads.parsers.sysbench import MysqlTarget
from dbtier.workloads import sysbench as sb

DATA = Path(__file__).parent.parent / "data" / "sysbench"
TARGET = MysqlTarget(user="dbtier", db="dbtier_bench", socket="/run/x.sock")


@pytest.fixture
def fake_sysbench(monkeypatch):
    calls = []

    def run(argv, timeout_s=None, **kw):
        calls.append((list(argv), timeout_s))
        if argv[-1] == "run":
            out = (DATA / "sysbench-rw-t4.txt").read_text()
        else:
            out = (DATA / f"{argv[-1]}.txt").read_text()
        return executor.Completed(tuple(argv), 0, out, "", 0.1)
    monkeypatch.setattr(executor, "run", run)
    return calls


def test_run_point_warms_up_apart_and_samples_only_the_measured_run(fake_sysbench, tmp_path):
    entered = []

    @contextlib.contextmanager
    def around():
        entered.append(len(fake_sysbench))     # calls made before the sampler started
        yield

    p = sb.run_point(TARGET, "sysbench-rw", 4, 3, 2, None, tmp_path, "c4", tables=4, table_size=25000,
                     around=around)
    assert [c[0][-1] for c in fake_sysbench] == ["run", "run"]
    assert "--time=2" in fake_sysbench[0][0] and "--time=3" in fake_sysbench[1][0]
    assert fake_sysbench[1][1] == 3 + 600
    assert entered == [1]
    assert (tmp_path / "c4-warmup.txt").exists() and (tmp_path / "c4.txt").exists()
    assert p["transactions"] == 3313 and p["tps"] == pytest.approx(1102.75) and p["clients"] == 4
    assert p["raw"] == "raw/c4.txt" and p["warmup"] == "a separate run"
    assert set(p["overhead"]) == {"client_cpu_cores", "client_cpu_s", "client_cpu_pct_of_machine"}
    assert p["overhead"]["client_cpu_cores"] >= 0


def test_native_warmup_is_one_run(fake_sysbench, tmp_path):
    sb.run_point(TARGET, "sysbench-rw", 1, 3, 2, None, tmp_path, "c1", tables=4, table_size=25000,
                 warmup_native=True)
    assert len(fake_sysbench) == 1 and "--warmup-time=2" in fake_sysbench[0][0]


def test_prepare_reports_the_layout(fake_sysbench, tmp_path):
    r = sb.prepare(TARGET, "sysbench-ro", 2, tmp_path)
    assert (r["tables"], r["table_size"], r["rows"]) == (4, 50_000, 200_000)
    assert "--table-size=50000" in fake_sysbench[0][0] and fake_sysbench[0][0][-1] == "prepare"
    assert (tmp_path / "sysbench-prepare.txt").exists()


def test_password_file_is_private_and_refuses_white_space(tmp_path):
    path = sb.password_config(tmp_path, "a#b=c")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert Path(path).read_text() == "mysql-password=a#b=c\n"
    with pytest.raises(DbtierError, match="white space"):
        sb.password_config(tmp_path, "s3cret x")


def test_failures_in_words():
    denied = ("FATAL: error 1045: Access denied for user 'nobody'@'localhost' (using password: NO)\n"
              "FATAL: Thread initialization failed!")
    assert "cannot connect" in str(sb.sysbench_failure(denied, 1, None, True, ""))
    assert "died" in str(sb.sysbench_failure(denied, 8, None, False, "mariadbd got signal 9"))
    full = "FATAL: The event queue is full. This means the worker threads are unable to keep up"
    e = sb.sysbench_failure(full, 4, 5000, True, "")
    assert "did not keep up with --rate 5000/s" in str(e)
    assert "disk filled" in str(sb.sysbench_failure("error 1114: No space left on device", 2, None, True, ""))


def test_a_failed_run_raises(monkeypatch, tmp_path):
    monkeypatch.setattr(executor, "run", lambda argv, **kw: executor.Completed(
        tuple(argv), 1, "", "FATAL: mysql_stmt_execute() returned error 2013 (Lost connection)\n", 0.1))
    with pytest.raises(DbtierError, match="MariaDB died"):
        sb.run_point(TARGET, "sysbench-point", 2, 1, 0, None, tmp_path, "x", tables=1, table_size=1,
                     alive=lambda: False, log_tail=lambda: "log")
    assert "Lost connection" in (tmp_path / "x.txt").read_text()
