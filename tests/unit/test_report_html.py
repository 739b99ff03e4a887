"""The HTML report from saved result documents: content, structure, self-containedness, robustness."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dbtier.report.html import render_html
from dbtier.results.store import load_run

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "probe" / "quick-ext4-virtio.json"

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
        # SVG elements the charts write self-closed
        "rect", "line", "circle", "polyline", "path"}


class StrictChecker(HTMLParser):
    """Fails on an end tag that does not close the innermost open element, and on anything left open."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID and (not self.stack or self.stack[-1] != tag):
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()


def check_structure(html: str) -> StrictChecker:
    assert html.startswith("<!DOCTYPE html>")
    p = StrictChecker()
    p.feed(html)
    p.close()
    assert p.errors == []
    assert p.stack == []
    assert p.tags.count("html") == p.tags.count("body") == p.tags.count("head") == 1
    return p


def external_references(html: str) -> list[str]:
    """src=/href=/url()/@import pointing off the page (the SVG namespace is an identifier, not a fetch)."""
    found = re.findall(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z]+:)?//[^"'\s>]*""", html, re.I)
    found += re.findall(r"""url\(\s*["']?\s*(?:[a-z]+:)?//[^)]*\)""", html, re.I)
    found += re.findall(r"@import", html)
    rest = html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    found += re.findall(r"https?://\S+", rest)
    return found


@pytest.fixture(scope="module")
def sample() -> dict:
    return load_run(SAMPLE)


@pytest.fixture(scope="module")
def sample_html(sample) -> str:
    return render_html([sample])


def interrupted(sample: dict) -> dict:
    doc = copy.deepcopy(sample)
    doc["status"] = "interrupted"
    doc["finished_at"] = None
    t = doc["targets"][0]
    t["status"] = "interrupted"
    t["points"] = [p for p in t["points"] if p["test"] == "rand-read-4k"][:3]
    t["summary"] = {k: None for k in t["summary"]}
    t["fsync_honesty"] = None
    return doc


def test_sample_has_the_charts(sample_html):
    # IOPS vs load, latency vs load, MB/s vs streams, commit latency, commits/s
    assert sample_html.count("<svg") == 5
    for title in ("Random I/O: IOPS vs outstanding I/O", "4 KiB random latency vs outstanding I/O",
                  "Sequential throughput vs streams", "Commit latency (8 KiB write + fdatasync)",
                  "Commits per second"):
        assert f"<title>{title}</title>" in sample_html
    for test in ("rand-read-4k", "rand-write-4k", "rand-mix-8k", "seq-read-1m", "seq-write-128k"):
        assert f">{test}</text>" in sample_html


def test_sample_summary_values(sample_html):
    for value in ("109,270", "94,518", "78,845", "54.0", "60.7", "987.1", "1,552", "116.1", "346.9",
                  "10,384"):
        assert f">{value}</td>" in sample_html, value
    # the sequential write beat the reads: a write-back cache's figure (results/cache_suspect.py), marked so
    assert '>2,405 <span class="bad"' in sample_html
    assert '<span class="verdict-ok">ok</span>' in sample_html
    assert "fdatasync returned in 112.13 µs (median)" in sample_html
    assert "4 KiB random read, peak" in sample_html and "commits per second, best" in sample_html


def test_sample_machine_and_method(sample_html):
    for text in ("vm", "Debian GNU/Linux 12 (bookworm)", "6.18.44-fc-v595", "Intel(R) Xeon(R) Processor @ 2.10GHz",
                 "× 2 CPUs", "23.6 GiB", "rw,relatime,rw,discard", "virtio_blk", "0x1af4", "mq-deadline",
                 "write back", "ext4", "3.33", "15.18", "256.0 GiB"):
        assert text in sample_html, text
    # how the numbers were obtained
    for text in ("How the numbers were obtained", "fio 3.33", "direct I/O (O_DIRECT)",
                 "1.5 s measured after 0.5 s of warm-up", "2×128", "outstanding I/O 1 to 256",
                 "fio lat_ns: submission to completion", "8 KiB buffered write + fdatasync per write",
                 "50 ms", "quick"):
        assert text in sample_html, text


def test_sample_header_and_points(sample_html):
    assert "2026-11-21 23:27:48 UTC" in sample_html and "2026-11-21 23:29:36 UTC" in sample_html
    assert "1 min 48 s" in sample_html
    assert "<details><summary>All 47 measured points</summary>" in sample_html
    assert "Side by side" not in sample_html      # only one target


def test_sample_is_self_contained_and_well_formed(sample_html):
    assert external_references(sample_html) == []
    assert "<script" not in sample_html and "<link" not in sample_html and "<img" not in sample_html
    assert "@media print" in sample_html
    p = check_structure(sample_html)
    assert p.tags.count("svg") == 5
    # every chart names itself first (its accessible name), and prints on white
    assert len(re.findall(r'<svg [^>]*role="img"[^>]*><title>[^<]+</title>', sample_html)) == 5
    assert sample_html.count('fill="#fff"/>') >= 5


def test_render_is_pure(sample):
    before = json.dumps(sample, sort_keys=True)
    assert render_html([sample]) == render_html([sample])
    assert json.dumps(sample, sort_keys=True) == before


def test_interrupted_target_with_null_summary(sample):
    html = render_html([interrupted(sample)])
    check_structure(html)
    assert "interrupted" in html
    assert "3 point(s) were measured before it stopped" in html
    assert html.count("not measured") == 11
    assert "not judged" in html
    assert html.count("<svg") == 2      # IOPS and latency from the three read points; nothing else
    assert "could not be drawn" not in html


def test_target_without_points_or_summary(sample):
    doc = copy.deepcopy(sample)
    doc["targets"] = [{"path": "/data", "kind": "directory", "status": "failed", "points": [], "summary": None,
                       "steady_state": None, "fill": None, "fsync_honesty": None},
                      {"path": "/odd", "status": "failed"}]
    doc["errors"] = [{"target": "/data", "message": "fio failed <badly>", "hint": "check dmesg"}]
    html = render_html([doc])
    check_structure(html)
    assert "No points were measured" in html
    assert "fio failed &lt;badly&gt;" in html
    assert "<svg" not in html
    assert "could not be drawn" not in html


def test_probe_without_targets_and_odd_values(sample):
    doc = copy.deepcopy(sample)
    doc["targets"] = []
    doc["machine"] = None
    doc["params"] = {"point_s": "fast", "load_levels": "many"}
    doc["started_at"] = "yesterday"
    html = render_html([doc])
    check_structure(html)
    assert "no targets yet" in html and "yesterday" in html


def test_steady_state_and_fill_charts(sample):
    doc = copy.deepcopy(sample)
    t = doc["targets"][0]
    t["steady_state"] = {"rule": "SNIA PTS", "rounds": 7, "round_iops": [120e3, 90e3, 70e3, 66e3, 64e3, 65e3, 65e3],
                         "reached": True, "window": [70e3, 66e3, 64e3, 65e3, 65e3], "average": 66e3,
                         "range_pct": 9.1, "excursion_pct": 6.0}
    t["fill"] = [{"filled_bytes": (i + 1) * 2**30, "fs_used_pct": 40 + 5 * i, "seq_write_mbps": 2000 - 40 * i,
                  "rand_write_iops_4k": 80e3 - 2e3 * i, "rand_write_lat_us_p99": 900 + 30 * i} for i in range(5)]
    html = render_html([doc])
    check_structure(html)
    assert html.count("<svg") == 5 + 3
    assert "<title>Preconditioning: 4 KiB random write IOPS per round</title>" in html
    assert "steady state reached" in html and "range 9.1%" in html
    assert "<title>Sequential write as the filesystem fills</title>" in html
    assert ">5.0 GiB</td>" in html


def test_unknown_command_renders_generically(sample):
    doc = {"schema_version": 1, "command": "simulate", "status": "ok", "started_at": "2026-11-22T10:00:00Z",
           "finished_at": "2026-11-22T10:00:30Z", "params": {"trace": "t.csv", "designs": ["cache", "mirror"],
                                                              "ratio": 0.5},
           "machine": sample["machine"], "hits": 12345, "note": "</pre><script>alert(1)</script>"}
    html = render_html([doc])
    check_structure(html)
    assert "simulate" in html and "30.0 s" in html
    assert "t.csv" in html and "<code>cache</code>, <code>mirror</code>" in html and ">0.5<" in html
    assert "<details><summary>Result document (JSON)</summary><pre>" in html
    assert "&quot;hits&quot;: 12345" in html
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;" in html
    assert "virtio_blk" in html          # its machine is still shown
    assert external_references(html) == []


def test_malformed_documents_do_not_crash():
    odd_target = {"points": [{"test": "rand-read-4k", "group": "random", "outstanding": 4, "iops": None, "read": 5,
                              "lat_us": None}, 7],
                  "summary": {"read_iops_4k": "12"}, "fsync_honesty": {"checks": [1, None]},
                  "steady_state": {"round_iops": [1, "a"], "window": 5}, "fill": [{"fs_used_pct": 3}]}
    html = render_html([{"command": "probe", "targets": "nope", "status": 3},
                        {"command": "probe", "targets": [{"points": [{"test": "rand-read-4k", "group": "random",
                                                                        "outstanding": "x", "iops": None}, 7]}]},
                        {"command": "probe", "targets": [odd_target],
                         "machine": {"targets": [{"block_device": None}], "versions": None}},
                        {"command": None}, {}])
    check_structure(html)
    assert "could not be drawn" not in html
    assert render_html([]).count("No result documents") == 1


def test_several_runs_side_by_side(sample):
    a = copy.deepcopy(sample)
    a["_run_dir"] = "runs/20261121T232748Z-probe"
    b = copy.deepcopy(sample)
    b["_run_dir"] = "runs/20261122T080000Z-probe"
    b["targets"][0]["path"] = "/mnt/slow"
    b["targets"][0]["summary"]["read_iops_4k"] = 250.0
    b["targets"][0]["summary"]["fsync_honesty"] = "suspect"
    b["machine"]["targets"][0]["path"] = "/mnt/slow"
    c = {"schema_version": 1, "command": "bench", "status": "failed", "params": {}}
    html = render_html([a, b, interrupted(sample), c])
    check_structure(html)
    compare = html.index('id="compare"')
    assert compare < html.index('id="run-1"') < html.index('id="run-2"') < html.index('id="run-3"') < \
        html.index('id="run-4"')
    table = html[compare:html.index('id="run-1"')]
    # one column per probe target (three), the best of a row in bold
    assert table.count("<code>/tmp/pt</code>") == 2 and table.count("<code>/mnt/slow</code>") == 1
    assert '<td class="num best">109,270</td>' in table and ">250</td>" in table
    assert '<span class="verdict-suspect">suspect</span>' in table
    assert "20261122T080000Z-probe" in html
    assert html.count("<svg") == 5 + 5 + 2
    assert 'href="#run-2-t1"' in html


def test_a_section_that_fails_falls_back_to_the_generic_one(sample, monkeypatch):
    import dbtier.report.sections.fleet as probe_sections

    def broken(doc, i):
        raise KeyError("targets")

    monkeypatch.setattr(probe_sections, "section", broken)     # the probe kind's section face
    html = render_html([sample])
    check_structure(html)
    assert "could not be drawn in full (KeyError" in html
    assert "Result document (JSON)" in html
