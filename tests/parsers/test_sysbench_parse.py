"""sysbench 1.0.20's report, saved from real runs against MariaDB 10.11 (tests/data/sysbench/README.md)."""

import math
from pathlib import Path

import pytest

from dbtier.workloads.parsers.sysbench import histogram_percentile, parse_sysbench, point_figures

DATA = Path(__file__).parent.parent / "data" / "sysbench"
RUNS = sorted(DATA.glob("sysbench-*.txt"))


def _hand_histogram(text: str) -> list[tuple[float, int]]:
    """The histogram lines read by hand: `value |*** count` between the header and the blank line."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("Latency histogram")) + 2
    out = []
    for x in lines[start:]:
        if "|" not in x:
            break
        value, rest = x.split("|")
        out.append((float(value), int(rest.split()[-1])))
    return out


def _nearest_rank(hist: list[tuple[float, int]], pct: float) -> float:
    """Every event as its bucket's value, sorted; the k-th smallest with k = n*pct/100 rounded half up."""
    values = sorted(v for v, c in hist for _ in range(c))
    k = max(1, math.floor(len(values) * pct / 100 + 0.5))
    return values[k - 1]


def test_all_sixteen_runs_were_saved():
    assert len(RUNS) == 16      # 4 workloads x 1 and 4 threads x closed and open loop


def test_rw_one_thread_summary():
    p = parse_sysbench((DATA / "sysbench-rw-t1.txt").read_text())
    assert p["threads"] == 1 and p["rate_target"] is None
    assert (p["transactions"], p["tps"]) == (1133, 377.08)
    assert p["queries"] == 22660 and p["qps"] == pytest.approx(7541.68)
    assert (p["reads"], p["writes"], p["other"]) == (15862, 4532, 2266)
    assert p["errors"] == 0 and p["reconnects"] == 0
    assert p["total_time_s"] == pytest.approx(3.0042) and p["events"] == 1133
    assert (p["lat_min_ms"], p["lat_avg_ms"], p["lat_max_ms"]) == (1.09, 2.64, 8.11)
    assert (p["percentile"], p["lat_pct_ms"]) == (95, 3.55)
    # a 3 s run prints two 1 s interval lines: the third second ends with the run, before its report
    assert len(p["intervals"]) == 2 and p["intervals"][0]["t_s"] == 1 and p["intervals"][0]["threads"] == 1
    assert p["fatal"] == []


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.stem)
def test_each_run_histogram_and_percentiles_match_what_sysbench_printed(path):
    text = path.read_text()
    p = parse_sysbench(text)
    hand = _hand_histogram(text)
    assert p["histogram"] == hand
    # every event is in the histogram
    assert sum(c for _, c in hand) == p["transactions"] == p["events"]
    # sysbench printed its --percentile with two decimals; the histogram rule gives the same bucket
    printed = float(next(x for x in text.splitlines() if "th percentile:" in x).split()[-1])
    assert histogram_percentile(hand, p["percentile"]) == pytest.approx(printed, abs=0.0051)
    for pct in (50, 95, 99):
        assert histogram_percentile(p["histogram"], pct) == _nearest_rank(hand, pct)


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.stem)
def test_each_point_has_sysbench_s_own_figures(path):
    text = path.read_text()
    p = parse_sysbench(text)
    line = next(x for x in text.splitlines() if x.strip().startswith("transactions:")).split()
    n, tps = int(line[1]), float(line[2].lstrip("("))
    rate = p["rate_target"]
    f = point_figures(p, int(p["threads"]), 3, rate)
    assert f["transactions"] == n and f["tps"] == pytest.approx(tps) and f["tpm"] == pytest.approx(60 * tps)
    assert f["duration_s"] == pytest.approx(3.0, abs=0.02) and f["duration_source"] == "sysbench"
    assert f["nopm"] is None and f["failed"] == 0 and f["requested_s"] == 3 and f["rate"] == rate
    hand = _hand_histogram(text)
    assert f["lat_ms"]["p50"] == _nearest_rank(hand, 50)
    assert f["lat_ms"]["p95"] == _nearest_rank(hand, 95)
    assert f["lat_ms"]["p99"] == _nearest_rank(hand, 99)
    assert f["lat_ms"]["p50"] <= f["lat_ms"]["p95"] <= f["lat_ms"]["p99"] <= f["lat_ms"]["max"]
    assert f["latency_excludes_queue"] == bool(rate)


def test_open_loop_run_keeps_the_target_and_the_queue():
    p = parse_sysbench((DATA / "sysbench-point-t4-r2000.txt").read_text())
    assert p["rate_target"] == 2000 and p["threads"] == 4
    assert all("queue_length" in iv and "concurrency" in iv for iv in p["intervals"])
    f = point_figures(p, 4, 3, 2000)
    assert f["sysbench"]["max_queue_length"] == max(iv["queue_length"] for iv in p["intervals"])
    # open loop: the server kept up, so the rate is what was asked for, within 2%
    assert f["tps"] == pytest.approx(2000, rel=0.02)


def test_tps_at_four_threads_is_higher_closed_loop():
    """A sanity check of the saved runs, not of the parser: 4 threads beat 1 on each workload here."""
    for wl in ("rw", "ro", "wo", "point"):
        one = parse_sysbench((DATA / f"sysbench-{wl}-t1.txt").read_text())["tps"]
        four = parse_sysbench((DATA / f"sysbench-{wl}-t4.txt").read_text())["tps"]
        assert four > one
