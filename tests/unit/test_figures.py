"""Key figures per command (dbtier.report.figures.core), from saved real result documents: exact values."""

from __future__ import annotations

import copy

import pytest

from dbtier.report.figures import core as F
from dbtier.report import summary as FC
from dbtier.report.figures import method as FM
from dbtier.report.figures import tables as FT
from dbtier.report.inputs import load_runs
from dbtier.results.store import load_run
from samples import BACKUP_DUCKDB, DSS_SPILL, LAB, MATRIX, PROBE, TPCC, make_lab


@pytest.fixture(scope="module")
def probe() -> dict:
    return load_run(PROBE)


def values(doc: dict) -> dict:
    return {f.key: f.value for f in F.figures(doc)}


def test_kind():
    assert F.kind(load_run(PROBE)) == "probe"
    assert F.kind(load_run(MATRIX)) == "bench oltp"
    assert F.kind(load_run(DSS_SPILL)) == "bench dss"
    assert F.kind(load_run(LAB / "plan-size.json")) == "plan size"
    assert F.kind({"command": "history", "params": {"action": "import"}}) == "history import"
    assert F.kind({"command": "bench"}) == "bench" and F.kind({}) == "unknown"


def test_probe_knee_is_where_iops_stop_growing(probe):
    t = probe["targets"][0]
    k = F.probe_knee(t)
    # 1..256 outstanding: 109,270 at 64, then 96,067 and 103,755 (under +3% of the best)
    assert k == {"test": "rand-read-4k", "outstanding": 64, "iops": 109270.486342, "p99_us": 987.136,
                 "last_outstanding": 256, "last_iops": 103755.156354, "still_rising": False}
    assert F.probe_knee(t, "rand-write-4k")["outstanding"] == 128
    assert F.probe_knee(t, "rand-write-4k")["p99_us"] == 2277.376          # the write side's latency
    assert F.probe_knee(t, "rand-mix-8k")["outstanding"] == 64
    # measured at QD1 and at the peak's load only: the last level measured, still rising
    assert F.probe_knee(t, "rand-read-8k")["still_rising"] is True
    assert F.probe_knee(t, "no-such-test") is None


def test_probe_knee_rule_is_three_percent():
    pts = [{"test": "rand-read-4k", "outstanding": o, "iops": v} for o, v in
           ((1, 100), (2, 200), (4, 300), (8, 308), (16, 308.9))]
    assert F.probe_knee({"points": pts})["outstanding"] == 4          # 308 < 300 x 1.03
    pts[3]["iops"] = 309.5
    assert F.probe_knee({"points": pts})["outstanding"] == 8          # 309.5 beats 300 by 3.2%


def test_probe_figures(probe):
    v = values(probe)
    assert v["read_iops_4k"] == 109270.486342 and v["commit_lat_us_p50"] == 116.144
    assert v["fsync_honesty"] == "ok" and v["read_knee_outstanding"] == 64
    assert "fsync_honesty_reason" not in v
    f = {x.key: x for x in F.figures(probe)}
    assert (f["read_iops_4k"].better, f["read_lat_us_qd1_p50"].better) == ("higher", "lower")
    assert f["read_iops_4k"].group == "/tmp/pt" and f["read_iops_4k"].unit == "IOPS"
    # several targets: keys by position, so two machines' probes line up
    two = copy.deepcopy(probe)
    two["targets"].append(copy.deepcopy(two["targets"][0]))
    keys = [x.key for x in F.figures(two)]
    assert "t1.read_iops_4k" in keys and "t2.read_iops_4k" in keys and "read_iops_4k" not in keys


def test_oltp_figures():
    assert values(load_run(TPCC)) == {
        "workload": "TPC-C-like, 1 warehouse", "engine": "pgbench (PostgreSQL)",
        "durability": "unknown (not recorded in this result)",   # an older document: neither durable nor not
        "best_tps": 639.0, "best_clients": 4, "best_tpm": 38340.0,
        "best_nopm": 16848.0, "knee_clients": 2, "knee_tps": 521.6, "knee_p95_ms": 8.011, "knee_bottleneck": "cpu",
        "knee_cpu_busy_pct": 97.40518962075848, "knee_device_busy_pct": 60.428379849845385,
        # the cache guard, recomputed from the points: 334 device read I/Os for 1,466 page reads
        "cache_guard": "reads-from-memory", "device_read_fraction": pytest.approx(334.0148 / 1466, rel=1e-4)}


def test_matrix_steps_and_moves():
    m = load_run(MATRIX)
    assert [(b["name"], b["tps"], b["clients"]) for b in F.matrix_bests(m)] == [
        ("all-slow", 1304.5, 2), ("index-fast", 674.5, 4), ("tables-fast", 649.0, 4), ("wal-fast", 1228.5, 1),
        ("temp-fast", 2912.0, 1), ("all-fast", 893.0, 1)]
    moves = F.matrix_moves(m)
    assert [(x["role"], x["from_step"], round(x["gain"], 4)) for x in moves] == [
        ("indexes", "all-slow", -0.4829), ("tables", "index-fast", -0.0378), ("WAL", "tables-fast", 0.8929),
        ("temp", "wal-fast", 1.3704)]
    v = values(m)
    assert v["step.temp-fast.best_tps"] == 2912.0 and v["knee_clients"] == 1 and v["best_tps"] == 893.0
    assert F.matrix_dirs(m) == {"fast": "/var/tmp/m1/fast", "slow": "/var/tmp/m1/slow"}
    assert F.device_of(m, "/var/tmp/m1/slow/dbtier-pg-1/pgdata") == "vda"


def test_dss_stats_and_figures():
    d = load_run(DSS_SPILL)
    s = F.dss_stats(d)
    assert s["spilled"] == [(9, 1409024)] and s["peak_temp_bytes"] == 1409024
    assert s["queries"] == 22 and s["total_s"] == d["total_seconds"]
    q9 = next(q for q in d["queries"] if q["query"] == 9)
    assert s["spill_share"] == pytest.approx(q9["seconds"] / d["total_seconds"])
    assert s["cpu_pct"] == pytest.approx(sum(q["seconds"] * q["cpu_util"] for q in d["queries"])
                                         / sum(q["seconds"] for q in d["queries"]))
    assert round(s["scan_mbps"]) == 320 and round(s["scan_ratio"], 3) == 0.206
    v = values(d)
    assert v["peak_temp_mb"] == 1.409024 and v["spilled_queries"] == 1 and v["answers"] == "not checked"
    assert v["temp"] == "t1" and v["scan_pct_of_probe"] == pytest.approx(20.609, abs=1e-3)
    detail = [f for f in F.figures(d) if f.detail]
    assert [f.label for f in detail] == [f"Q{n}" for n in range(1, 23)]
    assert F.dss_stats({"queries": []})["spill_share"] is None


def test_backup_methods():
    ms = F.backup_methods(load_run(BACKUP_DUCKDB))
    assert [(m["method"], round(m["dir_mbps"]), m["null_mbps"] and round(m["null_mbps"]), m["limit"]) for m in ms] == [
        ("file copy", 531, 804, "target"), ("EXPORT DATABASE parquet", 38, None, "cpu")]
    v = values(load_run(BACKUP_DUCKDB))
    assert v["file copy.limit"] == "target" and v["source_mb"] == pytest.approx(38.023168)


def test_plan_figures():
    v = values(load_run(LAB / "plan-size.json"))
    assert v["cheapest"] == "2 x nvme-consumer-2tb mirror2" and v["purchase_usd"] == 340 and v["binding"] == "capacity"
    assert v["total_usd"] == 340          # a document without a TCO: its total is its purchase
    assert v["designs_meeting"] == 539


def test_plan_figures_compare_on_the_total_over_the_service_life():
    """$1,200 bought and kept 5 years with $100 of energy is $1,300; a $1.03 a month volume is $61.80 over
    5 years. Both are compared as totals; the purchase and the month's price are detail, never compared."""
    onprem = {"command": "plan", "plan": "size", "candidates": [
        {"device": "x", "count": 2, "price_usd": 1200, "tco": {"purchase_usd": 1200, "total_usd": 1300,
                                                               "service_years": 5}}]}
    cloud = {"command": "plan", "plan": "size", "candidates": [
        {"device": "aws-gp3", "count": 1, "price_usd": 61.8,
         "cloud": {"monthly_usd": {"total": 1.03}, "service_life_usd": 1.03 * 12 * 5}}]}
    a, b = F.figures(onprem), F.figures(cloud)
    ta = next(f for f in a if f.key == "total_usd")
    tb = next(f for f in b if f.key == "total_usd")
    assert ta.value == 1300 and tb.value == pytest.approx(61.8) and ta.better == tb.better == "lower"
    assert "5 years" in ta.label
    assert next(f for f in a if f.key == "purchase_usd").better is None
    assert next(f for f in b if f.key == "monthly_usd").value == 1.03
    assert not any(f.key == "price_usd" for f in a + b)


def test_lab_children_and_figures(tmp_path):
    [lab] = load_runs([make_lab(tmp_path)])
    kids = F.children(lab)
    assert [s["name"] for s, _, _ in kids] == ["probe", "oltp", "dss-1", "dss-2", "backup-1", "backup-2",
                                               "plan-size"]
    assert all(c is not None and err is None for _, c, err in kids)
    flat = F.expand([lab])
    assert [F.kind(d) for d in flat] == ["lab", "probe", "bench oltp", "bench dss", "bench dss", "bench backup",
                                         "bench backup", "plan size"]
    v = values(lab)
    assert v["steps_ok"] == 7 and v["steps_failed"] == 0
    assert v["probe/read_iops_4k"] == 109270.486342 and v["dss-2/temp"] == "/var/tmp/lab-sample/slow"
    assert v["plan-size/binding"] == "capacity"


def test_lab_step_that_failed_or_cannot_be_read(tmp_path):
    lab_dir = make_lab(tmp_path, fail={"dss-2": "dbtier: query 9 failed"})
    (lab_dir / "backup-1" / "result.json").write_text("{not json")
    [lab] = load_runs([lab_dir])
    kids = {s["name"]: (s, c, err) for s, c, err in F.children(lab)}
    assert kids["dss-2"][0]["status"] == "failed" and kids["dss-2"][1] is None
    assert kids["backup-1"][1] is None and "not valid JSON" in kids["backup-1"][2]
    assert values(lab)["steps_failed"] == 1
    t = {x.title: x for x in FT.tables(lab)}["Steps"]
    assert ["dss-2", "failed", pytest.approx(7.623968016999697), None, "dbtier: query 9 failed"] in \
        [list(r) for r in t.rows]


def test_summary_of_a_lab_has_every_step(tmp_path):
    [lab] = load_runs([make_lab(tmp_path)])
    s = FC.summary(lab)
    assert s["run"]["kind"] == "lab" and s["figures"] == []
    assert [x["name"] for x in s["steps"]][:2] == ["probe", "oltp"]
    probe = s["steps"][0]["summary"]
    assert probe["run"]["kind"] == "probe"
    assert {"key": "read_knee_outstanding", "value": 64} .items() <= {
        k: v for f in probe["figures"] if f["key"] == "read_knee_outstanding" for k, v in f.items()}.items()
    assert probe["tables"][0]["title"] == "Where IOPS stop growing: /tmp/pt"
    assert probe["tables"][0]["rows"][0][:3] == ["rand-read-4k", 64, 109270.486342]
    assert ("I/O", "direct I/O (O_DIRECT), the page cache bypassed") in FM.method(load_run(PROBE))
    assert {"what": "profile", "how": "quick"} in s["method"]


def test_tables_per_command():
    titles = {k: [t.title for t in FT.tables(load_run(p))] for k, p in
              (("tpcc", TPCC), ("matrix", MATRIX), ("dss", DSS_SPILL), ("backup", BACKUP_DUCKDB),
               ("size", LAB / "plan-size.json"))}
    assert titles == {"tpcc": ["Sweep"],
                      "matrix": ["Placement matrix (best point of each step)", "Sweep (step all-fast)"],
                      "dss": ["Per query"], "backup": ["Backup throughput"], "size": ["Cheapest configurations"]}
    sweep = FT.tables(load_run(TPCC))[0]
    assert sweep.rows[1][:4] == [2, 521.6, "n=1", 31296.0] and sweep.rows[1][-1] == "cpu"


def test_compare_rows_diff_and_ratio():
    a, b = load_run(LAB / "dss-1.json"), load_run(LAB / "dss-2.json")
    rows = {r["key"]: r for r in FC.compare_rows(a, b)}
    tot = rows["total_seconds"]
    assert tot["a"] == a["total_seconds"] and tot["b"] == b["total_seconds"]
    assert tot["diff"] == pytest.approx(b["total_seconds"] - a["total_seconds"])
    assert tot["ratio"] == pytest.approx(b["total_seconds"] / a["total_seconds"])
    assert rows["temp"]["diff"] is None and rows["temp"]["ratio"] is None
    assert rows["peak_temp_mb"]["ratio"] is None            # 0 / 0
    assert "q22.seconds" in rows and rows["q22.seconds"]["metric"] == "Q22"
    # a figure only one side has still shows, with no difference
    c = copy.deepcopy(b)
    c["scan"] = {"achieved_mbps": 500.0}
    assert {r["key"]: r for r in FC.compare_rows(a, c)}["scan_mbps"]["a"] is None


def test_malformed_documents_give_figures_not_errors():
    for doc in ({"command": "probe", "targets": "x"}, {"command": "bench", "bench": "oltp", "points": [7, {}]},
                {"command": "bench", "bench": "dss", "queries": [{"query": "x"}, 3]},
                {"command": "bench", "bench": "backup", "targets": [None, {"target": "dir"}]},
                {"command": "plan", "plan": "size", "candidates": "none"}, {"command": "lab", "steps": [1]},
                {"command": "simulate", "resync": {"bytes": "x"}}, {"command": "history", "requirement": {"a": 1}}):
        F.figures(doc)
        FT.tables(doc)
        FM.method(doc)
        FC.summary(doc)


def test_fmt():
    assert F.fmt(1234.5, 1) == "1,234.5" and F.fmt(None) == "—" and F.fmt("x") == "x" and F.fmt(True) == "yes"
    assert [F.fmt_auto(x) for x in (109270.49, 521.6, 54.016, 8.011, 0.3, 0.8255)] == \
        ["109,270", "522", "54", "8.01", "0.3", "0.826"]


# -- issue 13 item 4: repeated figures carry their spread; one run says n=1 ---------------------------

def repeated_tpcc() -> dict:
    """The saved sweep with 4 clients run twice, at 600 and 678 TPS (a point written by combine_repeats)."""
    doc = copy.deepcopy(load_run(TPCC))
    p = doc["points"][2]
    p.update(tps=639.0, tps_runs=[600.0, 678.0], repeats=2,
             tps_spread={"median": 639.0, "min": 600.0, "max": 678.0, "n": 2, "spread_pct": 78 / 639 * 100})
    return doc


def test_repeated_points_carry_their_spread_into_figures_and_compare():
    """best TPS 639 = (600 + 678) / 2, its runs 600-678, n=2; TPM x60: 36,000-40,680. The knee (2 clients)
    was run once: n=1, no spread."""
    doc = repeated_tpcc()
    figs = {f.key: f for f in F.figures(doc)}
    assert figs["best_tps"].value == 639.0 and figs["best_tps"].spread["n"] == 2
    assert F.spread_text(figs["best_tps"].spread, 1) == "600.0–678.0, n=2"
    assert F.spread_text(figs["best_tpm"].spread) == "36,000–40,680, n=2"
    assert F.spread_text(figs["knee_tps"].spread) == "n=1"
    rows = {r["key"]: r for r in FC.compare_rows(load_run(TPCC), doc)}
    assert rows["best_tps"]["a_spread"]["n"] == 1 and rows["best_tps"]["b_spread"]["max"] == 678.0
    sweep = FT.tables(doc)[0]
    assert sweep.rows[2][:3] == [4, 639.0, "600.0–678.0, n=2"]
    assert any("the widest TPS spread is 12.2% of the median at 4 clients (600.0–678.0, n=2)" in how
               for what, how in FM.method({**doc, "params": {**doc["params"], "repeat": 2}}))


def test_an_older_document_spread_is_recomputed_with_the_true_median():
    """tps_runs [100, 140] without tps_spread: median 120 (not 100), 100-140, n=2."""
    sp = F.point_spread({"tps_runs": [100.0, 140.0]})
    assert (sp["median"], sp["min"], sp["max"], sp["n"]) == (120.0, 100.0, 140.0, 2)
    assert F.spread_text(None) == "" and F.spread_text({"n": 1, "min": 5, "max": 5}) == "n=1"


def test_dss_query_and_total_spreads():
    """The saved DSS run: one cold and one warm run per query -> each query n=1 (no spread); a document
    with warm_totals 1.8-1.9 s over 2 runs shows them on the total."""
    doc = load_run(DSS_SPILL)
    figs = {f.key: f for f in F.figures(doc)}
    assert figs["q1.seconds"].spread["n"] == 1 and figs["q1.seconds"].spread["spread_pct"] is None
    d2 = copy.deepcopy(doc)
    d2["warm_totals"] = {"median": 1.85, "min": 1.8, "max": 1.9, "n": 2, "spread_pct": 0.1 / 1.85 * 100,
                         "runs": [1.8, 1.9]}
    assert F.spread_text({f.key: f for f in F.figures(d2)}["total_seconds"].spread, 3) == "1.800–1.900, n=2"
    runs = dict(FM.method(d2))["runs"]
    assert "the 2 warm power runs' own totals took 1.800–1.900 s" in runs
    assert "one warm run: n=1, no spread" in dict(FM.method(doc))["runs"]       # --repeat 2: one warm run


def test_a_remote_run_shows_no_server_cpu_or_device():
    """--dsn (params.mode dsn, no not_measured key in an older document): the CPU and device at the knee
    are this machine's, so they are not figures of the server."""
    doc = copy.deepcopy(load_run(TPCC))
    doc["params"]["mode"] = "dsn"
    v = values(doc)
    assert v["knee_cpu_busy_pct"] is None and v["knee_device_busy_pct"] is None
    assert v["not_measured"] == "server cpu, server devices"
    assert FT.tables(doc)[0].rows[1][7] is None


def test_duration_words_say_what_pgbench_ran():
    """--duration 0.4: pgbench -T takes whole seconds, so it ran 1 s; 30 stays 30."""
    assert FM.duration_words(30.0) == "30 s measured"
    assert FM.duration_words(0.4) == ("0.4 s asked for, run as 1 s (pgbench -T takes whole seconds; rates divide "
                                     "by the time pgbench measured)")


def test_compare_calls_a_difference_only_past_the_runs_spread():
    """B / A is better or worse only past the runs' combined spread (A's and B's (max - min) / median added)
    and at least 5%; within it, "within noise". Single runs: only the 5% floor, and said."""
    from dbtier.report.figures.core import judge_difference

    def sp(pct):
        return None if pct is None else {"median": 100.0, "min": 100 - pct / 2, "max": 100 + pct / 2, "n": 3,
                                         "spread_pct": pct}

    def row(ratio, better="higher", sa=None, sb=None):
        return {"ratio": ratio, "better": better, "a_spread": sp(sa), "b_spread": sp(sb)}
    assert judge_difference(row(1.04)) == {"verdict": "within noise", "noise_pct": 5.0}
    assert judge_difference(row(1.06))["verdict"] == "better, single runs"
    assert judge_difference(row(1.06, "lower"))["verdict"] == "worse, single runs"
    assert judge_difference(row(1.15, sa=10.0, sb=8.0)) == {"verdict": "within noise", "noise_pct": 18.0}
    assert judge_difference(row(1.20, sa=10.0, sb=8.0))["verdict"] == "better"
    assert judge_difference(row(0.80, sa=10.0, sb=8.0))["verdict"] == "worse"
    assert judge_difference(row(1.20, sa=10.0))["verdict"] == "better, single runs"      # B's spread unknown
    assert judge_difference(row(1.03, sa=1.0, sb=1.0))["noise_pct"] == 5.0                # the floor
    assert judge_difference(row(2.0, better=None))["verdict"] is None
    assert judge_difference({"ratio": None, "better": "higher"})["verdict"] is None
