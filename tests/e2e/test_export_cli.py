"""`dbtier export metrics|series` through the real entry point on real runs of every kind (saved documents
in run directories, and history, simulate and plan runs made here): the text parses with the strict
OpenMetrics parser and passes `promtool check metrics`, the run directory holds it, --textfile replaces
its file atomically, and every bad input ends in one `dbtier: error:` naming the URL or file, with nothing
half written. No engine starts: the Pushgateways that refuse are a closed port and a tiny http.server."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import duckdb
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om

from conftest import DATA, assert_clean_error, call_main, have, load_doc
from samples import BACKUP_DUCKDB, DSS_SPILL, MATRIX, PROBE, TPCC, make_lab, run_dir

# every kind of run made and exported (the simulators' kernels compiled): the full suite's, not the fast tier's
pytestmark = pytest.mark.slow

MSS = DATA / "history" / "sqlserver" / "file_stats-sql01.csv"
TRACE = DATA / "traces" / "msr-hm1.csv"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """One run directory of every kind: saved real documents, and light commands run here."""
    root = tmp_path_factory.mktemp("runs")
    env = {"DBTIER_STATE_DIR": str(tmp_path_factory.mktemp("state"))}
    out = {name: run_dir(root, name, src) for name, src in
           (("probe", PROBE), ("oltp", TPCC), ("matrix", MATRIX), ("dss", DSS_SPILL), ("backup", BACKUP_DUCKDB))}
    out["lab"] = make_lab(root)
    for name, argv in (
            ("hi", ["history", "import", "--source", "sqlserver", str(MSS)]),
            ("hc", ["history", "consolidate", str(root / "hi")]),
            ("hr", ["history", "requirement", str(root / "hc")]),
            ("sim", ["simulate", "run", str(TRACE), "--design", "read-cache", "--cache", "nvme-enterprise-3.84tb",
                     "--backing", "sas-15k-73gb", "--cache-gb", "1"]),
            ("cloud", ["plan", "size", "--cloud", "aws", "--read-iops", "20000", "--write-iops", "5000",
                       "--capacity-gb", "2000"])):
        r = call_main(*argv, "--out", str(root / name), cwd=root, env=env)
        assert r.returncode == 0, r.stderr
        out[name] = root / name
    return out


def export(tmp_path: Path, *args: str) -> "subprocess.CompletedProcess":
    return call_main("export", *args, cwd=tmp_path)


def om_samples(text: str) -> dict[tuple[str, frozenset], float]:
    got = {}
    for fam in parse_om(text):
        for s in fam.samples:
            assert s.timestamp is None
            got[(s.name, frozenset(s.labels.items()))] = s.value
    return got


def v(got: dict, name: str, **labels) -> float:
    return got[(name, frozenset(labels.items()))]


def test_every_kind_parses_strictly_and_passes_promtool(runs, tmp_path):
    dirs = [str(p) for p in runs.values()]
    om = export(tmp_path, "metrics", *dirs, "--format", "openmetrics", "--out", "om")
    assert om.returncode == 0, om.stderr
    got = om_samples(om.stdout)
    assert not {k for _, ls in got for k, _ in ls} & {"job", "instance"}
    ids = {dict(ls)["run_id"] for n, ls in got if n == "dbtier_run_info"}
    assert ids == set(runs) | {f"lab/{s}" for s in ("dss-1", "dss-2", "backup-1", "backup-2", "probe", "oltp", "plan-size")}
    # figures read from the documents themselves
    hi, hr, hc = load_doc(runs["hi"]), load_doc(runs["hr"]), load_doc(runs["hc"])
    sales = next(d for d in hi["databases"] if d["name"] == "SQL01/sales")
    assert v(got, "dbtier_history_operations_per_second", run_id="hi", database="SQL01/sales", op="read",
             percentile="p95") == pytest.approx(sales["peaks"]["read_iops"]["p95"])
    assert v(got, "dbtier_history_consolidation_gain", run_id="hc") == pytest.approx(hc["gain"])
    assert v(got, "dbtier_requirement_operations_per_second", run_id="hr", op="read", percentile="p95",
             basis="with_headroom") == pytest.approx(hr["with_headroom"]["read_iops"])
    sim = load_doc(runs["sim"])
    assert v(got, "dbtier_simulate_read_hit_ratio", run_id="sim", counted="blocks") == \
        pytest.approx(sim["read_hit_ratio"])
    assert v(got, "dbtier_simulate_latency_seconds", run_id="sim", op="read", percentile="p99") == \
        pytest.approx(sim["latency_us"]["read"]["p99"] / 1e6)
    cloud = load_doc(runs["cloud"])["candidates"][0]
    assert v(got, "dbtier_plan_cheapest_monthly_price", run_id="cloud", currency="USD") == \
        pytest.approx(cloud["cloud"]["monthly_usd"]["total"])
    prom = export(tmp_path, "metrics", *dirs, "--out", "prom")
    assert prom.returncode == 0 and prom.stdout.startswith("# HELP dbtier_run_info ")
    if not have("promtool"):
        pytest.skip("promtool not installed (Debian: apt-get install prometheus)")
    check = subprocess.run(["promtool", "check", "metrics"], input=prom.stdout, capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout + check.stderr == "", check.stdout + check.stderr


def test_the_run_directory_holds_the_text_and_json_prints_the_document(runs, tmp_path):
    r = export(tmp_path, "metrics", str(runs["probe"]), "--out", "a")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a" / "metrics.prom").read_text() == r.stdout
    doc = load_doc(tmp_path / "a")
    assert doc["command"] == "export" and doc["status"] == "ok" and doc["file"] == "metrics.prom"
    assert doc["runs"] == [{"run_id": "probe", "kind": "probe", "run_dir": str(runs["probe"])}]
    j = export(tmp_path, "metrics", str(runs["probe"]), "--json", "--format", "openmetrics", "--out", "b")
    assert json.loads(j.stdout)["families"][0] == {"name": "dbtier_run", "type": "info", "samples": 1}
    assert (tmp_path / "b" / "metrics.om").read_text().endswith("# EOF\n")
    assert (tmp_path / "b" / "metrics.prom").exists()       # what a push or textfile would send


def test_textfile_is_written_atomically_and_replaced(runs, tmp_path):
    tf = tmp_path / "textfile"
    tf.mkdir()
    r = export(tmp_path, "metrics", str(runs["probe"]), "--textfile", str(tf), "--out", "a")
    assert r.returncode == 0, r.stderr
    assert os.listdir(tf) == ["dbtier.prom"]
    assert (tf / "dbtier.prom").read_text() == (tmp_path / "a" / "metrics.prom").read_text()
    assert load_doc(tmp_path / "a")["textfile"] == str(tf / "dbtier.prom")
    r = export(tmp_path, "metrics", str(runs["dss"]), "--textfile", str(tf), "--format", "openmetrics", "--out", "b")
    assert r.returncode == 0, r.stderr
    assert os.listdir(tf) == ["dbtier.prom"]
    text = (tf / "dbtier.prom").read_text()
    assert 'run_id="dss"' in text and 'run_id="probe"' not in text and "# EOF" not in text   # always 0.0.4


def test_series_of_a_history_run_are_its_parquet_intervals(runs, tmp_path):
    out = tmp_path / "hist.om"
    r = export(tmp_path, "series", str(runs["hi"]), str(runs["hc"]), "--output", str(out), "--out", "s")
    assert r.returncode == 0, r.stderr
    assert "promtool tsdb create-blocks-from openmetrics" in r.stdout
    assert out.read_text() == (tmp_path / "s" / "series.om").read_text()
    got: dict = {}
    for fam in parse_om(out.read_text()):
        for s in fam.samples:
            got.setdefault((s.name, frozenset(s.labels.items())), []).append((float(s.timestamp), s.value))
    rows = duckdb.sql(f"""SELECT database, epoch_us("end") / 1e6, read_iops, write_mbps
                          FROM '{runs['hi'] / 'totals.parquet'}' ORDER BY 1, 2""").fetchall()
    def at(points: list, t: float) -> float:
        when, value = min(points, key=lambda p: abs(p[0] - t))
        assert abs(when - t) < 1e-5
        return value
    for db, t, read_iops, write_mbps in rows:
        assert at(got[("dbtier_series_history_operations_per_second",
                       frozenset({"run_id": "hi", "database": db, "op": "read"}.items()))], t) == pytest.approx(read_iops)
        assert at(got[("dbtier_series_history_throughput_bytes_per_second",
                       frozenset({"run_id": "hi", "database": db, "op": "write"}.items()))], t) == \
            pytest.approx(write_mbps * 1e6)
    doc = load_doc(tmp_path / "s")
    assert doc["runs"][0]["first"].startswith("2024-03-04T09:05") and "interval's end" in doc["runs"][0]["time_basis"]
    assert ("dbtier_series_history_operations_per_second",
            frozenset({"run_id": "hc", "database": "sum", "op": "total"}.items())) in got


# -- bad input ------------------------------------------------------------------------------------------------

class _Refuser(http.server.BaseHTTPRequestHandler):
    status = 500

    def do_PUT(self):    # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(b"pushed metrics are invalid or inconsistent")

    def log_message(self, *a):
        pass


@pytest.fixture
def refusing_gateway():
    """A tiny HTTP server on 127.0.0.1 answering every PUT with the status given (500 by default)."""
    servers = []

    def start(status: int = 500) -> str:
        handler = type("H", (_Refuser,), {"status": status})
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_pushgateway_nobody_listens_on(runs, tmp_path):
    tf = tmp_path / "tf"
    tf.mkdir()
    url = f"http://127.0.0.1:{_closed_port()}"
    r = export(tmp_path, "metrics", str(runs["probe"]), "--push", url, "--textfile", str(tf), "--out", "a")
    err = assert_clean_error(r, url, "next:")
    assert "refused" in err.lower()
    assert os.listdir(tf) == []                    # the textfile comes after the push: nothing written there
    doc = load_doc(tmp_path / "a")
    assert doc["status"] == "failed" and url in doc["errors"][0]["message"]
    assert (tmp_path / "a" / "metrics.prom").exists()       # kept to push again


@pytest.mark.parametrize("status", [500, 400])
def test_a_pushgateway_that_answers_an_error(runs, tmp_path, refusing_gateway, status):
    url = refusing_gateway(status)
    r = export(tmp_path, "metrics", str(runs["oltp"]), "--push", url, "--group", "scenario=t", "--out", "a")
    assert_clean_error(r, url, f"HTTP {status}", "/metrics/job/dbtier/", "scenario/t", "inconsistent")
    assert load_doc(tmp_path / "a")["status"] == "failed"


def _immutable(d: Path):
    """A directory this process cannot write into: chattr +i as root (root ignores modes), else mode 555."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode:
            pytest.skip("chattr +i is not available here")
        return lambda: subprocess.run(["chattr", "-i", str(d)], capture_output=True)
    d.chmod(0o555)
    return lambda: d.chmod(0o755)


def test_textfile_directory_missing_not_a_directory_or_unwritable(runs, tmp_path):
    for bad, needle in ((tmp_path / "nope", "no such directory"), (Path(str(PROBE)), "not a directory")):
        r = export(tmp_path, "metrics", str(runs["probe"]), "--textfile", str(bad), "--out", "a")
        assert_clean_error(r, str(bad), needle, "next:")
        assert not (tmp_path / "a").exists()       # refused before the run directory is made
    ro = tmp_path / "ro"
    ro.mkdir()
    undo = _immutable(ro)
    try:
        r = export(tmp_path, "metrics", str(runs["probe"]), "--textfile", str(ro), "--out", "a")
        assert_clean_error(r, str(ro), "not writable")
        assert os.listdir(ro) == [] and not (tmp_path / "a").exists()
    finally:
        undo()


def test_not_a_run_and_a_damaged_result(runs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_clean_error(export(tmp_path, "metrics", str(empty), "--out", "a"), str(empty), "result.json")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "result.json").write_text(load_doc(runs["probe"]).__repr__()[:200])
    assert_clean_error(export(tmp_path, "metrics", str(broken), "--out", "a"), str(broken / "result.json"))
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    assert_clean_error(export(tmp_path, "series", str(other), "--out", "a"), str(other))
    assert not (tmp_path / "a").exists()


def test_bad_push_and_group_options(runs, tmp_path):
    p = str(runs["probe"])
    cases = ((["--push", "ftp://x:21"], "not an http"),
             (["--push", "http://127.0.0.1:9/metrics/job/x"], "base URL"),
             (["--group", "a=b"], "without --push"),
             (["--push", "http://127.0.0.1:9", "--group", "nokey"], "KEY=VALUE"),
             (["--push", "http://127.0.0.1:9", "--group", "x="], "empty value"),
             (["--push", "http://127.0.0.1:9", "--group", "run_id=1"], "already carry the label"))
    for extra, needle in cases:
        assert_clean_error(export(tmp_path, "metrics", p, *extra, "--out", "a"), needle)
        assert not (tmp_path / "a").exists()


def test_series_refusals(runs, tmp_path):
    assert_clean_error(export(tmp_path, "series", str(runs["cloud"]), str(runs["dss"]), "--out", "a"),
                       "no time series", "cloud (plan size)")
    assert_clean_error(export(tmp_path, "series", str(runs["hi"]), "--output", str(runs["hi"] / "x.om")),
                       "inside the run directory")
    assert_clean_error(export(tmp_path, "series", str(runs["hi"]), "--output", str(tmp_path / "no" / "x.om")),
                       "does not exist")
    twin = tmp_path / "twin" / "probe"
    twin.mkdir(parents=True)
    shutil.copy(runs["probe"] / "result.json", twin / "result.json")
    assert_clean_error(export(tmp_path, "metrics", str(runs["probe"]), str(twin)), "two runs have the id 'probe'")
    same = export(tmp_path, "metrics", str(runs["probe"]), str(runs["probe"] / "result.json"),
                  str(runs["lab"]), str(runs["lab"] / "dss-1"), "--out", "same")    # each run once
    assert same.returncode == 0, same.stderr
    ids = [r["run_id"] for r in load_doc(tmp_path / "same")["runs"]]
    assert ids.count("probe") == 1 and "lab/dss-1" in ids and "dss-1" not in ids
    gone = tmp_path / "gone"
    shutil.copytree(runs["hi"], gone)
    (gone / "totals.parquet").unlink()
    assert_clean_error(export(tmp_path, "series", str(gone), "--out", "a"), "totals.parquet", str(gone))
    (gone / "totals.parquet").write_bytes(b"PAR1 not really")
    assert_clean_error(export(tmp_path, "series", str(gone), "--out", "a"), "cannot read totals.parquet")
    assert not (tmp_path / "a").exists()
