"""The simulate report section and its chart primitives: documents in, self-contained HTML/SVG out."""

from __future__ import annotations

from pathlib import Path

from dbtier.report.sections.simulate import compare_html, section_html
from dbtier.report.svg.charts import Series
from dbtier.report.svg.sim import Event, Window, cdf_chart, timeline_chart
from dbtier.sim import mirror
from dbtier.sim import simulate as sim
from dbtier.sim.device.latency import DeviceModel
from dbtier.sim.trace.traces import read_trace

DATA = Path(__file__).resolve().parent.parent / "data" / "traces"
FAST = DeviceModel("nvme-x", "test", 100_000, 50_000, 1000, 500, 100, 30)
SLOW = DeviceModel("disk-y", "test", 250, 250, 100, 100, 5000, 5500)


def _doc(out: sim.Outcome) -> dict:
    return {"command": "simulate", **out.contract, "simulation": out.details}


def test_cdf_chart_is_one_svg_with_log_ticks():
    svg = cdf_chart("Read latency", [Series("a", [[100.0, 0.0], [150.0, 0.5], [9000.0, 1.0]]),
                                     Series("b <base>", [[5000.0, 0.0], [6000.0, 1.0]], dashed=True)])
    assert svg.startswith("<svg") and svg.count("<svg") == 1 and svg.endswith("</svg>")
    assert "<title>Read latency</title>" in svg and "b &lt;base&gt;" in svg
    assert ">100<" in svg and ">1k<" in svg and ">10k<" in svg and ">50%<" in svg
    assert "script" not in svg


def test_timeline_chart_draws_windows_and_events():
    svg = timeline_chart("t", [Series("p99", [(0, 10.0), (1, 20.0), (2, None), (3, 15.0)])],
                         windows=[Window(1, 2, "fast side down")], events=[Event(2.5, "restart")])
    assert "fast side down" in svg and "restart" in svg and svg.count("<polyline") == 1


def test_empty_charts_say_no_data():
    assert "no data" in cdf_chart("x", [Series("a", [])])
    assert "no data" in timeline_chart("x", [Series("a", [(0, None)])])


def test_read_cache_section():
    tr = read_trace(DATA / "policy-17.csv")
    out = sim.simulate(tr, sim.Params("read-cache", cache_gb=4 * 8192 / 1e9, sweep_gb=(), restart_at_s=(8.0,)),
                       {"cache": FAST, "backing": SLOW})
    html = section_html(_doc(out))
    assert html.startswith("<h3>Simulation: flash read cache</h3>")
    assert "Hit ratio by cache size" in html and "Read latency, cumulative" in html
    assert "Cache hit ratio over the trace" in html and "restart" in html
    assert "disk-y alone" in html and "How these numbers were obtained" in html
    assert html.count("<svg") >= 4


def test_mirror_section_shows_the_timeline():
    tr = read_trace(DATA / "msr-hm1.csv")
    out = sim.simulate(tr, sim.Params("preferred-read-mirror", failure=mirror.Failure("fast", 1.0, 2.5)),
                       {"fast": FAST, "slow": SLOW})
    html = section_html(_doc(out))
    assert "Simulation: preferred-read mirror" in html and "Read latency over the trace" in html
    assert "without redundancy" in html and "fast side fails" in html
    # the resync row says what the copy ran at and what the requests left it; devices say how they are served
    assert "copy at up to 100 MB/s: survivor read 100, returning write 500" in html
    assert "The copy reads each dirty region whole from the survivor" in html
    # the resync row names the change tracking that sized it (ASM's 1 MiB allocation unit by default)
    assert "regions of 1.0 MiB (asm-au tracking; region size: the tracking&#x27;s unit)" in html
    assert "parallel units" in html


def test_disk_is_shown_with_one_actuator():
    tr = read_trace(DATA / "msr-hm1.csv")
    disk = DeviceModel("hdd-z", "test", 170, 550, 285, 285, 12_500, 12_500, single_actuator=True)
    html = section_html(_doc(sim.simulate(tr, sim.Params("single"), {"device": disk})))
    assert "one actuator (command queueing)" in html


def test_compare_designs_side_by_side():
    tr = read_trace(DATA / "msr-hm1.csv")
    a = _doc(sim.simulate(tr, sim.Params("single"), {"device": SLOW}))
    b = _doc(sim.simulate(tr, sim.Params("preferred-read-mirror"), {"fast": FAST, "slow": SLOW}))
    html = compare_html([a, b])
    assert "Designs side by side" in html and "one device" in html and "preferred-read mirror" in html
    assert compare_html([a]) == ""
