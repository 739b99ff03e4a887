"""The readers of a bench oltp document with CONTRACT15's keys (doc["engine"], doc["durability"],
point["innodb"]): the cache guard, figures, verdict, the OLTP report section, show and compare, from
MariaDB-shaped documents edited out of saved real PostgreSQL runs (tests/samples.mariadb_doc)."""

from __future__ import annotations

import pytest

import io
import json
from pathlib import Path

from rich.console import Console

from dbtier.cli.main import main
from dbtier.cli.show import print_summary, print_verdict
from dbtier.model.guards import oltp_guards, page_counts, point_read_path, read_path
from dbtier.report.figures import core as F
from dbtier.report.figures import method as FM
from dbtier.report.html import render_html
from dbtier.report.markdown import render_markdown
from dbtier.report.verdict.topics import verdict
from dbtier.results.store import load_run
from samples import TPCC, mariadb_doc, mariadb_matrix_doc

NOT = "not durable: not comparable with a durable one"

pytestmark = pytest.mark.usefixtures("unguarded")   # sentences on short saved runs


def ipt(reads: float, requests: float, ios: float | None = None) -> dict:
    """An InnoDB point: `requests` pages asked of the buffer pool, `reads` of them read from the files."""
    p: dict = {"innodb": {"buffer_pool_reads": reads, "buffer_pool_read_requests": requests}}
    if ios is not None:
        p["devices"] = [{"device": "vda", "read_ios": ios}]
        p["read_path"] = read_path(reads, ios)
    return p


# -- the cache guard, engine-neutral ----------------------------------------------------------------------------

def test_page_counts_innodb_hits_are_requests_minus_reads():
    """1,000 requests of which 40 read from the files: 40 page reads, 1,000 - 40 = 960 hits."""
    assert page_counts(ipt(40, 1_000)) == (40, 960)
    assert page_counts({"pg": {"blks_read": 7.0, "blks_hit": 93.0}}) == (7.0, 93.0)
    # more reads than requests (a broken counter): no hits rather than a negative count
    assert page_counts(ipt(50, 10)) == (50, None)
    assert page_counts({"innodb": {"buffer_pool_reads": None, "buffer_pool_read_requests": 10}}) == (None, None)
    assert page_counts({}) == (None, None)


def test_buffer_pool_rule_names_the_buffer_pool():
    """969,241 requests, 1,466 read from the files: 1,466 / 969,241 = 0.151% < 0.5% -> the data set sat in the
    buffer pool (99.8% found there), whatever the devices saw (334 I/Os: 0.23 of the reads, above 10%)."""
    [g] = oltp_guards([ipt(1_466, 969_241, ios=334)])
    assert g["kind"] == "reads-from-memory"
    assert g["db_page_reads"] == 1_466 and g["db_page_hits"] == 969_241 - 1_466
    assert "InnoDB found 99.8% of 969,241 page accesses in the InnoDB buffer pool" in g["message"]
    assert "shared_buffers" not in g["message"] and "PostgreSQL" not in g["message"]


def test_device_rule_names_innodb():
    """12,000 page reads (of 112,000 requests: 10.7%, the buffer rule does not fire), 60 device read I/Os:
    60 / 12,000 = 0.5% < 10% -> served from the OS page cache."""
    [g] = oltp_guards([ipt(12_000, 112_000, ios=60)])
    assert g["device_fraction"] == 0.005
    assert "only 0.5% of InnoDB's 12,000 page reads reached the devices" in g["message"]


def test_innodb_point_without_read_path_recomputed():
    """An InnoDB point without read_path: page reads from buffer_pool_reads, I/Os from devices[].read_ios."""
    p = {"innodb": {"buffer_pool_reads": 2_000.0, "buffer_pool_read_requests": 9_000.0},
         "devices": [{"device": "vda", "read_ios": 1_500}, {"device": "vdb", "read_ios": 100}]}
    rp = point_read_path(p)
    assert rp["db_page_reads"] == 2_000.0 and rp["device_read_ios"] == 1_600.0 and rp["device_fraction"] == 0.8
    assert oltp_guards([p]) == []   # 1,600 / 2,000 = 0.8 reached the devices; 2,000 / 9,000 read: no guard


def test_postgres_wording_unchanged():
    [g] = oltp_guards([{"pg": {"blks_read": 1_466, "blks_hit": 967_775}, "devices": [{"device": "vda", "read_ios": 334}]}])
    assert "PostgreSQL found 99.8% of 969,241 page accesses in shared_buffers" in g["message"]


# -- engine and durability from the document --------------------------------------------------------------------

def test_engine_and_durability_figures():
    m = mariadb_doc()
    assert F.engine_of(m) == "mariadb" and F.engine_words(m) == ("MariaDB", "sysbench")
    assert F.durability_text(m).startswith(NOT + " (innodb_flush_log_at_trx_commit=2")
    f = {x.key: x.value for x in F.figures(m)}
    assert f["engine"] == "sysbench (MariaDB)" and f["durability"].startswith(NOT)
    assert "best_nopm" not in f   # sysbench: nopm null
    old = load_run(TPCC)
    assert F.engine_of(old) == "postgres" and F.engine_words(old) == ("PostgreSQL", "pgbench")
    assert F.durability(old) is None and F.durability_text(old).startswith("unknown")
    # engine inferred without doc["engine"]: from the label, else from the points' innodb block
    m2 = mariadb_doc()
    del m2["engine"]
    assert F.engine_of(m2) == "mariadb"
    m2["params"].pop("engine")
    assert F.engine_of(m2) == "mariadb"


def test_durability_clash_only_between_known_values():
    loose, durable, old = mariadb_doc(), mariadb_doc(durable=True), load_run(TPCC)
    loose["_run_dir"], durable["_run_dir"], old["_run_dir"] = "/r/loose", "/r/durable", "/r/old"
    msg = F.durability_clash([durable, loose])
    assert msg and msg.startswith("loose is " + NOT + " (durable;") and "neither is called better" in msg
    assert F.durability_clash([old, loose]) is None        # unknown is neither durable nor not
    assert F.durability_clash([durable, old]) is None
    assert F.durability_clash([loose, mariadb_doc()]) is None


# -- the verdict -------------------------------------------------------------------------------------------------

def test_verdict_labels_a_non_durable_run():
    m = mariadb_doc()
    m["_run_dir"] = "/r/maria"
    v = verdict([m])
    [sat] = v["saturates"]
    assert sat["text"].startswith("OLTP on MariaDB — sysbench-rw")
    assert "Not durable: not comparable with a durable one (innodb_flush_log_at_trx_commit=2" in sat["text"]
    assert sat["durable"] is False
    [c] = [c for c in v["caveats"] if c["kind"] == "not-durable"]
    assert c["text"].startswith("maria (bench oltp) is " + NOT)
    assert not [c for c in v["caveats"] if c["kind"] == "not-comparable"]


def test_verdict_durable_and_older_runs_are_not_labelled():
    for doc in (mariadb_doc(durable=True), load_run(TPCC)):
        v = verdict([doc])
        assert "durable" not in " ".join(v["sentences"]).lower()
        assert not [c for c in v["caveats"] if c["kind"] in ("not-durable", "not-comparable")]
    assert verdict([load_run(TPCC)])["saturates"][0]["text"].startswith("OLTP — TPC-C-like")   # unchanged


def test_verdict_durable_against_non_durable_is_not_comparable():
    a, b = load_run(TPCC), mariadb_doc()
    a["_run_dir"], b["_run_dir"] = "/r/pg", "/r/maria"
    a["durability"] = {"durable": True, "reason": "synchronous_commit=on, fsync=on"}
    [c] = [c for c in verdict([a, b])["caveats"] if c["kind"] == "not-comparable"]
    assert c["text"].startswith("Maria is " + NOT + " (pg;") and "neither is called better" in c["text"]


def test_verdict_names_the_driver_in_the_client_bottleneck():
    m = mariadb_doc(durable=True)
    for p in m["points"]:
        p["bottleneck"] = "client"
    [bn] = verdict([m])["bottleneck"]
    assert "the load generator (sysbench), not the server" in bn["text"]
    pg = load_run(TPCC)
    for p in pg["points"]:
        p["bottleneck"] = "client"
    assert "the load generator (pgbench)" in verdict([pg])["bottleneck"][0]["text"]


def test_verdict_innodb_matrix_moves():
    """InnoDB's steps: each move is the role of the step name in InnoDB's matrix (redo, undo, tables, temp)."""
    m = mariadb_matrix_doc()
    assert [x["role"] for x in F.matrix_moves(m)] == ["redo", "undo", "tables", "temp"]
    bests = {b["name"]: b["tps"] for b in F.matrix_bests(m)}
    moves = {x["step"]: x for x in F.matrix_moves(m)}
    assert moves["redo-fast"]["gain"] == bests["redo-fast"] / bests["all-slow"] - 1
    [same] = [p for p in verdict([m])["placement"] if p.get("source") == "placement matrix"]
    assert same["same_device"] == "vda"           # the saved run's two tiers share a device
    m["machine"].pop("targets", None)             # as if they did not: the moves are judged
    [pl] = [p for p in verdict([m])["placement"] if p.get("source") == "placement matrix"]
    # the saved run's reads came from memory: the tables move is not judged, the write path's are
    assert pl["reads_measured"] is False and pl["not_measured"] == ["tables"]
    assert pl["recommended"] == {"fast": ["temp"], "slow": ["redo", "undo"]}
    assert "WAL" not in pl["text"] and "Redo and undo can stay on the slow tier" in pl["text"]


# -- the report, show and compare --------------------------------------------------------------------------------

def _oltp_section(html: str) -> str:
    return html[html.index('<section class="run bench oltp">'):]


def test_html_section_names_the_engine_and_durability():
    html = _oltp_section(render_html([mariadb_doc()]))
    assert NOT in html and "innodb_flush_log_at_trx_commit=2" in html
    assert "MariaDB counters and measurement overhead" in html and "buffer pool hit %" in html
    assert "sysbench oltp_read_write" in html and "MariaDB settings" in html
    assert "pgbench" not in html and "shared_buffers" not in html
    pg = _oltp_section(render_html([load_run(TPCC)]))
    assert "PostgreSQL counters and measurement overhead" in pg and "unknown (not recorded)" in pg


def test_html_matrix_uses_innodb_steps_and_roles():
    html = _oltp_section(render_html([mariadb_matrix_doc()]))
    assert '<b title="redo log moved to fast">redo-fast</b>' in html
    assert '<b title="+ tables (and their indexes) fast">tables-fast</b>' in html
    assert "<th>redo</th>" in html and "<th>undo</th>" in html and "<th>indexes</th>" not in html


def test_html_side_by_side_marks_no_best_when_not_comparable():
    a, b = mariadb_doc(durable=True), mariadb_doc()
    a["_run_dir"], b["_run_dir"] = "/r/durable", "/r/loose"
    html = render_html([a, b])
    side = html[html.index('<section class="compare">'):]
    side = side[:side.index("</section>")]
    assert "Not comparable:</b> loose is " + NOT in side and 'class="num best"' not in side
    md = render_markdown([a, b])
    assert "> **Not comparable:** loose is " + NOT in md


def test_show_prints_the_label(tmp_path):
    m = mariadb_doc()
    buf = io.StringIO()
    out = Console(file=buf, width=200)
    print_verdict(out, verdict([m]))
    print_summary(out, m)
    text = buf.getvalue()
    assert "not durable: " in text and NOT in text and "innodb_flush_log_at_trx_commit=2" in text


def _run(tmp_path: Path, name: str, doc: dict) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "result.json").write_text(json.dumps(doc))
    return str(d)


def test_compare_durable_and_not_says_so(tmp_path, capsys):
    a = _run(tmp_path, "durable", mariadb_doc(durable=True))
    b = _run(tmp_path, "loose", mariadb_doc())
    assert main(["compare", a, b, "--json", "--out", str(tmp_path / "cmp")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["not_comparable"].startswith("loose is " + NOT)
    assert main(["compare", a, b, "--out", str(tmp_path / "cmp2")]) == 0
    text = capsys.readouterr().out
    assert "not comparable" in text and "not judged" in text
    # two durable runs: comparable
    c = _run(tmp_path, "durable2", mariadb_doc(durable=True))
    assert main(["compare", a, c, "--json", "--out", str(tmp_path / "cmp3")]) == 0
    assert json.loads(capsys.readouterr().out)["not_comparable"] is None


def test_lab_refuses_an_unknown_engine(tmp_path, capsys):
    """In process: `lab --engines mariadb,foo` is refused, naming the engines it knows, before any step runs."""
    assert main(["lab", str(tmp_path), "--engines", "mariadb,foo", "--out", str(tmp_path / "lab")]) == 2
    err = capsys.readouterr().err
    assert "--engines: unknown engine foo" in err and "postgres, mariadb" in err
    assert not (tmp_path / "lab").exists()


def test_lab_report_shows_the_engines_side_by_side():
    """Two OLTP runs of a lab (PostgreSQL's and MariaDB's): the side-by-side names each engine."""
    pg, m = load_run(TPCC), mariadb_doc(durable=True, workload="tpcc")
    pg["_run_dir"], m["_run_dir"] = "/lab/oltp-postgres", "/lab/oltp-mariadb"
    html = render_html([pg, m])
    side = html[html.index('<section class="compare">'):]
    assert "PostgreSQL · TPC-C-like, 1 warehouse" in side and "MariaDB · TPC-C-like, 1 warehouse" in side
    assert "Not comparable" not in side    # the older PostgreSQL run does not say: unknown, not a clash


def test_show_method_names_the_driver():
    how = dict(FM.method(mariadb_doc()))
    assert "the time sysbench measured" in how["rates"]
    assert "the time pgbench measured" in dict(FM.method(load_run(TPCC)))["rates"]
