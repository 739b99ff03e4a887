"""Chart primitives: readable numbers, round ticks, well-formed and escaped SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from dbtier.report.svg import charts as svg
from dbtier.report.svg.charts import Band, Marker, RefLine, Series

NS = "{http://www.w3.org/2000/svg}"


def parse(text: str) -> ET.Element:
    root = ET.fromstring(text)  # raises on anything not well-formed
    assert root.tag == f"{NS}svg"
    return root


@pytest.mark.parametrize("value, text", [
    (0, "0"), (7, "7"), (12.5, "12.5"), (950, "950"), (999.9, "1k"), (1000, "1k"), (1200, "1.2k"),
    (10_000, "10k"), (109_270, "109k"), (1_200_000, "1.2M"), (3_400_000_000, "3.4G"), (0.25, "0.25"),
    (2.5, "2.5"), (-1500, "-1.5k"), (None, "–"), (float("nan"), "–"),
])
def test_fmt_num(value, text):
    assert svg.fmt_num(value) == text


def test_nice_ticks_are_round_and_cover_the_range():
    ticks = svg.nice_ticks(0, 109_270)
    assert ticks == [0, 25_000, 50_000, 75_000, 100_000, 125_000]
    assert svg.nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = svg.nice_ticks(30, 72)
    assert ticks[0] <= 30 and ticks[-1] >= 72
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert len(steps) == 1


def test_nice_ticks_survive_a_flat_range():
    ticks = svg.nice_ticks(5, 5)
    assert ticks[0] <= 5 <= ticks[-1] and len(ticks) >= 2


def test_log_ticks():
    assert svg.log2_ticks(1, 256) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert svg.log2_ticks(1, 4) == [1, 2, 4]
    assert svg.log10_ticks(54, 19_267) == [10, 100, 1000, 10_000, 100_000]
    # a short span gets 2 and 5 between the decades
    assert svg.log10_ticks(120, 900) == [100, 200, 500, 1000]


def test_palette_is_stable():
    assert svg.colour(0) == svg.PALETTE[0]
    assert svg.colour(len(svg.PALETTE)) == svg.PALETTE[0]


def test_line_chart_structure_and_accessibility():
    chart = svg.line_chart("IOPS vs outstanding I/O", [
        Series("rand-read-4k", [(1, 18_000), (2, 29_000), (4, 49_000), (256, 103_000)]),
        Series("rand-write-4k", [(1, 15_000), (2, 28_000), (4, 41_000)], dashed=True),
    ], x_label="outstanding I/O", y_label="IOPS", x_log2=True, markers=[Marker(256, 103_000, "peak 103k")])
    root = parse(chart)
    assert root.find(f"{NS}title").text == "IOPS vs outstanding I/O"
    assert root.get("role") == "img" and root.get("aria-label") == "IOPS vs outstanding I/O"
    # a white background so it prints as seen
    bg = root.find(f"{NS}rect")
    assert bg.get("fill") == "#fff" and bg.get("width") == root.get("width")
    assert len(root.findall(f".//{NS}polyline")) == 2
    texts = [t.text for t in root.iter(f"{NS}text")]
    for label in ("rand-read-4k", "rand-write-4k", "outstanding I/O", "IOPS", "peak 103k", "256", "100k"):
        assert label in texts
    assert 'stroke-dasharray="6 4"' in chart
    assert "<script" not in chart


def test_line_chart_escapes_text():
    chart = svg.line_chart('a <b> & "c"', [Series("<x>&", [(1, 1), (2, 2)]), Series("y", [(1, 2), (2, 1)])],
                           x_label="<x>", y_label="&")
    root = parse(chart)
    assert root.find(f"{NS}title").text == 'a <b> & "c"'
    assert "<b>" not in chart and "<x>" not in chart
    assert "&lt;x&gt;&amp;" in chart


def test_line_chart_gaps_and_log_y():
    chart = svg.line_chart("latency", [Series("p99", [(1, 100), (2, None), (4, 300), (8, 900)])],
                           x_log2=True, y_log=True)
    root = parse(chart)
    # the None splits the line: one point alone, then a two-segment line
    assert len(root.findall(f".//{NS}polyline")) == 1
    assert len([c for c in root.iter(f"{NS}circle")]) == 3
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "100" in texts and "1k" in texts


def test_line_chart_reference_line_and_band():
    chart = svg.line_chart("rounds", [Series("IOPS", [(1, 120), (2, 90), (3, 70), (4, 66), (5, 65)])],
                           ref_lines=[RefLine(66, "average 66")], bands=[Band(3, 5, "window")])
    texts = [t.text for t in parse(chart).iter(f"{NS}text")]
    assert "average 66" in texts and "window" in texts
    # a single series needs no legend; the tight x axis starts at the first round, not 0
    assert "IOPS" not in texts
    assert "0" in texts and texts.count("0") == 1   # only the y axis has a zero


def test_line_chart_without_data():
    root = parse(svg.line_chart("empty", []))
    assert "no data" in [t.text for t in root.iter(f"{NS}text")]
    root = parse(svg.line_chart("log of zero", [Series("s", [(0, 0), (1, None)])], x_log2=True, y_log=True))
    assert "no data" in [t.text for t in root.iter(f"{NS}text")]


def test_bar_chart():
    chart = svg.bar_chart("Commit latency", ["1 writer", "4 writers"], [
        Series("p50", [(0, 116.1), (1, 308.9)]),
        Series("p99", [(0, 346.9), (1, None)]),
    ], y_label="µs", unit="µs")
    root = parse(chart)
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert len(bars) == 3          # the missing p99 leaves a gap
    assert bars[0].get("fill") == svg.colour(0) and bars[2].get("fill") == svg.colour(1)
    titles = [b.find(f"{NS}title").text for b in bars]
    assert "p50, 1 writer: 116 µs" in titles
    texts = [t.text for t in root.iter(f"{NS}text")]
    for label in ("1 writer", "4 writers", "p50", "p99", "116", "309", "347"):
        assert label in texts
    # bars stand on the zero line and grow upwards with the value
    h = {t: float(b.get("height")) for t, b in zip(titles, bars)}
    assert h["p99, 1 writer: 347 µs"] > h["p50, 4 writers: 309 µs"] > h["p50, 1 writer: 116 µs"] > 0


def test_bar_chart_single_series_has_no_legend_and_empty_is_fine():
    root = parse(svg.bar_chart("Commits per second", ["1", "4"], [Series("commits/s", [(0, 7573), (1, 10384)])]))
    assert "commits/s" not in [t.text for t in root.iter(f"{NS}text")]
    root = parse(svg.bar_chart("nothing", [], []))
    assert "no data" in [t.text for t in root.iter(f"{NS}text")]
