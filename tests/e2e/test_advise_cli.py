"""`dbtier advise` end to end on real exports: a DMA collection, a two-instance AWR export (RAC), several
databases at once, history runs already made; every summed figure against a hand computation from the
import's own series, every price against the providers' formulas worked by hand."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import DATA, assert_clean_error, call_main, load_doc

H = DATA / "history"
DMA19 = H / "dma" / "dma-oracle19c-single.tgz"
DMA11 = H / "dma" / "dma-oracle11g-single.tgz"
RAC = H / "awr" / "awr_sysstat_PRODRAC.csv"
KEYS = {"requirement", "databases", "clustered", "bound", "options", "recommended", "assumptions"}
OPTION_KEYS = {"where", "instance", "description", "purchase_usd", "monthly_usd", "total_usd", "per_year_usd",
               "service_years", "binding", "meets", "reserve", "caveats"}
DB_KEYS = {"name", "instances", "read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb",
           "write_tb_per_day"}


def advise(tmp_path: Path, *args: str, out: str = "a") -> dict:
    r = call_main("advise", *args, "--json", "--out", str(tmp_path / out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
def test_dma_collection_to_four_options_on_one_basis(tmp_path):
    doc = advise(tmp_path, str(DMA19))
    a = doc["advice"]
    assert KEYS <= set(a) and a["clustered"] is False
    assert "upper bound" in a["bound"]                       # a DMA p95 is the highest hour's p95
    imp = load_doc(tmp_path / "a" / "history" / "1-dma")
    hours = imp["databases"][0]["hour_of_day"]
    (db,) = a["databases"]
    assert DB_KEYS <= set(db) and db["name"] == "VBOXNCDB" and db["instances"] == 1 and db["capacity_gb"] == 8.0
    # the p95 of one DMA database: its highest hour-of-day p95
    assert db["read_iops"] == pytest.approx(max(h["read_iops"]["p95"] for h in hours))
    assert a["requirement"]["read_iops"] == pytest.approx(db["read_iops"])
    # the mean day: each hour's mean write rate (MB/s) x 3,600 s, added over the 24 hours, in TB
    assert db["write_tb_per_day"] == pytest.approx(sum(h["write_mbps"]["avg"] for h in hours) * 3600 / 1e6)
    opts = a["options"]
    assert {o["where"] for o in opts} == {"on-prem", "aws", "azure", "gcp"}
    for o in opts:
        assert set(o) == OPTION_KEYS and o["meets"] and o["service_years"] == 5
        if o["where"] != "on-prem":
            assert o["total_usd"] == pytest.approx(o["monthly_usd"] * 12 * 5) and o["purchase_usd"] == 0
            assert any("burst credits not checked" in c for c in o["caveats"])
    # gp3: 8 GB x 1.3 headroom = 10.4 GB = 9.69 GiB -> a 10 GiB volume at $0.08 per GiB-month; the IOPS and
    # MB/s it includes (3,000, 125) are far above 34 x 1.3 and 0.9 x 1.3
    aws = next(o for o in opts if o["where"] == "aws")
    assert math.ceil(8 * 1.3e9 / 2**30) == 10 and aws["monthly_usd"] == pytest.approx(10 * 0.08)
    assert aws["total_usd"] == pytest.approx(48.0)
    rec = opts[a["recommended"]]
    assert rec["total_usd"] == min(o["total_usd"] for o in opts if o["meets"])
    assert [o["total_usd"] for o in opts] == sorted(o["total_usd"] for o in opts)
    html = (tmp_path / "a" / "report.html").read_text()
    assert html.index('id="answer"') < html.index("Options, cheapest")
    assert "VBOXNCDB needs" in html


def _cells(rows, step=3600):
    """The grid as consolidate.py's docstring defines it, written again here: a cell's rate is the
    time-weighted mean of the intervals overlapping it, kept when they cover at least half the cell."""
    acc = {}
    for start, end, rate in rows:
        a, b = start, end
        for cell in range(int(a // step), int(math.ceil(b / step))):
            lo, hi = max(a, cell * step), min(b, (cell + 1) * step)
            if hi > lo:
                s, w = acc.get(cell, (0.0, 0.0))
                acc[cell] = (s + rate * (hi - lo), w + (hi - lo))
    return {c: s / w for c, (s, w) in acc.items() if w >= step / 2}


def _instance_cells(run: Path, metric: str) -> dict[str, dict[int, float]]:
    """Each RAC instance's `metric` on the hourly grid, from the import's own totals (the series dbtier sums)."""
    con = duckdb.connect()
    return {name: _cells(con.execute(f"""SELECT epoch(start), epoch("end"), {metric}
                                         FROM '{run}/history/1-awr/totals.parquet'
                                         WHERE database = '{name}' ORDER BY start""").fetchall())
            for name in ("PRODRAC/1", "PRODRAC/2")}


def _quantile(xs, q):
    xs = sorted(xs)
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)


@pytest.mark.slow
def test_rac_instances_are_summed_and_oracle_rac_has_no_cloud_volumes(tmp_path):
    doc = advise(tmp_path, str(RAC), "--capacity-gb", "500", "--percentile", "max")
    a = doc["advice"]
    (db,) = a["databases"]
    assert db["name"] == "PRODRAC" and db["instances"] == 2 and a["clustered"] is True
    series = _instance_cells(tmp_path / "a", "read_iops")
    both = sorted(set(series["PRODRAC/1"]) & set(series["PRODRAC/2"]))
    summed = [series["PRODRAC/1"][c] + series["PRODRAC/2"][c] for c in both]
    assert db["read_iops"] == pytest.approx(max(summed), rel=1e-9)
    assert a["requirement"]["read_iops"] == pytest.approx(max(summed), rel=1e-9)
    # the sum's peak is at most the sum of the instances' own peaks, and above either alone
    assert max(summed) <= max(series["PRODRAC/1"].values()) + max(series["PRODRAC/2"].values()) + 1e-6
    assert max(summed) > max(series["PRODRAC/1"].values())
    onprem = next(o for o in a["options"] if o["where"] == "on-prem")
    assert onprem["meets"] and a["options"][a["recommended"]] is not None
    assert any(x.startswith("2 instances share the storage") for x in a["assumptions"])
    for where, route in (("aws", "Oracle Database@AWS"), ("azure", "Oracle Database@Azure"),
                         ("gcp", "Oracle Database@Google Cloud")):
        o = next(o for o in a["options"] if o["where"] == where)
        assert not o["meets"] and o["total_usd"] is None and route in o["description"]
        assert "RAC" in o["caveats"][0]
    assert a["recommended"] == 0 and a["options"][0]["where"] == "on-prem"
    # `history requirement` on the same import answers the same: no loop between the two commands
    r = call_main("history", "requirement", str(tmp_path / "a" / "history" / "1-awr"), "--percentile", "max",
                  "--json", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["read_iops"] == pytest.approx(max(summed), rel=1e-9)


@pytest.mark.slow
def test_p95_of_the_rac_sum_is_the_grid_quantile(tmp_path):
    doc = advise(tmp_path, str(RAC), "--cloud", "none")
    series = _instance_cells(tmp_path / "a", "write_iops")
    # the window is where both have history; inside it, a cell one instance lacks (its restart) adds nothing
    a, b = series["PRODRAC/1"], series["PRODRAC/2"]
    window = range(max(min(a), min(b)), min(max(a), max(b)) + 1)
    summed = [a.get(c, 0.0) + b.get(c, 0.0) for c in window if c in a or c in b]
    assert len(summed) == 47 and sum(1 for c in window if (c in a) != (c in b)) == 1
    assert doc["advice"]["requirement"]["write_iops"] == pytest.approx(_quantile(summed, 0.95), rel=1e-9)
    assert [o["where"] for o in doc["advice"]["options"]] == ["on-prem"]


@pytest.mark.slow
def test_two_dma_databases_are_summed_per_hour_of_day(tmp_path):
    doc = advise(tmp_path, str(DMA19), str(DMA11), "--cloud", "aws")
    a = doc["advice"]
    imp = load_doc(tmp_path / "a" / "history" / "1-dma")
    per_hour: dict[int, float] = {}
    for d in imp["databases"]:
        for h in d["hour_of_day"]:
            per_hour[h["hour"]] = per_hour.get(h["hour"], 0.0) + h["write_iops"]["p95"]
    assert a["requirement"]["write_iops"] == pytest.approx(max(per_hour.values()))
    assert {d["name"] for d in a["databases"]} == {d["name"] for d in imp["databases"]}
    caps = [d["capacity_gb"] for d in imp["databases"]]
    assert a["requirement"]["capacity_gb"] == pytest.approx(sum(caps))
    assert "estimates" in a["bound"]
    # the same from the import run directory and from a consolidation of it
    again = advise(tmp_path, str(tmp_path / "a" / "history" / "1-dma"), "--cloud", "aws", out="b")
    assert again["advice"]["requirement"]["write_iops"] == pytest.approx(a["requirement"]["write_iops"])
    assert not (tmp_path / "b" / "history").exists()           # nothing imported again


@pytest.mark.slow
def test_current_storage_against_the_requirement(tmp_path):
    probe = tmp_path / "probe"
    probe.mkdir()
    shutil.copy(DATA / "probe" / "quick-ext4-virtio.json", probe / "result.json")
    doc = advise(tmp_path, str(DMA19), "--cloud", "none", "--current", str(probe))
    cur = doc["advice"]["current"]
    s = json.loads((probe / "result.json").read_text())["targets"][0]["summary"]
    req = doc["advice"]["requirement"]
    f = cur["figures"]["read_iops"]
    assert f["measured"] == s["read_iops_4k"] and f["margin"] == pytest.approx(s["read_iops_4k"] / req["read_iops"] - 1)
    assert cur["meets"] is True and cur["margin"] == min(x["margin"] for x in cur["figures"].values())


@pytest.mark.slow
def test_terminal_answer_comes_first(tmp_path):
    r = call_main("advise", str(RAC), "--capacity-gb", "500", "--out", str(tmp_path / "t"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("PRODRAC (2 instances) needs")
    assert any(x.startswith("Recommended: on-prem:") for x in lines[:4])
    assert "Oracle Database@AWS" in r.stdout and "over 5 years" in r.stdout


def test_bad_input(tmp_path):
    assert_clean_error(call_main("advise", str(tmp_path / "nope.csv"), cwd=tmp_path), "no such file")
    assert_clean_error(call_main("advise", cwd=tmp_path), "no history given")
    assert_clean_error(call_main("advise", str(DMA19), "--cloud", "ibm", cwd=tmp_path), "--cloud ibm")
    assert_clean_error(call_main("advise", str(DMA19), "--instance", "m6i.large", cwd=tmp_path),
                       "belongs to one provider")
    assert_clean_error(call_main("advise", "--prometheus", "http://127.0.0.1:1", cwd=tmp_path), "--start and --end")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    assert_clean_error(call_main("advise", str(junk), cwd=tmp_path), "cannot tell which source")
    probe = tmp_path / "probe"
    probe.mkdir()
    shutil.copy(DATA / "probe" / "quick-ext4-virtio.json", probe / "result.json")
    assert_clean_error(call_main("advise", str(probe), cwd=tmp_path), "not a `dbtier history` run")
    assert_clean_error(call_main("advise", str(DMA19), "--current", str(DMA19.parent), cwd=tmp_path), "--current")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_instances_that_do_not_overlap_are_named(tmp_path):
    lines = RAC.read_text().splitlines()
    moved = [lines[0]] + [ln.replace("2024-03-0", "2024-04-0") if ',2,"' in ln else ln for ln in lines[1:]]
    f = tmp_path / "awr_sysstat_SPLIT.csv"
    f.write_text("\n".join(moved) + "\n")
    r = call_main("advise", str(f), "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert_clean_error(r, "do not overlap", "PRODRAC/1")


@pytest.mark.slow
def test_a_provider_that_cannot_carry_it_says_why(tmp_path):
    doc = advise(tmp_path, str(DMA19), "--capacity-gb", "9000000", "--cloud", "aws")
    aws = next(o for o in doc["advice"]["options"] if o["where"] == "aws")
    assert aws["meets"] is False and aws["total_usd"] is None and aws["caveats"][0]


def _rac_rows(transform):
    """Instance 1 of the RAC sample, its rows (split on commas: no field holds one) changed by `transform`."""
    head, *rows = RAC.read_text().strip().splitlines()
    mine = [r.split(",") for r in rows if r.split(",")[3] == "1"]
    return "\n".join([head] + [",".join(r) for r in transform(mine)]) + "\n"


@pytest.mark.slow
def test_a_database_without_writes_and_one_interval_are_said(tmp_path):
    def no_writes(rows):
        for r in rows:
            r[9], r[11] = "1000", "8192000"          # the write counters never move
        return rows
    f = tmp_path / "awr_sysstat_RO.csv"
    f.write_text(_rac_rows(no_writes))
    doc = advise(tmp_path, str(f), "--cloud", "none", "--capacity-gb", "10")
    assert any(w.startswith("PRODRAC: no writes in its history") for w in doc["advice"]["warnings"])
    g = tmp_path / "awr_sysstat_ONE.csv"
    g.write_text(_rac_rows(lambda rows: rows[:2]))
    doc = advise(tmp_path, str(g), "--cloud", "none", "--capacity-gb", "10", out="b")
    assert any(w.startswith("PRODRAC: one interval of history") for w in doc["advice"]["warnings"])
    r = call_main("advise", str(g), "--capacity-gb", "10", "--cloud", "none", "--out", str(tmp_path / "c"),
                  cwd=tmp_path)
    assert "Check: PRODRAC: one interval of history" in r.stdout


@pytest.mark.slow
def test_roles_are_placed_apart_on_prem_and_in_the_cloud(tmp_path):
    awr = [str(H / "awr" / "awr_iostat_filetype_PROD.csv"), str(H / "awr" / "awr_sysstat_PROD.csv")]
    doc = advise(tmp_path, *awr, "--roles", "--capacity-gb", "200", "--cloud", "aws")
    a = doc["advice"]
    assert a["roles"]["file_types"]["log"] == ["Log File"] and a["roles"]["file_types"]["temp"] == ["Temp File"]
    onprem = next(o for o in a["options"] if o["where"] == "on-prem")
    # each role sized alone by `plan size` on its own figures: the totals add up to the on-prem option's
    total = 0.0
    for role, q in a["roles"]["requirements"].items():
        assert f"{role}: " in onprem["description"]
        figs = [x for k in ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb")
                if q.get(k) for x in (f"--{k.replace('_', '-')}", str(q[k]))]
        r = call_main("plan", "size", *figs, "--write-tb-per-day", str(q["write_tb_per_day"]), "--json",
                      "--out", str(tmp_path / f"p-{role}"), cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        total += json.loads(r.stdout)["candidates"][0]["tco"]["total_usd"]
    assert onprem["total_usd"] == pytest.approx(total)
    aws = next(o for o in a["options"] if o["where"] == "aws")
    assert aws["meets"] and aws["description"].count("gp3") + aws["description"].count("io2") >= 1
    # the single basis: the parts (45.0 MB/s of reads at p95) over the totals (9.8), said
    assert a["requirement"]["read_mbps"] == pytest.approx(45.0, abs=0.05)
    assert any("parts and totals disagree" in w for w in a["warnings"])
