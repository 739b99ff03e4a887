"""A fleet probe (`probe --hosts`) in the report, show and compare, from a real two-host loopback
document; and a single-host probe's report, show and compare as they were before fleets existed."""

from __future__ import annotations

import copy
import hashlib
import json
import re

import pytest

from conftest import call_main
from samples import DATA, PROBE, run_dir
from test_report_html import check_structure, external_references

from dbtier.report.figures import core as F
from dbtier.report import summary as FC
from dbtier.report.figures import fleet as FF
from dbtier.report.figures import tables as FT
from dbtier.report.html import render_html
from dbtier.report.markdown import render_markdown

FLEET = DATA / "probe" / "fleet-2hosts-quick.json"
HOSTS = ("127.0.0.2", "127.0.0.3")


@pytest.fixture
def fleet() -> dict:
    return json.loads(FLEET.read_text())


def incomplete(doc: dict) -> dict:
    """The document as if 127.0.0.3 had dropped mid-run (what measure/fleet.py writes then)."""
    d = copy.deepcopy(doc)
    d["status"] = "failed"
    d["aggregate"]["complete"] = False
    d["aggregate"]["status"] = "incomplete"
    d["targets"] = [d["aggregate"]]          # one entry in the written document, two copies once read back
    d["hosts"][1]["status"] = "dropped"
    d["hosts"][1]["targets"][0]["status"] = "dropped"
    d["errors"].append({"host": "127.0.0.3", "message": "127.0.0.3: connection refused (fio --server gone)",
                        "hint": "the other hosts' points are kept"})
    return d


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


# -- the pure parts -----------------------------------------------------------------------------------------

def test_fleet_helpers(fleet):
    single = json.loads(PROBE.read_text())
    assert F.is_fleet(fleet) and not F.is_fleet(single)
    rows = FF.fleet_hosts(fleet)
    assert [h["host"] for h in rows] == list(HOSTS)
    assert [h["status"] for h in rows] == ["ok", "ok"] and rows[0]["checks"] == "local"
    assert rows[1]["summary"]["read_iops_4k"] == fleet["hosts"][1]["targets"][0]["summary"]["read_iops_4k"]
    assert FF.fleet_notice(fleet) is None and FF.fleet_dropped(fleet) == []
    lines = dict(FF.fleet_lines(fleet))
    assert "outstanding × hosts" in lines["outstanding I/O"]
    assert lines["scaling"] == fleet["fleet"]["scaling"]["verdict"]
    assert lines["scaling rule"].startswith("degraded:")
    assert FF.fleet_lines(single) == []
    bad = incomplete(fleet)
    assert FF.fleet_dropped(bad) == [("127.0.0.3", "127.0.0.3: connection refused (fio --server gone)")]
    assert FF.fleet_notice(bad).startswith("incomplete: host 127.0.0.3 dropped (127.0.0.3: connection refused")


def test_fleet_tables_and_figures(fleet):
    tabs = {t.title: t for t in FT.tables(fleet)}
    per_host = tabs["Per host (all: the aggregate)"]
    assert [r[0] for r in per_host.rows] == [*HOSTS, "all 2"]
    # the aggregate's peak is the sum of the hosts' at the same point, not of their own peaks (here it is both)
    agg_row, a, b = per_host.rows[2], per_host.rows[0], per_host.rows[1]
    assert agg_row[2] == pytest.approx(a[2] + b[2], rel=0.01)
    scaling = next(t for n, t in tabs.items() if n.startswith("Scaling: rand-read-4k at 1×32 per host"))
    assert [r[0] for r in scaling.rows] == [1, 2]
    assert "knee (outstanding I/O per host)" in tabs["Where IOPS stop growing: 2 hosts at once"].columns
    figs = {f.key: f for f in F.figures(fleet)}
    assert figs["hosts"].value == 2 and figs["read_knee_outstanding"].unit == "outstanding I/O per host"


# -- the HTML report ----------------------------------------------------------------------------------------

def test_fleet_report_html(fleet):
    html = render_html([fleet])
    check_structure(html)
    assert external_references(html) == []
    text = _text(html)
    assert "could not be drawn" not in html
    # the per-host table: a row per host, then the aggregate
    table = html[html.index('<table class="fleet-hosts">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    assert len(rows) == 3
    for row, host in zip(rows, HOSTS):
        cells = _text(row)
        assert host in cells and "local" in cells and "/tmp/fl2/" in cells
    assert "42,656" in _text(rows[0]) and "42,595" in _text(rows[1]) and "85,250" in _text(rows[2])
    assert "aggregate of 2" in _text(rows[2])
    # outstanding I/O is per host: said in words and on the axes
    assert "Outstanding I/O is per host" in text
    assert "outstanding I/O per host (jobs × queue depth)" in html
    assert "4 KiB random read: each host and the aggregate" in html
    # the scaling: its charts, verdict and rule
    sc = fleet["fleet"]["scaling"]
    assert "Scaling: IOPS with more hosts" in html and "Scaling: p99 latency with more hosts" in html
    assert sc["verdict"] in text and sc["rule"] in text
    # each host's own figures, folded; the aggregate's are not this machine's
    assert text.count("every figure and chart") == 2
    assert "Aggregate 2 hosts at once" in text
    assert "incomplete" not in text.lower()
    # no warnings or left-behind files in this run: no such lists
    assert "fleet-warnings" not in html and "fleet-left-behind" not in html


def test_fleet_report_incomplete_warnings_left_behind(fleet):
    d = incomplete(fleet)
    d["fleet"]["warnings"] = ["10.1.2.3 is not on loopback or a trusted network: fio's server has no authentication"]
    d["fleet"]["left_behind"] = ["127.0.0.3:/tmp/fl2/b/dbtier-probe.0.0"]
    html = render_html([d])
    check_structure(html)
    text = _text(html)
    assert "Incomplete: host 127.0.0.3 dropped (127.0.0.3: connection refused (fio --server gone))" in text
    assert html.index("fleet-incomplete") < html.index("Aggregate <code>")   # said before the figures
    assert "127.0.0.3 (dropped)" in html                                     # its curve is marked
    assert '<span class="badge unknown">incomplete</span>' in html and "badge unknown\">dropped" in html
    assert "10.1.2.3 is not on loopback" in text and "dbtier-probe.0.0" in text
    md = render_markdown([d])
    assert "**Incomplete: host 127.0.0.3 dropped" in md and "left behind" in md


def test_fleet_report_without_scaling_and_with_a_host_with_no_target(fleet):
    d = copy.deepcopy(fleet)
    d["fleet"]["scaling"] = None
    d["hosts"][1]["targets"] = []
    html = render_html([d])
    check_structure(html)
    assert "Scaling: IOPS with more hosts" not in html and "could not be drawn" not in html
    assert _text(html).count("every figure and chart") == 1


def test_fleet_markdown(fleet):
    md = render_markdown([fleet])
    assert "**Per host (all: the aggregate)**" in md and "| 127.0.0.2 |" in md and "| 127.0.0.3 |" in md
    assert "- scaling: per-host latency degrades at 2 hosts" in md
    assert "outstanding × hosts" in md


# -- show and compare -------------------------------------------------------------------------------------

def test_show_a_fleet_probe(tmp_path, unguarded):   # its saturation sentence, on a 0.3 s-per-point sample
    run = run_dir(tmp_path / "runs", "f", FLEET)
    r = call_main("show", str(run), "--out", str(tmp_path / "s"), cwd=tmp_path, env={"COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    out = re.sub(r"\s+", " ", r.stdout)
    for text in ("2 hosts at once", "127.0.0.2", "127.0.0.3", "42,656", "42,595", "Per host", "seq read",
                 "QD1 read", "Scaling: rand-read-4k", "outstanding I/O: every host runs the same job",
                 "scaling: per-host latency degrades at 2 hosts", "outstanding I/Os per host"):
        assert text in out, text
    assert "incomplete" not in out
    doc = json.loads((tmp_path / "s" / "result.json").read_text())
    assert doc["tables"][1]["title"] == "Per host (all: the aggregate)"


def test_show_an_incomplete_fleet_probe(tmp_path, fleet):
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(incomplete(fleet)))
    run = run_dir(tmp_path / "runs", "f", src)
    r = call_main("show", str(run), "--out", str(tmp_path / "s"), cwd=tmp_path, env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert "incomplete: host 127.0.0.3 dropped" in r.stdout
    assert "dropped" in r.stdout.split("Per host")[1]


def test_compare_a_fleet_with_a_single_host_probe(tmp_path):
    single = run_dir(tmp_path / "runs", "s", PROBE)
    fleet = run_dir(tmp_path / "runs", "f", FLEET)
    r = call_main("compare", str(single), str(fleet), "--json", "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in json.loads(r.stdout)["rows"]}
    assert rows["read_iops_4k"]["group"] == "/tmp/pt vs 2 hosts at once"
    assert rows["read_iops_4k"]["a"] == pytest.approx(109270, abs=1)
    assert rows["read_iops_4k"]["b"] == pytest.approx(85250.3, abs=1)
    assert rows["hosts"]["a"] is None and rows["hosts"]["b"] == 2
    r = call_main("compare", str(fleet), str(single), "--out", str(tmp_path / "c2"), cwd=tmp_path,
                  env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert "A is a fleet probe of 2 hosts" in r.stdout and "2 hosts at once vs /tmp/pt" in r.stdout
    # both in one report: the side-by-side table holds the aggregate as the fleet's target
    html = render_html([json.loads(PROBE.read_text()), json.loads(FLEET.read_text())])
    check_structure(html)
    side = html[html.index('id="compare"'):html.index('<section class="run')]
    assert "2 hosts at once" in side and "/tmp/pt" in side


# -- a single-host probe: as before ----------------------------------------------------------------------------

# The single-host probe's report, Markdown and show summary as rendered before fleet probes existed (commit
# 28356aa), then deliberately changed: spreads on the headline figures and the verdict's evidence guards
# (issue 18), the style of the `abandoned` status badge (issue 34), and the placement rule's wording in the
# thresholds with the verdict's tiers chart style; the sequential write figure marked as a write-back
# cache's (and backups not judged on it), rotational unknown on the virtual disk, the runs table's name
# column. A deliberate change to the single-host report updates these; a fleet change must not.
SINGLE_HTML = "853d6d30818e7dd5fd35591f5434913845788b61da8ef0ea0abae3d70e1ce263"
SINGLE_MD = "67b48d749faf5a53351eb657cf84cb202f771c596b27d4cbfd43404a187f3134"
SINGLE_SUMMARY = "4d1211f7f9b7c8096d52403261055f25982f955f3e4fc37f40e6c47039b7bcf5"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_single_host_probe_is_rendered_as_before():
    doc = json.loads(PROBE.read_text())
    html = render_html([doc])
    assert "fleet" not in html and "per host" not in html
    assert _sha(html) == SINGLE_HTML
    assert _sha(render_markdown([doc])) == SINGLE_MD
    assert _sha(json.dumps(FC.summary(doc), sort_keys=True, default=str)) == SINGLE_SUMMARY


def test_report_command_on_a_fleet_and_a_single_host_probe(tmp_path):
    fleet = run_dir(tmp_path / "runs", "f", FLEET)
    single = run_dir(tmp_path / "runs", "s", PROBE)
    r = call_main("report", str(single), str(fleet), "--format", "both", "--out", str(tmp_path / "rep"),
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    check_structure(html)
    assert html.count('<table class="fleet-hosts">') == 1 and "every figure and chart" in html
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| 127.0.0.3 |" in md and "/tmp/pt" in md
