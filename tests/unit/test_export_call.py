"""`dbtier export metrics|series` as library calls (dbtier.export.calls): each call's section is what the
command stores for the same runs (the same keys, in the same order, the same values: the stored document is
the reference), its text is the file the command writes, and each refusal is the command's, in its words
and in its order (a run that cannot be read is named before a bad grouping key or --output). Saved
documents only; the Pushgateway is a tiny http.server on loopback."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import call_main, load_doc, refused_with
from dbtier.export.calls import (ExportMetrics, ExportSeries, MetricsRequest, SeriesRequest, export_metrics,
                                 export_series)
from samples import DSS_SPILL, PROBE, TPCC, make_lab, run_dir

ENVELOPE = {"schema_version", "command", "result_kind", "dbtier_version", "started_at", "finished_at", "status",
            "machine", "params", "errors", "name", "owner", "_run_dir"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    out = {name: run_dir(root, name, src) for name, src in (("probe", PROBE), ("oltp", TPCC), ("dss", DSS_SPILL))}
    out["lab"] = make_lab(root)
    return out


def _same(res: Any, doc: dict[str, Any]) -> None:
    """The call's section is the document's keys past the envelope, in order, with the same JSON."""
    section = res.to_json()
    assert set(doc) - set(section) <= ENVELOPE
    assert list(section) == [k for k in doc if k not in ENVELOPE]
    assert json.dumps(section) == json.dumps({k: doc[k] for k in section})


class _Start:
    """A `start` that records what it is given and sends the files to `out` (None: nowhere)."""

    def __init__(self, out: Path | None):
        self.out, self.params, self.inputs, self.saved = out, None, None, []

    def __call__(self, params: dict[str, Any], inputs: list[str]) -> Path | None:
        self.params, self.inputs = params, inputs
        if self.out is not None:
            self.out.mkdir()
        return self.out

    def save(self, section: dict[str, Any]) -> None:
        self.saved.append(list(section))


def _cli(tmp_path: Path, *argv: str) -> tuple[Any, dict[str, Any]]:
    """`dbtier export ARGV --out cli`: what it printed and the document it stored."""
    r = call_main("export", *argv, "--out", "cli", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r, load_doc(tmp_path / "cli")


def test_metrics_is_the_commands_document_and_text(runs, tmp_path):
    paths = [str(runs["probe"]), str(runs["lab"])]
    r, doc = _cli(tmp_path, "metrics", *paths, "--format", "openmetrics")
    start = _Start(tmp_path / "lib")
    res = export_metrics(MetricsRequest(runs=tuple(paths), format="openmetrics"), start, start.save)
    assert isinstance(res, ExportMetrics) and res.kind == "export.metrics" == doc["result_kind"]
    _same(res, doc)
    assert start.params == doc["params"] and start.saved == [["runs", "format", "families", "file"]]
    assert list(res.inputs) == start.inputs == [d["run_dir"] for d in doc["runs"]]
    assert res.text.decode() == r.stdout == (tmp_path / "cli" / "metrics.om").read_text()
    for name in ("metrics.om", "metrics.prom"):         # the prometheus text a push or textfile sends, kept too
        assert (tmp_path / "lib" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    with pytest.raises(TypeError):
        res.section["families"][0]["samples"] = 0
    # no directory given: the same figures, no file
    bare = export_metrics(MetricsRequest(runs=tuple(paths), format="openmetrics"))
    assert bare.text == res.text and bare["file"] is None and bare["families"] == res["families"]


def test_metrics_into_a_textfile_and_a_pushgateway(runs, tmp_path):
    got: list[tuple[str, bytes]] = []

    class Gateway(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):    # noqa: N802 - http.server's name
            got.append((self.path, self.rfile.read(int(self.headers.get("Content-Length") or 0))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/"
    try:
        tf = tmp_path / "tf"
        tf.mkdir()
        p = str(runs["oltp"])
        argv = ["--textfile", str(tf), "--push", url, "--group", "scenario=t"]
        r, doc = _cli(tmp_path, "metrics", p, *argv)
        start = _Start(tmp_path / "lib")
        req = MetricsRequest(runs=(p,), textfile=str(tf), push=url, group=("scenario=t",))
        assert req.push_url == url.rstrip("/") and req.textfile_dir == tf
        res = export_metrics(req, start, start.save)
    finally:
        srv.shutdown()
        srv.server_close()
    _same(res, doc)
    assert res["push"]["grouping_key"]["scenario"] == "t" and res["textfile"] == str(tf / "dbtier.prom")
    assert start.saved == [["runs", "format", "families", "file"], ["runs", "format", "families", "file", "push"],
                           ["runs", "format", "families", "file", "push", "textfile"]]
    assert len(got) == 2 and got[0] == got[1] and got[0][0].endswith("/scenario/t")
    assert (tf / "dbtier.prom").read_bytes() == res.text


_refused = refused_with


def test_metrics_refusals_in_the_commands_words_and_order(runs, tmp_path):
    p = (str(runs["probe"]),)
    _refused(f"--textfile {tmp_path / 'no'}: no such directory",
             lambda: MetricsRequest(runs=p, textfile=str(tmp_path / "no")))
    _refused(f"--textfile {PROBE}: not a directory", lambda: MetricsRequest(runs=p, textfile=str(PROBE)))
    _refused("--push 'ftp://x:21': not an http:// or https:// URL", lambda: MetricsRequest(runs=p, push="ftp://x:21"))
    _refused("without /metrics/job/", lambda: MetricsRequest(runs=p, push="http://127.0.0.1:9/metrics/job/x"))
    e = _refused("--group without --push", lambda: MetricsRequest(runs=p, group=("a=b",)))
    assert e.hint == "add --push URL"
    bad = MetricsRequest(runs=p, push="http://127.0.0.1:9", group=("run_id=1",))       # made: checked later
    _refused("--group run_id: the exported metrics already carry the label 'run_id'", bad.grouping_key)
    _refused("--group 'nokey': not KEY=VALUE",
             MetricsRequest(runs=p, push="http://127.0.0.1:9", group=("nokey",)).grouping_key)
    # a run that cannot be read is named first, as the command names it
    gone = MetricsRequest(runs=(str(tmp_path / "gone"),), push="http://127.0.0.1:9", group=("run_id=1",))
    _refused(str(tmp_path / "gone"), lambda: export_metrics(gone))
    twin = tmp_path / "twin" / "probe"
    twin.mkdir(parents=True)
    (twin / "result.json").write_bytes(PROBE.read_bytes())
    start = _Start(tmp_path / "never")
    _refused("two runs have the id 'probe'", lambda: export_metrics(MetricsRequest(runs=(*p, str(twin))), start))
    assert start.params is None and not (tmp_path / "never").exists()      # refused before start


def test_series_is_the_commands_document_and_text(runs, tmp_path):
    paths = [str(runs["probe"]), str(runs["oltp"])]
    r, doc = _cli(tmp_path, "series", *paths, "--output", "cli.om")
    start = _Start(tmp_path / "lib")
    req = SeriesRequest(runs=tuple(paths), output="cli.om")
    with pytest.MonkeyPatch.context() as m:
        m.chdir(tmp_path)                   # --output as the command was given it: relative
        res = export_series(req, start, start.save)
    assert isinstance(res, ExportSeries) and res.kind == "export.series" == doc["result_kind"]
    _same(res, doc)
    assert start.params == doc["params"] and start.saved == [["runs", "format", "samples", "families", "file"]]
    assert res.text == (tmp_path / "cli.om").read_bytes() == (tmp_path / "cli" / "series.om").read_bytes() \
        == (tmp_path / "lib" / "series.om").read_bytes()
    assert res["samples"] == sum(x["samples"] for x in res["runs"]) and res["output"] == "cli.om"


def test_series_refusals_in_the_commands_words_and_order(runs, tmp_path):
    hi = [str(runs["probe"])]
    for out, needle in (("", "--output '': not a file name"), (str(tmp_path), "not a file name"),
                        (str(tmp_path / "no" / "x.om"), f"the directory {tmp_path / 'no'} does not exist"),
                        (str(runs["probe"] / "x.om"), f"inside the run directory {runs['probe']} it reads")):
        req = SeriesRequest(runs=tuple(hi), output=out)        # made: --output is checked against the runs read
        _refused(needle, lambda: req.output_file(hi))
        _refused(needle, lambda: export_series(req))
    assert SeriesRequest(runs=tuple(hi)).output_file(hi) is None
    _refused(f"{tmp_path / 'gone'}", lambda: export_series(SeriesRequest(runs=(str(tmp_path / "gone"),),
                                                                         output=str(tmp_path / "no" / "x.om"))))
    start = _Start(tmp_path / "never")
    _refused("no time series in dss (bench dss)", lambda: export_series(SeriesRequest(runs=(str(runs["dss"]),)), start))
    assert start.params is None
