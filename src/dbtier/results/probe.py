"""The probe's facts, each defined once: its test names, what its summary holds and which of those
figures are better higher, and its knee rule; and the summary and knees, pure functions of its points.

`summary` has exactly the keys of the JSON contract; a key whose test was not
run is null. `knee` has one entry per KNEE_TESTS test (null when it was not run).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from dbtier.core.stats import plateau, sweep_should_stop
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

SUMMARY_KEYS = (
    "read_iops_4k", "write_iops_4k", "mixed_iops_8k",
    "read_lat_us_qd1_p50", "write_lat_us_qd1_p50", "read_lat_us_p99_at_max",
    "read_mbps_seq", "write_mbps_seq",
    "commit_lat_us_p50", "commit_lat_us_p99", "commits_per_s",
    "fsync_honesty", "fsync_honesty_reason",
)
# Summary keys where a higher number is better (the rest: lower is better; fsync honesty is a text).
HIGHER_BETTER = frozenset({"read_iops_4k", "write_iops_4k", "mixed_iops_8k", "read_mbps_seq", "write_mbps_seq",
                           "commits_per_s"})

# The random sweep's stop rule, which is also its knee (core.stats.plateau): a load level is progress
# when it beats the knee so far by 3%; two levels in a row that are not end the sweep.
PROBE_MIN_GAIN = 0.03
PROBE_PATIENCE = 2


def _of(points: Iterable[dict[str, Any]], test: str) -> list[dict[str, Any]]:
    return [p for p in points if p["test"] == test]


def _best(points: list[dict[str, Any]], key: str = "iops") -> dict[str, Any] | None:
    return max(points, key=lambda p: p[key]) if points else None


def _qd1(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((p for p in points if p["outstanding"] == 1), None)


def _lat(point: dict[str, Any] | None, side: str, pct: str) -> float | None:
    if not point or not point.get(side):
        return None
    return point[side]["lat_us"].get(pct)


def summarize(points: list[dict[str, Any]], honesty: dict[str, Any] | None) -> dict[str, Any]:
    rr, rw, mix = _of(points, READ_4K), _of(points, WRITE_4K), _of(points, MIX_8K)
    seq_r = [p for p in points if p["group"] == SEQUENTIAL and p["rw"] == "read"]
    seq_w = [p for p in points if p["group"] == SEQUENTIAL and p["rw"] == "write"]
    c1 = next((p for p in _of(points, COMMIT) if p["jobs"] == 1), None)
    commits = _of(points, COMMIT)
    best_read = _best(rr)
    s = {
        "read_iops_4k": best_read["iops"] if best_read else None,
        "write_iops_4k": _best(rw)["iops"] if rw else None,
        "mixed_iops_8k": _best(mix)["iops"] if mix else None,
        "read_lat_us_qd1_p50": _lat(_qd1(rr), "read", "p50"),
        "write_lat_us_qd1_p50": _lat(_qd1(rw), "write", "p50"),
        "read_lat_us_p99_at_max": _lat(best_read, "read", "p99"),
        "read_mbps_seq": bytes_per_s_to_mbps(_best(seq_r, "bw_bytes_per_s")["bw_bytes_per_s"]) if seq_r else None,
        "write_mbps_seq": bytes_per_s_to_mbps(_best(seq_w, "bw_bytes_per_s")["bw_bytes_per_s"]) if seq_w else None,
        "commit_lat_us_p50": c1["commit_lat_us"]["p50"] if c1 else None,
        "commit_lat_us_p99": c1["commit_lat_us"]["p99"] if c1 else None,
        # Throughput capacity: the best over the writer counts tried.
        "commits_per_s": max(p["iops"] for p in commits) if commits else None,
        "fsync_honesty": honesty["verdict"] if honesty else None,
        "fsync_honesty_reason": honesty["reason"] if honesty else None,
    }
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
    its load levels, each level its best point (a confirming re-measure at the peak's load joins its
    level rather than counting as a level of its own).

    -> {test, outstanding, iops, p99_us, last_outstanding, last_iops, still_rising}, still_rising when
    the knee is the largest load measured (no ceiling found); None when the test has no points."""
    levels: dict[float, dict[str, Any]] = {}
    for p in points:
        if not (isinstance(p, dict) and p.get("test") == test and _num(p.get("outstanding")) and _num(p.get("iops"))):
            continue
        o = p["outstanding"]
        if o not in levels or p["iops"] > levels[o]["iops"]:
            levels[o] = p
    if not levels:
        return None
    pts = [levels[o] for o in sorted(levels)]
    k = plateau([p["iops"] for p in pts], PROBE_MIN_GAIN, PROBE_PATIENCE)[0]
    p, last = pts[k], pts[-1]
    return {"test": test, "outstanding": p["outstanding"], "iops": p["iops"],
            "p99_us": _p99(p, "write" if "write" in test else "read"), "last_outstanding": last["outstanding"],
            "last_iops": last["iops"], "still_rising": k == len(pts) - 1}


def _p99(p: dict[str, Any], side: str) -> float | None:
    """The p99 latency of the test's own side (a write test's writes), else the point's main one."""
    own = p.get(side)
    for lat in (own.get("lat_us") if isinstance(own, dict) else None, p.get("lat_us")):
        if isinstance(lat, dict) and _num(lat.get("p99")):
            return lat["p99"]
    return None


def knees(points: Iterable[Any]) -> dict[str, dict[str, Any] | None]:
    """The document's `knee`: {test: knee(points, test)} for each of KNEE_TESTS."""
    pts = list(points)
    return {t: knee(pts, t) for t in KNEE_TESTS}
