"""`dbtier report` end to end: a real process, real files, the errors a user sees."""

from __future__ import annotations

import pytest

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import call_main

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "probe" / "quick-ext4-virtio.json"


def dbtier(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """In-process (`main(argv)`); test_report_as_a_real_process keeps one real process."""
    return call_main(*args, cwd=cwd)


def real_dbtier(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dbtier", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def probe_run(tmp_path: Path, name: str = "20261121T232748Z-probe") -> Path:
    run = tmp_path / "runs" / name
    run.mkdir(parents=True)
    shutil.copy(SAMPLE, run / "result.json")
    return run


def test_report_writes_html_and_a_document(tmp_path):
    run = probe_run(tmp_path)
    out = tmp_path / "rep"
    copy = tmp_path / "copy.html"
    r = dbtier("report", str(run), "--out", str(out), "--output", str(copy), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 5 and "109,270" in html
    assert copy.read_text() == html
    assert str(out / "report.html") in r.stdout
    doc = json.loads((out / "result.json").read_text())
    assert doc["command"] == "report" and doc["status"] == "ok" and doc["finished_at"]
    assert doc["report_html"] == str(out / "report.html")
    assert doc["inputs"] == [str(run)]
    assert doc["params"]["runs"] == [str(run)]


def test_report_json_prints_only_the_document(tmp_path):
    run = probe_run(tmp_path)
    r = dbtier("report", str(run), "--json", "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["report_html"].endswith("report.html") and Path(doc["report_html"]).exists()


def test_report_of_several_runs_including_unknown_commands(tmp_path):
    a = probe_run(tmp_path, "a-probe")
    b = probe_run(tmp_path, "b-probe")
    other = tmp_path / "runs" / "c-bench"
    other.mkdir()
    (other / "result.json").write_text(json.dumps({"schema_version": 1, "command": "bench", "status": "ok",
                                                   "params": {"clients": [1, 8]}}))
    # the default run directory goes under ./runs, relative to the working directory
    r = dbtier("report", "runs/a-probe", str(b / "result.json"), "runs/c-bench", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    reports = list((tmp_path / "runs").glob("*-report/report.html"))
    assert len(reports) == 1
    html = reports[0].read_text()
    assert 'id="compare"' in html and "a-probe" in html and "b-probe" in html and "c-bench" in html
    assert html.count("<svg") == 10
    doc = json.loads((reports[0].parent / "result.json").read_text())
    assert doc["inputs"] == [str(a), str(b), str(other)]


def test_a_directory_without_result_json_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "rep"
    r = dbtier("report", str(empty), "--out", str(out), cwd=tmp_path)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    first, *rest = r.stderr.strip().splitlines()
    assert first == f"dbtier: error: {empty}: no result.json there"
    assert all(line.startswith("  next:") for line in rest)
    assert not out.exists()          # nothing is written for a bad input


def test_a_missing_path_and_broken_json_are_clear_errors(tmp_path):
    r = dbtier("report", "nowhere", cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("dbtier: error: nowhere: no result.json there")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "result.json").write_text('{"schema_version": 1, "command": "pro')
    r = dbtier("report", str(bad), cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "not valid JSON" in r.stderr.splitlines()[0]


def test_output_into_a_missing_directory_is_a_clear_error(tmp_path):
    run = probe_run(tmp_path)
    r = dbtier("report", str(run), "--out", str(tmp_path / "rep"), "--output", str(tmp_path / "no" / "r.html"),
               cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "does not exist" in r.stderr.splitlines()[0]


def test_report_needs_a_run(tmp_path):
    r = dbtier("report", cwd=tmp_path)
    assert r.returncode == 2 and "RUN_DIR" in r.stderr


def test_report_of_a_lab_and_markdown(tmp_path):
    from samples import make_lab
    lab = make_lab(tmp_path / "runs")
    out = tmp_path / "rep"
    r = dbtier("report", str(lab), "--format", "both", "--out", str(out), "--output", str(tmp_path / "lab.html"),
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html, md = (out / "report.html").read_text(), (out / "report.md").read_text()
    assert html.count('<section class="run ') == 8 and 'id="verdict"' in html
    assert (tmp_path / "lab.html").read_text() == html and (tmp_path / "lab.md").read_text() == md
    doc = json.loads((out / "result.json").read_text())
    assert doc["params"]["format"] == "both" and doc["report_md"] == str(out / "report.md")
    assert doc["output_md"] == str(tmp_path / "lab.md")
    assert md.startswith("# dbtier report\n\n## Verdict\n\n- **good for**: Not judged on /tmp/pt, too little evidence")
    assert "- long enough probe points: each fio run lasts at least 1 s" in md      # the guards, listed
    assert "- **cheapest**: The cheapest configuration for the measured load" in md
    assert "| pg_basebackup tar → directory | 134 | 157 | MB/s |" in md


def test_report_md_only(tmp_path):
    run = probe_run(tmp_path)
    r = dbtier("report", str(run), "--format", "md", "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "rep" / "report.html").exists()
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| 4 KiB random read, peak | 109,270 | IOPS |" in md.replace("/tmp/pt: ", "")
    assert f"report: {tmp_path / 'rep' / 'report.md'}" in r.stdout
    r = dbtier("report", str(run), "--format", "pdf", cwd=tmp_path)
    assert r.returncode == 2 and "invalid choice: 'pdf'" in r.stderr


@pytest.mark.slow
def test_report_as_a_real_process(tmp_path):
    """The entry point end to end: a report written, and an error's exit code and single line."""
    run = probe_run(tmp_path)
    r = real_dbtier("report", str(run), "--json", "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["command"] == "report" and (tmp_path / "rep" / "report.html").exists()
    r = real_dbtier("report", "nowhere", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("dbtier: error: ") and "Traceback" not in r.stderr
