"""The probe's facts, each defined once: its test names, what its summary holds and which of those
figures are better higher, and its knee rule; and the summary and knees, pure functions of its points.

`summary` has exactly the keys of the JSON contract; a key whose test was not
run is null. `knee` has one entry per KNEE_TESTS test (null when it was not run).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from dbtier.core.stats import median, plateau, spread, sweep_should_stop
from dbtier.core.units import KIB, MIB, bytes_per_s_to_mbps

# -- test names (what each point's `test` and `group` say) ----------------------------------------------

READ_4K, WRITE_4K, MIX_8K = "rand-read-4k", "rand-write-4k", "rand-mix-8k"
READ_8K, WRITE_8K, MIX_4K = "rand-read-8k", "rand-write-8k", "rand-mix-4k"
RANDOM_TESTS = (READ_4K, WRITE_4K, MIX_8K, READ_8K, WRITE_8K, MIX_4K)   # also the order charts draw them
SUMMARY_SWEEPS = (READ_4K, WRITE_4K, MIX_8K)   # always swept; the quick profile samples the other three
KNEE_TESTS = SUMMARY_SWEEPS                     # the tests whose knee the document stores


def seq_test(rw: str, bs_bytes: int) -> str:
    """'seq-read-128k', 'seq-write-1m'."""
    return f"seq-{rw}-{bs_bytes // MIB}m" if bs_bytes >= MIB else f"seq-{rw}-{bs_bytes // KIB}k"


SEQUENTIAL_TESTS = tuple(seq_test(rw, bs) for rw in ("read", "write") for bs in (128 * KIB, MIB))
COMMIT, COMMIT_NOSYNC = "commit", "commit-nosync"
LAYOUT, PRECONDITION = "layout", "precondition"
FILL_SEQ_WRITE, FILL_RAND_WRITE = "fill-seq-write", "fill-rand-write-4k"
# Groups of tests (a point's `group`); the first three are also what `--only` chooses from.
RANDOM, SEQUENTIAL, FILL = "random", "sequential", "fill"
GROUPS = (RANDOM, SEQUENTIAL, COMMIT)

FIGURE_KEYS = (   # the summary's measured figures (each with its spread)
    "read_iops_4k", "write_iops_4k", "mixed_iops_8k",
    "read_lat_us_qd1_p50", "write_lat_us_qd1_p50", "read_lat_us_p99_at_max",
    "read_mbps_seq", "write_mbps_seq",
    "commit_lat_us_p50", "commit_lat_us_p99", "commits_per_s",
)
SUMMARY_KEYS = FIGURE_KEYS + ("fsync_honesty", "fsync_honesty_reason")
# Summary keys where a higher number is better (the rest: lower is better; fsync honesty is a text).
HIGHER_BETTER = frozenset({"read_iops_4k", "write_iops_4k", "mixed_iops_8k", "read_mbps_seq", "write_mbps_seq",
                           "commits_per_s"})

# The random sweep's stop rule, which is also its knee (core.stats.plateau): a load level is progress
# when it beats the knee so far by 3%; two levels in a row that are not end the sweep.
PROBE_MIN_GAIN = 0.03
PROBE_PATIENCE = 2


def _of(points: Iterable[dict[str, Any]], test: str) -> list[dict[str, Any]]:
    return [p for p in points if p["test"] == test]


# A headline figure (a summary key) rests on at least this many measurements of its point: the probe
# measures such a point again until it has them (one short fio run is one sample, not a figure).
MIN_MEASUREMENTS = 2


def point_config(p: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two points measurements of the same thing: the test, its threads and outstanding I/O,
    the block size, and the streams or writers (a sweep point, its confirming run and a repeat share it)."""
    return (p.get("test"), p.get("jobs"), p.get("outstanding"), p.get("bs_bytes"), p.get("streams"),
            p.get("writers"))


def _groups(points: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for p in points:
        out.setdefault(point_config(p), []).append(p)
    return list(out.values())


def _values(group: list[dict[str, Any]], value: Callable[[dict[str, Any]], Any]) -> list[float]:
    return [v for v in (value(p) for p in group) if _num(v)]


def _best(points: list[dict[str, Any]], value: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]] | None:
    """The point (all its measurements) whose median is the highest."""
    groups = [g for g in _groups(points) if _values(g, value)]
    return max(groups, key=lambda g: median(_values(g, value))) if groups else None


def _qd1(points: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    return next((g for g in _groups(points) if g[0].get("outstanding") == 1 and g[0].get("jobs", 1) == 1), None)


def _lat(side: str, pct: str) -> Callable[[dict[str, Any]], Any]:
    return lambda p: ((p.get(side) or {}).get("lat_us") or {}).get(pct)


def _iops(p: dict[str, Any]) -> Any:
    return p.get("iops")


def _mbps(p: dict[str, Any]) -> Any:
    bw = p.get("bw_bytes_per_s")
    return bytes_per_s_to_mbps(bw) if _num(bw) else None


def _commit(pct: str) -> Callable[[dict[str, Any]], Any]:
    return lambda p: (p.get("commit_lat_us") or {}).get(pct)


def headlines(points: list[dict[str, Any]]) -> dict[str, tuple[list[dict[str, Any]], Callable[..., Any]]]:
    """{summary key: (the measurements of its point, what each gives)} for the keys measured. A peak is the
    point whose median is the highest (a lucky single run does not win over a repeated one by chance alone)."""
    rr, rw, mix = _of(points, READ_4K), _of(points, WRITE_4K), _of(points, MIX_8K)
    seq_r = [p for p in points if p.get("group") == SEQUENTIAL and p.get("rw") == "read"]
    seq_w = [p for p in points if p.get("group") == SEQUENTIAL and p.get("rw") == "write"]
    commits = _of(points, COMMIT)
    c1 = next((g for g in _groups(commits) if g[0].get("jobs") == 1), None)
    best_read = _best(rr, _iops)
    out = {
        "read_iops_4k": (best_read, _iops),
        "write_iops_4k": (_best(rw, _iops), _iops),
        "mixed_iops_8k": (_best(mix, _iops), _iops),
        "read_lat_us_qd1_p50": (_qd1(rr), _lat("read", "p50")),
        "write_lat_us_qd1_p50": (_qd1(rw), _lat("write", "p50")),
        "read_lat_us_p99_at_max": (best_read, _lat("read", "p99")),
        "read_mbps_seq": (_best(seq_r, _mbps), _mbps),
        "write_mbps_seq": (_best(seq_w, _mbps), _mbps),
        "commit_lat_us_p50": (c1, _commit("p50")),
        "commit_lat_us_p99": (c1, _commit("p99")),
        # Throughput capacity: the best over the writer counts tried.
        "commits_per_s": (_best(commits, _iops), _iops),
    }
    return {k: (g, f) for k, (g, f) in out.items() if g and _values(g, f)}


# The headline keys each group of tests measures (what the probe repeats after that group).
GROUP_HEADLINES = {
    RANDOM: ("read_iops_4k", "write_iops_4k", "mixed_iops_8k", "read_lat_us_qd1_p50", "write_lat_us_qd1_p50"),
    SEQUENTIAL: ("read_mbps_seq", "write_mbps_seq"),
    COMMIT: ("commit_lat_us_p50", "commits_per_s"),
}


def under_measured(points: list[dict[str, Any]], keys: Iterable[str]) -> list[dict[str, Any]]:
    """The first measurement of each headline point (of keys) measured fewer than MIN_MEASUREMENTS times."""
    h = headlines(points)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for k in keys:
        if k in h and len(h[k][0]) < MIN_MEASUREMENTS:
            out.setdefault(point_config(h[k][0][0]), h[k][0][0])
    return list(out.values())


def spreads(points: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The target's `spread`: {summary key: {median, min, max, n, spread_pct, min_runtime_s}} over the
    measurements of its point (spread_pct: (max - min) / median, in %; null for one measurement)."""
    out = {}
    for k, (g, f) in headlines(points).items():
        runtimes = [p["runtime_s"] for p in g if _num(p.get("runtime_s"))]
        out[k] = {**spread(_values(g, f)), "min_runtime_s": min(runtimes) if runtimes else None}
    return out


def summarize(points: list[dict[str, Any]], honesty: dict[str, Any] | None) -> dict[str, Any]:
    """Each figure the median of its point's measurements (see headlines)."""
    h = headlines(points)
    s: dict[str, Any] = {k: (median(_values(*h[k])) if k in h else None) for k in FIGURE_KEYS}
    s["fsync_honesty"] = honesty["verdict"] if honesty else None
    s["fsync_honesty_reason"] = honesty["reason"] if honesty else None
    assert tuple(s) == SUMMARY_KEYS
    return s


def commit_latency(write_lat_us: dict[str, float | None], sync_lat_us: dict[str, float | None]) -> dict[str, float | None]:
    """Per-commit latency from fio's two phases (the write, then the fdatasync).

    fio times them separately; a commit is their sum. Adding the two phases'
    percentiles gives the percentile of the sum exactly when they rise together
    and an upper bound otherwise; the write phase is a page-cache copy of a few
    µs, so the flush dominates either way.
    """
    out: dict[str, float | None] = {}
    for k in ("mean", "p50", "p90", "p95", "p99", "p999", "p9999", "max"):
        w, s = write_lat_us.get(k), sync_lat_us.get(k)
        out[k] = None if w is None or s is None else w + s
    return out


# -- the knee ---------------------------------------------------------------------------------------------

KNEE_FIELDS = ("test", "outstanding", "iops", "p99_us", "last_outstanding", "last_iops", "still_rising")


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def sweep_done(iops: list[float]) -> bool:
    """The random sweep stops here: the knee (below) is confirmed by PROBE_PATIENCE levels after it."""
    return sweep_should_stop(iops, PROBE_MIN_GAIN, PROBE_PATIENCE)


def knee(points: Iterable[Any], test: str) -> dict[str, Any] | None:
    """Where IOPS stop growing in one random test: the sweep's own stop rule (sweep_done) read over
    its load levels, each level its best point by median (the runs of one point -- the sweep's, its
    confirming re-measure, a repeat -- give their median, as in the summary; a split of the same load over
    other threads is another point of the level).

    -> {test, outstanding, iops, p99_us, last_outstanding, last_iops, still_rising}, still_rising when
    the knee is the largest load measured (no ceiling found); None when the test has no points."""
    side = "write" if "write" in test else "read"
    levels: dict[float, list[dict[str, Any]]] = {}
    for p in points:
        if isinstance(p, dict) and p.get("test") == test and _num(p.get("outstanding")) and _num(p.get("iops")):
            levels.setdefault(p["outstanding"], []).append(p)
    if not levels:
        return None
    best = [_best(levels[o], _iops) or [] for o in sorted(levels)]
    iops = [median(_values(g, _iops)) for g in best]
    k = plateau(iops, PROBE_MIN_GAIN, PROBE_PATIENCE)[0]
    p99s = _values(best[k], lambda q: _p99(q, side))
    return {"test": test, "outstanding": best[k][0]["outstanding"], "iops": iops[k],
            "p99_us": median(p99s) if p99s else None, "last_outstanding": best[-1][0]["outstanding"],
            "last_iops": iops[-1], "still_rising": k == len(best) - 1}


def _p99(p: dict[str, Any], side: str) -> float | None:
    """The p99 latency of the test's own side (a write test's writes), else the point's main one."""
    own = p.get(side)
    for lat in (own.get("lat_us") if isinstance(own, dict) else None, p.get("lat_us")):
        if isinstance(lat, dict) and _num(lat.get("p99")):
            return float(lat["p99"])
    return None


def knees(points: Iterable[Any]) -> dict[str, dict[str, Any] | None]:
    """The document's `knee`: {test: knee(points, test)} for each of KNEE_TESTS."""
    pts = list(points)
    return {t: knee(pts, t) for t in KNEE_TESTS}
