"""The blktrace capture's process handling, with stand-in blktrace and blkparse scripts (real processes)."""

from __future__ import annotations

import json
import re
import signal
from dataclasses import replace
from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.measure import capture
from dbtier.sim.trace import capture as cap

# Like blktrace: -D DIR, -w SECONDS (stop by itself), else trace until SIGINT, then flush and exit 0.
FAKE_BLKTRACE = r"""#!/bin/sh
dir=""; w=""
while [ $# -gt 0 ]; do case "$1" in -D) dir=$2; shift;; -w) w=$2; shift;; esac; shift; done
if [ -n "$FAIL" ]; then echo "$FAIL" >&2; exit 1; fi
trap 'echo flushed > "$dir/flushed"; echo "events traced"; exit 0' INT
if [ -n "$w" ]; then sleep "$w"; echo "stopped after $w s" > "$dir/flushed"; echo "events traced"; exit 0; fi
while :; do sleep 0.05; done
"""
# Like blkparse: -o OUT gets one text line.
FAKE_BLKPARSE = r"""#!/bin/sh
out=""
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift;; esac; shift; done
if [ -n "$FAIL" ]; then echo "$FAIL" >&2; exit 1; fi
echo "8,0 0 1 0.000000000 1 Q R 0 + 8 [x]" > "$out"
"""


@pytest.fixture(autouse=True)
def short_startup_check(monkeypatch):
    """The fake blktrace fails or runs at once: a fifth of a second tells which as well as the real second."""
    monkeypatch.setattr(capture, "STARTUP_CHECK_S", 0.2)


def _facts(tmp_path: Path) -> cap.Facts:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("blktrace", FAKE_BLKTRACE), ("blkparse", FAKE_BLKPARSE)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    raw = tmp_path / "raw"
    raw.mkdir()
    return cap.Facts(target="/dev/fake", block_device="/dev/fake", filesystem=None,
                     blktrace=str(bin_dir / "blktrace"), blkparse=str(bin_dir / "blkparse"), root=True,
                     trace_sysfs=True, debugfs_mounted=True)


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_timed_capture_lets_blktrace_stop_by_itself(tmp_path):
    facts = _facts(tmp_path)
    said: list[str] = []
    trace = tmp_path / "trace.txt"
    assert capture.record(facts, tmp_path / "raw", trace, [], 1.0, None, said.append) is None
    assert said == ["tracing /dev/fake for 1 s"]
    assert (tmp_path / "raw" / "flushed").read_text() == "stopped after 1 s\n"
    assert (tmp_path / "raw" / "blktrace.stdout").read_text() == "events traced\n"
    assert trace.read_text().startswith("8,0 ")


def test_command_capture_stops_blktrace_with_sigint_after_the_command(tmp_path):
    facts = _facts(tmp_path)
    said: list[str] = []
    done = capture.record(facts, tmp_path / "raw", tmp_path / "trace.txt", ["sh", "-c", "echo hi; exit 3"],
                          None, None, said.append)
    assert done is not None and done.returncode == 3
    assert said == ["tracing /dev/fake while running: sh -c echo hi; exit 3"]
    assert (tmp_path / "raw" / "command.stdout").read_text() == "hi\n"
    assert (tmp_path / "raw" / "flushed").read_text() == "flushed\n"        # SIGINT: blktrace flushed
    assert (tmp_path / "raw" / "blktrace.stdout").read_text() == "events traced\n"


def test_blktrace_failing_at_once_is_explained(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "Device or resource busy")
    with pytest.raises(DbtierError) as caught:
        capture.record(_facts(tmp_path), tmp_path / "raw", tmp_path / "trace.txt", [], 5.0, None, print)
    assert caught.value.message.startswith("cannot capture: ")
    assert "Device or resource busy" in caught.value.message


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_blkparse_failure_names_the_raw_files(tmp_path):
    facts = _facts(tmp_path)
    (Path(facts.blkparse or "")).write_text("#!/bin/sh\necho 'no input' >&2\nexit 1\n")
    with pytest.raises(DbtierError) as caught:
        capture.record(facts, tmp_path / "raw", tmp_path / "trace.txt", [], 1.0, None, print)
    assert caught.value.message == "blkparse could not read the capture: no input"
    assert caught.value.hint == f"the raw files are in {tmp_path / 'raw'}"


@pytest.mark.slow       # a few seconds: `make test` runs it, test-fast does not
def test_ctrl_c_during_the_command_stops_blktrace(tmp_path):
    facts = _facts(tmp_path)

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.5)         # after the 1 s start-up check, while the command runs
    try:
        with pytest.raises(KeyboardInterrupt):
            capture.record(facts, tmp_path / "raw", tmp_path / "trace.txt", ["sleep", "30"], None, None,
                           lambda _: None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert (tmp_path / "raw" / "flushed").read_text() == "flushed\n"
    assert not (tmp_path / "trace.txt").exists()


@pytest.mark.parametrize("kw,message", [
    ({"run": "fio --name='x"}, "--run: cannot split 'fio --name='x': No closing quotation"),
    ({"run": "fio --name='x", "duration_s": 0.0}, "--run: cannot split"),      # the command line first
    ({"duration_s": 0.0}, "--duration must be positive, got 0"),
    ({"duration_s": float("nan")}, "--duration must be positive, got nan"),
])
def test_the_request_refuses_what_the_options_cannot(kw, message):
    with pytest.raises(DbtierError, match=re.escape(message)) as caught:
        capture.CaptureRequest.checked(target="/dev/fake", **kw)
    assert caught.value.hint in ("quote the command line once", "e.g. --duration 60")


def test_the_library_call_traces_while_the_command_runs_and_returns_its_exit_code(tmp_path, monkeypatch):
    from dbtier.results.store import RunDir
    facts = _facts(tmp_path)
    monkeypatch.setattr(capture, "facts", lambda target: (replace(facts, target=target), {}))
    made: list[dict] = []
    saved: list[tuple[dict, list]] = []
    said: list[str] = []

    def start(params):
        made.append(params)
        (tmp_path / "run").mkdir()
        return RunDir(tmp_path / "run")
    req = capture.CaptureRequest.checked(target="/dev/fake", run="sh -c 'exit 3'")
    assert req.command == ("sh", "-c", "exit 3") and req.duration_s is None
    res = capture.run(req, start, lambda s, e: saved.append((json.loads(json.dumps(s)), list(e))), said.append)
    assert made == [{"action": "capture", "target": "/dev/fake", "block_device": "/dev/fake", "duration_s": None,
                     "command": ["sh", "-c", "exit 3"]}]
    assert said == ["tracing /dev/fake while running: sh -c exit 3"]
    assert res.kind == "simulate.capture" and res.returncode == 3
    assert saved == [(res.to_json(), [dict(e) for e in res.errors])]          # saved once, as returned
    sec = res["capture"]
    assert list(sec) == ["block_device", "trace_file", "command_returncode", "trace"]
    assert sec["block_device"] == "/dev/fake" and sec["command_returncode"] == 3
    assert sec["trace_file"] == str(tmp_path / "run" / cap.CAPTURE_TRACE)
    assert sec["trace"]["requests"] == 1 and res.errors == ()                  # the fake blkparse's one read
    assert (tmp_path / "run" / "raw" / "flushed").read_text() == "flushed\n"   # blktrace stopped after the command


def test_facts_of_a_directory_and_of_what_cannot_be_traced(tmp_path):
    found, info = capture.facts(str(tmp_path))
    assert found.target == str(tmp_path) and "block_device" in info
    (tmp_path / "f").write_text("x")
    with pytest.raises(DbtierError, match="is neither a block device nor a directory"):
        capture.facts(str(tmp_path / "f"))
    with pytest.raises(DbtierError, match="does not exist"):
        capture.facts(str(tmp_path / "missing"))


def test_debugfs_left_alone_unless_asked(tmp_path):
    facts = _facts(tmp_path)
    unmounted = cap.Facts(**{**facts.__dict__, "debugfs_mounted": False})
    with capture.debugfs(unmounted, mount=False) as now:
        assert now == unmounted
