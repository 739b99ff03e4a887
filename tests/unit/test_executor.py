"""The executor on real short processes (sh, sleep): capture, timeouts, process groups, Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.measure import executor


# A shell whose child (not exec'd: the shell waits for it) writes its pid and sleeps. In the foreground,
# not with `&`: a non-interactive shell starts background jobs with SIGINT ignored.
GRANDCHILD = 'sh -c \'echo $$ > "{pid_file}"; exec sleep 30\'; echo done'


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers signal 0: count it as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_run_captures_stdout_stderr_and_status():
    done = executor.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_s=10)
    assert (done.stdout, done.stderr, done.returncode) == ("out\n", "err\n", 3)
    assert done.argv == ("sh", "-c", "echo out; echo err >&2; exit 3")
    assert 0 <= done.seconds < 10


def test_run_discards_stdout_on_request(tmp_path):
    done = executor.run(["sh", "-c", "echo out; echo err >&2"], discard_stdout=True, cwd=str(tmp_path))
    assert (done.stdout, done.stderr) == ("", "err\n")


def test_run_passes_env_and_cwd(tmp_path):
    done = executor.run(["sh", "-c", 'echo "$X $(pwd)"'], env={"X": "42", "PATH": os.environ["PATH"]},
                        cwd=str(tmp_path))
    assert done.stdout.strip() == f"42 {tmp_path}"


def test_run_in_its_own_session():
    done = executor.run(["sh", "-c", "ps -o sid= -p $$"])
    assert int(done.stdout) != os.getsid(0)


# `yes` writing into a pipe whose reader has gone, its exit status on stderr: 141 killed by SIGPIPE, 1 when the
# signal is ignored (a failed write: "Broken pipe"). A shell cannot un-ignore a signal ignored on entry.
BROKEN_PIPE = '(yes; echo "yes:$?" >&2) | head -c 1 >/dev/null'


def test_run_restores_sigpipe_unless_told_to_keep_it_ignored():
    assert executor.run(["sh", "-c", BROKEN_PIPE], timeout_s=10).stderr.strip() == "yes:141"
    done = executor.run(["sh", "-c", BROKEN_PIPE], timeout_s=10, ignore_sigpipe=True)
    assert done.stderr.strip().endswith("yes:1") and "Broken pipe" in done.stderr


@pytest.mark.slow
def test_run_timeout_stops_the_whole_group(tmp_path):
    pid_file = tmp_path / "grandchild"
    start = time.monotonic()
    with pytest.raises(executor.TimedOut) as caught:
        executor.run(["sh", "-c", GRANDCHILD.format(pid_file=pid_file)], timeout_s=0.5)
    assert time.monotonic() - start < 10
    # A DbtierError with the message users have always seen.
    assert isinstance(caught.value, DbtierError)
    assert caught.value.message == "sh did not finish within 0 s and was stopped"
    assert caught.value.hint == "the device may be hung or far slower than expected; check `dmesg`"
    assert (caught.value.argv, caught.value.timeout_s) == (["sh", "-c", caught.value.argv[2]], 0.5)
    assert _wait_gone(int(pid_file.read_text()))     # the background sleep went with its group


def test_run_missing_program_is_oserror():
    with pytest.raises(FileNotFoundError):
        executor.run(["dbtier-no-such-program-here"])


@pytest.mark.slow
def test_run_interrupted_stops_the_child_and_reraises(tmp_path):
    pid_file = tmp_path / "child"
    # SIGALRM in the middle of the wait stands in for Ctrl-C (KeyboardInterrupt out of communicate).
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            executor.run(["sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 30'], grace_s=2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert not _alive(int(pid_file.read_text()))


def test_require_finds_sh_and_refuses_a_missing_tool():
    assert executor.require("sh").endswith("/sh")
    with pytest.raises(DbtierError) as caught:
        executor.require("dbtier-no-such-program-here")
    assert caught.value.message == "dbtier-no-such-program-here is not installed (not found on PATH)"
    assert caught.value.hint == "install dbtier-no-such-program-here"
    assert "apt-get install fio" in executor.INSTALL_HINTS["fio"]


def test_start_runs_in_the_background_in_its_own_group():
    bg = executor.start(["sh", "-c", "echo started; echo note >&2; exec sleep 30"])
    try:
        assert bg.poll() is None and bg.returncode is None
        assert os.getpgid(bg.pid) == bg.pid != os.getpgid(0)
        assert bg.argv == ("sh", "-c", "echo started; echo note >&2; exec sleep 30")
        with pytest.raises(subprocess.TimeoutExpired):     # left running: the caller stops it
            bg.communicate(timeout_s=0.2)
        assert bg.poll() is None
    finally:
        executor.stop_group(bg, grace_s=2)
    assert bg.returncode == -signal.SIGINT
    out, err = bg.communicate()
    assert (out, err) == ("started\n", "note\n")


def test_stop_group_sends_sigint_first_and_the_process_cleans_up(tmp_path):
    flushed = tmp_path / "flushed"
    # Like blktrace: on SIGINT it writes what it holds and exits 0.
    bg = executor.start(["sh", "-c", f'trap \'echo bye > "{flushed}"; exit 0\' INT; while :; do sleep 0.05; done'])
    time.sleep(0.3)
    bg.stop(grace_s=5)
    assert bg.returncode == 0
    assert flushed.read_text() == "bye\n"


@pytest.mark.slow
def test_stop_group_escalates_when_sigint_is_ignored():
    bg = executor.start(["sh", "-c", "trap '' INT; while :; do sleep 0.05; done"])
    time.sleep(0.3)
    start = time.monotonic()
    executor.stop_group(bg, grace_s=0.3)
    assert bg.returncode == -signal.SIGTERM
    assert time.monotonic() - start < 5


def test_stop_group_reaches_grandchildren(tmp_path):
    pid_file = tmp_path / "grandchild"
    bg = executor.start(["sh", "-c", GRANDCHILD.format(pid_file=pid_file)])
    end = time.monotonic() + 5
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < end
        time.sleep(0.02)
    executor.stop_group(bg, grace_s=2)
    assert _wait_gone(int(pid_file.read_text()))


def test_stop_group_of_an_exited_process_does_nothing():
    bg = executor.start(["sh", "-c", "exit 4"])
    assert bg.communicate(timeout_s=10) == ("", "")
    executor.stop_group(bg)
    assert bg.returncode == 4


def test_nothing_else_starts_processes():
    src = Path(executor.__file__).resolve().parents[1]
    starters = ("import subprocess", "from subprocess", "os.system(", "os.popen(", "os.spawn", "os.exec", "Popen(")
    offenders = [f"{p.relative_to(src)}: {s}" for p in sorted(src.rglob("*.py")) if p != Path(executor.__file__).resolve()
                 for s in starters if s in p.read_text()]
    assert offenders == []


# ------------------------------------------------------------------ pipeline
def test_pipeline_to_a_file_captures_each_stderr(tmp_path):
    out = tmp_path / "out.txt"
    done = executor.pipeline([["sh", "-c", "echo hello; echo first >&2"], ["sh", "-c", "tr a-z A-Z; echo second >&2"]],
                             stdout_path=out, timeout_s=10)
    assert out.read_text() == "HELLO\n"
    assert [(d.returncode, d.stdout, d.stderr) for d in done] == [(0, "", "first\n"), (0, "", "second\n")]
    assert done[0].argv == ("sh", "-c", "echo hello; echo first >&2")


def test_pipeline_without_a_path_goes_to_null_and_single_stage_works(tmp_path):
    done = executor.pipeline([["sh", "-c", "head -c 1000000 /dev/zero; exit 4"]], cwd=str(tmp_path), timeout_s=10)
    assert [d.returncode for d in done] == [4]
    assert list(tmp_path.iterdir()) == []


def test_pipeline_writer_gets_sigpipe_when_the_reader_exits():
    done = executor.pipeline([["yes"], ["head", "-c", "10"]], timeout_s=10)
    assert done[1].returncode == 0 and done[0].returncode == -signal.SIGPIPE


def test_pipeline_big_stderr_does_not_block():
    # 1 MB of stderr from the first stage (a pipe holds 64 KiB): captured whole
    done = executor.pipeline([["sh", "-c", "head -c 1000000 /dev/zero | tr '\\\\0' x >&2; echo ok"], ["cat"]],
                             timeout_s=20)
    assert len(done[0].stderr) == 1000000 and done[1].returncode == 0


@pytest.mark.slow
def test_pipeline_timeout_stops_every_stage(tmp_path):
    pid_file = tmp_path / "pid"
    with pytest.raises(executor.TimedOut) as e:
        executor.pipeline([["sleep", "30"], ["sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 30']], timeout_s=0.5)
    assert e.value.argv == ["sleep", "30"]
    assert _wait_gone(int(pid_file.read_text()))


@pytest.mark.slow
def test_pipeline_stops_later_stages_when_the_first_has_exited(tmp_path, monkeypatch):
    # the leader exits at once; the second stage keeps the group alive until the timeout stops it
    pid_file = tmp_path / "pid"
    t0 = time.monotonic()
    with pytest.raises(executor.TimedOut):
        executor.pipeline([["true"], ["sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 30']], timeout_s=0.5)
    assert _wait_gone(int(pid_file.read_text())) and time.monotonic() - t0 < 10


def test_pipeline_missing_program_leaves_nothing_running(tmp_path):
    pid_file = tmp_path / "pid"
    with pytest.raises(FileNotFoundError):
        executor.pipeline([["sh", "-c", f'echo $$ > "{pid_file}"; exec sleep 30'], ["no-such-program-dbtier"]],
                          timeout_s=10)
    for _ in range(50):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        time.sleep(0.02)
    if pid_file.exists() and pid_file.read_text().strip():
        assert _wait_gone(int(pid_file.read_text()))
