"""Owner markers, the registry of what dbtier makes, and reaping what a dead dbtier left: with real
processes (a child that has exited is a dead owner; a sleeping one is live debris to stop)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from dbtier.core import debris
from dbtier.core.owner import Owner, alive, boot_id, me, start_ticks
from dbtier.measure.reap import reap, sweep_dir
from dbtier.results.store import load_run


@pytest.fixture(autouse=True)
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv(debris.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setattr(debris, "on_claim", None)      # no watchdog for the test process
    return tmp_path / "state"


def dead_owner() -> Owner:
    """The owner marker of a process that has exited: started, its start time read, then waited for."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    ticks = start_ticks(p.pid)
    p.wait()
    return Owner(p.pid, boot_id(), ticks, me().host, "dead-run")


def sleeper() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def test_start_ticks_reads_past_a_command_name_with_parentheses(tmp_path):
    # a process may call itself anything: ") 1 2 (" in its name must not shift the fields
    code = ("import ctypes, time; ctypes.CDLL(None).prctl(15, b') 1 2 (', 0, 0, 0); "
            "open(%r, 'w').write('ready'); time.sleep(5)" % str(tmp_path / "ready"))
    p = subprocess.Popen([sys.executable, "-c", code])
    try:
        while not (tmp_path / "ready").exists():
            time.sleep(0.01)
        assert open(f"/proc/{p.pid}/comm").read().strip() == ") 1 2 ("
        ticks = start_ticks(p.pid)
        fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        assert ticks == int(fields[19]) and ticks > 0
    finally:
        p.kill()
        p.wait()


def test_alive_tells_the_living_the_dead_a_reused_pid_and_another_host():
    assert alive(me()) is True
    o = dead_owner()
    assert alive(o) is False
    # the same pid with another start time is someone else (a reused pid)
    mine = me()
    assert alive(Owner(mine.pid, mine.boot_id, mine.start_ticks + 1, mine.host)) is False
    # another boot: every process of then is gone; another host: cannot be told here
    assert alive(Owner(mine.pid, "another-boot", mine.start_ticks, mine.host)) is False
    assert alive(Owner(mine.pid, mine.boot_id, mine.start_ticks, "elsewhere.example")) is None
    assert Owner.from_dict(mine.to_dict()) == mine and Owner.from_dict({"pid": "1"}) is None


def test_a_claim_is_an_entry_until_released(registry, tmp_path):
    d = tmp_path / "dbtier-x"
    d.mkdir()
    c = debris.claim_dir(d, "test dir")
    [(path, doc)] = list(debris.entries())
    assert path.parent == registry and doc["kind"] == "test dir" and doc["what"]["dirs"] == [str(d.resolve())]
    assert Owner.from_dict(doc["owner"]) == me() and debris.dir_marker(d) == me()
    c.update(pids=[{"pid": 1}])
    assert json.loads(path.read_text())["what"]["pids"] == [{"pid": 1}]
    c.release()
    c.release()
    assert list(debris.entries()) == []


def test_new_dir_is_claimed_and_watched_before_it_exists(registry, tmp_path, monkeypatch):
    # a SIGKILL between making a directory and claiming it would leave it unseen: the entry and the
    # watchdog's start (the on_claim hook) must come before the directory
    seen = []
    d = tmp_path / "dbtier-work"
    monkeypatch.setattr(debris, "on_claim", lambda: seen.append((d.exists(), len(list(debris.entries())))))
    c = debris.new_dir(d, "test dir")
    assert seen == [(False, 1)]
    assert d.is_dir() and debris.dir_marker(d) == me()
    [(_, doc)] = list(debris.entries())
    assert doc["what"]["dirs"] == [str(d.resolve())]
    c.release()
    # a name already taken: left as it was (someone else's), and no entry kept
    taken = tmp_path / "dbtier-taken"
    taken.mkdir()
    with pytest.raises(FileExistsError):
        debris.new_dir(taken, "test dir")
    assert taken.is_dir() and list(debris.entries()) == []
    p, c = debris.temp_dir("dbtier-t-", "test dir", tmp_path)
    assert p.parent == tmp_path and p.name.startswith("dbtier-t-") and p.is_dir() and (p.stat().st_mode & 0o777) == 0o700
    c.release()


def test_a_dead_owners_directory_killed_before_its_marker_goes_by_its_name(registry, tmp_path):
    dead = dead_owner()
    unmarked = tmp_path / "dbtier-unmarked"          # new_dir's window: made, marker not yet written
    unmarked.mkdir()
    (unmarked / "partial").write_text("x")
    foreign = tmp_path / "users-dir"                  # no dbtier- name, no marker: never ours to remove
    foreign.mkdir()
    debris.Claim("test dir", {"dirs": [str(unmarked), str(foreign)]}, owner=dead)
    out = reap()
    assert not unmarked.exists() and foreign.is_dir()
    assert any(str(foreign) in x for e in out["removed"] for x in e["left"])


def test_reap_removes_a_dead_owners_things_and_leaves_the_living(registry, tmp_path):
    dead = dead_owner()
    junk = tmp_path / "dbtier-probe-dead"
    junk.mkdir()
    (junk / "data.fio").write_bytes(b"x" * 4096)
    debris.mark_dir(junk, "probe files", dead)
    stray = tmp_path / "stray.tmp"
    stray.write_text("x")
    proc = sleeper()
    try:
        gone = debris.Claim("probe files", {"dirs": [str(junk)], "files": [str(stray)],
                                            "pids": [{"pid": proc.pid, "start_ticks": start_ticks(proc.pid),
                                                      "group": True, "name": "sleep"}]}, owner=dead)
        # a live owner's entry, and a dead entry naming a directory whose marker is someone else's
        mine = tmp_path / "dbtier-mine"
        mine.mkdir()
        live = debris.claim_dir(mine, "live")
        other = tmp_path / "dbtier-other"
        other.mkdir()
        debris.mark_dir(other, "other", me())
        debris.Claim("confused", {"dirs": [str(other)]}, owner=dead)
        dry = reap(dry_run=True)
        assert junk.exists() and proc.poll() is None and dry["live"] == 1
        assert any(f"would remove {junk}" in line for e in dry["removed"] for line in e["removed"])
        out = reap()
        assert not junk.exists() and not stray.exists()
        assert proc.wait(timeout=10) is not None          # the dead owner's sleeper was stopped
        assert mine.exists() and other.exists()           # a live owner's, and another marker's: untouched
        assert out["live"] == 1
        lines = {e["id"]: e for e in out["removed"]}
        assert any("its marker names another owner" in x for e in lines.values() for x in e["left"])
        assert not gone.path.exists()                     # everything undone: the entry is forgotten
        live.release()
    finally:
        proc.kill()
        proc.wait()


def test_a_reused_pid_is_not_killed(registry):
    proc = sleeper()
    try:
        debris.Claim("server", {"pids": [{"pid": proc.pid, "start_ticks": start_ticks(proc.pid) + 7,
                                          "group": True}]}, owner=dead_owner())
        reap()
        time.sleep(0.2)
        assert proc.poll() is None                        # another process's pid now: left running
    finally:
        proc.kill()
        proc.wait()


def test_a_dead_run_reads_abandoned_and_cleanup_marks_it(registry, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    dead = dead_owner()
    doc = {"schema_version": 1, "command": "history", "dbtier_version": "0", "started_at": "2026-11-26T09:00:00Z",
           "finished_at": None, "status": "running", "machine": {}, "params": {}, "errors": [],
           "owner": dead.to_dict()}
    (run / "result.json").write_text(json.dumps(doc))
    os.utime(run / "result.json", (1_790_000_000, 1_790_000_000))
    got = load_run(run)
    assert got["status"] == "abandoned" and got["abandoned"]["last_written_at"] == "2026-09-21T14:13:20Z"
    assert "died without finishing" in got["errors"][-1]["message"]
    assert json.loads((run / "result.json").read_text())["status"] == "running"     # a reader changes nothing
    debris.Claim("run", {"run": str(run)}, owner=dead)
    reap()
    on_disk = json.loads((run / "result.json").read_text())
    assert on_disk["status"] == "abandoned" and on_disk["abandoned"]["pid"] == dead.pid
    # a live owner's running run stays running
    doc["owner"] = me().to_dict()
    (run / "result.json").write_text(json.dumps(doc))
    assert load_run(run)["status"] == "running"


def test_sweep_removes_only_marked_dirs_of_dead_owners(tmp_path):
    dead = dead_owner()
    a, b, c = tmp_path / ".dbtier-probe-a", tmp_path / "dbtier-pg-b", tmp_path / "dbtier-unmarked"
    for d in (a, b, c):
        d.mkdir()
    debris.mark_dir(a, "probe files", dead)
    debris.mark_dir(b, "cluster", me())
    assert sweep_dir(tmp_path) == [f"removed {a} (its dbtier, pid {dead.pid}, died)"]
    assert not a.exists() and b.exists() and c.exists()


def test_a_damaged_entry_is_named_and_removed(registry):
    registry.mkdir(parents=True)
    (registry / "junk.json").write_text("{not json")
    assert reap(dry_run=True)["damaged"] == [str(registry / "junk.json")]
    assert reap()["damaged"] and not (registry / "junk.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("owner_lives_s", [0.0, 1.0])
def test_the_watchdog_reaps_its_owner_whether_it_dies_before_or_after_the_watchdog_starts(registry, tmp_path,
                                                                                            owner_lives_s):
    """The owner killed right after its first claim (before its watchdog is up), or later: reaped either way."""
    p = subprocess.Popen(["sleep", str(owner_lives_s)])
    ticks = start_ticks(p.pid)
    o = Owner(p.pid, boot_id(), ticks, me().host)
    d = tmp_path / "dbtier-w"
    d.mkdir()
    debris.mark_dir(d, "test", o)
    debris.Claim("test", {"dirs": [str(d)]}, owner=o)
    if not owner_lives_s:
        p.wait()
    w = subprocess.run([sys.executable, "-m", "dbtier.measure.watchdog", str(p.pid), str(registry), str(ticks)],
                       env={**os.environ, "DBTIER_NO_WATCHDOG": "1"}, capture_output=True, text=True, timeout=30)
    p.wait()
    assert w.returncode == 0, w.stderr
    assert not d.exists() and list(debris.entries()) == []
