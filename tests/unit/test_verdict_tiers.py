"""The verdict's comparisons on hand-made documents, with the evidence guards at their real values: a placement
(TPC-H temp, a placement matrix's move) is recommended only beyond the noise rule `compare` applies, said to be
within noise otherwise, and not judged on too few runs; two tiers are set against each other client count by
client count; no price/performance sentence rests on a run whose reads came from memory."""

from __future__ import annotations

import pytest

from dbtier.report.html import render_html
from dbtier.report.verdict.topics import verdict


def texts(v: dict, topic: str) -> list[str]:
    return [x["text"] for x in v[topic]]


def spread(median: float, lo: float, hi: float, n: int = 2) -> dict:
    return {"median": median, "min": lo, "max": hi, "n": n, "spread_pct": (hi - lo) / median * 100}


# -- TPC-H: where temp belongs --------------------------------------------------------------------------------

def dss(temp: str, dev: str, total_s: float, warm: dict | None) -> dict:
    """A TPC-H SF 1 power run of two queries, the second spilling 50 MB, with temp on `temp` (device `dev`)."""
    return {"command": "bench", "bench": "dss", "engine": "duckdb", "scale": 1.0, "status": "ok",
            "params": {"engine": "duckdb", "scale": 1.0, "data": "/data", "temp": temp},
            "machine": {"targets": [{"path": temp, "block_device": {"name": dev}}]},
            "queries": [{"query": 1, "seconds": total_s / 2, "temp_bytes": 0, "cpu_util": 50.0},
                        {"query": 9, "seconds": total_s / 2, "temp_bytes": 50e6, "cpu_util": 50.0}],
            "total_seconds": total_s, "warm_totals": warm}


def test_temp_placement_within_noise_is_not_recommended():
    # 6.27 s against 7.08 s: 12.9% longer; the warm runs spread 5.9-6.6 (11.2%) and 6.7-7.5 (11.3%): 22.5% of noise
    a = dss("/mnt/fast", "nvme0n1", 6.27, spread(6.27, 5.9, 6.6))
    b = dss("/mnt/slow", "sdb", 7.08, spread(7.08, 6.7, 7.5))
    [p] = verdict([b, a])["placement"]
    assert p["temp_on"] is None and p["verdict"] == "within noise"
    assert p["noise_pct"] == pytest.approx(0.7 / 6.27 * 100 + 0.8 / 7.08 * 100)
    assert p["text"] == ("Temp placement is within noise for the TPC-H SF 1 power run (6.27 s with temp on /mnt/fast, "
                         "7.08 s on /mnt/slow: 13% longer, inside the runs' noise of ±22.5% (/mnt/fast 5.90–6.60 "
                         "s over 2 runs; /mnt/slow 6.70–7.50 s over 2 runs)): neither tier is recommended for temp.")


def test_temp_placement_beyond_noise_is_recommended():
    # the same times, the warm runs within 2% each: 4% of noise, so compare's 5% floor; 12.9% is beyond it
    a = dss("/mnt/fast", "nvme0n1", 6.27, spread(6.27, 6.2, 6.32))
    b = dss("/mnt/slow", "sdb", 7.08, spread(7.08, 7.0, 7.14))
    [p] = verdict([a, b])["placement"]
    assert p["temp_on"] == "/mnt/fast" and p["noise_pct"] == 5.0
    assert p["text"].startswith("Put temp on /mnt/fast: the TPC-H SF 1 power run took 6.27 s with temp there "
                                "against 7.08 s on /mnt/slow (13% longer, beyond the runs' noise of ±5%")


def test_temp_placement_on_too_few_runs_is_not_judged():
    # one warm power run each (bench dss --repeat 2: one cold, one warm): the spread is unknown
    a = dss("/mnt/fast", "nvme0n1", 6.27, spread(6.27, 6.27, 6.27, n=1))
    b = dss("/mnt/slow", "sdb", 7.08, None)
    [p] = verdict([a, b])["placement"]
    assert p["judged"] is False and "temp_on" not in p
    assert p["text"] == ("Where temp belongs for TPC-H SF 1 is not judged (6.27 s with temp on /mnt/fast, 7.08 s on "
                         "/mnt/slow), too little evidence: temp on /mnt/fast and temp on /mnt/slow: measured once; run "
                         "bench dss with --repeat 3 or more (the first power run is cold: 2 warm ones give the spread) "
                         "to judge.")


# -- a placement matrix: a move against the noise rule ---------------------------------------------------------

STEPS = ("all-slow", "index-fast", "tables-fast", "wal-fast", "temp-fast", "all-fast")


def matrix(tps: dict[str, float], spread_pct: float) -> dict:
    """A PostgreSQL matrix over /f (nvme0n1) and /s (sdb): one client per step, two 10 s runs each spread by
    `spread_pct` around the given TPS."""
    def point(t: float) -> dict:
        h = t * spread_pct / 200
        return {"clients": 1, "tps": t, "duration_s": 10.0, "tps_spread": spread(t, t - h, t + h)}
    return {"command": "bench", "bench": "oltp", "engine": "postgres", "status": "ok", "guards": [],
            "params": {"workload": "tpcb", "scale": 10, "placement_matrix": "/f,/s"},
            "machine": {"targets": [{"path": "/f", "block_device": {"name": "nvme0n1"}},
                                    {"path": "/s", "block_device": {"name": "sdb"}}]},
            "steps": [{"name": n, "points": [point(tps[n])]} for n in STEPS]}


def test_a_matrix_move_counts_only_beyond_the_runs_spread():
    tps = {"all-slow": 1000.0, "index-fast": 1000.0, "tables-fast": 1000.0, "wal-fast": 1080.0, "temp-fast": 1080.0,
           "all-fast": 1080.0}
    # WAL +8%: beyond 3% + 3% = 6% of noise: recommended
    [p] = verdict([matrix(tps, 3.0)])["placement"]
    assert p["recommended"]["fast"] == ["WAL"]
    assert p["text"].startswith("WAL on the fast tier gave the biggest gain in the placement matrix: +8% (1,000 → "
                                "1,080 TPS, the best point of each step). Recommended: WAL on the fast tier (/f)")
    # the same +8% within 5% + 5% = 10%: not recommended, said within noise with the figures
    [p] = verdict([matrix(tps, 5.0)])["placement"]
    assert p["recommended"]["fast"] == []
    assert p["text"].startswith("No move to the fast tier raised TPS beyond noise in the placement matrix (the best: "
                                "WAL, +8%, within noise of ±10%)")


def test_a_matrix_of_single_runs_says_the_repeat_needed():
    m = matrix({n: 1000.0 for n in STEPS}, 3.0)
    for s in m["steps"]:
        s["points"][0]["tps_spread"] = spread(1000.0, 1000.0, 1000.0, n=1)
    [p] = verdict([m])["placement"]
    assert p["judged"] is False and "measured once" in p["text"] and "run it with --repeat 2" in p["text"]


# -- two tiers ----------------------------------------------------------------------------------------------------

def sweep(name: str, tps: list[float], knee: dict, emulated: dict | None = None, model: str = "") -> dict:
    """A select-only sweep at 1, 2, 4 and 8 clients on /NAME, each point two 10 s runs within 2%."""
    path = f"/{name}"
    pts = [{"clients": c, "tps": t, "duration_s": 10.0, "tps_spread": spread(t, t * 0.99, t * 1.01),
            "lat_ms": {"p95": 2.0}} for c, t in zip((1, 2, 4, 8), tps)]
    return {"command": "bench", "bench": "oltp", "engine": "postgres", "status": "ok", "guards": [], "_run_dir": name,
            "params": {"workload": "select-only", "scale": 100, "placement_requested": {"data": path}},
            "machine": {"targets": [{"path": path, "block_device": {"name": "vdb", "model": model}}]},
            "points": pts, "knee": knee, "emulated": emulated}


FAST = sweep("fast", [1000.0, 1900.0, 3600.0, 5000.0], {"clients": 8, "tps": 5000.0, "still_rising": True,
                                                         "confirmed": False, "reason": "still rising"},
             model="Samsung SSD 980 PRO 1TB")
SLOW = sweep("slow", [400.0, 600.0, 800.0, 850.0], {"clients": 4, "tps": 800.0, "still_rising": False,
                                                    "confirmed": True, "reason": "gained under 10% per doubling"},
             emulated={"dir": "/slow", "read_iops": 1000, "write_iops": 500, "label": "emulated", "note": "x"})


def test_two_tiers_are_set_against_each_other():
    v = verdict([SLOW, FAST])
    # the ratios by hand: 5,000 / 850 = 5.88 at the peaks; 1,000 / 400 = 2.5, 1,900 / 600 = 3.17,
    # 3,600 / 800 = 4.5, 5,000 / 850 = 5.88 at equal client counts
    assert texts(v, "tiers") == [
        "Two tiers, pgbench select-only, scale 100: fast — /fast (Samsung SSD 980 PRO 1TB) — 1,000, 1,900, 3,600 and "
        "5,000 TPS at 1, 2, 4 and 8 clients, still rising at 8 clients (the largest measured); slow — /slow "
        "(emulated: 1,000 read / 500 write IOPS) — 400, 600, 800 and 850 TPS at 1, 2, 4 and 8 clients, saturating at "
        "4 clients. fast is 5.9x slow at the peaks (5,000 TPS at 8 clients vs 850 at 8 clients); 2.5x at 1 client, "
        "3.2x at 2 clients, 4.5x at 4 clients and 5.9x at 8 clients."]
    r = v["tiers"][0]["ratios"][0]
    assert r["peak_ratio"] == pytest.approx(5000 / 850) and r["by_clients"]["2"] == pytest.approx(1900 / 600)
    # each saturates sentence names its tier
    assert texts(v, "saturates") == [
        "OLTP — pgbench select-only, scale 100, on /slow (emulated: 1,000 read / 500 write IOPS) — saturates at 4 "
        "clients: 800 TPS (the median of 2 runs, 792–808 TPS), p95 2 ms; the best was 850 TPS at 8 clients.",
        "OLTP — pgbench select-only, scale 100, on /fast (Samsung SSD 980 PRO 1TB) — is still rising at 8 clients "
        "(the largest measured): 5,000 TPS (the median of 2 runs, 4,950–5,050 TPS)."]


def test_tiers_within_noise_are_said_so():
    near = sweep("near", [980.0, 1880.0, 3580.0, 4900.0], {"clients": 8, "tps": 4900.0, "still_rising": True})
    [t] = verdict([FAST, near])["tiers"]
    # 5,000 / 4,900 = 1.02: under compare's 5% floor (the runs spread 2% each: 4%)
    assert "fast and near are within noise of each other at the peaks (5,000 TPS at 8 clients vs 4,900 at 8 " \
           "clients; ±5%); 1.02x (within noise) at 1 client" in t["text"]


def test_the_report_opens_on_the_tiers_chart():
    page = render_html([FAST, SLOW])
    chart = page.index("TPS vs clients, tier by tier")
    assert chart < page.index("<h2>Runs</h2>") and chart < page.index('id="compare"')
    assert "fast: /fast (Samsung SSD 980 PRO 1TB)" in page and "slow: /slow (emulated: 1,000 read / 500 write IOPS)" \
        in page
    # both knees pass the guards (two 10 s runs each): each ringed and named
    assert "fast: still rising" in page and "slow: knee, 4 cl." in page
    short = {**SLOW, "points": [{**p, "duration_s": 2.0} for p in SLOW["points"]]}
    assert "slow: knee" not in render_html([FAST, short])       # 2 s points: the knee is not judged, not ringed


# -- price/performance ------------------------------------------------------------------------------------------

def value_doc(run_dir: str, nopm_per_usd: float | None) -> dict:
    v = {"tpm_per_usd": 30.0, "tps_per_usd": 0.5, "nopm_per_usd": nopm_per_usd}
    return {"command": "plan", "plan": "value", "result": {"run_dir": run_dir, "kind": "bench"},
            "config": {"description": "8 x sas-15k-73gb raid10", "price_usd": 1520}, "value": v}


def test_tpcc_is_priced_in_nopm_per_dollar():
    assert texts(verdict([value_doc("runs/together", 12.6)]), "cheapest") == [
        "Measured price/performance of runs/together on 8 x sas-15k-73gb raid10 ($1,520): 12.6 NOPM per $ (new "
        "orders a minute: TPC-C's tpmC) and 30.0 TPM per $ (every transaction)."]


def test_no_price_performance_on_reads_from_memory():
    run = {**FAST, "_run_dir": "/var/runs/together", "guards": [
        {"kind": "reads-from-memory", "message": "InnoDB found 99.6% of 5,900,000 page accesses in the InnoDB buffer "
                                                 "pool and read only 23,600 pages: the data set fit in memory: this "
                                                 "run measured the write and commit path, not the data/index read "
                                                 "path."}]}
    v = verdict([run, value_doc("together", 12.6)])
    [c] = v["cheapest"]
    assert c["judged"] is False and "NOPM" not in c["text"]
    assert c["text"].startswith("Price/performance of together is not judged: together's reads came from memory "
                                "(cache guard: InnoDB found 99.6% of 5,900,000 page accesses in the InnoDB buffer pool "
                                "and read only 23,600 pages: the data set fit in memory)")


def test_a_price_alone_carries_its_runs_guard():
    """plan value records the priced run's guards (result.guards): reported without that run, the price is
    still not judged when its reads came from memory, and judged when they reached storage."""
    doc = value_doc("runs/together", 12.6)
    doc["result"]["guards"] = [{"kind": "reads-from-memory", "message": "only 0.2% of InnoDB's 30,000 page reads "
                                "reached the devices: this run measured the write and commit path"}]
    [c] = verdict([doc])["cheapest"]
    assert c["text"] == ("Price/performance of together is not judged: together's reads came from memory (cache guard: "
                         "only 0.2% of InnoDB's 30,000 page reads reached the devices), so its transactions are the "
                         "write and commit path's, not the study's reads; give the server less memory than its data "
                         "(bench oltp --memory, or a larger --scale/--warehouses) and measure again to judge.")
    doc["result"]["guards"] = [{"kind": "too-few-reads", "message": "only 500 page reads"}]
    assert verdict([doc])["cheapest"][0]["text"].startswith("Measured price/performance of runs/together")
