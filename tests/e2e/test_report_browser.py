"""The report in a real headless browser (Debian's chromium through Playwright): it loads offline with no
console errors, every chart lays out, nothing is fetched but the file itself, it prints; the full-page
screenshot (and the PDF print) are kept in artifacts/ for a person to look at. The Markdown report of
the same runs is checked beside it."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from conftest import ROOT, run_dbtier
from samples import TPCC, make_lab, run_dir

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ARTIFACTS = ROOT / "artifacts"
SCREENSHOT = ARTIFACTS / "report-screenshot.png"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at "
                                 "/usr/bin/chromium (apt-get install -y chromium; scripts/bootstrap.sh does it)")]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """`dbtier report LAB TPCC --format both`: a lab with every step, plus one more OLTP run to set beside it."""
    root = tmp_path_factory.mktemp("browser")
    lab = make_lab(root / "runs")
    tpcc = run_dir(root / "runs", "20261121T235357Z-bench", TPCC)
    r = run_dbtier("report", str(lab), str(tpcc), "--format", "both", "--out", str(root / "rep"), cwd=root)
    assert r.returncode == 0, r.stderr
    return root / "rep"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


SVG_FACTS = """() => [...document.querySelectorAll('svg')].map(s => {
  const r = s.getBoundingClientRect();
  const t = s.querySelector('title');
  return {title: t ? t.textContent : '', w: r.width, h: r.height,
          marks: s.querySelectorAll('g.series rect, g.series polyline, g.series polygon, g.series circle').length,
          nodata: [...s.querySelectorAll('text')].some(x => x.textContent === 'no data')};
})"""


def test_the_report_in_a_real_browser(report, browser):
    html = (report / "report.html").read_text()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    console: list[tuple[str, str]] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto((report / "report.html").as_uri(), wait_until="load")

    # the verdict first
    assert page.locator("h2").first.inner_text() == "Verdict"
    assert page.locator("table.verdict th").all_inner_texts()[:5] == ["GOOD FOR", "SATURATES", "BOTTLENECK",
                                                                     "PLACEMENT", "CHEAPEST"]
    # open every collapsed section, so the charts inside them lay out too
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    charts = page.evaluate(SVG_FACTS)
    assert len(charts) == html.count("<svg") >= 60
    for c in charts:
        assert c["w"] >= 200 and c["h"] >= 100, c
        assert c["marks"] >= 1 and not c["nodata"], c          # every chart drew its data
    titles = {c["title"] for c in charts}
    assert {"TPC-H per-query time, runs side by side", "TPS vs clients, runs side by side",
            "Backup throughput: to the directory and to null", "Best TPS per placement step",
            "Random I/O: IOPS vs outstanding I/O"} <= titles

    # printable: the print stylesheet hides the contents box and keeps the charts
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav.toc')).display") == "none"
    assert all(c["w"] > 0 and c["h"] > 0 for c in page.evaluate(SVG_FACTS))
    ARTIFACTS.mkdir(exist_ok=True)
    pdf = ARTIFACTS / "report.pdf"
    page.pdf(path=str(pdf), format="A4")
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 50_000

    # the screenshot a person looks at: the page as it opens
    page.emulate_media(media="screen")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    width, height = png_size(SCREENSHOT)
    assert width == 1280 and height >= 5000
    assert 200_000 < SCREENSHOT.stat().st_size < 80_000_000

    assert errors == []
    assert [m for m in console if m[0] == "error"] == []
    assert requests and all(u.startswith(("file:", "data:")) for u in requests), requests
    page.close()


# Elements past the viewport's edges that no scrolling box holds (a table in .wide may be wider than a phone;
# the page itself may not), and charts or figures that overlap one another.
LAYOUT_FACTS = """() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = el => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX; if (ox === 'auto' || ox === 'scroll') return true; } return false; };
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if ((r.right > vw + 1 || r.left < -1) && !scrolls(el))
      out.push(el.tagName + '.' + el.className + ' ' + Math.round(r.left) + '..' + Math.round(r.right) + ': ' +
               (el.textContent || '').trim().slice(0, 50));
  }
  const figs = [...document.querySelectorAll('figure')].map(f => f.getBoundingClientRect()).filter(r => r.width);
  let overlaps = 0;
  for (let i = 0; i < figs.length; i++) for (let j = i + 1; j < figs.length; j++) {
    const a = figs[i], b = figs[j];
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) overlaps++;
  }
  const charts = [...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width);
  return {vw, page: document.documentElement.scrollWidth, outside: out, overlaps, charts};
}"""


@pytest.mark.parametrize("media, width", [("screen", 390), ("print", 688)])
def test_a_phone_and_a_printed_page(report, browser, media, width):
    """390 px (a phone) on screen, and 688 px (A4 less the print margins, at 96 px per inch) in print: no
    horizontal scroll but inside wide tables, every chart scaled into the width, no two figures overlapping."""
    page = browser.new_page(viewport={"width": width, "height": 844})
    page.goto((report / "report.html").as_uri(), wait_until="load")
    page.emulate_media(media=media)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    f = page.evaluate(LAYOUT_FACTS)
    assert f["page"] <= f["vw"], "the page scrolls sideways"
    assert f["outside"] == [], f["outside"][:10]
    assert f["overlaps"] == 0
    assert f["charts"] and all(0 < w <= f["vw"] for w in f["charts"])
    if media == "screen":
        ARTIFACTS.mkdir(exist_ok=True)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")
        page.screenshot(path=str(ARTIFACTS / "report-phone.png"), full_page=True)
        assert png_size(ARTIFACTS / "report-phone.png")[0] == width
    page.close()


def test_the_markdown_report(report):
    md = (report / "report.md").read_text()
    assert re.search(r"</?[a-zA-Z][^>]*>", md) is None                      # plain Markdown, no HTML
    sections = re.findall(r"^## (.+)$", md, re.M)
    assert sections[:3] == ["Verdict", "Runs", "Side by side"] and sections[-1] == "Machines"
    verdict = md.split("## Verdict\n\n")[1].split("\n## ")[0]
    bullets = [ln for ln in verdict.splitlines() if ln.startswith("- **")]
    # the saved runs are short and single: most topics say what is missing rather than conclude
    # bottleneck: the TPC-H step, then the backups to each of the lab's two targets and the two compared;
    # good for twice: what the probe's figures support, and backups not judged on its cache's write figure
    assert [b.split("**")[1] for b in bullets] == ["good for", "good for", "saturates", "saturates", "bottleneck", "bottleneck",
                                                   "bottleneck", "bottleneck", "placement", "placement", "cheapest"]
    assert "- enough runs: a figure judged by rests on at least 2 runs of its point" in md
    assert "> **Note:** /tmp/pt is on a virtual disk (virtio_blk)" in verdict
    # every table is well formed: each row has as many cells as its header
    for block in re.findall(r"((?:^\|.*\|\n)+)", md, re.M):
        lines = block.splitlines()
        cells = [len(re.split(r"(?<!\\)\|", ln)) for ln in lines]
        assert len(set(cells)) == 1, block
        assert set(lines[1]) <= set("|-:"), block
    side = md.split("## Side by side\n\n")[1].split("\n## ")[0]
    assert "### bench oltp: 2 runs" in side and "### bench dss: 2 runs" in side
    assert "| best TPS | 893.0 | 639.0 | TPS |" in side
