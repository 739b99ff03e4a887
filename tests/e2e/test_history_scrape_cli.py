"""`dbtier history import` of node_exporter's text scrapes, end to end: the `# TIME` file and the files of
one scrape each, sniffed without --source, the JSON document's figures against the files' own lines; one
scrape refused in one line; collectors/node_exporter.sh against the real node_exporter the tests start."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from conftest import DATA, ROOT, assert_clean_error, call_main, load_doc

pytestmark = pytest.mark.slow        # each import is a second or more

NE = DATA / "history" / "node_exporter"
PER_FILE = sorted((NE / "per-file").glob("metrics-*.prom"))


def imported(tmp_path, *args) -> dict:
    r = call_main("history", "import", *args, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _reads(text: str) -> list[tuple[float, float]]:
    """(time, vda's reads_completed) of each `# TIME` block."""
    parts = re.split(r"^# TIME (\S+)\n", text, flags=re.M)[1:]
    return [(float(t), float(re.search(r'^node_disk_reads_completed_total\{device="vda"\} (\S+)$', body, re.M).group(1)))
            for t, body in zip(parts[::2], parts[1::2])]


def test_time_lines_file_imported_sniffed(tmp_path):
    pts = _reads((NE / "scrapes.prom").read_text())
    rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(pts, pts[1:])]
    out = tmp_path / "run"
    doc = imported(tmp_path, str(NE / "scrapes.prom"), "--out", str(out))
    assert doc["source"] == "prometheus" and doc["params"]["source"] == "prometheus"
    db = doc["databases"][0]
    assert (db["name"], db["intervals"]) == ("scrapes", 3)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(rates))
    assert doc["provenance"]["times_from"] == "the `# TIME` lines"
    assert load_doc(out)["provenance"] == doc["provenance"]
    # the requirement says what the intervals are
    r = call_main("history", "requirement", str(out), "--percentile", "max", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    req = json.loads(r.stdout)
    assert req["requirement"]["read_iops"] == pytest.approx(max(rates), rel=1e-3)
    assert "sample times from the `# TIME` lines" in json.dumps(req)


def test_one_scrape_a_file_imported(tmp_path):
    doc = imported(tmp_path, *map(str, PER_FILE), "--out", str(tmp_path / "run"))
    db = doc["databases"][0]
    assert (db["name"], db["intervals"]) == ("metrics", 2)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx((2.8108431e7 - 2.8105396e7) / 5)     # 15:23:16 -> :21
    assert doc["provenance"]["times_from"] == "the file names"
    r = call_main("history", "import", *map(str, PER_FILE), cwd=tmp_path)
    assert r.returncode == 0 and "sample times from the file names" in r.stdout.replace("\n", " ")


def test_one_scrape_refused_in_one_line(tmp_path):
    r = call_main("history", "import", str(PER_FILE[0]), cwd=tmp_path)
    assert_clean_error(r, "one scrape: a rate needs two", "collectors/node_exporter.sh")
    assert r.returncode == 2 and not (tmp_path / "runs").exists()


def test_collector_against_the_real_node_exporter(tmp_path, prom_stack):
    """collectors/node_exporter.sh, three scrapes a second apart, then the import: vda's read rate is the
    file's own delta over its `# TIME` lines."""
    out = tmp_path / "scrapes.prom"
    with open(out, "w") as f:
        subprocess.run(["sh", str(ROOT / "collectors" / "node_exporter.sh"), f"{prom_stack.node_exporter_url}/metrics",
                        "1", "3"], stdout=f, check=True, timeout=60)
    text = out.read_text()
    assert text.count("# TIME ") == 3 and "node_disk_reads_completed_total" in text
    doc = imported(tmp_path, str(out), "--out", str(tmp_path / "run"))
    db = doc["databases"][0]
    assert db["intervals"] == 2 and doc["provenance"]["times_from"] == "the `# TIME` lines"
    counted = [f["file_type"] for f in db["file_types"] if f["role"] == "part"]
    assert counted and not any(re.fullmatch(r"(loop|ram|zram|dm-|md)\S*", d) for d in counted)
    parts = re.split(r"^# TIME (\S+)\n", text, flags=re.M)[1:]
    pts = [(float(t), sum(float(re.search(rf'^node_disk_reads_completed_total\{{device="{d}"\}} (\S+)$', body,
                                          re.M).group(1)) for d in counted))
           for t, body in zip(parts[::2], parts[1::2])]
    rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(pts, pts[1:])]
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(rates))


def test_one_scrape_a_file_across_batches(tmp_path):
    """Batches of two files (DBTIER_BATCH_BYTES): the database's files are read again together, and the
    figures are those of one batch."""
    files = []
    for f in PER_FILE:
        files.append(tmp_path / f.name)
        files[-1].write_text(f.read_text())
    fourth = tmp_path / "metrics-20261128T152427Z.prom"     # a minute after the third, 1,200 more reads
    last = PER_FILE[-1].read_text()
    fourth.write_text(last.replace('node_disk_reads_completed_total{device="vda"} 2.8111458e+07',
                                   'node_disk_reads_completed_total{device="vda"} 2.8112658e+07'))
    files.append(fourth)
    one = imported(tmp_path, *map(str, files), "--out", str(tmp_path / "one"))
    r = call_main("history", "import", *map(str, files), "--out", str(tmp_path / "two"), "--json", cwd=tmp_path,
                  env={"DBTIER_BATCH_BYTES": str(2 * max(f.stat().st_size for f in files))})
    assert r.returncode == 0, r.stderr
    two = json.loads(r.stdout)
    assert two["batches"] == 2 and one["batches"] == 1
    a, b = one["databases"][0], two["databases"][0]
    assert (b["name"], b["intervals"]) == ("metrics", 3)
    assert b["peaks"] == a["peaks"]
    assert sorted(i["read_iops"] for i in b["top_intervals"]) == pytest.approx(sorted(
        [(2.8108431e7 - 2.8105396e7) / 5, (2.8111458e7 - 2.8108431e7) / 6, 1200 / 60]))
