"""Where each placed part went, said by show, compare, the report and the verdict, and one evidence rule for a
difference wherever one is coloured or worded (compare, runs check, the report's side-by-side, the verdict).
Engine-free: a saved real run (tests/data/bench/oltp-tpcc.json, one disk: vda) with WAL moved to a directory
of its own on the same disk, and hand-made rows."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from dbtier.cli.compare import _ratio
from dbtier.report import summary as FC
from dbtier.report.verdict import rules as R
from dbtier.report.figures.core import Figure
from dbtier.report.figures.placed import comparison_sentences, sharing_sentences, where
from dbtier.report.verdict.topics import verdict
from dbtier.runsdb import check

DATA = Path(__file__).resolve().parents[1] / "data" / "bench"


def _spread(median: float, pct: float, n: int) -> dict:
    """n runs whose (max - min) / median is pct%."""
    return {"median": median, "min": median * (1 - pct / 200), "max": median * (1 + pct / 200), "n": n,
            "spread_pct": pct}


# -- one evidence rule --------------------------------------------------------------------------------------

def test_two_single_runs_12_pct_apart_are_not_called_worse():
    # 3,354 against 3,805 TPS: 0.8815, 11.9% down, beyond the 5% floor but each side measured once
    j = R.judge({"ratio": 3354 / 3805, "better": "higher", "unit": "TPS"})
    assert j["verdict"] == "too little evidence" and not j["judged"] and j["leaning"] == "worse"
    assert j["reason"] == "single runs: repeat with --repeat 3"


def test_three_runs_each_within_2_pct_12_pct_apart_are_worse():
    # noise = 2% + 2% = 4%, floored at 5%; the change is 12%: worse
    j = R.judge({"ratio": 0.88, "better": "higher", "a_spread": _spread(100, 2, 3), "b_spread": _spread(88, 2, 3)})
    assert j == {"verdict": "worse", "noise_pct": 5.0, "judged": True, "leaning": None, "reason": None}


def test_a_wide_spread_or_one_side_once_says_which_and_what_would_settle_it():
    # A within 25% over 3 runs: noise 25% + 0 > 12% -> within noise, judged (no difference claimed)
    assert R.judge({"ratio": 0.88, "better": "higher", "a_spread": _spread(100, 25, 3)})["verdict"] == "within noise"
    # a 30% drop past A's 25%: too little evidence, A's spread too wide and B measured once
    j = R.judge({"ratio": 0.70, "better": "higher", "a_spread": _spread(100, 25, 3), "unit": "TPS"})
    assert j["verdict"] == "too little evidence"
    assert j["reason"] == ("A: its 3 runs differ by 25% (88–112 TPS; at most 20% to judge); B: measured once: "
                           "repeat with --repeat 3 and rerun on a quieter machine or with longer runs")


def test_compare_colours_only_what_the_rule_judges():
    single = {"ratio": 3354 / 3805, "better": "higher"}
    repeated = {"ratio": 0.88, "better": "higher", "a_spread": _spread(100, 2, 3), "b_spread": _spread(88, 2, 3)}
    assert _ratio({**single, **R.judge(single)}) == "[dim]0.88x ?[/dim]"
    assert _ratio({**repeated, **R.judge(repeated)}) == "[red]0.88x[/]"


def test_compare_rows_of_two_saved_single_runs_are_not_judged():
    a = json.loads((DATA / "oltp-tpcc.json").read_text())
    b = copy.deepcopy(a)
    for p in [*b["points"], b["knee"]]:
        p["tps"] *= 0.88
    row = next(r for r in FC.compare_rows(a, b) if r["key"] == "knee_tps")
    assert row["verdict"] == "too little evidence" and row["reason"] == "single runs: repeat with --repeat 3"


def test_the_side_by_side_marks_a_best_only_on_enough_evidence():
    f = Figure("tps", "TPS", None, "TPS", 0, "higher")
    assert FC.best_of(f, [3805, 3354], [None, None]) == {
        "best": None, "verdict": "too little evidence", "reason": "single runs: repeat with --repeat 3"}
    assert FC.best_of(f, [100, 88], [_spread(100, 2, 3), _spread(88, 2, 3)]) == {
        "best": 0, "verdict": "better", "reason": None}


def test_runs_check_calls_no_regression_on_single_runs():
    rows = [{"figure_key": "tps", "label": "TPS", "value": 100.0, "better": "higher", "unit": "TPS"}]
    base = check.baseline([rows])
    run = [{**rows[0], "value": 88.0}]
    v = check.judge(run, base)
    [f] = v["figures"]
    assert f["status"] == "too little evidence" and v["passed"] and f["reason"].endswith("--repeat 3")
    sp = {"median": 100.0, "min": 99.0, "max": 101.0, "n": 3, "spread_pct": 2.0}
    rows3 = [{**rows[0], **sp}]
    run3 = [{**rows[0], "value": 88.0, "median": 88.0, "min": 87.12, "max": 88.88, "n": 3, "spread_pct": 2.0}]
    v = check.judge(run3, check.baseline([rows3]))
    assert v["figures"][0]["status"] == "regression" and v["regressions"] == ["tps"]


# -- where each part went -----------------------------------------------------------------------------------

def _wal_apart() -> tuple[dict, dict]:
    """The saved run, and a copy with WAL in /var/tmp/w (--place wal=/var/tmp/w): still on vda."""
    a = json.loads((DATA / "oltp-tpcc.json").read_text())
    a["_run_dir"] = "/runs/a"
    b = copy.deepcopy(a)
    b["_run_dir"] = "/runs/b"
    b["placement"]["wal"] = "/var/tmp/w/dbtier-pg-5e31caac-wal/pg_wal"
    b["placement_where"] = {r: {"dir": d, "device": "vda", "fs": "ext4", "mount": "/"}
                            for r, d in b["placement"].items()}
    return a, b


def test_an_older_document_resolves_its_parts_from_the_machine_record():
    a, _ = _wal_apart()
    w = where(a)
    assert list(w) == ["data", "index", "wal", "temp"]
    assert w["wal"] == {"dir": "/var/tmp/b1/dbtier-pg-5e31caac/pgdata/pg_wal", "device": "vda", "fs": "ext4",
                        "mount": "/"}
    assert sharing_sentences(w) == []           # WAL inside the data directory: nothing separated


def test_wal_apart_on_the_same_disk_is_said_in_the_verdict_show_and_report():
    a, b = _wal_apart()
    text = "WAL and data are both on vda: this run cannot show the effect of separating them."
    assert sharing_sentences(where(b)) == [text]
    caveats = [c for c in verdict([b])["caveats"] if c["kind"] == "same_device"]
    assert [c["text"] for c in caveats] == [f"b (bench oltp): {text}"]
    assert FC.summary(b)["placement"]["notes"] == [text]
    from dbtier.report.sections.oltp import oltp_section
    html = oltp_section(b, 0)
    assert "/var/tmp/w/dbtier-pg-5e31caac-wal/pg_wal" in html and text in html


def test_compare_names_both_placements_and_the_shared_disk():
    a, b = _wal_apart()
    p = FC.placement_comparison(a, b)
    assert p["rows"][2] == ["WAL", "/var/tmp/b1/dbtier-pg-5e31caac/pgdata/pg_wal (vda, ext4 on /)",
                            "/var/tmp/w/dbtier-pg-5e31caac-wal/pg_wal (vda, ext4 on /)"]
    assert comparison_sentences(a, b) == p["notes"] == [
        "WAL is on vda in both runs (A: /var/tmp/b1/dbtier-pg-5e31caac/pgdata/pg_wal; B: "
        "/var/tmp/w/dbtier-pg-5e31caac-wal/pg_wal): this comparison cannot show the effect of moving it.",
        "In B, WAL and data are both on vda: this comparison cannot show the effect of separating them."]
