"""`dbtier report`, `dbtier show` and `dbtier compare` as library calls (dbtier.report.calls): the report
request's refusals, each in the command's words, and each call on saved runs giving the section the command
stores (the stored document is the reference), in the same key order, read-only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import call_main, load_doc, refused_with
from dbtier.core.errors import DbtierError
from dbtier.report.calls import Compare, Report, ReportRequest, Show, compare, report, show
from dbtier.results.result import Frozen
from samples import PROBE, TPCC, make_lab, run_dir


def _refused(needle: str, **kw: Any) -> DbtierError:
    return refused_with(needle, lambda: ReportRequest(**kw))


def _output_refused(needle: str, docs: list[dict[str, Any]], output: Path, fmt: str = "html") -> None:
    req = ReportRequest(runs=("r",), output=output, format=fmt)
    with pytest.raises(DbtierError) as e:
        req.check_output(docs)
    assert e.value.message == needle and e.value.hint


def test_each_refusal_in_the_commands_words(tmp_path):
    e = _refused("give run directories or --runs QUERY")
    assert e.message == "give run directories or --runs QUERY"
    assert _refused("", runs=("a",), runs_query="kind = 'probe'").message == \
        "give run directories or --runs QUERY, not both"
    _refused("--trend draws a trend of the runs --runs selects", runs=("a",), trend=("probe.read_iops_4k",))
    _refused("--format pdf: not a report format", runs=("a",), format="pdf")
    run = run_dir(tmp_path / "runs", "p1", PROBE)
    (run / "raw").mkdir()
    docs = [{"_run_dir": str(run)}]
    _output_refused("--output '': an empty file name", docs, Path(" "))
    _output_refused(f"--output {tmp_path} is a directory", docs, tmp_path)
    _output_refused(f"--output {tmp_path / 'no' / 'r.html'}: the directory {tmp_path / 'no'} does not exist", docs,
                    tmp_path / "no" / "r.html")
    _output_refused(f"--output {tmp_path / 'result.json'}: a report is never written as result.json", docs,
                    tmp_path / "result.json")
    _output_refused(f"--output {run / 'raw' / 'x.html'}: inside the input run directory {run}; the report never "
                    "writes into a run it reads", docs, run / "raw" / "x.html", "both")
    # a lab's step runs are inputs too
    lab = [{"_run_dir": str(tmp_path / "lab"), "_children": [{"doc": {"_run_dir": str(run)}}]}]
    _output_refused(f"--output {run / 'r.html'}: inside the input run directory {run}; the report never writes "
                    "into a run it reads", lab, run / "r.html")
    ReportRequest(runs=("r",), output=tmp_path / "r.html").check_output(docs)   # elsewhere: fine
    req = ReportRequest(runs_query="kind = 'probe'", trend=["probe.read_iops_4k"], format="both")  # type: ignore[arg-type]
    assert req.trend == ("probe.read_iops_4k",) and req.params == {
        "runs": [], "format": "both", "runs_query": "kind = 'probe'", "trend": ["probe.read_iops_4k"]}
    with pytest.raises(AttributeError):
        req.format = "md"     # type: ignore[misc]


def _same_section(section: dict[str, Any], doc: dict[str, Any]) -> None:
    """The call's section is the document's last keys, in the same order, with the same values."""
    envelope = [k for k in doc if k not in section]
    assert list(section) == list(doc)[len(envelope):]
    assert json.loads(json.dumps(section)) == {k: doc[k] for k in section}


def test_the_report_call_writes_what_the_command_writes(tmp_path):
    runs = [run_dir(tmp_path / "runs", "p1", PROBE), make_lab(tmp_path / "runs")]
    r = call_main("report", *map(str, runs), "--format", "both", "--output", str(tmp_path / "copy.html"), "--json",
                  "--out", str(tmp_path / "cli"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == load_doc(tmp_path / "cli")

    lib = tmp_path / "lib"
    lib.mkdir()
    started: list[tuple[dict[str, Any], list[str]]] = []
    recorded: list[list[str]] = []

    def start(params: dict[str, Any], inputs: list[str]) -> Path:
        started.append((params, inputs))
        return lib

    req = ReportRequest(runs=tuple(map(str, runs)), format="both", output=tmp_path / "copy2.html")
    res = report(req, start, record=lambda section: recorded.append(list(section)))
    assert isinstance(res, Report) and res.kind == doc["result_kind"] == "report"
    [(params, inputs)] = started
    assert params == doc["params"] and list(params) == list(doc["params"])
    steps = ("probe", "oltp", "dss-1", "dss-2", "backup-1", "backup-2", "plan-size")
    assert inputs == [*map(str, runs), *(str(runs[1] / s) for s in steps)]     # the lab's step runs too
    mine = res.to_json()
    where = {"report_html": (tmp_path / "cli", lib), "report_md": (tmp_path / "cli", lib),
             "output_html": (tmp_path / "copy.html", tmp_path / "copy2.html"),
             "output_md": (tmp_path / "copy.md", tmp_path / "copy2.md")}
    _same_section({k: v.replace(str(where[k][1]), str(where[k][0])) if k in where else v for k, v in mine.items()},
                  doc)
    assert list(mine) == ["inputs", "report_html", "output_html", "report_md", "output_md"]
    assert recorded == [list(mine)[:n] for n in range(1, 6)]     # told after the inputs and after each file
    html, md = (lib / "report.html").read_text(), (lib / "report.md").read_text()
    assert res.html == html == (tmp_path / "cli" / "report.html").read_text() == (tmp_path / "copy2.html").read_text()
    assert res.markdown == md == (tmp_path / "cli" / "report.md").read_text() == (tmp_path / "copy2.md").read_text()
    assert res.written == (("report", lib / "report.html"), ("copy", tmp_path / "copy2.html"),
                           ("report", lib / "report.md"), ("copy", tmp_path / "copy2.md"))
    with pytest.raises(TypeError):
        res.section["inputs"][0] = "x"         # type: ignore[index]


def test_a_bad_copy_is_refused_before_anything_is_written(tmp_path):
    run = run_dir(tmp_path / "runs", "p1", PROBE)
    started: list[Any] = []
    with pytest.raises(DbtierError, match="inside the input run directory"):
        report(ReportRequest(runs=(str(run),), output=run / "r.html"), lambda p, i: started.append(p) or tmp_path)
    assert started == [] and sorted(p.name for p in run.iterdir()) == ["result.json"]


def test_the_report_of_a_query_takes_the_selection(tmp_path):
    from dbtier.cli.main import build_parser
    from dbtier.cli.runs.report import select
    root = tmp_path / "runs"
    for name in ("p1", "p2"):
        run_dir(root, name, PROBE)
    argv = ["report", "--runs", "kind = 'probe'", "--runs-dir", str(root), "--json", "--out", str(tmp_path / "cli")]
    r = call_main(*argv, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    args = build_parser(argv).parse_args(argv)
    req = ReportRequest(runs_query=args.runs_query)
    with pytest.raises(ValueError, match="pass the selection"):
        report(req, lambda p, i: tmp_path)
    (tmp_path / "lib").mkdir()
    res = report(req, lambda p, i: tmp_path / "lib", select(args))
    assert res.section["inputs"] == tuple(doc["inputs"]) and len(doc["inputs"]) == 2
    assert res.html == (tmp_path / "cli" / "report.html").read_text() and res.markdown is None


def test_the_show_call_is_the_commands_summary(tmp_path):
    for run in (run_dir(tmp_path / "runs", "o1", TPCC), make_lab(tmp_path / "runs")):
        r = call_main("show", str(run), "--json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        started: list[Any] = []
        res = show(run, lambda params, inputs: started.append((params, inputs)))
        assert isinstance(res, Show) and res.kind == doc["result_kind"] == "show"
        assert started == [({"run": str(run)}, [str(run)])] and doc["params"] == {"run": str(run)}
        _same_section(res.to_json(), doc)
        assert isinstance(res.document, Frozen) and res.document["_run_dir"] == str(run)
        assert list(res.verdict["sentences"]) == doc["verdict"]["sentences"]
    assert show(run).to_json() == res.to_json()          # no start: nothing else asked of the caller


def test_the_compare_call_is_the_commands_rows(tmp_path):
    a = run_dir(tmp_path / "runs", "a", PROBE)
    b = run_dir(tmp_path / "runs", "b", PROBE.with_name("quick-ext4-virtio-repeats.json"))
    r = call_main("compare", str(a), str(b), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    started: list[Any] = []
    res = compare(a, b, lambda params, inputs: started.append((params, inputs)))
    assert isinstance(res, Compare) and res.kind == doc["result_kind"] == "compare"
    assert started == [({"a": str(a), "b": str(b)}, [str(a), str(b)])] and doc["params"] == started[0][0]
    _same_section(res.to_json(), doc)
    assert [d["_run_dir"] for d in res.documents] == [str(a), str(b)]
    held: dict[str, list[str]] = {}      # the figures held back for too little evidence, by reason
    for row in doc["rows"]:
        if row["verdict"] == "too little evidence":
            held.setdefault(str(row["reason"]), []).append(row["metric"])
    assert held and {why: list(m) for why, m in res.unjudged.items()} == held

    o = run_dir(tmp_path / "runs", "o", TPCC)
    r = call_main("compare", str(a), str(o), cwd=tmp_path)
    assert r.returncode == 2
    with pytest.raises(DbtierError) as e:
        compare(str(a), str(o), lambda params, inputs: started.append(params))
    assert r.stderr.startswith(f"dbtier: error: {e.value.message}\n") and e.value.hint in r.stderr
    assert e.value.message == f"{a} is a probe run and {o} a bench oltp run: compare takes two runs of the same command"
    assert len(started) == 1
