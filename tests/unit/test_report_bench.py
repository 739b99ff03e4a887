"""The HTML report's `bench oltp` sections, from two real result documents (a tpcc sweep and a tpcb
placement matrix), plus the chart primitives they brought: notes under bars, stacked bars, stacked areas
and a fixed top for % axes."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dbtier.report.svg import charts as svg
from dbtier.report.html import render_html
from dbtier.report.svg.charts import Series
from dbtier.results.store import load_run
from test_report_html import check_structure, external_references

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"
NS = "{http://www.w3.org/2000/svg}"
STEPS = ["all-slow", "index-fast", "tables-fast", "wal-fast", "temp-fast", "all-fast"]


@pytest.fixture(scope="module")
def tpcc() -> dict:
    doc = load_run(DATA / "oltp-tpcc.json")
    doc["_run_dir"] = "runs/20261121T235357Z-bench"
    return doc


@pytest.fixture(scope="module")
def matrix() -> dict:
    doc = load_run(DATA / "oltp-matrix-tpcb.json")
    doc["_run_dir"] = "runs/20261122T000638Z-bench"
    return doc


@pytest.fixture(scope="module")
def tpcc_html(tpcc) -> str:
    return render_html([tpcc])


@pytest.fixture(scope="module")
def matrix_html(matrix) -> str:
    return render_html([matrix])


def charts(html: str) -> dict[str, str]:
    """Every chart of the page by its title (the first with that title)."""
    out: dict[str, str] = {}
    for c in re.findall(r"<svg .*?</svg>", html, re.S):
        title = ET.fromstring(c).find(f"{NS}title").text
        out.setdefault(title, c)
    return out


def parse(chart: str) -> ET.Element:
    root = ET.fromstring(chart)
    assert root.tag == f"{NS}svg"
    return root


def texts(chart: str) -> list[str]:
    return [t.text for t in parse(chart).iter(f"{NS}text")]


def rows(html: str, cls: str) -> list[str]:
    table = re.search(rf'<table class="{cls}">(.*?)</table>', html, re.S).group(1)
    return re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)


def clean(html: str) -> None:
    check_structure(html)
    assert external_references(html) == []
    for tag in ("<script", "<img", "<link", "<iframe", "@import"):
        assert tag not in html
    assert "could not be drawn" not in html


# -- one sweep (tpcc) -------------------------------------------------------------------------------

def test_tpcc_is_drawn_not_generic(tpcc_html):
    clean(tpcc_html)
    assert '<section class="run bench oltp">' in tpcc_html
    assert "does not draw" not in tpcc_html
    assert "<h3>OLTP sweep: TPC-C-like, 1 warehouse</h3>" in tpcc_html


def test_tpcc_summary(tpcc_html):
    summary = tpcc_html.split("<h3>Sweep</h3>")[0]
    assert "Knee at <b>2 clients</b> (522 TPS); best <b>639 TPS</b> at 4 clients; the limit at the knee: <b>cpu</b>" \
        in summary
    for text in ("<b>2 clients, 521.6 TPS</b>",
                 "p95 latency grew 1.92x while throughput grew 1.23x from 2 to 4 clients",
                 "<b>639.0</b> at 4 clients", ">38,340<", "<b>16,848</b> at 4 clients",
                 "p50 3.25 · p95 8.01 · p99 12.09 ms",
                 "the CPU is saturated; CPU 97% busy, iowait 2%; backends: client 15%, commit 65%, cpu 15%, lock 5%",
                 "116.8 MiB, loaded in 10.1 s", "1, 2, 4"):
        assert text in summary, text
    # the placement: each role's directory and the device under it
    placement = rows(summary, "placement")
    assert [re.search(r"<td>(.*?)</td>", r).group(1) for r in placement] == ["tables (data)", "indexes", "WAL", "temp"]
    assert "/var/tmp/b1/dbtier-pg-5e31caac/pgdata/pg_wal" in placement[2] and "vda · ext4" in placement[2]


def test_tpcc_charts(tpcc_html):
    c = charts(tpcc_html)
    assert list(c) == ["Throughput vs clients", "New orders per minute vs clients", "Transaction latency vs clients",
                       "Where the backends spent their time", "CPU and device utilisation vs clients",
                       "CPU over time (knee: 2 clients)", "Device busy % over time (knee: 2 clients)",
                       "Device await over time (knee: 2 clients)"]
    assert tpcc_html.count("<svg") == 8
    # latency on a log axis, three percentiles
    lat = texts(c["Transaction latency vs clients"])
    assert {"p50", "p95", "p99", "1", "10", "100", "knee p95"} <= set(lat)
    assert "knee: 14,388 NOPM" in texts(c["New orders per minute vs clients"])


def test_the_knee_is_ringed_on_its_point(tpcc_html):
    chart = parse(charts(tpcc_html)["Throughput vs clients"])
    dots = {c.find(f"{NS}title").text: (c.get("cx"), c.get("cy")) for c in chart.iter(f"{NS}circle")
            if c.find(f"{NS}title") is not None}
    assert set(dots) == {"TPS: 1 → 305", "TPS: 2 → 522", "TPS: 4 → 639"}
    rings = [(c.get("cx"), c.get("cy")) for c in chart.iter(f"{NS}circle") if c.get("r") == "7"]
    assert rings == [dots["TPS: 2 → 522"]]
    assert "knee: 2 clients, 522 TPS" in [t.text for t in chart.iter(f"{NS}text")]


def test_waits_are_stacked_per_client_count_with_the_bottleneck(tpcc_html):
    chart = charts(tpcc_html)["Where the backends spent their time"]
    root = parse(chart)
    segs = [r.find(f"{NS}title").text for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    # one segment per class present at each client count: 3 + 4 + 4
    assert len(segs) == 11
    assert "commit, 1: 66.7 %" in segs and "lock, 4: 30.8 %" in segs
    t = texts(chart)
    assert t.count("cpu") == 1 + 3      # the legend, and the bottleneck under each of the three bars
    assert {"commit", "lock", "client", "100"} <= set(t)


def test_time_series_of_the_knee_point(tpcc_html, tpcc):
    c = charts(tpcc_html)
    cpu = parse(c["CPU over time (knee: 2 clients)"])
    assert len(list(cpu.iter(f"{NS}polygon"))) == 3          # user, system, iowait; steal was under 0.5%
    assert {"user", "system", "iowait", "100", "seconds into the measured run"} <= set(
        texts(c["CPU over time (knee: 2 clients)"]))
    # the knee point has 11 samples; the last covers 18 ms and is left out
    assert len(tpcc["points"][1]["series"]) == 11
    busy = parse(c["Device busy % over time (knee: 2 clients)"])
    assert len(busy.find(f".//{NS}polyline").get("points").split()) == 10
    assert "vda" in texts(c["Device busy % over time (knee: 2 clients)"])
    assert "A final sample covering only a few milliseconds is left out." in tpcc_html


def test_points_table_and_method(tpcc_html):
    points = tpcc_html.split("<summary>All 3 measured points</summary>")[1].split("</details>")[0]
    for text in (">305.0<", ">18,300<", ">8,328<", ">14,388<", ">3.60<", ">99.75<", ">6.7<", ">1,420<",
                 ">single-c1-r1.txt<", "1 client</b>: cpu — the CPU is saturated"):
        assert text in points, text
    assert "TPS spread %" not in points      # no point was repeated
    method = tpcc_html.split("<h3>How the numbers were obtained</h3>")[1].split("<h3>Machine</h3>")[0]
    for text in ("pgbench (PostgreSQL); PostgreSQL 15.18", "It is not TPC-C and its figures are not tpmC",
                 "5.0 s measured after 1.0 s of warm-up, which is excluded", "one run per point",
                 "closed loop", "per-transaction pgbench logs", "p50/p95/p99/max",
                 "throughput +&lt;5% per step, or p95 latency growing faster than throughput",
                 "<code>shared_buffers</code></td><td><code>128MB</code>", "<code>synchronous_commit</code>",
                 "pgbench used up to 1.3% of the machine's CPU (0.03 cores)", "dbtier's sampler up to 0.09%",
                 "none: everything in the cluster directory", "all cores (2)"):
        assert text in method, text


# -- the placement matrix (tpcb) -------------------------------------------------------------------------

def test_matrix_summary_is_the_last_step(matrix_html):
    clean(matrix_html)
    assert "<h3>Placement matrix: pgbench tpcb (TPC-B-like), scale 2</h3>" in matrix_html
    summary = matrix_html.split("<h3>Placement matrix</h3>")[0]
    assert "<code>all-fast</code> (the last step run" in summary
    assert "<b>1 client, 893.0 TPS</b>" in summary and "37.4 MiB, loaded in 0.5 s" in summary
    # every role on the fast directory, tagged
    assert summary.count('<span class="tier fast">fast</span>') == 4 and "tier slow" not in summary


def test_matrix_bars_in_step_order_with_their_bottleneck(matrix_html):
    chart = charts(matrix_html)["Best TPS per placement step"]
    root = parse(chart)
    bars = [(float(r.get("x")), r.find(f"{NS}title").text) for r in root.iter(f"{NS}rect")
            if r.find(f"{NS}title") is not None]
    assert [t for _, t in sorted(bars)] == [
        "bottleneck: cpu, all-slow: 1.3k TPS", "bottleneck: cpu, index-fast: 674 TPS",
        "bottleneck: cpu, tables-fast: 649 TPS", "bottleneck: cpu, wal-fast: 1.23k TPS",
        "bottleneck: cpu, temp-fast: 2.91k TPS", "bottleneck: cpu, all-fast: 893 TPS"]
    assert all(r.get("fill") == svg.colour(2) for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None)
    t = texts(chart)
    # category labels in the order run, each with the bottleneck and the client count of its best point under it
    assert [x for x in t if x in STEPS] == STEPS
    assert t.count("cpu") == 6 and t.count("bottleneck: cpu") == 1
    assert [x for x in t if x.endswith(("clients", "client"))] == [
        "2 clients", "4 clients", "4 clients", "1 client", "1 client", "1 client"]
    assert "1.3k" in t and "2.91k" in t


def test_matrix_other_charts(matrix_html):
    c = charts(matrix_html)
    for title in ("p95 latency per placement step", "CPU and device busy per placement step",
                  "TPS vs clients, every step", "Throughput vs clients", "CPU over time (knee: 1 client)",
                  "Device busy % over time (knee: 1 client)"):
        assert title in c, title
    assert "New orders per minute vs clients" not in c       # tpcb has no NOPM
    busy = texts(c["CPU and device busy per placement step"])
    assert "100" in busy and "125" not in busy               # a % axis stops at 100
    assert [x for x in texts(c["TPS vs clients, every step"]) if x in STEPS] == STEPS
    # the last step's charts open, every other step's in a collapsed section
    assert matrix_html.count('<details class="step">') == 5
    assert matrix_html.count("<svg") == 4 + 5 * 7 + 7


def test_matrix_table(matrix_html):
    table = rows(matrix_html, "matrix")
    assert [re.search(r"<b[^>]*>(.*?)</b>", r).group(1) for r in table] == STEPS
    tiers = [re.findall(r'class="tier (fast|slow)"', r) for r in table]
    assert tiers == [["slow"] * 4, ["slow", "fast", "slow", "slow"], ["fast", "fast", "slow", "slow"],
                     ["fast", "fast", "fast", "slow"], ["fast"] * 4, ["fast"] * 4]
    first = table[0]
    for cell in (">1 · 1,011<", ">1,304<", ">2<", ">78,270<", ">6.20<", ">98<", ">15<", ">0.07<", ">cpu</span>"):
        assert cell in first, cell
    assert 'title="/var/tmp/m1/slow/dbtier-pg-f62a4ec6/pgdata/pg_wal"' in first
    assert "fast = <code>/var/tmp/m1/fast</code>, slow = <code>/var/tmp/m1/slow</code>" in matrix_html
    assert "steps: all slow; indexes fast; + tables; + WAL; + temp; all fast" in matrix_html


# -- partial, failed and odd documents ----------------------------------------------------------------

def test_failed_run_without_points(tpcc):
    doc = copy.deepcopy(tpcc)
    doc.update(status="failed", points=[], knee=None, placement=None, load=None,
               errors=[{"message": "pgbench: could not connect to server", "hint": "see raw/server-single.log"}])
    html = render_html([doc])
    clean(html)
    assert '<section class="run bench oltp">' in html
    assert "This run is <b>failed</b>: 0 points measured before it stopped" in html
    assert "pgbench: could not connect to server" in html and "see raw/server-single.log" in html
    assert "No points were measured." in html and "No placement recorded" in html
    assert html.count("<svg") == 0


def test_interrupted_matrix_with_an_empty_last_step(matrix):
    doc = copy.deepcopy(matrix)
    doc["status"] = "interrupted"
    doc["steps"] = doc["steps"][:3]
    doc["steps"][-1]["points"] = []
    doc["steps"][-1]["knee"] = None
    doc.update(points=[], knee=None, placement=None)
    html = render_html([doc])
    clean(html)
    assert "This run is <b>interrupted</b>: 6 points measured" in html
    chart = charts(html)["Best TPS per placement step"]
    assert [x for x in texts(chart) if x in STEPS] == STEPS[:3] and "no points" in texts(chart)
    assert len([r for r in parse(chart).iter(f"{NS}rect") if r.find(f"{NS}title") is not None]) == 2
    # the last step's placement still shows in the summary, from its step
    assert "dbtier-pg-faff2f63-wal" in html.split("<h3>Placement matrix</h3>")[0]


def test_repeats_and_open_loop(tpcc):
    """Three runs per point, hand-made: 4 clients ran 600, 639 and 680 TPS -> the median 639, the spread
    (680 - 600) / 639 = 12.5%, the widest (1 client: 10 / 305 = 3.3%, 2 clients: 30 / 521.6 = 5.8%).
    An older document without tps_spread: the spread is recomputed from tps_runs, one definition."""
    doc = copy.deepcopy(tpcc)
    doc["params"]["repeat"] = 3
    doc["params"]["rate"] = 400
    runs = {1: [300.0, 305.0, 310.0], 2: [500.0, 521.6, 530.0], 4: [600.0, 639.0, 680.0]}
    for p in doc["points"]:
        p.update(repeats=3, tps_runs=runs[p["clients"]], tps_spread_pct=None)
    html = render_html([doc])
    clean(html)
    assert ("3 runs per point; TPS, TPM, NOPM and latency percentiles are the medians of the runs (an even count: "
            "the mean of the two middle values)") in html
    assert "the widest TPS spread is 12.5% of the median at 4 clients (600.0–680.0, n=3)" in html
    assert ("Each point is the median of 3 runs (the mean of the two middle ones for an even count); the widest "
            "spread is 12.5% at 4 clients (3 runs, 600.0–680.0 TPS).") in html
    assert "open loop: transactions scheduled at 400 per second" in html
    assert "TPS spread %" in html and ">12.5<" in html and ">600.0–680.0<" in html


def test_text_from_the_document_is_escaped(tpcc, matrix):
    doc = copy.deepcopy(matrix)
    doc["steps"][0]["name"] = "<b>slow</b>"
    doc["steps"][0]["points"][1]["bottleneck"] = "<i>cpu</i>"
    doc["steps"][0]["points"][1]["bottleneck_evidence"] = "<script>x</script>"
    t = copy.deepcopy(tpcc)
    t["points"][0]["waits"] = {"<w>": 1.0}
    t["placement"]["wal"] = '/x/"><img onerror=alert(1)>'
    html = render_html([doc, t])
    clean(html)
    assert "<b>slow</b>" not in html and "&lt;b&gt;slow&lt;/b&gt;" in html
    assert "<i>cpu</i>" not in html and "<w>" not in html and "&lt;img onerror" in html


def test_other_bench_kinds_and_odd_values_fall_back_or_survive(tpcc):
    html = render_html([{"schema_version": 1, "command": "bench", "bench": "tpcds", "status": "ok", "params": {}},
                        {"schema_version": 1, "command": "bench", "status": "ok"}])
    check_structure(html)
    assert html.count("This report does not draw bench runs yet") == 2
    # dss and backup are drawn now: empty documents of theirs still render, without charts
    html = render_html([{"schema_version": 1, "command": "bench", "bench": "dss", "status": "ok", "params": {}},
                        {"schema_version": 1, "command": "bench", "bench": "backup", "status": "failed"}])
    check_structure(html)
    assert "does not draw" not in html and "could not be drawn" not in html and "<svg" not in html
    assert "No query finished." in html and "No backup finished." in html
    odd = copy.deepcopy(tpcc)
    odd["points"] = [{"clients": 1}, {"clients": "x"}, 7, {"clients": 2, "tps": None, "lat_ms": None,
                                                            "devices": [None, {"device": "vdb"}],
                                                            "series": [{"t_s": 0.5}, "x"], "waits": {"cpu": "?"}}]
    odd["knee"] = {"clients": 2, "tps": None}
    odd["steps"] = [7, {"name": None, "points": None, "placement": "?", "knee": []}]
    html = render_html([odd])
    check_structure(html)
    assert "could not be drawn" not in html


def test_two_runs_side_by_side(tpcc, matrix):
    html = render_html([tpcc, matrix])
    clean(html)
    assert html.index('id="run-1"') < html.index('id="run-2"')
    assert '<nav class="toc">' in html and "20261121T235357Z-bench" in html and "20261122T000638Z-bench" in html


# -- chart primitives -----------------------------------------------------------------------------------

def test_stacked_bar_chart():
    chart = svg.stacked_bar_chart("Waits", ["1", "2"], [
        Series("cpu", [(0, 20), (1, 50)], "#e15759"),
        Series("lock", [(0, 80), (1, None)]),
        Series("commit", [(1, 50), (5, 10)]),          # an index outside the categories is ignored
    ], y_max=100, unit="%", notes=["cpu", "lock\n2 clients"], x_label="clients")
    root = parse(chart)
    segs = {r.find(f"{NS}title").text: r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None}
    assert set(segs) == {"cpu, 1: 20 %", "lock, 1: 80 %", "cpu, 2: 50 %", "commit, 2: 50 %"}
    assert segs["cpu, 1: 20 %"].get("fill") == "#e15759"
    # stacked: each segment starts where the one below ends, the first on the zero line
    a, b = segs["cpu, 1: 20 %"], segs["lock, 1: 80 %"]
    assert abs(float(b.get("y")) + float(b.get("height")) - float(a.get("y"))) < 0.2
    assert abs(float(a.get("height")) * 4 - float(b.get("height"))) < 0.5
    t = texts(chart)
    assert {"cpu", "lock", "commit", "2 clients", "clients", "100"} <= set(t)
    assert "120" not in t and t.count("100") == 3      # the axis top and the two totals


def test_stacked_bar_chart_colours_by_series_and_empty():
    assert "no data" in texts(svg.stacked_bar_chart("none", ["a"], [Series("s", [(0, None)])]))
    assert "no data" in texts(svg.stacked_bar_chart("none", [], []))
    esc = svg.stacked_bar_chart("<t>", ["<c>"], [Series("<s>", [(0, 1)])], notes=["<n>"])
    parse(esc)
    assert "<c>" not in esc and "<n>" not in esc and "&lt;n&gt;" in esc


def test_stacked_area_chart():
    chart = svg.stacked_area_chart("CPU", [
        Series("user", [(0.5, 60), (1.0, 40), (1.5, 50)]),
        Series("system", [(0.5, 30), (1.0, 50), (1.5, None)]),
    ], y_max=100, x_label="s", unit="%")
    root = parse(chart)
    polys = list(root.iter(f"{NS}polygon"))
    assert len(polys) == 2
    # the system band's lower edge is the user band's upper edge
    user = [tuple(map(float, p.split(","))) for p in polys[0].get("points").split()]
    system = [tuple(map(float, p.split(","))) for p in polys[1].get("points").split()]
    assert system[3:][::-1] == user[:3]
    assert {"user", "system", "100", "s"} <= set(texts(chart))
    titles = [g.find(f"{NS}title").text for g in root.iter(f"{NS}g") if g.find(f"{NS}title") is not None]
    assert "user: up to 60 %" in titles
    one = parse(svg.stacked_area_chart("one", [Series("u", [(1, 50)])], y_max=100))
    assert len(list(one.iter(f"{NS}polygon"))) == 1
    assert "no data" in texts(svg.stacked_area_chart("none", []))


def test_bar_chart_notes_and_y_max_and_line_chart_y_max():
    chart = svg.bar_chart("busy", ["a", "b"], [Series("cpu", [(0, 99.5), (1, 40)])], y_max=100,
                          notes=["cpu\n4 clients", "storage"])
    t = texts(chart)
    assert {"cpu", "4 clients", "storage", "100"} <= set(t) and "125" not in t
    # without notes the chart is as before
    plain = svg.bar_chart("busy", ["a"], [Series("cpu", [(0, 99.5)])])
    assert "125" in texts(plain) or "120" in texts(plain)
    line = svg.line_chart("util", [Series("cpu", [(1, 97), (2, 99)])], y_max=100)
    assert "100" in texts(line) and "125" not in texts(line)
    # data above y_max still fit
    over = svg.line_chart("util", [Series("cpu", [(1, 97), (2, 130)])], y_max=100)
    assert "140" in texts(over) or "150" in texts(over)


# -- bench dss, bench backup, a lab, the verdict -------------------------------------------------------------

from dbtier.report.inputs import load_runs          # noqa: E402
from samples import BACKUP_DUCKDB, DSS_SPILL, LAB, make_lab   # noqa: E402


@pytest.fixture(scope="module")
def dss() -> dict:
    doc = load_run(DSS_SPILL)
    doc["_run_dir"] = "runs/20261122T002300Z-bench"
    return doc


@pytest.fixture(scope="module")
def lab_html(tmp_path_factory) -> str:
    return render_html(load_runs([make_lab(tmp_path_factory.mktemp("lab"))]))


def test_dss_section(dss):
    html = render_html([dss])
    clean(html)
    assert '<section class="run bench dss">' in html and "does not draw" not in html
    assert "<h3>TPC-H power run: DuckDB, SF 0.3</h3>" in html
    for text in ("<b>1.837 s</b>", "1 query; peak 1.4 MB (Q9); 23% of the time", "97% of all cores",
                 "320 MB/s from vda: 21% of the probe's sequential read (1,552 MB/s)", "answers</th><td>not checked",
                 "dbtier-dss-temp-", "All 22 queries", "1 cold, the rest warm",
                 "one warm run per query at most (n=1): no spread measured"):
        assert text in html, text
    c = charts(html)
    assert list(c) == ["TPC-H: time per query", "TPC-H: temp spilled per query", "TPC-H: device bytes per query",
                       "TPC-H: CPU busy per query"]
    bars = [r.find(f"{NS}title").text for r in parse(c["TPC-H: time per query"]).iter(f"{NS}rect")
            if r.find(f"{NS}title") is not None]
    assert len(bars) == 22 * 2 and "warm (median), Q9: 0.418 s" in bars
    spill = [r.find(f"{NS}title").text for r in parse(c["TPC-H: temp spilled per query"]).iter(f"{NS}rect")
             if r.find(f"{NS}title") is not None]
    assert [t for t in spill if not t.endswith(": 0 MB")] == ["temp MB, Q9: 1.41 MB"]


def test_backup_section():
    doc = load_run(BACKUP_DUCKDB)
    html = render_html([doc])
    clean(html)
    assert '<section class="run bench backup">' in html
    assert "<h3>Full backup: DuckDB (TPC-H, 36.3 MiB)</h3>" in html
    assert ("<b>file copy</b>: 531 MB/s to the directory, 804 MB/s to null — limited by the <b>target (write)</b>; "
            "<b>EXPORT DATABASE parquet</b>: 38 MB/s to the directory — limited by the <b>CPU (compression)</b>.") \
        in html
    chart = parse(charts(html)["Backup throughput: to the directory and to null"])
    bars = [r.find(f"{NS}title").text for r in chart.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert bars == ["to the directory, file copy: 531 MB/s", "to the directory, EXPORT DATABASE parquet: 38.3 MB/s",
                    "to null, file copy: 804 MB/s"]
    assert {"target", "cpu"} <= set(texts(charts(html)["Backup throughput: to the directory and to null"]))
    assert "compression kept the backup process at 0.87 cores" in html


def test_the_verdict_comes_first(dss):
    html = render_html([dss])
    assert html.index('id="verdict"') < html.index("<h2>Runs</h2>") < html.index('id="run-1"')
    verdict = html[html.index('id="verdict"'):html.index("<h2>Runs</h2>")]
    # the saved power run took 1.84 s: too short to call CPU- or storage-bound (report.verdict.MIN_DSS_RUN_S)
    assert "<th>bottleneck</th>" in verdict
    # 1.84 s at SF 0.3 is 6.12 s per scale factor: 5 s needs SF 0.817, a scale of 0.9 or more
    assert ('<p class="unjudged">Whether TPC-H SF 0.3 on DuckDB is CPU-, storage- or temp-bound is not judged, too '
            "little evidence: a power run of 1.84 s; at least 5 s needed; run --scale 0.9 or more (lab: --dss-scale 0.9; 6.12 s per scale "
            "factor measured at SF 0.3") in verdict
    assert "is CPU-bound" not in verdict
    # the rules and guards behind the sentences are listed under the verdict
    assert "<th>long enough TPC-H runs</th><td>a power run lasts at least 5 s</td>" in verdict
    assert "<svg" not in verdict


def test_lab_is_expanded_into_its_step_runs(lab_html):
    clean(lab_html)
    assert "1 run and 7 lab step runs on vm" in lab_html
    # the lab first, then every step's run in step order, each its own section
    order = [lab_html.index(x) for x in ('id="run-1"', 'id="run-2"', 'id="run-3"', 'id="run-4"', 'id="run-5"',
                                         'id="run-6"', 'id="run-7"', 'id="run-8"')]
    assert order == sorted(order)
    assert [m for m in re.findall(r'<section class="run ([a-z ]+)">', lab_html)] == [
        "lab", "probe", "bench oltp", "bench dss", "bench dss", "bench backup", "bench backup", "plan"]
    assert "<h2 id=\"run-4\">bench · lab/dss-1" in lab_html
    steps = rows(lab_html, "steps")
    assert len(steps) == 7 and 'href="#run-4"><code>dss-1</code></a>' in steps[2]
    assert "dbtier bench dss --scale 0.1 --repeat 2 --data /var/tmp/lab-sample/fast --temp /var/tmp/lab-sample/slow" \
        in steps[3]
    # a step's document is not repeated inside the lab's JSON
    lab_json = lab_html[lab_html.index('<section class="run lab">'):lab_html.index('id="run-2"')]
    assert "_children" not in lab_json and "queries" not in lab_json


def test_lab_side_by_side_dss_and_backup(lab_html):
    compare = lab_html[lab_html.index('id="compare"'):lab_html.index('<section class="run lab">')]
    assert "<h3>bench dss: 2 runs</h3>" in compare and "<h3>bench backup: 2 runs</h3>" in compare
    assert "temp on /var/tmp/lab-sample/slow" in compare
    # single runs: no figure in bold, and the table says why
    assert 'num best' not in compare
    assert "No best is marked, too little evidence (single runs: repeat with --repeat 3)" in compare
    c = charts(compare)
    bars = [r.find(f"{NS}title").text for r in parse(c["TPC-H per-query time, runs side by side"]).iter(f"{NS}rect")
            if r.find(f"{NS}title") is not None]
    assert len(bars) == 44 and any(b.startswith("lab/dss-2 (temp on /var/tmp/lab-sample/slow), Q10:") for b in bars)
    assert "Backup MB/s to the directory, runs side by side" in c
    # the verdict on the lab
    assert "The TPC-H runs cannot tell the temp tiers apart" in lab_html
    # its OLTP step read from memory (cache guard): no cheapest configuration is built on its load
    assert "The cheapest configuration for the measured load is not judged" in lab_html
    assert "the binding requirement is capacity" not in lab_html


def test_lab_with_failed_and_unreadable_steps(tmp_path):
    lab_dir = make_lab(tmp_path, fail={"dss-2": "dbtier: query 9 failed <badly>"})
    (lab_dir / "backup-1" / "result.json").write_text("{")
    html = render_html(load_runs([lab_dir]))
    clean(html)
    steps = rows(html, "steps")
    assert '<span class="badge failed">failed</span>' in steps[3] and "query 9 failed &lt;badly&gt;" in steps[3]
    assert "its result could not be read" in steps[4] and "not valid JSON" in steps[4]
    assert html.count('<section class="run bench dss">') == 1
    assert "Lab step dss-2 failed: dbtier: query 9 failed &lt;badly&gt;" in html


def test_a_lab_without_its_step_runs_still_renders():
    doc = load_run(LAB / "lab.json")          # not loaded through inputs: no step documents attached
    html = render_html([doc])
    clean(html)
    assert '<section class="run lab">' in html and len(rows(html, "steps")) == 7
    assert "fast tier" in html and "<code>oltp_clients</code>" in html


def test_simulate_and_history_sections_are_drawn_by_their_modules(monkeypatch):
    import dbtier.report.sections.history as history_report

    monkeypatch.setattr(history_report, "section_html", lambda doc, run_dir: f"<h3>History of {run_dir}</h3>")
    doc = {"schema_version": 1, "command": "history", "status": "ok", "params": {"action": "import"},
           "_run_dir": "runs/h1"}
    html = render_html([doc])
    check_structure(html)
    assert "<h3>History of runs/h1</h3>" in html and '<section class="run history">' in html
    assert "This report does not draw history runs yet" not in html
