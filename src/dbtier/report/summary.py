"""What `dbtier show` prints of one run (its figures, tables and method, with what could not be drawn)
and what `dbtier compare` and the side-by-side reports set against each other.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from dbtier.model.guards import doc_guards
from dbtier.report.figures import placed as P
from dbtier.report.verdict import rules as R
from dbtier.report.figures.core import Figure, Table, children, figures, get, is_fleet, isnum, kind
from dbtier.report.figures.method import method
from dbtier.report.figures.tables import tables
from dbtier.results.kinds import kind_of


def run_info(doc: dict[str, Any]) -> dict[str, Any]:
    return {"dir": doc.get("_run_dir"), "command": doc.get("command"), "kind": kind(doc),
            "status": doc.get("status"), "started_at": doc.get("started_at"), "finished_at": doc.get("finished_at"),
            "host": get(doc, "machine", "hostname")}


def drawn(doc: dict[str, Any]) -> tuple[list[Figure], list[Table], list[tuple[str, str]], list[dict[str, str]]]:
    """(figures, tables, method, problems) of one document. A part that cannot be drawn from a malformed
    document is named in `problems` with the error (said in show and the report), never silently left out."""
    problems: list[dict[str, str]] = []

    def part(name: str, fn: Callable[[dict[str, Any]], list]) -> list:
        try:
            return fn(doc)
        except Exception as exc:  # noqa: BLE001 - recorded and shown, not swallowed
            problems.append({"section": name, "error": f"{type(exc).__name__}: {exc}"})
            return []
    figs = part("figures", figures) if doc.get("command") != "lab" else []
    return figs, part("tables", tables), part("method", method), problems


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """What `dbtier show` prints: the run, its key figures and tables, how they were obtained, what could
    not be drawn (`problems`), and for a lab every step's own summary."""
    figs, tabs, meth, problems = drawn(doc)
    out = {"run": run_info(doc), "figures": [f.as_dict() for f in figs],
           "tables": [t.as_dict() for t in tabs],
           "method": [{"what": a, "how": b} for a, b in meth], "problems": problems,
           "guards": doc_guards(doc)}
    if kind_of(doc) in ("bench.oltp", "bench.dss"):   # where each part went, and parts kept apart on one device
        w = P.where(doc)
        out["placement"] = {"where": w, "notes": P.sharing_sentences(w)}
    if doc.get("command") == "lab":
        out["steps"] = [{"name": s.get("name"), "status": s.get("status"), "seconds": s.get("seconds"),
                         "run_dir": s.get("run_dir"), "error": s.get("error") or err,
                         "summary": summary(c) if c is not None else None} for s, c, err in children(doc)]
    return out


def compare_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Figures of two documents matched by key: {key, metric, unit, a, b, diff, ratio (b / a), verdict,
    noise_pct, judged, reason}: the verdict the one evidence rule's (verdict/rules.py's judge)."""
    fa = {f.key: f for f in figures(a)}
    fb = {f.key: f for f in figures(b)}
    keys = list(fa) + [k for k in fb if k not in fa]
    fleet = is_fleet(a) or is_fleet(b)
    rows = []
    for k in keys:
        f = fa.get(k) or fb[k]
        if fleet and k in fa and k in fb and fa[k].group != fb[k].group:
            # a fleet's aggregate against one host's target: both named, the fleet by its host count
            f = Figure(f.key, f.label, f.value, f.unit, f.digits, f.better, f"{fa[k].group} vs {fb[k].group}")
        va = fa[k].value if k in fa else None
        vb = fb[k].value if k in fb else None
        if va is None and vb is None:
            continue
        diff = ratio = None
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and isnum(va) and isnum(vb):
            diff, ratio = vb - va, (vb / va if va != 0 else None)
        row = {"key": k, "metric": f.label, "unit": f.unit, "digits": f.digits, "better": f.better,
               "group": f.group, "a": va, "b": vb, "diff": diff, "ratio": ratio,
               "a_spread": fa[k].spread if k in fa else None, "b_spread": fb[k].spread if k in fb else None}
        row.update(R.judge(row))
        rows.append(row)
    return rows


def side_by_side(docs: Sequence[dict[str, Any]]) -> list[tuple[Figure, list[Any]]]:
    """The headline figures of runs of one kind, one row per figure key in first-seen order: the first
    run's Figure (label, unit, digits) and each run's value (None where it has none); rows where no run
    has a value are left out. The HTML and Markdown comparisons draw these."""
    figs = [{f.key: f for f in figures(d) if not f.detail} for d in docs]
    rows = []
    for key in dict.fromkeys(k for fs in figs for k in fs):
        vals = [fs[key].value if key in fs else None for fs in figs]
        if any(v is not None for v in vals):
            rows.append((next(fs[key] for fs in figs if key in fs), vals))
    return rows


def best_of(f0: Figure, vals: Sequence[Any], spreads: Sequence[Any]) -> dict[str, Any]:
    """Which run of a side-by-side row is the best, by the one evidence rule (verdict/rules.py's judge): {best:
    its index, or None; verdict, reason}. A best is named only when the rule calls it better than every
    other run's value; else "within noise" or "too little evidence" with the reason (single runs ...)."""
    nums = [(k, v) for k, v in enumerate(vals) if isnum(v)]
    if f0.better not in ("higher", "lower") or len(nums) < 2 or len({v for _, v in nums}) < 2:
        return {"best": None, "verdict": None, "reason": None}
    pick = max if f0.better == "higher" else min
    k, v = pick(nums, key=lambda kv: kv[1])
    js = [R.judge({"ratio": v / w if w else None, "better": f0.better, "a_spread": spreads[o],
                   "b_spread": spreads[k], "unit": f0.unit, "digits": f0.digits}, names=("the other run", "the best"))
          for o, w in nums if o != k]
    short = [j for j in js if not str(j["verdict"]).startswith("better")]
    if short:
        j = next((j for j in short if j["verdict"] == R.TOO_LITTLE), short[0])
        return {"best": None, "verdict": j["verdict"], "reason": j.get("reason")}
    return {"best": k, "verdict": "better", "reason": None}


def side_by_side_judged(docs: Sequence[dict[str, Any]]) -> list[tuple[Figure, list[Any], dict[str, Any]]]:
    """side_by_side with each row's best_of: (Figure, values, {best, verdict, reason})."""
    figs = [{f.key: f for f in figures(d) if not f.detail} for d in docs]
    out = []
    for f0, vals in side_by_side(docs):
        spreads = [fs[f0.key].spread if f0.key in fs else None for fs in figs]
        out.append((f0, vals, best_of(f0, vals, spreads)))
    return out


def placement_comparison(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two runs' placements side by side: {rows: [[role, A's 'DIR (vda, ext4 on /)', B's]], notes}; notes
    say where a part moved only within one device, or a run keeps parts apart on one device. {} unless
    both runs place parts (bench oltp, bench dss)."""
    wa, wb = P.where(a), P.where(b)
    if not (wa and wb):
        return {}
    rows = [[P.role_word(r)] + [f"{w[r].get('dir')} ({P.part_text(w[r])})" if r in w else "-" for w in (wa, wb)]
            for r in dict.fromkeys([*wa, *wb])]
    return {"rows": rows, "notes": P.comparison_sentences(a, b)}
