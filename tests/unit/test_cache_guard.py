"""The cache guard (dbtier.model.guards): per-point read_path, guards[] and what the verdict, the placement
matrix, `show` and the report say when the reads came from memory. Expected figures are worked by hand."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from dbtier.cli.show import print_summary, print_verdict
from dbtier.model.guards import (backup_guards, doc_guards, dss_guards, mark_oltp, oltp_guards, point_read_path,
                                 probe_guards, read_path)
from dbtier.report.summary import summary
from dbtier.report.html import render_html
from dbtier.report.verdict.topics import verdict
from dbtier.results.store import load_run

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"

pytestmark = pytest.mark.usefixtures("unguarded")   # sentences on short saved runs


def pt(reads: float, ios: float, hits: float = 0.0) -> dict:
    """A point with `reads` page reads, `hits` shared_buffers hits and `ios` device read I/Os."""
    return {"pg": {"blks_read": reads, "blks_hit": hits}, "devices": [{"device": "vda", "read_ios": ios}],
            "read_path": read_path(reads, ios)}


def kinds(gs: list[dict]) -> list[str]:
    return [g["kind"] for g in gs]


def test_read_path_fraction():
    """12,000 page reads and 60 device read I/Os: 60 / 12,000 = 0.005."""
    rp = read_path(12_000, 60)
    assert rp == {"db_page_reads": 12_000, "device_read_ios": 60, "device_fraction": 0.005, "note": None}


def test_read_path_none_with_reason():
    """0 page reads: no fraction (0 / 0 says nothing); --dsn or no device sampled: no device figures."""
    assert read_path(0, 5)["device_fraction"] is None and "no page reads" in read_path(0, 5)["note"]
    r = read_path(12_000, 60, remote=True)
    assert r["device_read_ios"] is None and r["device_fraction"] is None and "--dsn" in r["note"]
    n = read_path(12_000, 60, devices_measured=False)
    assert n["device_fraction"] is None and "no device" in n["note"]


def test_guard_fires_below_ten_percent():
    """12,000 page reads, 60 reached the device: 0.5% < 10% -> reads-from-memory, naming the share."""
    [g] = oltp_guards([pt(12_000, 60, hits=100_000)])
    assert g["kind"] == "reads-from-memory" and g["device_fraction"] == 0.005
    assert "only 0.5% of PostgreSQL's 12,000 page reads" in g["message"] and "OS page cache" in g["message"]
    assert "write and commit path, not the data/index read path" in g["message"]


def test_no_guard_when_reads_reach_the_device():
    """12,000 page reads, 9,000 device read I/Os: 0.75 -> no guard (hits 100,000: reads 10.7% of accesses)."""
    assert oltp_guards([pt(12_000, 9_000, hits=100_000)]) == []


def test_too_few_reads():
    """500 page reads (< 1,000) and only 5,000 accesses: too few to judge either rule."""
    assert kinds(oltp_guards([pt(500, 1, hits=4_500)])) == ["too-few-reads"]


def test_sums_over_points():
    """Two points: 600 + 600 = 1,200 page reads (>= 1,000), 30 + 30 = 60 I/Os: 5% -> fires; one alone would not."""
    assert kinds(oltp_guards([pt(600, 30, 50_000)])) == ["too-few-reads"]
    assert kinds(oltp_guards([pt(600, 30, 50_000), pt(600, 30, 50_000)])) == ["reads-from-memory"]


def test_shared_buffers_rule():
    """1,466 page reads of 969,241 accesses (0.15% < 0.5%): the data set sat in shared_buffers, whatever the
    devices saw (334 I/Os: 0.23, above 10%)."""
    [g] = oltp_guards([pt(1_466, 334, hits=967_775)])
    assert g["kind"] == "reads-from-memory" and "shared_buffers" in g["message"] and "99.8%" in g["message"]


def test_remote():
    """--dsn: no device figures, a remote guard; the server's own shared_buffers rule still applies."""
    assert kinds(oltp_guards([pt(12_000, 60, 100_000)], remote=True)) == ["remote"]
    assert kinds(oltp_guards([pt(1_000, 60, 999_000)], remote=True)) == ["remote", "reads-from-memory"]


def test_old_point_recomputed_from_rate_and_series():
    """No read_path: read_iops 6 x sampled_s 10 = 60 I/Os; no read_iops: the series, 4/s x 0.5 s + 2/s x 0.5 s = 3."""
    a = {"pg": {"blks_read": 12_000}, "devices": [{"device": "vda", "read_iops": 6.0}], "sampled_s": 10.0}
    assert point_read_path(a)["device_fraction"] == pytest.approx(0.005)
    b = {"pg": {"blks_read": 300}, "devices": [{"device": "vda"}],
         "series": [{"t_s": 0.5, "devices": {"vda": {"read_iops": 4.0}}},
                    {"t_s": 1.0, "devices": {"vda": {"read_iops": 2.0}}}]}
    assert point_read_path(b)["device_read_ios"] == pytest.approx(3.0)


@pytest.mark.parametrize("name", ["oltp-tpcc.json", "oltp-matrix-tpcb.json"])
def test_saved_runs_fire(name):
    """The saved runs from this machine (reads from memory), recomputed from their points: tpcc 1,466 page reads
    in 969,241 accesses (0.15%), the matrix 1,241 in 700,667 (0.18%)."""
    doc = load_run(DATA / name)
    [g] = doc_guards(doc)
    assert g["kind"] == "reads-from-memory"
    assert g["db_page_reads"] == {"oltp-tpcc.json": 1_466, "oltp-matrix-tpcb.json": 1_241}[name]


@pytest.fixture()
def tpcc() -> dict:
    doc = load_run(DATA / "oltp-tpcc.json")
    doc["_run_dir"] = "runs/tpcc"
    return doc


@pytest.fixture()
def matrix() -> dict:
    """The saved matrix with its two directories on different devices (the saved run had both on vda,
    where the verdict says the tiers cannot be told apart)."""
    doc = load_run(DATA / "oltp-matrix-tpcb.json")
    doc["_run_dir"] = "runs/matrix"
    doc["machine"]["targets"] = []
    return doc


def test_verdict_names_the_guard(tpcc):
    v = verdict([tpcc])
    [bn] = v["bottleneck"]
    assert bn["reads_measured"] is False and "write and commit path" in bn["text"]
    assert "read path was not measured" in bn["text"]
    [c] = [c for c in v["caveats"] if c["kind"] == "reads-from-memory"]
    assert "write and commit path, not the data/index read path" in c["text"]


def test_matrix_says_reads_not_measured(matrix):
    mark_oltp(matrix)
    assert [s["name"] for s in matrix["steps"] if s.get("reads_measured") is False] == ["index-fast", "tables-fast"]
    [p] = verdict([matrix])["placement"]
    assert p["reads_measured"] is False and "reads not measured" in p["text"]
    assert "write and commit path only" in p["text"] and "cannot say where data and indexes belong" in p["text"]
    assert set(p["not_measured"]) == {"indexes", "tables"}
    assert "indexes" not in p["recommended"]["slow"] and "tables" not in p["recommended"]["slow"]
    tab = next(t for t in summary(matrix)["tables"] if t["title"].startswith("Placement matrix"))
    reads = {r[0]: r[-1] for r in tab["rows"]}
    assert reads["index-fast"] == reads["tables-fast"] == "reads not measured" and reads["wal-fast"] is None


def test_matrix_without_guard_unchanged(matrix):
    """The same matrix with the guard cleared: the usual recommendation, no 'reads not measured'."""
    matrix["guards"] = []
    [p] = verdict([matrix])["placement"]
    assert "reads not measured" not in p["text"] and "reads_measured" not in p


def test_report_and_show_are_prominent(matrix):
    html = render_html([matrix])
    assert '<div class="note bad guard"><b>Cache guard: the reads came from memory</b>' in html
    assert html.count('<span class="bad">reads not measured</span>') == 2
    out = Console(file=io.StringIO(), width=400, force_terminal=True, color_system="standard")
    print_verdict(out, verdict([matrix]))
    print_summary(out, matrix)
    text = out.file.getvalue()
    assert "\x1b[1;31mguard reads-from-memory" in text          # bold red, not dim
    assert "\x1b[1;31mreads from memory" in text


def test_probe_buffered():
    assert kinds(probe_guards({"params": {"direct_io": False}})) == ["reads-from-memory"]
    assert probe_guards({"params": {"direct_io": True}}) == []


def test_dss_warm_run():
    """A 1,000 MB database: the cold run read 950 MB (95%), the warm run 30 MB (3% < 10%): run 2 is flagged."""
    runs = [[{"read_bytes": 500e6, "caches_dropped": True}, {"read_bytes": 450e6, "caches_dropped": True}],
            [{"read_bytes": 10e6}, {"read_bytes": 20e6}]]
    [g] = dss_guards(runs, 1000e6)
    assert g["runs"] == [2] and "run 2 read 30.0 MB" in g["message"]
    assert dss_guards(runs[:1], 1000e6) == []


def test_dss_saved_spill_run_not_flagged():
    """The saved SF 0.3 run: a 79.4 MB database, 567 MB and 709 MB read (spills): both reached the device."""
    assert doc_guards(load_run(DATA / "dss-duckdb-sf0.3-spill.json")) == []


def test_backup_source_from_memory():
    """38 MB backed up with 0.4 MB read (1%): the source came from memory; the saved run read 38.6 MB: not."""
    t = {"method": "file copy", "target": "dir", "bytes": 38e6, "devices": {"vda": {"read_bytes": 0.4e6}}}
    [g] = backup_guards([t])
    assert "file copy to dir (0.4 MB read for 38.0 MB backed up)" in g["message"]
    assert doc_guards(load_run(DATA / "backup-duckdb.json")) == []
