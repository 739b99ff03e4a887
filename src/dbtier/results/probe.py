"""The probe's summary: a pure function of its measured points.

`summary` has exactly the keys of the JSON contract; a key whose test was not
run is null.
"""

from __future__ import annotations

from typing import Any, Iterable

from dbtier.core.units import bytes_per_s_to_mbps

SUMMARY_KEYS = (
    "read_iops_4k", "write_iops_4k", "mixed_iops_8k",
    "read_lat_us_qd1_p50", "write_lat_us_qd1_p50", "read_lat_us_p99_at_max",
    "read_mbps_seq", "write_mbps_seq",
    "commit_lat_us_p50", "commit_lat_us_p99", "commits_per_s",
    "fsync_honesty", "fsync_honesty_reason",
)


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
    rr, rw, mix = _of(points, "rand-read-4k"), _of(points, "rand-write-4k"), _of(points, "rand-mix-8k")
    seq_r = [p for p in points if p["group"] == "sequential" and p["rw"] == "read"]
    seq_w = [p for p in points if p["group"] == "sequential" and p["rw"] == "write"]
    c1 = next((p for p in _of(points, "commit") if p["jobs"] == 1), None)
    commits = _of(points, "commit")
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
