"""The result document and the run store."""

import json

import pytest

from dbtier.core.errors import DbtierError
from dbtier.results.document import SCHEMA_VERSION, finish, new_document, upgrade
from dbtier.results.store import RunDir, load_run, write_json_atomic


def test_new_document_has_the_shared_keys_and_finish_stamps_it():
    doc = new_document("probe", {"paths": ["/x"]}, {"hostname": "h"})
    assert doc["schema_version"] == SCHEMA_VERSION and doc["command"] == "probe"
    assert doc["status"] == "running" and doc["finished_at"] is None
    finish(doc, "interrupted")
    assert doc["status"] == "interrupted" and doc["finished_at"].endswith("Z")


def test_run_dirs_are_timestamped_and_never_reused(tmp_path):
    a = RunDir.create("probe", root=tmp_path)
    b = RunDir.create("probe", root=tmp_path)
    assert a.path != b.path
    assert a.path.name.endswith("-probe") and b.path.name.endswith("-probe-2")


def test_unwritable_run_dir_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DbtierError) as e:
        RunDir.create("probe", out=blocker / "run")
    assert "cannot write the run directory" in e.value.message and "--out" in e.value.hint


def test_atomic_write_leaves_no_temp_file(tmp_path):
    p = tmp_path / "result.json"
    write_json_atomic(p, {"a": 1})
    write_json_atomic(p, {"a": 2})
    assert json.loads(p.read_text()) == {"a": 2}
    assert [x.name for x in tmp_path.iterdir()] == ["result.json"]


def test_load_run_round_trip_and_errors(tmp_path):
    rd = RunDir.create("probe", out=tmp_path / "run")
    rd.write(new_document("probe", {}, {}))
    assert load_run(rd.path)["command"] == "probe"
    with pytest.raises(DbtierError, match="no result.json"):
        load_run(tmp_path / "elsewhere")
    (tmp_path / "cut.json").write_text('{"schema_version": 1, "comm')
    with pytest.raises(DbtierError, match="not valid JSON"):
        load_run(tmp_path / "cut.json")
    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(DbtierError, match="not a dbtier result"):
        load_run(tmp_path / "other.json")


def test_newer_schema_is_refused_with_a_hint():
    with pytest.raises(DbtierError) as e:
        upgrade({"schema_version": SCHEMA_VERSION + 1})
    assert "newer" in e.value.message and "upgrade dbtier" in e.value.hint
