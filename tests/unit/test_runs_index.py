"""The runs index (dbtier.runsdb): every kind of saved real document becomes a row whose figures match the
document (read here independently, not through report/figures/core.py); damaged directories are rows with
their reason; the cached index is reused by mtime and size, re-read where a file changed, rebuilt when the
code that makes it changed; the DuckDB side refuses anything but a read; check's verdict on hand-made
figures."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil

import pytest

from dbtier.core.errors import DbtierError
from dbtier.runsdb import check, extract, index, scan, trend, views
from runs_corpus import DAMAGED, SOURCES, make_corpus, put, vary

KINDS = {"probe": ("probe", None), "probe-repeats": ("probe", None), "probe-fleet": ("probe", None),
         "oltp": ("oltp", None), "oltp-matrix": ("oltp", None), "oltp-emulated": ("oltp", None),
         "dss": ("dss", None), "backup": ("backup", None), "plan-size": ("plan", "size"),
         "plan-value": ("plan", "value"), "plan-equivalent": ("plan", "equivalent"), "plan-budget": ("plan", "budget"),
         "history-import-awr": ("history", "import"), "history-import-sqlserver": ("history", "import"),
         "history-consolidate": ("history", "consolidate"), "history-requirement": ("history", "requirement"),
         "simulate-run-read-cache": ("simulate", "run"), "simulate-mrc": ("simulate", "mrc"),
         "report": ("report", None), "compare": ("compare", None), "catalog-list": ("catalog", None),
         "cleanup": ("cleanup", None), "advise-dma": ("advise", None)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("runs") / "runs")


@pytest.fixture(scope="module")
def rows(corpus):
    r = scan.refresh(str(corpus), write=False)
    return {x["run_id"]: x for x in r.table.to_pylist()}


def doc(name: str) -> dict:
    return json.loads(SOURCES[name].read_text())


def fig(row: dict, key: str, item: str = "") -> dict:
    found = [f for f in row["figures"] if f["key"] == key and f["item"] == item]
    assert len(found) == 1, (key, item, [(f["item"], f["key"]) for f in row["figures"]])
    return found[0]


def test_every_kind_of_run_is_a_row_with_its_kind(rows):
    assert set(KINDS) == set(SOURCES)       # the corpus holds every kind this test names
    for name, (kind, action) in KINDS.items():
        assert (rows[name]["kind"], rows[name]["action"], rows[name]["status"]) == (kind, action, "ok"), name
    steps = {k: v["kind"] for k, v in rows.items() if k.startswith("lab/")}
    assert steps == {"lab/probe": "probe", "lab/oltp": "oltp", "lab/dss-1": "dss", "lab/dss-2": "dss",
                     "lab/backup-1": "backup", "lab/backup-2": "backup", "lab/plan-size": "plan"}
    assert {v["lab"] for v in rows.values() if v["run_id"].startswith("lab/")} == {"lab"}
    assert rows["lab"]["kind"] == "lab" and fig(rows["lab"], "steps_ok")["value"] == 7
    assert not any(k.startswith("bench") for k in rows)      # bench figures are not runs


def test_damaged_directories_are_rows_with_the_reason(rows):
    for name, (_, words) in DAMAGED.items():
        r = rows[name]
        assert r["status"] == "damaged" and words in r["reason"], (name, r["reason"])
        assert r["figures"] == [] and r["kind"] is None
    assert str(rows["damaged-truncated"]["reason"]).startswith("result.json: ")     # not the absolute path


def test_probe_figures_are_the_documents_summary(rows):
    for name in ("probe", "probe-repeats", "probe-fleet"):
        d = doc(name)
        t = d["targets"][0]
        f = fig(rows[name], "read_iops_4k", t["path"])
        assert f["value"] == pytest.approx(t["summary"]["read_iops_4k"]) and f["better"] == "higher"
        assert fig(rows[name], "fsync_honesty", t["path"])["text"] == t["summary"]["fsync_honesty"]
        assert fig(rows[name], "commit_lat_us_p50", t["path"])["better"] == "lower"
    rep = doc("probe-repeats")["targets"][0]["spread"]["read_iops_4k"]
    f = fig(rows["probe-repeats"], "read_iops_4k", doc("probe-repeats")["targets"][0]["path"])
    assert (f["min"], f["max"], f["n"]) == (pytest.approx(rep["min"]), pytest.approx(rep["max"]), rep["n"])
    p = doc("probe")["machine"]["targets"][0]["block_device"]
    assert (fig(rows["probe"], "read_iops_4k", "/tmp/pt")["device"], rows["probe"]["model"]) == (p["name"], p["model"])


def test_bench_figures_are_the_documents(rows):
    o = doc("oltp")
    assert fig(rows["oltp"], "knee_tps")["value"] == pytest.approx(o["knee"]["tps"])
    assert fig(rows["oltp"], "best_tps")["value"] == pytest.approx(max(p["tps"] for p in o["points"]))
    assert fig(rows["dss"], "total_seconds")["value"] == pytest.approx(doc("dss")["total_seconds"])
    for t in doc("backup")["targets"]:
        if t["target"] == "dir":
            assert fig(rows["backup"], "dir_mbps", t["method"])["value"] == pytest.approx(t["mbps"])


def test_history_plan_and_simulate_figures_are_the_documents(rows):
    awr = doc("history-import-awr")["databases"][0]
    r = rows["history-import-awr"]
    assert fig(r, "iops_p99", awr["name"])["value"] == pytest.approx(awr["total"]["iops"]["p99"])
    assert fig(r, "read_iops_max", awr["name"])["value"] == pytest.approx(awr["peaks"]["read_iops"]["max"])
    assert fig(r, "intervals", awr["name"])["value"] == awr["intervals"]
    c = doc("history-consolidate")
    assert fig(rows["history-consolidate"], "peak_of_sum_iops")["value"] == pytest.approx(c["peak_of_sum"]["iops"])
    req = doc("history-requirement")
    assert fig(rows["history-requirement"], "read_iops")["value"] == pytest.approx(req["read_iops"])
    assert not [f for f in rows["history-requirement"]["figures"] if f["item"] == "requirement"]   # not twice
    best = json.loads((SOURCES["plan-size"]).read_text())["candidates"][0]
    assert fig(rows["plan-size"], "total_usd")["value"] == (best.get("tco") or {}).get("total_usd", best["price_usd"])
    assert fig(rows["plan-value"], "iops_per_usd")["value"] == pytest.approx(doc("plan-value")["value"]["iops_per_usd"])
    eq = doc("plan-equivalent")["by_metric"]["iops"]
    assert fig(rows["plan-equivalent"], "count", "iops")["value"] == eq["count"]
    s = doc("simulate-run-read-cache")
    assert fig(rows["simulate-run-read-cache"], "read_hit_ratio")["value"] == pytest.approx(100 * s["read_hit_ratio"])


def test_the_index_is_reused_refreshed_and_rebuilt(tmp_path, monkeypatch):
    root = make_corpus(tmp_path / "runs")
    first = scan.refresh(str(root))
    n = first.runs
    assert first.written and first.read == n and (root / index.INDEX_FILE).exists()
    again = scan.refresh(str(root))
    assert (again.read, again.reused, again.written) == (0, n, False)
    d = json.loads((root / "oltp" / "result.json").read_text())
    d["knee"]["tps"] = 1.0
    (root / "oltp" / "result.json").write_text(json.dumps(d))     # another size: read again
    shutil.rmtree(root / "dss")
    put(root / "new-probe", vary(doc("probe"), _dt.datetime(2025, 1, 1)))
    r = scan.refresh(str(root))
    assert (r.read, r.removed, r.runs) == (2, 1, n)
    rows = {x["run_id"]: x for x in r.table.to_pylist()}
    assert fig(rows["oltp"], "knee_tps")["value"] == 1.0 and "dss" not in rows and rows["new-probe"]["kind"] == "probe"
    monkeypatch.setattr(index, "fingerprint", lambda: "other code")
    assert scan.refresh(str(root)).read == n        # made by other code: rebuilt


def test_a_running_run_is_read_each_time_and_a_dead_ones_reads_abandoned(tmp_path):
    from dbtier.core.owner import me
    root = tmp_path / "runs"
    live = vary(doc("probe"), _dt.datetime(2025, 1, 1))
    live.update(status="running", owner=me().to_dict())
    put(root / "live", live)
    dead = dict(live, owner={**me().to_dict(), "pid": 2 ** 22 + 7, "start_ticks": 1})
    put(root / "dead", dead)
    r = scan.refresh(str(root))
    rows = {x["run_id"]: x for x in r.table.to_pylist()}
    assert rows["live"]["status"] == "running" and rows["dead"]["status"] == "abandoned"
    assert scan.refresh(str(root)).read == 1     # the running one, though its file did not change


def test_an_index_that_cannot_be_written_is_said_and_the_runs_still_listed(tmp_path):
    root = make_corpus(tmp_path / "runs")
    (root / index.INDEX_FILE).mkdir()           # a directory where the file would go: the rename fails
    r = scan.refresh(str(root))
    assert not r.written and r.not_written and r.runs == len(SOURCES) + 8 + len(DAMAGED)


@pytest.mark.slow
def test_many_documents_are_read_by_worker_processes_alike(tmp_path, monkeypatch):
    root = make_corpus(tmp_path / "runs")
    serial = {x["run_id"]: x for x in scan.refresh(str(root), write=False).table.to_pylist()}
    monkeypatch.setattr(scan, "POOL_MIN", 4)
    pooled = {x["run_id"]: x for x in scan.refresh(str(root), write=False).table.to_pylist()}
    assert pooled == serial


def test_a_directory_name_that_is_not_utf8_is_listed_as_damaged(tmp_path):
    root = tmp_path / "runs"
    put(root / "fine", doc("probe"))
    bad = os.path.join(os.fsencode(root), b"caf\xe9-probe")
    os.mkdir(bad)
    shutil.copy(SOURCES["probe"], os.path.join(bad, b"result.json"))
    rows = {x["run_id"]: x for x in scan.refresh(str(root)).table.to_pylist()}
    assert rows["fine"]["status"] == "ok" and rows["caf\ufffd-probe"]["status"] == "damaged"
    assert "not UTF-8" in rows["caf\ufffd-probe"]["reason"]


def test_a_runs_dir_that_is_missing_or_a_file_is_one_error(tmp_path):
    with pytest.raises(DbtierError, match="does not exist"):
        scan.refresh(str(tmp_path / "nope"))
    (tmp_path / "f").write_text("x")
    with pytest.raises(DbtierError, match="is not a directory"):
        scan.refresh(str(tmp_path / "f"))


@pytest.fixture(scope="module")
def con(corpus):
    r = scan.refresh(str(corpus), write=False)
    return views.connect([(r.root, r.table)])


@pytest.mark.parametrize("sql,words", [
    ("COPY (SELECT 1) TO 'x.csv'", "a COPY statement"), ("ATTACH 'x.db'", "a ATTACH statement"),
    ("SET threads = 1", "a SET statement"), ("CREATE TABLE t AS SELECT 1", "a CREATE statement"),
    ("INSERT INTO index_runs SELECT * FROM index_runs", "a INSERT statement"),
    ("SELECT 1; SELECT 2", "2 statements"), ("SELEC 1", "not a query"),
])
def test_only_one_select_is_run(con, sql, words):
    with pytest.raises(DbtierError, match=words):
        views.check_select(con, sql)


def test_the_connection_reaches_no_file_and_keeps_its_settings(con, corpus):
    with pytest.raises(DbtierError, match="disabled by configuration"):
        views.run_query(con, f"SELECT * FROM read_json('{corpus}/probe/result.json')", "runs sql")
    with pytest.raises(DbtierError, match="locked"):
        views.run_query(con, "SET enable_external_access = true", "runs sql")


@pytest.mark.parametrize("expr", ["1=1) UNION SELECT 1 --", "", "status = 'ok'; DROP TABLE runs", "x >"])
def test_a_where_that_is_not_one_expression_is_refused(expr):
    with pytest.raises(DbtierError, match="--where"):
        views.check_where(expr)


def test_every_view_has_its_documented_columns_and_every_run_of_its_kind(con):
    for name in views.view_names():
        cols = [d[0] for d in con.execute(f"SELECT * FROM {name} LIMIT 0").description]
        assert cols == views.columns_of(name), name
    for kind in views.VIEWS:
        runs = {r[0] for r in con.execute("SELECT path FROM runs WHERE kind = ?", [kind]).fetchall()}
        in_view = {r[0] for r in con.execute(f"SELECT path FROM {kind}").fetchall()}
        assert runs == in_view and runs, kind


@pytest.mark.parametrize("name,words", [("read_iops_4k", "VIEW.COLUMN"), ("nope.x", "VIEW.COLUMN"),
                                        ("probe.nope", "is not a figure"), ("probe.fsync_honesty", "is text")])
def test_a_figure_name_is_checked(name, words):
    with pytest.raises(DbtierError, match=words):
        trend.parse_figure(name)


def _row(key: str, value: float, better: str = "higher", n: int | None = None, lo: float | None = None,
         hi: float | None = None) -> dict:
    sp = {"median": value, "min": lo, "max": hi, "n": n, "spread_pct": (hi - lo) / value * 100 if n else None}
    return {"figure_key": key, "item": "", "key": key, "label": key, "value": value, "text": None, "unit": "",
            "digits": 0, "better": better, "detail": False, **sp}


def test_check_judges_with_compares_noise_rule_and_the_tolerance():
    base = check.baseline([[_row("iops", 100.0, n=2, lo=99.0, hi=101.0), _row("lat", 50.0, "lower")]])
    v = check.judge([_row("iops", 70.0, n=2, lo=69.0, hi=71.0), _row("lat", 51.0, "lower")], base)
    assert v["regressions"] == ["iops"] and v["exit_code"] == check.EXIT_REGRESSION
    assert {f["key"]: f["status"] for f in v["figures"]} == {"iops": "regression", "lat": "within noise"}
    assert check.judge([_row("iops", 97.0, n=2, lo=96.0, hi=98.0)], base)["passed"]       # 3%: noise
    # 10% worse: beyond the 5% floor, within a 15% tolerance
    assert check.judge([_row("iops", 90.0, n=2, lo=89.0, hi=91.0)], base, 15.0)["figures"][0]["status"] == \
        "within tolerance"
    # latency up 30% on single runs: too little evidence, never a regression; on two runs each, a regression
    assert check.judge([_row("lat", 65.0, "lower")], base)["figures"][0]["status"] == "too little evidence"
    base2 = check.baseline([[_row("lat", 50.0, "lower", n=2, lo=49.5, hi=50.5)]])
    assert check.judge([_row("lat", 65.0, "lower", n=2, lo=64.5, hi=65.5)], base2)["regressions"] == ["lat"]
    assert check.judge([_row("iops", 130.0, n=2, lo=129.0, hi=131.0)], base)["figures"][0]["status"] == "better"
    # a wide spread in the baseline is noise: 20% lower is within it
    wide = check.baseline([[_row("iops", 100.0)], [_row("iops", 80.0)], [_row("iops", 120.0)]])
    assert wide["iops"]["value"] == 100.0 and wide["iops"]["spread"]["spread_pct"] == pytest.approx(40.0)
    assert check.judge([_row("iops", 80.0)], wide)["passed"]


def test_a_document_whose_figures_cannot_be_drawn_is_damaged_not_a_crash(tmp_path, monkeypatch):
    put(tmp_path / "runs" / "odd", doc("oltp"))
    monkeypatch.setattr(extract.F, "figures", lambda d: 1 / 0)
    r = extract.read_row(str(tmp_path / "runs"), "odd")
    assert r["status"] == "damaged" and "ZeroDivisionError" in r["reason"] and r["kind"] == "oltp"


def test_advise_figures_are_the_recommended_option(rows):
    a = doc("advise-dma")["advice"]
    best = a["options"][a["recommended"]]
    r = rows["advise-dma"]
    assert fig(r, "total_usd")["value"] == pytest.approx(best["total_usd"])
    assert fig(r, "recommended")["text"] == f"{best['where']}: {best['description']}"
    assert fig(r, "read_iops")["value"] == pytest.approx(a["requirement"]["read_iops"])


def test_folders_that_are_no_runs_are_skipped_and_marked_ones_are_runs(tmp_path):
    from runs_corpus import mark
    root = tmp_path / "runs"
    put(root / "fine", doc("probe"))
    (root / "wal" / "sub").mkdir(parents=True)              # a folder of folders, none a run
    (root / "report").mkdir()
    (root / "report" / "report.html").write_text("<html></html>")
    mark(root / "group" / "lost", "history", "history-import-awr")   # a grouped run without its document
    found = {rid: (st, why) for rid, st, why in scan.discover(str(root))}
    assert set(found) == {"fine", "group/lost"} and found["group/lost"] == (None, None)
    rows = {x["run_id"]: x for x in scan.refresh(str(root)).table.to_pylist()}
    assert rows["group/lost"]["status"] == "damaged" and rows["group/lost"]["name"] == "history-import-awr"


def test_the_run_registry_keeps_one_line_per_run_and_drops_what_is_gone(tmp_path):
    from dbtier.core import runlog
    a, b = tmp_path / "a", tmp_path / "b"
    for p in (a, b, a):                                      # a recorded twice (--force): listed once
        assert runlog.record(p, "plan", "x")
    with open(runlog.registry_path(), "ab") as f:
        f.write(b'{"path": "rel/ative"}\n{"cut sh')          # not entries: dropped
    assert [e["path"] for e in runlog.entries()] == [str(b), str(a)]
    kept, dropped = runlog.prune(lambda e: e["path"] != str(b))
    assert [e["path"] for e in kept] == [str(a)] and dropped == 1
    assert [json.loads(x)["path"] for x in runlog.registry_path().read_text().splitlines()] == [str(a)]


def test_a_registered_run_inside_another_run_is_part_of_it(tmp_path):
    """An advise run's imports (made with --out inside its directory) are not listed on their own."""
    from dbtier.core import runlog
    outer, inner, alone = tmp_path / "advise", tmp_path / "advise" / "history" / "1-awr", tmp_path / "alone"
    for d, kind in ((outer, "advise"), (inner, "history"), (alone, "probe")):
        put(d, doc("probe"))
        runlog.record(d, kind, None)
    r = scan.refresh_registered(set(), write=False)
    assert sorted(r.table.column("run_id").to_pylist()) == sorted(str(p).lstrip("/") for p in (outer, alone))
    r = scan.refresh_registered({os.path.realpath(outer)}, write=False)      # listed from a runs directory
    assert r.table.column("run_id").to_pylist() == [str(alone).lstrip("/")]
