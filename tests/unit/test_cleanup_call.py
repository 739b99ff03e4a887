"""`dbtier cleanup` as a library call (dbtier.measure.reap.cleanup): its section against the document the
command stores for the same registry (the same keys, in the same order, with the same values), and what a
cleanup that removes says. A dead owner is a process that has exited; nothing else is stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import stored_doc
from dbtier.core import debris
from dbtier.measure.reap import Cleanup, cleanup
from test_debris import dead_owner


@pytest.fixture(autouse=True)
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv(debris.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setattr(debris, "on_claim", None)      # no watchdog for the test process
    return tmp_path / "state"


def stored(tmp_path: Path, *args: str) -> dict[str, Any]:
    return stored_doc(tmp_path, "cleanup", *args)


def same_as_stored(res: Cleanup, doc: dict[str, Any]) -> None:
    section = res.to_json()
    assert list(section) == ["dry_run", "registry", "removed", "live", "damaged"]
    assert [k for k in doc if k in section] == list(section)          # the command's key order
    assert {k: doc[k] for k in section} == section
    assert doc["result_kind"] == res.kind == "cleanup"


def left_by_a_dead_probe(tmp_path: Path) -> tuple[Path, Any]:
    """A probe's directory, marked and registered by a process that has exited: (the directory, its owner)."""
    junk = tmp_path / "dbtier-probe-dead"
    junk.mkdir()
    dead = dead_owner()
    debris.mark_dir(junk, "probe files", dead)
    debris.Claim("probe files", {"dirs": [str(junk)]}, owner=dead)
    return junk, dead


def test_a_dry_run_is_the_commands_document(tmp_path, registry):
    junk, dead = left_by_a_dead_probe(tmp_path)
    (registry / "junk.json").write_text("{not json")
    res = cleanup(dry_run=True)
    assert res.dry_run and res.registry == str(registry) and res.live == 0
    assert res.damaged == (str(registry / "junk.json"),)
    [entry] = res.removed
    assert entry["kind"] == "probe files" and entry["removed"] == (f"would remove {junk}",)
    same_as_stored(res, stored(tmp_path, "--dry-run"))
    assert junk.is_dir() and (registry / "junk.json").exists()       # a dry run changes nothing


def test_a_cleanup_removes_and_says_so_then_has_nothing_left(tmp_path, registry):
    junk, dead = left_by_a_dead_probe(tmp_path)
    res = cleanup()
    assert not res.dry_run and [e["removed"] for e in res.removed] == [(f"removed {junk}",)]
    assert res.removed[0]["owner"]["pid"] == dead.pid and not junk.exists()
    assert list(debris.entries()) == []                              # everything undone: the entry is forgotten
    again = cleanup()
    assert again.removed == () and again.damaged == () and again.live == 0
    same_as_stored(again, stored(tmp_path))


def test_a_result_cannot_be_changed():
    res = cleanup(dry_run=True)
    with pytest.raises(TypeError):
        res.section["live"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        res.kind = "other"  # type: ignore[misc]
    assert res.to_json() == {"dry_run": True, "registry": res.registry, "removed": [], "live": 0, "damaged": []}
