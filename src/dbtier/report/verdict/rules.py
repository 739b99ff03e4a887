"""The evidence a verdict sentence needs, shared by every verdict module: the guards (how many runs, how
long, how close together) and the words that say what falls short. Readers take the values through the
module (`rules.MIN_RUNS`) at call time, so one setting holds for every sentence."""

from __future__ import annotations

from typing import Any, Iterable

from dbtier.report.figures.core import MIN_DIFFERENCE_PCT, fmt, fmt_auto, isnum, judge_difference, spread_of
from dbtier.report.verdict.plan import join_words

# A placement move counts when it changes TPS (or a DSS run's time) by this much (compare's floor).
MIN_GAIN = MIN_DIFFERENCE_PCT / 100

# -- the evidence a verdict sentence needs; short of it the sentence says what would be needed instead ----------
# A figure judged by rests on at least this many runs of its point ...
MIN_RUNS = 2
# ... that differ by at most this share of their median, (max - min) / median (pyperf calls a benchmark
# unstable past a standard deviation of 10% of the mean: about a 14% range for two runs, 20% for three).
MAX_SPREAD_PCT = 20.0
# A probe point (one fio run) lasts at least this long: shorter ones are mostly fio's start and ramp.
MIN_PROBE_POINT_S = 1.0
# Each run of an OLTP point lasts at least this long (the knee and its bottleneck are judged on it).
MIN_OLTP_POINT_S = 5.0
# A TPC-H power run lasts at least this long before its CPU figure says CPU- or storage-bound, and
# before a temp placement is judged on its time: shorter, the queries are milliseconds, the CPU counters
# tick every 10 ms and per-query overheads (starting the sampler, polling temp) weigh as much as the work.
MIN_DSS_RUN_S = 5.0

# The words short_of uses for each shortfall; what would be needed is read back from them.
ONCE, BRIEF, WIDE = "measured once", " s runs (at least", " runs differ by "


def by_reason(pairs: Iterable[tuple[str, str]], every: str | None = None, total: int = 0) -> list[str]:
    """('commit latency', why) pairs -> ['A and B: why', ...], the things falling short the same way named
    together (each once); all `total` of them -> `every` instead of their names."""
    by: dict[str, list[str]] = {}
    for what, why in pairs:
        if what not in by.setdefault(why, []):
            by[why].append(what)
    return [f"{every if every and len(names) == total else join_words(names)}: {why}" for why, names in by.items()]


def short_of(spread: dict[str, Any] | None, seconds: Any, min_s: float, unit: str = "",
              digits: int = 0) -> str | None:
    """Why a figure is not enough to judge by: too few runs, runs too short, a spread too wide (None: it is
    enough). `spread` {median, min, max, n, spread_pct}; `seconds` the shortest run's length."""
    n = int(spread["n"]) if spread and isnum(spread.get("n")) else 1
    whys = []
    if n < MIN_RUNS:
        whys.append(ONCE if n == 1 else f"{n} runs")
    if isnum(seconds) and seconds < 0.95 * min_s:   # fio and the timers round a nominal length down a little
        whys.append(f"in {fmt_auto(seconds)}{BRIEF} {fmt_auto(min_s)} s needed)")
    pct = spread.get("spread_pct") if spread else None
    if spread and n >= 2 and isnum(pct) and pct > MAX_SPREAD_PCT:      # (n >= 2 only from a spread)
        whys.append(f"its {n}{WIDE}{fmt_auto(pct)}% ({fmt(spread['min'], digits)}–"
                    f"{fmt(spread['max'], digits)}" + (f" {unit}" if unit else "")
                    + f"; at most {fmt_auto(MAX_SPREAD_PCT)}% to judge)")
    return ", ".join(whys) or None


# -- the one evidence rule for a difference between two figures ------------------------------------------------
TOO_LITTLE = "too little evidence"


def judge(row: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> dict[str, Any]:
    """Whether B is better, worse or within noise of A, called only on the evidence `show` and the verdict
    ask for: {verdict, noise_pct, judged, reason}. `row`: {ratio (B / A), better, a_spread, b_spread, unit,
    digits}. The noise rule (figures.judge_difference: beyond the two sides' combined spread and at least
    MIN_DIFFERENCE_PCT) says first whether the two differ at all; a difference it finds is called better or
    worse only when each side rests on MIN_RUNS runs or more whose spread is at most MAX_SPREAD_PCT
    (short_of, the guards every verdict sentence uses), else the verdict is "too little evidence" with the
    reason and what would settle it (e.g. "single runs: repeat with --repeat 3"). No order (a text, a count):
    verdict None. Every place that colours or words a difference (compare, runs check, the report's
    side-by-side tables, the verdict) calls this."""
    j = judge_difference(row)
    if j["verdict"] is None:
        return {**j, "judged": False, "leaning": None, "reason": None}
    if j["verdict"] == "within noise":
        return {**j, "judged": True, "leaning": None, "reason": None}
    unit, digits = str(row.get("unit") or ""), int(row.get("digits") or 0)
    sides = [(name, spread_of(row.get(key))) for name, key in zip(names, ("a_spread", "b_spread"))]
    whys = [(name, why) for name, sp in sides for why in [short_of(sp, None, 0.0, unit, digits)] if why]
    if not whys:
        return {**j, "judged": True, "leaning": None, "reason": None}
    few = any((int(sp["n"]) if sp else 1) < MIN_RUNS for _, sp in sides)
    wide = any(WIDE in w for _, w in whys)
    needs = join_words(([f"repeat with --repeat {MIN_RUNS + 1}"] if few else [])
                       + (["rerun on a quieter machine or with longer runs"] if wide else []))
    if len(whys) == 2 and all(w == ONCE for _, w in whys):
        said = "single runs"
    else:
        said = "; ".join(by_reason(whys))
    leaning = j["verdict"].split(",")[0]
    return {"verdict": TOO_LITTLE, "noise_pct": j["noise_pct"], "judged": False, "leaning": leaning,
            "reason": f"{said}: {needs}"}
