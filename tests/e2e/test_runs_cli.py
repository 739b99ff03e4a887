"""`dbtier runs`, `runs sql`, `runs trend`, `runs check` and `report --runs` end to end (in-process through
main(argv)) over a runs directory holding every kind of run dbtier writes, from saved real documents, and
damaged directories; the expected figures are read from the documents here. Bad input: one message."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest

from conftest import assert_clean_error, call_main, load_doc, run_dbtier
from runs_corpus import DAMAGED, PROBE_REPEATS, SOURCES, make_corpus, put, vary

DAY = _dt.timedelta(days=1)
T0 = _dt.datetime(2025, 3, 1, 2, 0)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("runs") / "runs")


def runs(corpus: Path, *args: str, cwd: Path | None = None):
    return call_main("runs", *args, "--runs-dir", str(corpus), cwd=cwd or corpus.parent)


def js(r) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def source(name: str) -> dict:
    return json.loads(SOURCES[name].read_text())


def test_the_listing_shows_every_run_and_every_damaged_directory(corpus):
    before = sorted(p.name for p in corpus.iterdir())
    r = runs(corpus)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    for name in [*SOURCES, "lab", "lab/probe", *DAMAGED]:
        assert name in r.stdout, name
    n = len(SOURCES) + 8 + len(DAMAGED)
    assert f"{n} runs, {len(DAMAGED)} damaged in {corpus}" in r.stdout
    assert "damaged: no result.json" in r.stdout and "bench" not in r.stdout.replace("bench-", "")
    # it only reads: no run directory of its own, just the index
    assert set(p.name for p in corpus.iterdir()) - set(before) <= {".dbtier-runs-index.parquet"}
    doc = js(runs(corpus, "--json"))
    assert doc["command"] == "runs" and doc["params"]["action"] == "list" and doc["count"] == n
    by = {x["run_id"]: x for x in doc["rows"]}
    assert by["probe"]["kind"] == "probe" and by["probe"]["host"] == source("probe")["machine"]["hostname"]
    assert by["probe"]["started_at"] == source("probe")["started_at"].replace("Z", "")[:26] + "Z"
    assert by["damaged-future"]["status"] == "damaged" and "newer than" in by["damaged-future"]["reason"]
    assert by["plan-size"]["action"] == "size" and by["lab/dss-1"]["lab"] == "lab"


def test_kind_where_and_sort_use_the_kinds_figures(corpus):
    doc = js(runs(corpus, "--kind", "probe", "--where", "read_iops_4k > 80000", "--sort", "read_iops_4k desc",
                  "--json"))
    want = []
    for name in ("probe", "probe-repeats", "probe-fleet", "lab/probe"):
        d = json.loads((corpus / name / "result.json").read_text())
        v = d["targets"][0]["summary"]["read_iops_4k"]
        if v > 80000:
            want.append((v, name))
    got = [(x["read_iops_4k"], x["run_id"]) for x in doc["rows"]]
    assert [v for v, _ in got] == sorted((v for v, _ in want), reverse=True)
    assert {n for _, n in got} == {n for _, n in want}
    r = runs(corpus, "--kind", "probe")
    assert "read_iops_4k" in r.stdout and "/tmp/pt" in r.stdout


def test_since_keeps_the_later_runs(tmp_path):
    root = tmp_path / "runs"
    for i in range(3):
        put(root / f"p{i}", vary(source("probe"), T0 + i * DAY))
    doc = js(runs(root, "--since", "2025-03-02", "--json"))
    assert [x["run_id"] for x in doc["rows"]] == ["p1", "p2"]
    assert js(runs(root, "--since", "1d", "--json"))["count"] == 0


@pytest.mark.slow
def test_runs_sql_gives_the_documents_figures_in_every_view(corpus):
    def one(sql: str) -> list:
        return js(call_main("runs", "sql", sql, "--runs-dir", str(corpus), "--json", cwd=corpus.parent))["rows"]
    o = source("oltp")
    assert one("SELECT knee_tps, best_tps FROM oltp WHERE run_id = 'oltp'") == [
        [pytest.approx(o["knee"]["tps"]), pytest.approx(max(p["tps"] for p in o["points"]))]]
    dss = source("dss")["total_seconds"]
    assert one("SELECT total_seconds FROM dss WHERE run_id = 'dss'") == [[pytest.approx(dss)]]
    b = {t["method"]: t["mbps"] for t in source("backup")["targets"] if t["target"] == "dir"}
    assert dict(one("SELECT method, dir_mbps FROM backup WHERE run_id = 'backup'")) == pytest.approx(b)
    awr = source("history-import-awr")["databases"][0]
    assert one("SELECT database, iops_p99 FROM history WHERE run_id = 'history-import-awr'") == [
        [awr["name"], pytest.approx(awr["total"]["iops"]["p99"])]]
    best = json.loads((corpus / "lab" / "plan-size" / "result.json").read_text())["candidates"][0]
    assert one("SELECT total_usd, purchase_usd FROM plan WHERE run_id = 'lab/plan-size'") == [
        [(best.get("tco") or {}).get("total_usd", best["price_usd"]), best["price_usd"]]]
    s = source("simulate-run-read-cache")
    hits = 100 * s["read_hit_ratio"]
    assert one("SELECT read_hit_ratio FROM simulate WHERE action = 'run'") == [[pytest.approx(hits)]]
    t = source("probe-repeats")["targets"][0]
    assert one("SELECT target, read_iops_4k, fsync_honesty FROM probe WHERE run_id = 'probe-repeats'") == [
        [t["path"], pytest.approx(t["summary"]["read_iops_4k"]), t["summary"]["fsync_honesty"]]]
    sp = t["spread"]["read_iops_4k"]
    assert one("SELECT min, max, n FROM figures WHERE run_id = 'probe-repeats' AND key = 'read_iops_4k'") == [
        [pytest.approx(sp["min"]), pytest.approx(sp["max"]), sp["n"]]]
    r = call_main("runs", "sql", "SELECT kind, count(*) AS n FROM runs GROUP BY kind ORDER BY kind",
                  "--runs-dir", str(corpus), cwd=corpus.parent)
    assert r.returncode == 0 and "history" in r.stdout and "rows" in r.stdout


@pytest.mark.parametrize("sql,words", [
    ("COPY (SELECT * FROM runs) TO 'out.csv'", "a COPY statement; only reads are run"),
    ("ATTACH 'other.db'", "a ATTACH statement"), ("SET threads = 1", "a SET statement"),
    ("SELECT 1; SELECT 2", "2 statements"),
    ("SELECT * FROM read_csv('/etc/hostname')", "file system operations are disabled"),
    ("SELECT nope FROM runs", "Binder Error"),
])
def test_runs_sql_refuses_anything_but_a_read(corpus, sql, words):
    r = call_main("runs", "sql", sql, "--runs-dir", str(corpus), cwd=corpus.parent)
    assert_clean_error(r, words)
    assert not (corpus.parent / "out.csv").exists()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Nightly probes of one target: db1 on days 0-3 (read_iops_4k x1, x0.9, x1.1, x0.7), db2 on day 1."""
    root = tmp_path_factory.mktemp("nightly") / "runs"
    base = json.loads(PROBE_REPEATS.read_text())
    for i, f in enumerate((1.0, 0.9, 1.1, 0.7)):
        put(root / f"db1-{i}", vary(base, T0 + i * DAY, "db1", {"read_iops_4k": f}))
    put(root / "db2-0", vary(base, T0 + DAY + _dt.timedelta(hours=1), "db2", {"read_iops_4k": 0.5}))
    return root, base["targets"][0]


def test_trend_is_the_figure_over_time_with_each_runs_spread(history):
    root, t = history
    doc = js(call_main("runs", "trend", "probe.read_iops_4k", "--by", "host", "--runs-dir", str(root), "--json",
                       cwd=root.parent))
    tr = doc["trend"]
    v, sp = t["summary"]["read_iops_4k"], t["spread"]["read_iops_4k"]
    pts = [(p["run_id"], p["group"], p["value"]) for p in tr["points"]]
    assert pts == [("db1-0", "db1", pytest.approx(v)), ("db1-1", "db1", pytest.approx(0.9 * v)),
                   ("db2-0", "db2", pytest.approx(0.5 * v)), ("db1-2", "db1", pytest.approx(1.1 * v)),
                   ("db1-3", "db1", pytest.approx(0.7 * v))]
    p = tr["points"][1]
    assert (p["min"], p["max"], p["n"]) == (pytest.approx(0.9 * sp["min"]), pytest.approx(0.9 * sp["max"]), sp["n"])
    assert p["change_pct"] == pytest.approx(-10.0)
    assert tr["points"][3]["change_pct"] == pytest.approx(100 * (1.1 / 0.9 - 1))
    assert tr["unit"] == "IOPS" and tr["better"] == "higher"
    r = call_main("runs", "trend", "probe.read_iops_4k", "--where", "host = 'db1'", "--runs-dir", str(root),
                  cwd=root.parent)
    assert r.returncode == 0 and "db2-0" not in r.stdout and "db1-3" in r.stdout and "-36.4%" in r.stdout
    assert f"{sp['n']}" in r.stdout


def test_trend_with_out_writes_its_chart(history, tmp_path):
    root, _ = history
    r = call_main("runs", "trend", "probe.read_iops_4k", "--runs-dir", str(root), "--out", str(tmp_path / "t"),
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "t" / "trend.html").read_text()
    assert "<svg" in html and "probe.read_iops_4k" in html and load_doc(tmp_path / "t")["status"] == "ok"


def _nightly(root: Path, name: str, factor: float) -> Path:
    base = json.loads(PROBE_REPEATS.read_text())
    return put(root / name, vary(base, T0 + 10 * DAY, "db1", {"read_iops_4k": factor}))


def test_check_fails_on_a_regression_and_passes_within_noise(history, tmp_path):
    root, t = history
    slow, same = _nightly(tmp_path, "slow", 0.7), _nightly(tmp_path, "same", 0.97)
    base = str(root / "db1-0")
    r = call_main("runs", "check", str(slow), "--baseline", base, "--runs-dir", str(root), "--out",
                  str(tmp_path / "c1"), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "regression" in r.stdout and "read_iops_4k" in r.stdout
    v = load_doc(tmp_path / "c1")["check"]
    assert v["regressions"] == ["read_iops_4k"] and not v["passed"] and v["exit_code"] == 1
    f = next(x for x in v["figures"] if x["key"] == "read_iops_4k")
    assert f["change_pct"] == pytest.approx(-30.0) and f["baseline"] == pytest.approx(t["summary"]["read_iops_4k"])
    assert all(x["status"] != "regression" for x in v["figures"] if x["key"] != "read_iops_4k")
    r = call_main("runs", "check", str(same), "--baseline", base, "--runs-dir", str(root), "--json", "--out",
                  str(tmp_path / "c2"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["check"]["passed"] and doc["check"]["regressions"] == [] and doc == load_doc(tmp_path / "c2")


def test_check_against_a_query_baseline_of_several_runs(history, tmp_path):
    root, t = history
    slow = _nightly(tmp_path, "slow", 0.7)
    # db1's four nights: median of 1.0, 0.9, 1.1, 0.7 = 0.95; their spread (40%) is noise, so 0.7 passes
    doc = js(call_main("runs", "check", str(slow), "--baseline", "host = 'db1'", "--runs-dir", str(root),
                       "--json", "--out", str(tmp_path / "q"), cwd=tmp_path))
    f = next(x for x in doc["check"]["figures"] if x["key"] == "read_iops_4k")
    assert f["baseline"] == pytest.approx(0.95 * t["summary"]["read_iops_4k"]) and f["baseline_runs"] == 4
    assert f["status"] == "within noise" and doc["baseline"]["how"] == "query" and len(doc["baseline"]["runs"]) == 4
    # the last two nights only (1.1, 0.7): 0.7 of the first is within their 44% spread as well; --tolerance 0 and
    # one night (0.7x): the same value, no change
    r = call_main("runs", "check", str(slow), "--baseline", "host = 'db1'", "--last", "1", "--tolerance", "0",
                  "--runs-dir", str(root), "--out", str(tmp_path / "q2"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert load_doc(tmp_path / "q2")["baseline"]["runs"] == [str(root / "db1-3")]


def test_check_writes_its_verdict_into_the_runs_directory(history, tmp_path):
    root, _ = history
    out = tmp_path / "runs"
    put(out / "base", json.loads(PROBE_REPEATS.read_text()))
    slow = _nightly(tmp_path, "slow", 0.7)
    r = call_main("runs", "check", str(slow), "--baseline", "base", "--runs-dir", str(out), cwd=tmp_path)
    assert r.returncode == 1
    made = [p for p in out.iterdir() if p.name.endswith("-runs")]
    assert len(made) == 1 and load_doc(made[0])["check"]["regressions"] == ["read_iops_4k"]
    listing = js(runs(out, "--json"))
    assert [x["run_id"] for x in listing["rows"]] == ["base"]            # its own runs are not listed
    assert js(runs(out, "--kind", "runs", "--json"))["rows"][0]["action"] == "check"


@pytest.mark.parametrize("argv,words", [
    (["runs", "trend", "probe.no_such_figure"], "is not a figure of it"),
    (["runs", "trend", "iops"], "VIEW.COLUMN"),
    (["runs", "--where", "read_iops_4k >"], "not one SQL expression"),
    (["runs", "--where", "no_such_column = 1"], "Binder Error"),
    (["runs", "--kind", "prob"], "not a kind of run"),
    (["runs", "--sort", "nope"], "has no column 'nope'"),
    (["runs", "--since", "last tuesday"], "not a date, time or duration"),
    (["runs", "sql", "DELETE FROM index_runs"], "a DELETE statement"),
    (["runs", "check", "no/such/run", "--baseline", "host = 'x'"], "no run directory there"),
    (["runs", "check", "probe", "--baseline", "oltp"], "check takes runs of one kind"),
    (["runs", "check", "probe", "--baseline", "host = 'nobody'"], "selects no probe run"),
    (["report", "--runs", "kind = 'nothing'"], "selects no run"),
    (["report", "--runs", "kind = 'probe'", "--trend", "probe.nope"], "is not a figure"),
    (["report"], "give run directories or --runs QUERY"),
])
def test_bad_input_is_one_message(corpus, argv, words):
    r = call_main(*argv, "--runs-dir", str(corpus), cwd=corpus.parent)
    assert_clean_error(r, words)
    assert r.returncode == 2


def test_a_runs_dir_that_does_not_exist_is_one_message(tmp_path):
    for argv in (["runs"], ["runs", "sql", "SELECT 1"], ["runs", "trend", "probe.read_iops_4k"]):
        r = call_main(*argv, "--runs-dir", str(tmp_path / "nope"), cwd=tmp_path)
        assert_clean_error(r, f"runs directory {tmp_path / 'nope'} does not exist")
    r = call_main("runs", cwd=tmp_path)         # the default, ./runs, is not there either
    assert_clean_error(r, "runs directory runs does not exist")


def test_report_of_a_query_has_the_trend_charts(history, tmp_path):
    root, _ = history
    r = call_main("report", "--runs", "host = 'db1'", "--runs-dir", str(root), "--out", str(tmp_path / "rep"),
                  "--format", "both", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    for s in ("probe.read_iops_4k", "probe.commit_lat_us_p50", "<svg", "Runs selected", "db1-3", "days since"):
        assert s in html, s
    assert "db2-0" not in html
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| db1-3 |" in md and "## probe.read_iops_4k" in md
    doc = load_doc(tmp_path / "rep")
    assert doc["params"]["runs_query"] == "host = 'db1'" and len(doc["inputs"]) == 4
    r = call_main("report", "--runs", "host = 'db1'", "--trend", "probe.write_iops_4k", "--runs-dir", str(root),
                  "--out", str(tmp_path / "rep2"), cwd=tmp_path)
    html = (tmp_path / "rep2" / "report.html").read_text()
    assert "probe.write_iops_4k" in html and "probe.commit_lat_us_p50:" not in html


@pytest.mark.slow
def test_the_real_entry_point_exits_1_on_a_regression(history, tmp_path):
    root, _ = history
    slow = _nightly(tmp_path, "slow", 0.7)
    r = run_dbtier("runs", "check", str(slow), "--baseline", str(root / "db1-0"), "--runs-dir", str(root),
                   "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert r.returncode == 1 and "regression" in r.stdout and r.stderr == "", r.stderr


# One headline figure per kind, as the trend names it, and how many runs of the corpus have it.
KIND_FIGURES = {"probe.read_iops_4k": 4, "oltp.knee_tps": 4, "dss.total_seconds": 3, "backup.dir_mbps": 6,
                "history.iops_p99": 3, "plan.total_usd": 2, "simulate.read_hit_ratio": 1,
                "advise.total_usd": 1}


@pytest.mark.parametrize("figure,n", list(KIND_FIGURES.items()))
def test_trend_of_every_kind_over_the_corpus(corpus, figure, n):
    doc = js(call_main("runs", "trend", figure, "--runs-dir", str(corpus), "--json", cwd=corpus.parent))
    pts = doc["trend"]["points"]
    assert len(pts) == n, [p["run_id"] for p in pts]
    assert [p["started_at"] for p in pts] == sorted(p["started_at"] for p in pts)
    view, key = figure.split(".")
    for p in pts:
        rows = js(call_main("runs", "sql", f"SELECT {key} FROM {view} WHERE path = '{p['path']}'"
                            + (f" AND {views_item(view)} = '{p['item']}'" if p["item"] else ""),
                            "--runs-dir", str(corpus), "--json", cwd=corpus.parent))["rows"]
        assert rows == [[pytest.approx(p["value"])]]


def views_item(view: str) -> str:
    from dbtier.runsdb.views import VIEWS
    return VIEWS[view].item


@pytest.mark.parametrize("name", ["probe", "probe-fleet", "oltp", "oltp-matrix", "dss", "backup", "plan-size",
                                  "plan-value", "history-import-awr", "history-requirement",
                                  "simulate-run-read-cache", "simulate-mrc"])
def test_check_of_every_kind_against_a_copy_of_itself_passes(corpus, tmp_path, name):
    d = json.loads((corpus / name / "result.json").read_text())
    copy = put(tmp_path / "copy", d)
    r = call_main("runs", "check", str(copy), "--baseline", name, "--runs-dir", str(corpus), "--json",
                  "--out", str(tmp_path / "c"), cwd=corpus.parent)
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)["check"]
    assert v["passed"] and v["figures"] and all(f["change_pct"] in (0, None) for f in v["figures"])
    assert v["judged"] >= (0 if name.startswith("history") else 1)


def test_check_refuses_a_durable_run_against_a_non_durable_one(tmp_path):
    from samples import mariadb_doc
    root = tmp_path / "runs"
    put(root / "loose", mariadb_doc(durable=False))
    tight = put(tmp_path / "tight", mariadb_doc(durable=True))
    r = call_main("runs", "check", str(tight), "--baseline", "loose", "--runs-dir", str(root), cwd=tmp_path)
    assert_clean_error(r, "not durable: not comparable with a durable one")
    assert r.returncode == 2


# -- names, runs made elsewhere, folders that are no runs -------------------------------------------------------

PLAN = ["plan", "size", "--read-iops", "1000", "--capacity-gb", "100"]


@pytest.mark.slow
def test_runs_shows_the_name(tmp_path):
    assert call_main(*PLAN, "--name", "aws-r6i", "--runs-dir", "r", cwd=tmp_path).returncode == 0
    r = call_main("runs", "--runs-dir", "r", cwd=tmp_path)
    assert r.returncode == 0 and " name " in r.stdout.splitlines()[0] and "aws-r6i" in r.stdout, r.stdout
    row = js(call_main("runs", "--json", "--runs-dir", "r", cwd=tmp_path))["rows"][0]
    assert row["name"] == "aws-r6i" and row["run_id"].endswith("-plan-aws-r6i")


@pytest.mark.slow
def test_a_run_written_elsewhere_is_listed_from_anywhere_and_pruned_once_deleted(tmp_path):
    elsewhere = tmp_path / "scratch" / "azure-plan"
    here = tmp_path / "project"
    here.mkdir()
    assert call_main(*PLAN, "--name", "azure", "--out", str(elsewhere), cwd=tmp_path).returncode == 0
    assert call_main(*PLAN, cwd=here).returncode == 0          # one in the project's own runs directory
    doc = js(call_main("runs", "--json", cwd=here))
    by = {x["run_id"]: x for x in doc["rows"]}
    assert str(elsewhere) in by and by[str(elsewhere)]["runs_dir"] is None and by[str(elsewhere)]["name"] == "azure"
    assert doc["count"] == 2                                    # the project's run is not listed twice
    r = call_main("runs", cwd=here)
    # shown by its path from here
    said = " ".join(r.stdout.split())       # the closing line folds where the temporary path's length puts it
    assert "../scratch/azure-plan " in r.stdout and "1 of them made elsewhere" in said, r.stdout
    # --runs-dir lists that directory only, unless --everywhere
    assert js(call_main("runs", "--json", "--runs-dir", "runs", cwd=here))["count"] == 1
    assert js(call_main("runs", "--json", "--runs-dir", "runs", "--everywhere", cwd=here))["count"] == 2
    import shutil
    shutil.rmtree(elsewhere)
    doc = js(call_main("runs", "--json", cwd=here))
    assert doc["count"] == 1 and doc["index"][-1]["pruned"] == 1
    reg = Path(doc["index"][-1]["registry"])
    assert str(elsewhere) not in reg.read_text() and len(reg.read_text().splitlines()) == 1


@pytest.mark.slow
def test_folders_that_are_no_runs_are_not_listed_a_marked_one_is_damaged(tmp_path):
    from runs_corpus import NOT_RUNS, make_not_runs, mark
    root = tmp_path / "runs"
    assert call_main(*PLAN, "--runs-dir", str(root), cwd=tmp_path).returncode == 0
    make_not_runs(root)
    (root / "empty-folder").mkdir()
    mark(root / "20250101T000000Z-plan-lost", "plan", "lost")     # a run whose result.json is gone
    doc = js(call_main("runs", "--json", "--runs-dir", str(root), cwd=tmp_path))
    ids = {x["run_id"]: x for x in doc["rows"]}
    assert not set(ids) & {*NOT_RUNS, "empty-folder"} and doc["count"] == 2 and doc["damaged"] == 1
    lost = ids["20250101T000000Z-plan-lost"]
    assert lost["status"] == "damaged" and lost["reason"] == "no result.json" and lost["name"] == "lost"
