"""A run against a baseline, figure by figure, with `compare`'s evidence rule (report/verdict/rules.py's judge).

Pure: index figure rows in, a verdict out. The baseline is one run, or several (a query): then each figure
is the median of their values and its spread their min–max over the median (core/stats.spread), so a
baseline of ten nightly runs brings its own noise. A figure is a regression when `judge` calls it worse
(beyond the two sides' combined spread, and at least its 5% floor, each side from MIN_RUNS runs or more within
MAX_SPREAD_PCT) *and* it is worse by more than the tolerance; a side of fewer runs or a wider spread is "too
little evidence" (with the reason), never a regression. Headline figures only (not per-query detail);
figures without a better direction (a text, a count) are not judged; a text that changed is listed.
"""

from __future__ import annotations

from typing import Any, Iterable

from dbtier.core.stats import spread
from dbtier.report.figures import core as F
from dbtier.report.verdict import rules as R

EXIT_PASS, EXIT_REGRESSION = 0, 1       # errors (bad input, nothing to compare) exit 2, as every command's
DEFAULT_TOLERANCE_PCT = F.MIN_DIFFERENCE_PCT


def _spread(r: dict[str, Any]) -> dict[str, Any] | None:
    return F.spread_of({k: r.get(k) for k in ("median", "min", "max", "n", "spread_pct")})


def headline(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The headline figures of one run by the key `compare` matches on."""
    return {r["figure_key"]: r for r in rows if not r.get("detail")}


def baseline(runs: list[list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """{figure_key: {row, value, spread, n_runs}} over one or more baseline runs' figure rows."""
    by: dict[str, list[dict[str, Any]]] = {}
    for rows in runs:
        for k, r in headline(rows).items():
            by.setdefault(k, []).append(r)
    out = {}
    for k, rs in by.items():
        nums = [r["value"] for r in rs if F.isnum(r.get("value"))]
        sp: dict[str, Any] | None
        if len(nums) > 1:
            sp = spread(nums)
            value = sp["median"]
        elif nums:
            value, sp = nums[0], _spread(next(r for r in rs if F.isnum(r.get("value"))))
        else:
            value, sp = None, None
        texts = sorted({r["text"] for r in rs if r.get("text")})
        out[k] = {"row": rs[0], "value": value, "spread": sp, "n_runs": len(rs), "texts": texts}
    return out


def judge(run_rows: list[dict[str, Any]], base: dict[str, dict[str, Any]],
          tolerance_pct: float = DEFAULT_TOLERANCE_PCT) -> dict[str, Any]:
    """{passed, exit_code, tolerance_pct, figures: [...], regressions: [keys], changed_texts: [...]}."""
    figures, regressions, texts = [], [], []
    for k, r in headline(run_rows).items():
        b = base.get(k)
        if b is None:
            continue
        if r.get("text") is not None and b["texts"]:
            if b["texts"] != [r["text"]]:
                texts.append({"key": k, "label": r["label"], "baseline": b["texts"], "value": r["text"]})
            continue
        a, v, better = b["value"], r.get("value"), r.get("better")
        if not (F.isnum(a) and F.isnum(v)):
            continue
        row = {"ratio": v / a if a else None, "better": better, "a_spread": b["spread"], "b_spread": _spread(r),
               "unit": r.get("unit"), "digits": r.get("digits") or 0}
        j = R.judge(row, names=("the baseline", "the run"))
        change = (v / a - 1) * 100 if a else None
        worse_by = None if change is None or better not in ("higher", "lower") else (
            -change if better == "higher" else change)
        if j["verdict"] is None:
            status = "not judged"
        elif j["verdict"] == "within noise":
            status = "within noise"
        elif j["verdict"] == R.TOO_LITTLE:
            status = R.TOO_LITTLE
        elif j["verdict"].startswith("better"):
            status = "better"
        elif worse_by is not None and worse_by > tolerance_pct:
            status = "regression"
        else:
            status = "within tolerance"
        fig = {"key": k, "item": r.get("item") or None, "label": r["label"], "unit": r.get("unit"),
               "digits": r.get("digits") or 0, "better": better, "baseline": a, "value": v, "change_pct": change,
               "noise_pct": j["noise_pct"], "threshold_pct": max(tolerance_pct, j["noise_pct"])
               if j["noise_pct"] is not None else None, "verdict": j["verdict"], "status": status,
               "reason": j["reason"],
               "baseline_spread": b["spread"], "spread": _spread(r), "baseline_runs": b["n_runs"]}
        figures.append(fig)
        if status == "regression":
            regressions.append(k)
    judged = [f for f in figures if f["status"] != "not judged"]
    passed = not regressions
    return {"passed": passed, "exit_code": EXIT_PASS if passed else EXIT_REGRESSION, "tolerance_pct": tolerance_pct,
            "judged": len(judged), "figures": figures, "regressions": regressions, "changed_texts": texts}
