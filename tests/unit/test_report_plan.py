"""The HTML report's plan sections, from documents built exactly as `dbtier plan` builds them."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from dbtier.model.plan.plandoc import budget_body, equivalent_body, size_body, value_body
from dbtier.model.plan.array import evaluate, parse_spec
from dbtier.model.plan.catalog import load_catalog
from dbtier.model.plan.planner import Requirement, budget, equivalent, size, value
from dbtier.model.plan.service import Terms
from dbtier.report.svg import charts as svg
from dbtier.report.html import render_html
from dbtier.report.svg.charts import Series
from dbtier.results.document import finish, new_document
from test_report_html import check_structure, external_references

CARD, DISK = "fusionio-iodrive-duo-1.2tb", "sas-15k-73gb"
PROBE = Path(__file__).resolve().parent.parent / "data" / "probe" / "quick-ext4-virtio.json"


def plan_doc(action: str, body: dict, name: str) -> dict:
    doc = new_document(f"plan.{action}", {"action": action}, {"hostname": "h"})
    doc["plan"] = action
    doc.update(body)
    doc["catalog"] = {"files": ["shipped:legacy.toml"], "overridden": {}}
    finish(doc)
    doc["_run_dir"] = f"runs/{name}"
    return doc


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    cat = load_catalog()
    # the DESIGN example: the blog's $1,000 per 16 drives from the first drive (a server without ports)
    eq = plan_doc("equivalent", equivalent_body(equivalent(cat, CARD, DISK, server_ports=0)), "eq")
    bud = plan_doc("budget", budget_body(budget(cat, 20_000, [CARD, DISK, "nvme-enterprise-3.84tb"],
                                                server_ports=0), 20_000, "jbod", 0.5), "bud")
    sz = size(cat, Requirement(read_iops=2000, write_iops=500, capacity_gb=500), devices=[CARD, DISK],
              layouts=["raid10", "raid5", "preferred-read-mirror", "read-cache"],
              # the unit test's hand-worked list, 21-disk RAID 5 included
              terms=Terms(durable_writes="no", cost="purchase", worn="replace", wide_parity_groups=True))
    siz = plan_doc("size", size_body(sz), "size")
    v = value(json.loads(PROBE.read_text()), evaluate(parse_spec(cat, f"{DISK}:8:raid10")), "runs/probe")
    val = plan_doc("value", value_body(v, "runs/probe", "probe"), "val")
    return {"equivalent": eq, "budget": bud, "size": siz, "value": val}


def charts(html: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", html, re.S)


def test_equivalent_section(docs):
    html = render_html([docs["equivalent"]])
    check_structure(html)
    assert external_references(html) == []
    assert "could not be drawn" not in html
    assert "Equal performance: <code>sas-15k-73gb</code> (jbod) against one <code>fusionio-iodrive-duo-1.2tb</code>" \
        in html
    # the summary table: count, price, reference price, ratio per metric
    for row in (">889</td>", ">$322,700</td>", ">16.14×</td>", ">15</td>", ">$5,500</td>", ">0.28×</td>",
                ">17</td>", ">$7,100</td>", ">0.35×</td>", "222,160 IOPS at 50% reads"):
        assert row in html, row
    # side-by-side bar charts: price, capacity, IOPS, MB/s, latency - one row per configuration
    svgs = charts(html)
    assert len(svgs) == 5
    for title in ("Price", "Usable capacity", "Random IOPS", "Sequential MB/s", "Latency (one I/O, nothing queued)"):
        assert f"<title>{title}</title>" in html
    for label in ("1 × fusionio-iodrive-duo-1.2tb", "889 × sas-15k-73gb (iops)", "15 × sas-15k-73gb (throughput)",
                  "17 × sas-15k-73gb (capacity)"):
        assert all(label in s for s in svgs), label
    assert "fusionio-iodrive-duo-1.2tb: 20k USD" in svgs[0] and "889 × sas-15k-73gb (iops): 323k USD" in svgs[0]
    # the figures table names what limits each figure
    assert "controller/bus" not in html.split("Side by side")[0]
    assert html.count(">devices</span>") > 10


def test_budget_section(docs):
    html = render_html([docs["budget"]])
    check_structure(html)
    assert "Equal budget: what $20,000 buys (jbod)" in html
    assert ">53</td>" in html and ">$19,900</td>" in html and ">3,869</td>" in html
    svgs = charts(html)
    assert len(svgs) == 5
    assert all("53 × sas-15k-73gb" in s and "1 × fusionio-iodrive-duo-1.2tb" in s for s in svgs)


def test_budget_section_with_a_device_out_of_reach(docs):
    cat = load_catalog()
    doc = plan_doc("budget", budget_body(budget(cat, 10_000, [CARD, DISK]), 10_000, "jbod", 0.5), "b2")
    html = render_html([doc])
    check_structure(html)
    assert "the budget buys no jbod array of it: the smallest costs $20,000" in html
    svgs = charts(html)
    assert len(svgs) == 5 and not any("fusionio" in s for s in svgs)      # only what was bought is drawn


def test_size_section(docs):
    html = render_html([docs["size"]])
    check_structure(html)
    assert "Binding requirement: capacity" in html
    # ranked candidates with their binding requirement and per-requirement margins
    table = html[html.index('<table class="cands">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    assert len(rows) == 8
    # 18 x $300 + ceil((18 - 8 server ports) / 16) x $1,000 = $6,400
    assert "18 x sas-15k-73gb raid10" in rows[0] and "$6,400" in rows[0] and "<b>capacity</b>" in rows[0]
    assert "21 x sas-15k-73gb raid5" in rows[1] and ">iops</td>" in rows[1]
    # margins: read IOPS +60%, write IOPS +90%, capacity +31% for the cheapest; all met
    assert "✓ +60%" in rows[0] and "✓ +90%" in rows[0] and "✓ +31%" in rows[0]
    assert "read IOPS<br>margin" in table and "capacity GB<br>margin" in table
    assert "✗" not in table
    # one chart: the cost over the service life, with its table
    assert html.count("<svg") == 1 and "Cost over the service life" in html and "Over the service life (5 years)" in html


def test_size_margin_cells_show_multiples_and_misses(docs):
    doc = copy.deepcopy(docs["size"])
    m = doc["candidates"][0]["meets"]
    m["read_iops"].update(offered=560_000, margin=279.0)
    m["capacity_gb"].update(met=False, margin=0.1)
    html = render_html([doc])
    assert "✓ 280×" in html and '<span class="fail"' in html and "✗ +10%" in html


def test_value_section(docs):
    html = render_html([docs["value"]])
    check_structure(html)
    assert "Price/performance of <code>runs/probe</code> (probe run)" in html
    # 8 disks on the server's own 8 ports: $2,400; 78,845.44 / 2,400 = 32.852 IOPS/$; 2,400 / 292 = $8.22/GB
    for text in ("IOPS per $", ">32.852</td>", "MB/s per $", "$ per usable GB", ">8.22</td>",
                 "mixed_iops_8k = 78,845", "Which figures were used"):
        assert text in html, text


def test_plan_documents_side_by_side_with_a_probe(docs):
    probe = json.loads(PROBE.read_text())
    html = render_html([docs["equivalent"], probe, docs["size"], docs["budget"], docs["value"]])
    check_structure(html)
    assert html.count("<svg") == 5 + 5 + 5 + 1      # + the size section's cost over the service life
    assert 'id="run-5"' in html


def test_malformed_plan_documents_do_not_crash(docs):
    odd = [{"command": "plan", "plan": "equivalent", "by_metric": {"iops": 3}, "arrays": {"iops": "x"}},
           {"command": "plan", "plan": "budget", "options": [{"device": "d", "count": 2, "array": 5}, 7]},
           {"command": "plan", "plan": "size", "candidates": [{"meets": {"read_iops": 3}}, "x"], "requirement": 4},
           {"command": "plan", "plan": "value", "value": None, "figures_used": [1, "a"]},
           {"command": "plan", "plan": "teleport"}, {"command": "plan"}]
    html = render_html(odd)
    check_structure(html)
    assert "no known action" in html
    assert "could not be drawn" not in html


def test_hbar_chart_primitive():
    import xml.etree.ElementTree as ET
    chart = svg.hbar_chart("MB/s <&>", ["a very long configuration name that will not fit in the label room", "b"],
                           [Series("read", [(0, 1500), (1, 88_900)]), Series("write", [(0, 1100), (1, None)])],
                           unit="MB/s", highlight=1)
    root = ET.fromstring(chart)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text == "MB/s <&>"
    assert len(root.findall(f".//{ns}rect")) == 1 + 3 + 2          # background, three bars, two legend boxes
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "1.5k" in texts and "88.9k" in texts and "read" in texts and "write" in texts
    assert any(t and t.endswith("…") for t in texts)                  # a long label is shortened ...
    assert "a very long configuration name that will not fit in the label room" in chart   # ... keeps a tooltip
    assert "no data" in svg.hbar_chart("empty", [], [])


def test_equivalent_power_rack_space_and_mix_rule(docs):
    """The study's IOPS match: 889 SAS disks at 6.6 W active each (catalog) = 5,867.4 W, plus 56 HBA/enclosure
    units (889 / 16 = 55.6, rounded up; no server ports here) at 70 W = 3,920 W: 9,787.4 W; 56 x 1.333 U =
    74.648 U. The card: 20 W, no rack units. 9,787.4 / 20 = 489 times. The mix: 1 / (0.5 / 185,000 +
    0.5 / 278,000) = 222,160 IOPS, where the average 0.5 x 185,000 + 0.5 x 278,000 = 231,500."""
    import io

    from rich.console import Console

    from dbtier.cli.plan.render import power_table
    from dbtier.report.verdict.topics import verdict
    from dbtier.report.verdict.plan import equivalent_sentence
    html = render_html([docs["equivalent"]])
    assert ">9,787 W against 20 W</td>" in html and ">74.6</td>" in html
    assert "1 / (0.5 / 185,000 + 0.5 / 278,000) = 222,160" in html and "= 231,500" in html
    s = equivalent_sentence(docs["equivalent"])["text"]
    assert "on IOPS 889 of them at $322,700 (16.1 times the price), 9,787 W (489 times the power) and 74.6 rack " \
           "units of enclosures" in s, s
    assert "($20,000, 20 W)" in s and "harmonic mean: 222,160" in s and "would be 231,500" in s
    assert s in verdict([docs["equivalent"]])["sentences"]
    buf = io.StringIO()
    Console(file=buf, width=120, color_system=None).print(
        power_table(equivalent(load_catalog(), CARD, DISK, server_ports=0)))
    row = next(line for line in buf.getvalue().splitlines() if "(iops)" in line).split()
    assert row[-4:] == ["889", "9,787", "489×", "74.6"], row
