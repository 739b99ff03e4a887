"""The run lifecycle (cli/common.py) and the loading of run documents (results/store.py).

The commands run through `main(argv)`; a fault is injected where the command calls into the
renderer (a stand-in for a bug anywhere), never in place of an engine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import with_timeout
from dbtier.cli import common
from dbtier.cli.main import EXIT_BUG, main
from dbtier.core.errors import DbtierError
from dbtier.results import document
from dbtier.results.schema import result_schema
from dbtier.results.store import RunDir, load_run, write_json_atomic

DATA = Path(__file__).resolve().parents[1] / "data"
PROBE = DATA / "probe" / "quick-ext4-virtio.json"


def _input(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    (d / "result.json").write_bytes(PROBE.read_bytes())
    return d


def _explode(*_a, **_k):
    raise ZeroDivisionError("float division by zero")


def test_a_bug_ends_the_run_failed_with_its_traceback_and_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DBTIER_DEBUG", raising=False)
    import dbtier.report.html as html
    monkeypatch.setattr(html, "render_html", _explode)
    out = tmp_path / "rep"
    assert main(["report", str(_input(tmp_path)), "--out", str(out)]) == EXIT_BUG
    err = capsys.readouterr().err
    tb = out / "raw" / "traceback.txt"
    assert err == (f"dbtier: error: ZeroDivisionError: float division by zero — this is a bug; "
                   f"the traceback is in {tb}\n")
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "failed" and doc["finished_at"]
    assert doc["errors"] == [{"message": "ZeroDivisionError: float division by zero", "hint": "this is a bug in dbtier",
                              "bug": True, "traceback": "raw/traceback.txt"}]
    assert "Traceback (most recent call last)" in tb.read_text() and "_explode" in tb.read_text()
    jsonschema.validate(doc, result_schema())
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_dbtier_debug_shows_the_traceback_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DBTIER_DEBUG", "1")
    import dbtier.report.html as html
    monkeypatch.setattr(html, "render_html", _explode)
    assert main(["report", str(_input(tmp_path)), "--out", str(tmp_path / "rep")]) == EXIT_BUG
    err = capsys.readouterr().err
    assert err.startswith("dbtier: error: ZeroDivisionError") and "Traceback (most recent call last)" in err


def test_a_bug_before_any_run_directory_saves_the_traceback_in_a_temp_file(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DBTIER_DEBUG", raising=False)
    import dbtier.report.inputs as inputs
    monkeypatch.setattr(inputs, "load_runs", _explode)
    monkeypatch.chdir(tmp_path)
    assert main(["report", "x"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "this is a bug; the traceback is in " in err
    path = Path(err.rsplit("the traceback is in ", 1)[1].strip())
    try:
        assert "ZeroDivisionError" in path.read_text()
    finally:
        path.unlink()
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_ends_the_run_interrupted(tmp_path, monkeypatch, capsys):
    import dbtier.report.html as html

    def ctrl_c(*_a, **_k):
        raise KeyboardInterrupt
    monkeypatch.setattr(html, "render_html", ctrl_c)
    out = tmp_path / "rep"
    assert main(["report", str(_input(tmp_path)), "--out", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "interrupted" and doc["errors"] == [{"message": "interrupted by Ctrl-C (SIGINT)"}]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_a_dbtier_error_inside_a_run_is_recorded(tmp_path, monkeypatch):
    import dbtier.report.html as html

    def refuse(*_a, **_k):
        raise DbtierError("the report cannot be drawn", "try again")
    monkeypatch.setattr(html, "render_html", refuse)
    out = tmp_path / "rep"
    assert main(["report", str(_input(tmp_path)), "--out", str(out)]) == 2
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "failed" and doc["errors"] == [{"message": "the report cannot be drawn", "hint": "try again"}]
    assert not (out / "raw").exists()


def test_run_as_a_context_manager_outside_main(tmp_path):
    class Args:
        out = str(tmp_path / "r")
        runs_dir = None
        force = False
    with pytest.raises(RuntimeError):
        with common.Run("probe", Args(), {}) as run:
            run.doc["targets"] = []
            raise RuntimeError("boom")
    doc = json.loads((tmp_path / "r" / "result.json").read_text())
    assert doc["status"] == "failed" and doc["errors"][0]["message"] == "RuntimeError: boom"
    assert (tmp_path / "r" / "raw" / "traceback.txt").exists()


def test_an_interrupted_atomic_write_keeps_the_old_document_and_no_temp_file(tmp_path, monkeypatch):
    p = tmp_path / "result.json"
    write_json_atomic(p, {"a": 1})

    def cut(*_a):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "replace", cut)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(p, {"a": 2})
    assert json.loads(p.read_text()) == {"a": 1} and [x.name for x in tmp_path.iterdir()] == ["result.json"]


def test_force_on_a_run_directory_replaces_it_and_refuses_foreign_ones(tmp_path):
    rd = RunDir.create("probe", out=tmp_path / "r")
    rd.write(document.new_document("probe", {}, {}))
    (rd.path / "extra").write_text("x")
    with pytest.raises(DbtierError, match="already a run directory"):
        RunDir.create("probe", out=rd.path)
    again = RunDir.create("probe", out=rd.path, force=True)
    # the old files gone; only the run's marker and the room kept for the final status (released when it ends)
    assert sorted(p.name for p in again.path.iterdir()) == [".dbtier-reserve", ".dbtier-run"]
    (again.path / "x").write_text("not a run")
    with pytest.raises(DbtierError, match="not a dbtier run directory"):
        RunDir.create("probe", out=again.path, force=True)
    assert (again.path / "x").read_text() == "not a run"


# -- schema versions ----------------------------------------------------------------------------------------

def test_version_0_is_refused_on_purpose():
    with pytest.raises(DbtierError) as e:
        document.upgrade({"schema_version": 0, "command": "probe"}, "old.json")
    assert e.value.message.startswith("old.json: schema_version 0 is the pre-release format, which this dbtier "
                                      "refuses on purpose")


@pytest.mark.parametrize("v, says", [(True, "schema_version is true, not an integer"),
                                     (1.0, "schema_version is 1.0, not an integer"),
                                     (-3, "schema_version -3 is not a version dbtier ever wrote"),
                                     (None, "no schema_version")])
def test_schema_version_must_be_a_plain_integer(v, says):
    with pytest.raises(DbtierError, match=says):
        document.upgrade({"schema_version": v, "command": "probe"})


def test_upgrades_run_step_by_step(monkeypatch):
    """A synthetic version 2 that renamed `targets` to `devices`: a version-1 document is brought
    up through the step (and, like every document without one, given its result_kind), and a version-2
    document is left alone."""
    def one_to_two(doc):
        doc["devices"] = doc.pop("targets")
        doc["schema_version"] = 2
        return doc
    monkeypatch.setattr(document, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(document.UPGRADES, 1, one_to_two)
    old = {"schema_version": 1, "command": "probe", "targets": [1]}
    assert document.upgrade(old) == {"schema_version": 2, "command": "probe", "result_kind": "probe", "devices": [1]}
    assert old["targets"] == [1]          # the caller's document is not changed in place
    assert document.upgrade({"schema_version": 2, "devices": []}) == {"schema_version": 2, "devices": []}


def test_an_upgrade_step_must_move_one_version(monkeypatch):
    monkeypatch.setattr(document, "SCHEMA_VERSION", 3)
    monkeypatch.setitem(document.UPGRADES, 1, lambda d: {**d, "schema_version": 3})
    with pytest.raises(AssertionError):
        document.upgrade({"schema_version": 1})


def test_a_missing_upgrade_step_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(document, "SCHEMA_VERSION", 2)
    with pytest.raises(DbtierError, match="no upgrade step from schema_version 1"):
        document.upgrade({"schema_version": 1, "command": "probe"})


# -- load_run on anything -------------------------------------------------------------------------------

def test_private_keys_on_disk_are_dropped(tmp_path):
    """A document cannot point the loader elsewhere: `_run_dir`/`_children` come from where it was read."""
    d = tmp_path / "r"
    d.mkdir()
    (d / "result.json").write_text(json.dumps({"schema_version": 1, "command": "lab", "_run_dir": "/etc",
                                               "_children": [{"doc": {}}]}))
    doc = load_run(d)
    assert doc["_run_dir"] == str(d) and "_children" not in doc


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | st.text(max_size=5),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                     max_leaves=12)
_keys = st.sampled_from(["command", "params", "targets", "summary", "points", "steps", "databases", "peaks",
                         "machine", "errors", "status", "requirement", "name", "run_dir", "schema_version"])
_docs = st.fixed_dictionaries({"schema_version": st.sampled_from([1, 1, 1, 0, True, "1", 2]),
                               "command": st.sampled_from(["probe", "bench", "history", "lab", "plan", "simulate",
                                                           "show", 3])},
                              optional={k: _json for k in ["params", "targets", "steps", "databases", "machine",
                                                           "errors", "peaks", "requirement", "status"]})




@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_docs, nested=st.dictionaries(_keys, _json, max_size=4))
def test_any_document_loads_or_is_refused_by_name(tmp_path, doc, nested):
    doc = {**doc, **{k: v for k, v in nested.items() if k not in ("schema_version", "command")}}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(doc))
    try:
        got = with_timeout(lambda: load_run(f))
    except DbtierError as exc:
        assert exc.message.startswith(f"{f}: ")
        return
    assert got["command"] in ("probe", "bench", "history", "lab", "plan", "simulate", "show")
    # What loads has the shape the readers use (the check the loader made, restated for two kinds).
    # (null at a key is taken as absent by every reader: results/types.py)
    if got["command"] == "probe" and got.get("targets") is not None:
        assert isinstance(got["targets"], list) and all(isinstance(t, dict) for t in got["targets"])
    assert isinstance(got.get("params", {}), dict)


@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=64))
def test_any_bytes_load_or_are_refused_by_name(tmp_path, data):
    f = tmp_path / "result.json"
    f.write_bytes(b'{"schema_version": 1, "command": "probe", "x": ' + data)
    try:
        with_timeout(lambda: load_run(f))
    except DbtierError as exc:
        assert exc.message.startswith(f"{f}: ")


def test_read_only_documents_meet_the_schema_without_asking_engines(tmp_path, monkeypatch, capsys):
    """`show --json` with no --out: the document (light machine facts, no versions asked) is valid."""
    import dbtier.measure.machine as machine
    monkeypatch.setattr(machine, "tool_versions", _explode)     # a tripwire: must not be called
    monkeypatch.chdir(tmp_path)
    run = _input(tmp_path)
    assert main(["show", str(run), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, result_schema())
    assert doc["machine"]["versions"]["fio"] is None and sorted(p.name for p in tmp_path.iterdir()) == ["in"]
