"""`dbtier plan equivalent|budget|size|value` through the real entry point: the JSON contract, the run
directory, the terminal tables, the report, and every bad input as one clear error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from conftest import DATA, assert_clean_error, load_doc, run_dbtier
from dbtier.results.schema import result_schema

CARD, DISK = "fusionio-iodrive-duo-1.2tb", "sas-15k-73gb"
PROBE = DATA / "probe" / "quick-ext4-virtio.json"
MATCH_KEYS = {"count", "price_usd", "reference_price_usd", "price_ratio"}
OPTION_KEYS = {"device", "count", "price_usd", "capacity_gb", "iops", "read_mbps", "write_mbps", "read_latency_us",
               "write_latency_us"}
CANDIDATE_KEYS = {"device", "count", "layout", "price_usd", "capacity_gb", "read_iops", "write_iops", "read_mbps",
                  "write_mbps", "meets"}


def ok_json(tmp_path: Path, *args: str, out: str = "run") -> dict:
    r = run_dbtier(*args, "--json", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    doc = json.loads(r.stdout)       # stdout is the document and nothing else
    assert doc["command"] == "plan" and doc["status"] == "ok"
    jsonschema.validate(doc, result_schema())
    assert load_doc(tmp_path / out) == doc
    return doc


def fails(tmp_path: Path, *args: str, needles: tuple[str, ...] = ()) -> str:
    r = run_dbtier(*args, "--out", "run", cwd=tmp_path)
    err = assert_clean_error(r, *needles)
    assert not (tmp_path / "run").exists()      # a bad input leaves no run directory behind
    return err


def history_run(tmp_path: Path, requirement: dict | None) -> Path:
    run = tmp_path / "runs" / "20261122T080000Z-history"
    run.mkdir(parents=True)
    doc = {"schema_version": 1, "command": "history", "status": "ok", "params": {}, "errors": []}
    if requirement is not None:
        doc["requirement"] = requirement
    (run / "result.json").write_text(json.dumps(doc))
    return run


def probe_run(tmp_path: Path) -> Path:
    run = tmp_path / "runs" / "20261121T232748Z-probe"
    run.mkdir(parents=True)
    shutil.copy(PROBE, run / "result.json")
    return run


def bench_run(tmp_path: Path) -> Path:
    run = tmp_path / "runs" / "20261122T090000Z-bench"
    run.mkdir(parents=True)
    doc = {"schema_version": 1, "command": "bench", "status": "ok", "params": {"workload": "oltp"}, "errors": [],
           "points": [{"clients": 1, "tps": 120.0, "tpm": 7200.0, "nopm": 3100.0},
                      {"clients": 16, "tps": 1500.0, "tpm": 90_000.0, "nopm": 39_000.0},
                      {"clients": 64, "tps": 1400.0, "tpm": 84_000.0, "nopm": 36_400.0}],
           "knee": {"clients": 16, "tps": 1500.0}}
    (run / "result.json").write_text(json.dumps(doc))
    return run


# -- the contract ------------------------------------------------------------------------------------------

def test_equivalent_json_is_the_design_example(tmp_path):
    doc = ok_json(tmp_path, "plan", "equivalent", "--reference", CARD, "--using", DISK)
    assert doc["plan"] == "equivalent"
    assert set(doc["by_metric"]) == {"iops", "throughput", "capacity"}
    for m in doc["by_metric"].values():
        assert set(m) == MATCH_KEYS
        assert m["price_ratio"] == pytest.approx(m["price_usd"] / m["reference_price_usd"])
    # hand-worked in tests/unit/test_planner.py: 889 disks + 56 units; 15 + 1; 17 + 2
    assert doc["by_metric"]["iops"] == {"count": 889, "price_usd": 322_700, "reference_price_usd": 20_000,
                                        "price_ratio": pytest.approx(16.135)}
    assert (doc["by_metric"]["throughput"]["count"], doc["by_metric"]["throughput"]["price_usd"]) == (15, 5500)
    assert (doc["by_metric"]["capacity"]["count"], doc["by_metric"]["capacity"]["price_usd"]) == (17, 7100)
    assert doc["params"] == {"action": "equivalent", "catalog_files": [], "reference": CARD, "using": DISK,
                             "layout": "jbod", "read_fraction": 0.5}
    assert doc["arrays"]["iops"]["overheads"][0]["units"] == 56
    assert doc["arrays"]["iops"]["limits"]["read_mbps"]["limit"] == "devices"


def test_equivalent_terminal(tmp_path):
    r = run_dbtier("plan", "equivalent", "--reference", CARD, "--using", DISK, "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for text in ("889", "$322,700", "16.14×", "$5,500", "0.28×", "17", "$7,100", "222,160 IOPS at 50% reads",
                 "sas2-hba-pcie2-x8"):
        assert text in r.stdout, text


def test_budget_json(tmp_path):
    doc = ok_json(tmp_path, "plan", "budget", "--usd", "20000", "--devices", f"{CARD},{DISK}")
    assert doc["plan"] == "budget"
    card, disks = doc["options"]
    for o in (card, disks):
        assert OPTION_KEYS <= set(o)
    assert {k: card[k] for k in OPTION_KEYS} == {
        "device": CARD, "count": 1, "price_usd": 20_000, "capacity_gb": 1200, "iops": pytest.approx(222_159.83),
        "read_mbps": 1500, "write_mbps": 1100, "read_latency_us": 30, "write_latency_us": 30}
    assert {k: disks[k] for k in OPTION_KEYS} == {
        "device": DISK, "count": 53, "price_usd": 19_900, "capacity_gb": 3869, "iops": 13_250,
        "read_mbps": 5300, "write_mbps": 5300, "read_latency_us": 5000, "write_latency_us": 5500}


def test_budget_terminal_and_a_device_out_of_reach(tmp_path):
    r = run_dbtier("plan", "budget", "--usd", "10000", "--devices", CARD, DISK, "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "(smallest $20,000)" in r.stdout and "$9,800" in r.stdout
    doc = load_doc(tmp_path / "run")
    assert doc["options"][0]["count"] == 0 and "buys no jbod array" in doc["options"][0]["note"]


def test_size_json(tmp_path):
    doc = ok_json(tmp_path, "plan", "size", "--read-iops", "2000", "--write-iops", "500", "--capacity-gb", "500",
                  "--devices", CARD, DISK, "--layouts", "raid10,raid5", "preferred-read-mirror", "read-cache")
    assert doc["plan"] == "size"
    assert doc["binding"] in ("iops", "throughput", "capacity", "latency")
    assert doc["binding"] == "capacity"
    cands = doc["candidates"]
    assert len(cands) == 8
    for c in cands:
        assert CANDIDATE_KEYS <= set(c)
        assert set(c["meets"]) == {"read_iops", "write_iops", "capacity_gb"}
        for m in c["meets"].values():
            assert set(m) == {"required", "with_headroom", "offered", "met", "margin"} and m["met"] is True
    assert [c["price_usd"] for c in cands] == sorted(c["price_usd"] for c in cands)
    best = cands[0]
    assert (best["device"], best["count"], best["layout"], best["price_usd"]) == (DISK, 18, "raid10", 7400)
    assert best["meets"]["read_iops"]["margin"] == pytest.approx(0.6)
    mixed = next(c for c in cands if c["layout"] == "preferred-read-mirror")
    assert mixed["second"] == {"device": DISK, "count": 9, "layout": "raid0", "role": "slow side"}
    assert doc["requirement"]["headroom"] == 0.3 and doc["requirement"]["source"] == "command line"


def test_size_top_and_terminal(tmp_path):
    r = run_dbtier("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "10000",
                   "--top", "3", "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "binding:" in r.stdout and "cheapest of" in r.stdout
    doc = load_doc(tmp_path / "run")
    assert len(doc["candidates"]) == 3 and doc["designs_meeting"] > 3


def test_size_from_history(tmp_path):
    run = history_run(tmp_path, {"read_iops": 2000, "write_iops": 500, "read_mbps": None, "write_mbps": None,
                                 "capacity_gb": 500, "percentile": 95, "headroom": 0.2})
    doc = ok_json(tmp_path, "plan", "size", "--from-history", str(run), "--devices", DISK, "--layouts", "raid10")
    # headroom 0.2 from the run: raid10 of 18 disks (capacity 600 GB / 36.5 -> 17.4 -> 18)
    assert doc["requirement"]["headroom"] == 0.2 and doc["requirement"]["percentile"] == 95
    assert doc["candidates"][0]["count"] == 18
    assert doc["history"]["run_dir"] == str(run)
    # an option overrides the history figure
    # capacity 2,000 GB with no headroom: 36.5 n >= 2,000 -> 54.8 -> 56 (even)
    doc2 = ok_json(tmp_path, "plan", "size", "--from-history", str(run), "--capacity-gb", "2000", "--headroom", "0",
                   "--devices", DISK, "--layouts", "raid10", out="run2")
    assert doc2["requirement"]["capacity_gb"] == 2000 and doc2["requirement"]["headroom"] == 0
    assert doc2["candidates"][0]["count"] == 56


def test_value_of_a_probe_run(tmp_path):
    run = probe_run(tmp_path)
    doc = ok_json(tmp_path, "plan", "value", "--result", str(run), "--config", f"{DISK}:8:raid10")
    assert doc["plan"] == "value" and doc["result"]["kind"] == "probe"
    v = doc["value"]
    # $3,400 (8 x 300 + one unit); 78,845 IOPS of the 8 KiB mix; 1,552 MB/s; 292 GB
    assert v["iops_per_usd"] == pytest.approx(78_845.436375 / 3400)
    assert v["mbps_per_usd"] == pytest.approx(1551.731805 / 3400)
    assert v["usd_per_gb"] == pytest.approx(3400 / 292)
    assert v["tpm_per_usd"] is None and v["tps_per_usd"] is None
    assert any("mixed_iops_8k" in u for u in doc["figures_used"])
    r = run_dbtier("plan", "value", "--result", str(run), "--config", f"{DISK}:8:raid10", "--out", "run2",
                   cwd=tmp_path)
    assert r.returncode == 0 and "IOPS per $" in r.stdout and "mixed_iops_8k = 78,845" in r.stdout


def test_value_of_a_bench_run(tmp_path):
    run = bench_run(tmp_path)
    doc = ok_json(tmp_path, "plan", "value", "--result", str(run), "--config", f"{CARD}:2:mirror2")
    # two cards: $40,000; best point 1,500 TPS / 90,000 TPM at 16 clients
    assert doc["result"]["kind"] == "bench"
    assert doc["value"]["tps_per_usd"] == pytest.approx(1500 / 40_000)
    assert doc["value"]["tpm_per_usd"] == pytest.approx(90_000 / 40_000)
    assert doc["value"]["usd_per_gb"] == pytest.approx(40_000 / 1200)
    assert doc["measured"]["clients"] == 16
    assert any(u.startswith("TPS: 1,500, the best of 3 points") for u in doc["figures_used"])


def test_report_renders_plan_runs(tmp_path):
    for i, args in enumerate([("equivalent", "--reference", CARD, "--using", DISK),
                              ("budget", "--usd", "20000", "--devices", f"{CARD},{DISK}"),
                              ("size", "--read-iops", "2000", "--write-iops", "500", "--capacity-gb", "500",
                               "--devices", CARD, DISK)]):
        r = run_dbtier("plan", *args, "--out", f"p{i}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    run = probe_run(tmp_path)
    r = run_dbtier("plan", "value", "--result", str(run), "--config", f"{DISK}:8:raid10", "--out", "p3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_dbtier("report", "p0", "p1", "p2", "p3", "--out", "rep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "could not be drawn" not in html
    assert html.count("<svg") == 10            # five side-by-side charts for equivalent and for budget
    for text in ("Equal performance", "Equal budget: what $20,000 buys", "Binding requirement: capacity",
                 "Price/performance of", "$322,700", "16.14×", "IOPS per $"):
        assert text in html, text


# -- bad input ------------------------------------------------------------------------------------------------

def test_unknown_device_suggests_the_closest(tmp_path):
    fails(tmp_path, "plan", "equivalent", "--reference", CARD, "--using", "sas-15k-73",
          needles=("unknown device id 'sas-15k-73'; did you mean 'sas-15k-73gb'?", "next: run `dbtier catalog list`"))
    fails(tmp_path, "plan", "budget", "--usd", "1000", "--devices", "fusionio-iodrive-duo",
          needles=("unknown device id 'fusionio-iodrive-duo'", "'fusionio-iodrive-duo-1.2tb'"))
    fails(tmp_path, "plan", "value", "--result", str(probe_run(tmp_path)), "--config", "sas15k:4:raid10",
          needles=("unknown device id 'sas15k'",))


def test_an_unmeetable_requirement_names_it_and_the_best_figure(tmp_path):
    err = fails(tmp_path, "plan", "size", "--capacity-gb", "100", "--max-read-latency-us", "1",
                needles=("no configuration meets the read latency ceiling of 1 µs", "the best reachable is"))
    assert "next:" in err
    fails(tmp_path, "plan", "size", "--read-iops", "1e9", "--devices", CARD, DISK, "--max-devices", "16",
          "--headroom", "0",
          needles=("the read IOPS requirement of 1,000,000,000", "best reachable is 2,960,000 read IOPS"))


@pytest.mark.parametrize("args, needle", [
    (("budget", "--usd", "0", "--devices", DISK), "--usd must be a positive number, got 0"),
    (("budget", "--usd", "-5", "--devices", DISK), "--usd must be a positive number, got -5"),
    (("size", "--read-iops", "0"), "--read-iops must be a positive number, got 0"),
    (("size", "--capacity-gb", "-1"), "--capacity-gb must be a positive number, got -1"),
    (("size", "--capacity-gb", "10", "--headroom", "-0.1"), "--headroom must be 0 or more"),
    (("size", "--capacity-gb", "10", "--max-read-latency-us", "0"), "--max-read-latency-us must be a positive"),
    (("size", "--capacity-gb", "10", "--top", "0"), "--top must be at least 1"),
    (("size", "--capacity-gb", "10", "--hit-ratio", "1.5"), "--hit-ratio must be between 0 and 1"),
    (("equivalent", "--reference", CARD, "--using", DISK, "--read-fraction", "-0.5"),
     "--read-fraction must be between 0 and 1"),
    (("size",), "no requirement given"),
])
def test_zero_negative_and_out_of_range_numbers(tmp_path, args, needle):
    fails(tmp_path, "plan", *args, needles=(needle,))


def test_zero_count_in_a_configuration(tmp_path):
    fails(tmp_path, "plan", "value", "--result", str(probe_run(tmp_path)), "--config", f"{DISK}:0:raid10",
          needles=("device count must be at least 1, got 0",))


def test_a_layout_needing_more_devices_than_given(tmp_path):
    run = probe_run(tmp_path)
    fails(tmp_path, "plan", "value", "--result", str(run), "--config", f"{DISK}:3:raid6",
          needles=("raid6 needs at least 4 devices, got 3",))
    fails(tmp_path, "plan", "value", "--result", str(run), "--config", f"{DISK}:5:raid10",
          needles=("raid10 needs an even number of devices, got 5",))
    fails(tmp_path, "plan", "value", "--result", str(run), "--config", f"{CARD}:1:read-cache:{DISK}:3:raid6",
          needles=("raid6 needs at least 4 devices, got 3 (backing set, raid6)",))


def test_a_catalog_entry_missing_a_field(tmp_path):
    bad = DATA / "catalog" / "missing-field.toml"
    fails(tmp_path, "plan", "equivalent", "--reference", CARD, "--using", "no-latency", "--catalog", str(bad),
          needles=(f"{bad}: device #1 (id 'no-latency'): missing field 'write_latency_us' (number)",
                   "next: add write_latency_us = ... to that entry"))


def test_history_and_result_errors(tmp_path):
    run = history_run(tmp_path, None)
    fails(tmp_path, "plan", "size", "--from-history", str(run), needles=("no 'requirement' object",))
    fails(tmp_path, "plan", "size", "--from-history", str(tmp_path / "nowhere"), needles=("no result.json there",))
    fails(tmp_path, "plan", "value", "--result", str(run), "--config", f"{DISK}:4:raid10",
          needles=("neither a probe summary (targets[0].summary) nor OLTP points",))
    fails(tmp_path, "plan", "value", "--result", str(probe_run(tmp_path)), "--config", f"{DISK}:4",
          needles=("is not DEVICE:COUNT:LAYOUT",))


def test_plan_without_an_action_prints_help(tmp_path):
    r = run_dbtier("plan", cwd=tmp_path)
    assert r.returncode == 2 and "equivalent" in r.stdout
