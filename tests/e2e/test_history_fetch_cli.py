"""`dbtier history fetch` against a small local HTTP server (127.0.0.1) that answers as Prometheus does (the
real saved query_range answer), or fails as a Prometheus can: 500, 404, 400 with its error JSON, an answer
that is not JSON, status error, nobody listening. Each failure: one message naming the URL, no traceback,
no run directory. And `history import` telling sources from the files' first bytes."""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import DATA, assert_clean_error, call_main, load_doc

QR = DATA / "history" / "real" / "prometheus" / "query_range-node-disk.json"
T0, T1 = 1795697082, 1795697111          # the saved answer's first and last sample


class _Handler(BaseHTTPRequestHandler):
    mode = "ok"
    seen: list[dict] = []

    def log_message(self, *a):          # quiet
        pass

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query).items()}
        type(self).seen.append({"path": u.path, **q})
        if u.path == "/api/v1/targets":
            return self._send(200, {"status": "success", "data": {"activeTargets": [{"scrapeInterval": "1s"}]}})
        mode = type(self).mode
        if mode == "500":
            return self._send(500, b"internal error\n")
        if mode == "404":
            return self._send(404, b"404 page not found\n")
        if mode == "400":
            return self._send(400, {"status": "error", "errorType": "bad_data",
                                    "error": "exceeded maximum resolution of 11,000 points per timeseries"})
        if mode == "html":
            return self._send(200, b"<html>Grafana</html>")
        if mode == "status-error":
            return self._send(200, {"status": "error", "errorType": "execution", "error": "query timed out"})
        if mode == "empty":
            return self._send(200, {"status": "success", "data": {"resultType": "matrix", "result": []}})
        return self._send(200, QR.read_bytes())

    def _send(self, code, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake_prom():
    _Handler.seen = []
    _Handler.mode = "ok"
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    th = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    th.start()
    try:
        yield srv, f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _fetch(tmp_path, url, *extra):
    return call_main("history", "fetch", "--prometheus", url, "--start", str(T0), "--end", str(T1), "--step", "1s",
                     "--timeout", "5", "--out", str(tmp_path / "run"), *extra, cwd=tmp_path, timeout=60)


def test_fetch_imports_and_keeps_raw_for_an_offline_import(tmp_path, fake_prom):
    srv, url = fake_prom
    r = _fetch(tmp_path, url, "--devices", "vda")
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    assert doc["params"]["action"] == "import" and doc["source"] == "prometheus"
    assert doc["params"]["fetch"]["step_s"] == 1 and doc["params"]["fetch"]["requests"] == 1
    raw = sorted((tmp_path / "run" / "raw").glob("prometheus-*.json"))
    assert [p.name for p in raw] == ["prometheus-q1-00001.json"] and raw[0].read_bytes() == QR.read_bytes()
    assert doc["files"] == [str(tmp_path / "run" / "raw" / "prometheus-q1-00001.json")]
    q = [s for s in _Handler.seen if s["path"] == "/api/v1/query_range"][0]
    assert q["query"].startswith('{__name__=~"node_disk_') and (q["start"], q["end"], q["step"]) == (
        f"{T0}.000", f"{T1}.000", "1")
    # the same document again, offline, from raw/
    r2 = call_main("history", "import", *map(str, raw), "--devices", "vda", "--out", str(tmp_path / "again"),
                   cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    again = load_doc(tmp_path / "again")
    assert again["databases"][0]["peaks"] == doc["databases"][0]["peaks"]
    assert again["provenance"]["basis"] == doc["provenance"]["basis"] == \
        "1-s intervals between counter samples (dbtier's differences)"


def test_fetch_splits_a_long_range_under_11000_points(tmp_path, fake_prom):
    srv, url = fake_prom
    r = call_main("history", "fetch", "--prometheus", url, "--start", str(T0 - 25000), "--end", str(T1),
                  "--step", "1s", "--out", str(tmp_path / "run"), cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    qs = [s for s in _Handler.seen if s["path"] == "/api/v1/query_range"]
    spans = [(float(q["start"]), float(q["end"])) for q in qs]
    assert len(spans) == 3 and spans[0][0] == T0 - 25000 and spans[-1][1] == T1
    assert all((e - s) / 1 + 1 <= 11000 for s, e in spans)
    assert all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:]))          # contiguous, no sample twice
    assert len(list((tmp_path / "run" / "raw").glob("prometheus-q1-*.json"))) == 3


@pytest.mark.parametrize("mode, needle", [
    ("500", "HTTP 500 Internal Server Error: internal error"),
    ("404", "HTTP 404 Not Found: 404 page not found"),
    ("400", "HTTP 400 Bad Request: bad_data: exceeded maximum resolution of 11,000 points"),
    ("html", "the answer is not JSON"),
    ("status-error", "the answer's status is 'error' (query timed out)"),
])
def test_fetch_failures_name_the_url(tmp_path, fake_prom, mode, needle):
    srv, url = fake_prom
    _Handler.mode = mode
    r = _fetch(tmp_path, url)
    err = assert_clean_error(r, f"{url}/api/v1/query_range?query=", needle)
    assert err.count("dbtier: error:") == 1
    assert not (tmp_path / "run").exists()


def test_fetch_refused_and_empty(tmp_path, fake_prom):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed again: nobody listens there
    r = _fetch(tmp_path, f"http://127.0.0.1:{port}")
    assert_clean_error(r, f"http://127.0.0.1:{port}/api/v1/targets", "no answer (Connection refused)")
    assert not (tmp_path / "run").exists()
    srv, url = fake_prom
    _Handler.mode = "empty"
    r = _fetch(tmp_path, url)
    assert_clean_error(r, f"{url}: no series between 2026-11-26T12:44:42Z and 2026-11-26T12:45:11Z")
    assert not (tmp_path / "run").exists()


def test_fetch_step_shorter_than_the_scrape_interval(tmp_path, fake_prom):
    srv, url = fake_prom
    r = call_main("history", "fetch", "--prometheus", url, "--start", str(T0), "--end", str(T1), "--step", "0.5s",
                  "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert_clean_error(r, "--step 0.5s is shorter than the scrape interval (1 s)")


def test_import_tells_the_source_from_the_files(tmp_path):
    h = DATA / "history"
    r = call_main("history", "import", str(h / "cloudwatch" / "get-metric-data-ebs.json"), "--json",
                  "--out", str(tmp_path / "cw"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["params"]["source"] == "cloudwatch"
    r = call_main("history", "import", str(QR), str(h / "azure" / "az-metrics-list-disk.json"),
                  "--out", str(tmp_path / "mixed"), cwd=tmp_path)
    assert_clean_error(r, "looks like prometheus", "and ", "like azure", "one import reads one source")
    odd = Path(tmp_path / "notes.txt")
    odd.write_text("hello\n")
    r = call_main("history", "import", str(odd), "--out", str(tmp_path / "odd"), cwd=tmp_path)
    assert_clean_error(r, "notes.txt: cannot tell which source", "give --source")


def test_requirement_says_what_its_figures_are_and_splits_wal(tmp_path):
    """An Azure import's requirement is "p99 of 1-minute averages"; PostgreSQL 18's pg_stat_io gives WAL apart
    from relation I/O, each file type at its own percentile."""
    h = DATA / "history"
    assert call_main("history", "import", str(h / "azure" / "az-metrics-list-disk.json"), "--out",
                     str(tmp_path / "az"), cwd=tmp_path).returncode == 0
    r = call_main("history", "requirement", str(tmp_path / "az"), "--percentile", "99", "--out", str(tmp_path / "azr"),
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "p99 of 1-minute averages (the source's own" in " ".join(r.stdout.split())
    assert load_doc(tmp_path / "azr")["from"]["basis"].startswith("p99 of 1-minute averages")
    assert call_main("history", "import", str(h / "pg_stat_io" / "pg_stat_io-18.csv"), "--out",
                     str(tmp_path / "pg"), cwd=tmp_path).returncode == 0
    r = call_main("history", "requirement", str(tmp_path / "pg"), "--percentile", "max", "--json", "--out",
                  str(tmp_path / "pgr"), cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert set(doc["by_file_type"]) == {"data", "wal"}
    assert doc["by_file_type"]["wal"]["write_iops"] == pytest.approx(101)
    assert doc["by_file_type"]["data"]["write_iops"] == pytest.approx(111)
    assert doc["write_iops"] == pytest.approx(212)
