"""`dbtier runs`, `runs sql`, `runs trend` and `runs check` as library calls (dbtier.runsdb.calls): each
call's section is what the command stores for the same runs directory (the same keys, in the same order,
the same values but the time each index refresh took: the stored document is the reference), the rows as
DuckDB gave them beside it, and each refusal is the command's, in its words. Saved documents only."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import call_main, load_doc, refused_with
from dbtier.runsdb.calls import (CheckRequest, ListRequest, RunsCheck, RunsList, RunsSql, RunsTrend, SqlRequest,
                                 TrendRequest, runs_check, runs_list, runs_sql, runs_trend)
from runs_corpus import PROBE_REPEATS, make_corpus, put, vary

ENVELOPE = {"schema_version", "command", "result_kind", "dbtier_version", "started_at", "finished_at", "status",
            "machine", "params", "errors", "name", "owner", "_run_dir"}
T0 = _dt.datetime(2025, 3, 1, 2, 0)
DAY = _dt.timedelta(days=1)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = make_corpus(tmp_path_factory.mktemp("runs") / "runs")
    call_main("runs", "--runs-dir", str(root), cwd=root.parent)        # the index made: both sides reuse it
    return root


@pytest.fixture(scope="module")
def nightly(tmp_path_factory) -> Path:
    """db1's probe on days 0-3 (read_iops_4k x1, x0.9, x1.1, x0.7), db2's on day 1, and the index of them."""
    root = tmp_path_factory.mktemp("nightly") / "runs"
    base = json.loads(PROBE_REPEATS.read_text())
    for i, f in enumerate((1.0, 0.9, 1.1, 0.7)):
        put(root / f"db1-{i}", vary(base, T0 + i * DAY, "db1", {"read_iops_4k": f}))
    put(root / "db2-0", vary(base, T0 + DAY + _dt.timedelta(hours=1), "db2", {"read_iops_4k": 0.5}))
    put(root.parent / "slow", vary(base, T0 + 10 * DAY, "db1", {"read_iops_4k": 0.7}))
    call_main("runs", "--runs-dir", str(root), cwd=root.parent)
    return root


def _timeless(x: Any) -> Any:
    """The section as JSON, but for how long each index refresh took."""
    x = json.loads(json.dumps(x))
    for r in x.get("index", []):
        r.pop("seconds")
    return x


def _same(res: Any, doc: dict[str, Any], but: frozenset[str] = frozenset()) -> None:
    section = res.to_json()
    assert set(doc) - set(section) <= ENVELOPE
    assert list(section) == [k for k in doc if k not in ENVELOPE]
    assert _timeless({k: v for k, v in section.items() if k not in but}) == \
        _timeless({k: doc[k] for k in section if k not in but})


def _cli(root: Path, *argv: str) -> dict[str, Any]:
    r = call_main("runs", *argv, "--runs-dir", str(root), "--json", cwd=root.parent)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


class _Start:
    def __init__(self, out: Path | None = None):
        self.out, self.params, self.inputs = out, None, None

    def __call__(self, params: dict[str, Any], inputs: list[str]) -> Path | None:
        self.params, self.inputs = params, inputs
        if self.out is not None:
            self.out.mkdir()
        return self.out


def test_the_listing_is_the_commands_document(corpus):
    argv = ("--kind", "probe", "--where", "read_iops_4k > 1000", "--sort", "read_iops_4k desc", "--since", "2000-01-01")
    doc = _cli(corpus, *argv)
    start = _Start()
    res = runs_list(ListRequest(runs_dirs=(str(corpus),), kind="probe", where="read_iops_4k > 1000",
                                sort="read_iops_4k desc", since="2000-01-01"), start)
    assert isinstance(res, RunsList) and res.kind == "runs.list" == doc["result_kind"]
    _same(res, doc)
    assert start.params == doc["params"] and start.inputs == []
    assert list(res.columns) == doc["columns"] and len(res.records) == doc["count"] > 1
    by = dict(zip(res.columns, res.records[0]))
    assert isinstance(by["started_at"], _dt.datetime) and by["run_id"] == doc["rows"][0]["run_id"]
    # every run but the runs command's own, in start order
    everything = runs_list(ListRequest(runs_dirs=(str(corpus),)))
    _same(everything, _cli(corpus))
    with pytest.raises(TypeError):
        everything.section["rows"][0]["run_id"] = "x"


def test_sql_is_the_commands_document(corpus):
    q = "SELECT run_id, kind, started_at, 1.5::DECIMAL(4,2) AS d FROM runs WHERE status = 'ok' ORDER BY run_id"
    doc = _cli(corpus, "sql", q)
    res = runs_sql(SqlRequest(query=q, runs_dirs=(str(corpus),)))
    assert isinstance(res, RunsSql) and res.kind == "runs.sql" == doc["result_kind"]
    _same(res, doc)
    assert res.columns == ("run_id", "kind", "started_at", "d") and len(res.records) == doc["count"]
    assert isinstance(res.records[0][2], _dt.datetime) and res["rows"][0][3] == 1.5


def test_trend_is_the_commands_document_and_chart(nightly, tmp_path):
    doc = _cli(nightly, "trend", "probe.read_iops_4k", "--by", "host", "--where", "host <> 'nobody'")
    start = _Start()
    res = runs_trend(TrendRequest(figure="probe.read_iops_4k", by="host", where="host <> 'nobody'",
                                  runs_dirs=(str(nightly),)), start)
    assert isinstance(res, RunsTrend) and res.kind == "runs.trend" == doc["result_kind"]
    _same(res, doc)
    assert start.params == doc["params"] and "report_html" not in res.section
    assert [p["group"] for p in res.trend["points"]] == ["db1", "db1", "db2", "db1", "db1"]
    assert isinstance(res.trend["points"][0]["started_at"], _dt.datetime)
    # a directory given: the chart goes there, as the command's run directory gets it with --out
    r = call_main("runs", "trend", "probe.read_iops_4k", "--runs-dir", str(nightly), "--out", str(tmp_path / "cli"),
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with_out = load_doc(tmp_path / "cli")
    res = runs_trend(TrendRequest(figure="probe.read_iops_4k", runs_dirs=(str(nightly),)), _Start(tmp_path / "lib"))
    _same(res, with_out, but=frozenset({"report_html"}))
    assert res["report_html"] == str(tmp_path / "lib" / "trend.html")
    assert (tmp_path / "lib" / "trend.html").read_text() == (tmp_path / "cli" / "trend.html").read_text()


def test_check_is_the_commands_verdict(nightly, tmp_path):
    slow, base = str(nightly.parent / "slow"), str(nightly / "db1-0")
    r = call_main("runs", "check", slow, "--baseline", base, "--runs-dir", str(nightly), "--out",
                  str(tmp_path / "cli"), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    doc = load_doc(tmp_path / "cli")
    start = _Start()
    res = runs_check(CheckRequest(run=slow, baseline=base, runs_dirs=(str(nightly),)), start)
    assert isinstance(res, RunsCheck) and res.kind == "runs.check" == doc["result_kind"]
    _same(res, doc)
    assert start.params == doc["params"] and list(res.inputs) == start.inputs == [slow, base]
    assert res.exit_code == 1 and not res.passed and res["check"]["regressions"] == ("read_iops_4k",)
    # against the query of db1's nights: their spread is noise, 0.7 passes (the call first: the command's
    # verdict goes into the runs directory, a run the call would read)
    res = runs_check(CheckRequest(run=slow, baseline="host = 'db1'", last=3, tolerance_pct=0,
                                  runs_dirs=(str(nightly),)))
    doc = _cli(nightly, "check", slow, "--baseline", "host = 'db1'", "--last", "3", "--tolerance", "0")
    _same(res, doc)
    assert res.exit_code == 0 and res.passed and len(res["baseline"]["runs"]) == 3


_refused = refused_with


def test_refusals_in_the_commands_words(corpus, tmp_path):
    d = (str(corpus),)
    _refused("--kind 'prob': not a kind of run", lambda: ListRequest(kind="prob"))
    _refused("--since 'last tuesday': not a date, time or duration", lambda: ListRequest(since="last tuesday"))
    _refused("--where 'read_iops_4k >': not one SQL expression", lambda: ListRequest(where="read_iops_4k >"))
    _refused("--where '': an empty expression", lambda: ListRequest(where=""))
    _refused("--sort 'nope': runs has no column 'nope'", ListRequest(sort="nope").order_by)
    _refused("--sort 'nope': probe has no column 'nope'", ListRequest(kind="probe", sort="nope").order_by)
    assert ListRequest(kind="probe", sort="-read_iops_4k").order_by() == '"read_iops_4k" DESC NULLS LAST, run_id'
    # a runs directory that is not there is named before a bad --sort, as the command names it
    _refused(f"runs directory {tmp_path / 'no'} does not exist",
             lambda: runs_list(ListRequest(runs_dirs=(str(tmp_path / "no"),), sort="nope")))
    _refused("--sort 'nope'", lambda: runs_list(ListRequest(runs_dirs=d, sort="nope")))
    _refused("--where: Binder Error", lambda: runs_list(ListRequest(runs_dirs=d, where="no_such_column = 1")))
    _refused("runs sql: a DELETE statement", lambda: runs_sql(SqlRequest(query="DELETE FROM index_runs",
                                                                           runs_dirs=d)))
    _refused("runs sql: 2 statements", lambda: runs_sql(SqlRequest(query="SELECT 1; SELECT 2", runs_dirs=d)))
    _refused("figure 'iops': name it VIEW.COLUMN", lambda: TrendRequest(figure="iops"))
    _refused("figure 'probe.nope': 'nope' is not a figure of it", lambda: TrendRequest(figure="probe.nope"))
    _refused("--since 'soon'", lambda: TrendRequest(figure="probe.read_iops_4k", since="soon"))
    _refused("RUN 'no/such/run': no run directory there",
             lambda: runs_check(CheckRequest(run="no/such/run", baseline="host = 'x'", runs_dirs=d)))
    _refused("check takes runs of one kind",
             lambda: runs_check(CheckRequest(run="probe", baseline="oltp", runs_dirs=d)))
    _refused("--baseline \"host = 'nobody'\" selects no probe run",
             lambda: runs_check(CheckRequest(run="probe", baseline="host = 'nobody'", runs_dirs=d)))
