"""`dbtier report`, `dbtier show` and `dbtier compare` as library calls, each returning a typed, immutable
result whose section is what the command adds to its document:

    report(ReportRequest, start, selection) -> Report    report.html and/or report.md where `start` says
    show(run, start) -> Show                              one run's summary and verdict
    compare(a, b, start) -> Compare                       two runs of one command, figure by figure

They read result documents only (inputs.py's load_runs: a lab with its step runs); the report writes its
files into the directory `start(params, inputs)` returns, and a copy to the request's `output`. `start` is
called once the inputs are read and checked, before anything is written: the command makes its run there
(show and compare read-only; their `start` returns nothing). The terminal tables are the command's.

The renderers and the figures load when a call runs, not with this module: the command line imports it to
parse `dbtier report`'s options.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from dbtier.core.errors import DbtierError
from dbtier.core.files import full_error, is_full
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RESULT_FILE

REPORT_FILE = "report.html"
MD_FILE = "report.md"
FORMATS = {"html": (REPORT_FILE,), "md": (MD_FILE,), "both": (REPORT_FILE, MD_FILE)}

StrPath = str | os.PathLike[str]
# (params, inputs): the run's parameters and the run directories it reads (never to be removed by --force)
Start = Callable[[dict[str, Any], list[str]], None]
ReportStart = Callable[[dict[str, Any], list[str]], Path]


def _no_start(_params: dict[str, Any], _inputs: list[str]) -> None:
    return None


def write_text_atomic(path: Path, text: str) -> None:
    """`text` into `path` through a temporary file beside it: a reader never sees half a report."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        if is_full(exc):
            raise full_error(path, len(text.encode()), "the report") from None
        if isinstance(exc, OSError):
            raise DbtierError(f"cannot write {path}: {exc.strerror or exc}",
                              "choose another place with --output FILE") from exc
        raise


def input_dirs(docs: Sequence[dict[str, Any]]) -> list[str]:
    """Every run directory the report reads: the inputs and a lab's step runs."""
    dirs = []
    for d in docs:
        dirs.append(d["_run_dir"])
        dirs += [c["doc"]["_run_dir"] for c in d.get("_children") or [] if c.get("doc")]
    return dirs


class Selected(Protocol):
    """The runs `dbtier report --runs QUERY` reads (dbtier.cli.runs.report.select makes it from the runs
    directory): the query, the runs index's rows it selects, the trends of their figures, and for a few runs
    their documents."""

    @property
    def query(self) -> str: ...

    @property
    def rows(self) -> list[dict[str, Any]]: ...

    @property
    def trends(self) -> list[dict[str, Any]]: ...

    @property
    def docs(self) -> list[dict[str, Any]]: ...

    @property
    def paths(self) -> list[str]: ...


@dataclass(frozen=True, kw_only=True)
class ReportRequest:
    """A report of the run directories `runs`, or of the runs the query `runs_query` selects (with the trends
    of `trend`, VIEW.COLUMN each, or of each kind's headline figures), as `format` (html, md or both), with a
    copy at `output` (None: none; with both, the HTML there and the Markdown beside it as .md)."""
    runs: tuple[str, ...] = ()
    runs_query: str | None = None
    trend: tuple[str, ...] | None = None
    format: str = "html"
    output: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(os.fspath(r) for r in self.runs))
        if self.trend is not None:
            object.__setattr__(self, "trend", tuple(self.trend))
        if self.output is not None:
            object.__setattr__(self, "output", Path(self.output))
        if (self.runs_query is None) == (not self.runs):
            raise DbtierError("give run directories or --runs QUERY" + (", not both" if self.runs else ""),
                              "e.g. dbtier report runs/RUN_DIR, or dbtier report --runs \"kind = 'probe'\"")
        if self.trend and self.runs_query is None:
            raise DbtierError("--trend draws a trend of the runs --runs selects", "add --runs QUERY")
        if self.format not in FORMATS:
            raise DbtierError(f"--format {self.format}: not a report format", f"choose from {', '.join(FORMATS)}")

    @property
    def params(self) -> dict[str, Any]:
        """The run's parameters, as the document says what was asked."""
        return {"runs": list(self.runs), "format": self.format, "runs_query": self.runs_query,
                "trend": list(self.trend) if self.trend is not None else None}

    def check_output(self, docs: Sequence[dict[str, Any]]) -> None:
        """The copy (`output`) never overwrites a result.json, an input, or any file inside an input run
        directory (`docs`: the documents read, a lab's with its step runs)."""
        output = self.output
        if output is None:
            return
        if str(output).strip() == "":
            raise DbtierError("--output '': an empty file name", f"name a file, e.g. --output {REPORT_FILE}")
        if output.is_dir():
            raise DbtierError(f"--output {output} is a directory",
                              f"name a file, e.g. --output {output / REPORT_FILE}")
        if not output.parent.exists():
            raise DbtierError(f"--output {output}: the directory {output.parent} does not exist",
                              "create it first or choose another place")
        targets = [output] if self.format != "both" else [output, output.with_suffix(".md")]
        inputs = [os.path.realpath(d) for d in input_dirs(docs)]
        for t in targets:
            real = os.path.realpath(t)
            if t.name == RESULT_FILE:
                raise DbtierError(f"--output {t}: a report is never written as {RESULT_FILE}",
                                  f"name the report file, e.g. --output {t.with_name(REPORT_FILE)}")
            inside = next((d for d in inputs if real == d or real.startswith(d.rstrip(os.sep) + os.sep)), None)
            if inside is not None:
                raise DbtierError(f"--output {t}: inside the input run directory {inside}; the report never "
                                  "writes into a run it reads", "write it elsewhere, e.g. --output report.html")


@dataclass(frozen=True, kw_only=True)
class Report(Result):
    """The report: the section (`inputs`, then `report_html`/`output_html`, `report_md`/`output_md`: the
    files written), its texts, and each file written as ("report" | "copy", path) in the order written."""
    kind: str = "report"
    html: str | None = None
    markdown: str | None = None
    written: tuple[tuple[str, Path], ...] = ()


def report(req: ReportRequest, start: ReportStart, selection: Selected | None = None,
           record: Callable[[dict[str, Any]], None] = lambda _section: None) -> Report:
    """The request's report. The runs are read first (`selection`: what a `--runs` request selected, made by
    the caller from the runs directory; else `req.runs` are loaded) and `output` checked against them, so
    a bad input or copy fails before anything is written; then `start(params, inputs)` gives the directory
    the report files go to. `record(section)` is told the section as it grows (the inputs, then each file
    written): the caller's document holds what was written when a later write fails."""
    if req.runs_query is not None and selection is None:
        raise ValueError("a --runs report reads the runs its query selected: pass the selection")
    if selection is not None:
        docs = selection.docs
    else:
        from dbtier.report.inputs import load_runs
        docs = load_runs(req.runs)
    req.check_output(docs)
    sel_paths = selection.paths if selection is not None else []
    out_dir = start(req.params, input_dirs(docs) + sel_paths)
    inputs = [os.path.abspath(d["_run_dir"]) for d in docs]
    section: dict[str, Any] = {"inputs": inputs + [p for p in sel_paths if p not in inputs]}
    record(section)
    texts: dict[str, str] = {}
    written: list[tuple[str, Path]] = []
    for name in FORMATS[req.format]:
        text = _text(name, docs, selection)
        path = out_dir / name
        write_text_atomic(path, text)
        kind = "html" if name == REPORT_FILE else "md"
        texts[kind] = text
        section[f"report_{kind}"] = str(path)
        written.append(("report", path))
        record(section)
        if req.output is not None:
            copy = req.output if kind == "html" or req.format == "md" else req.output.with_suffix(".md")
            write_text_atomic(copy, text)
            section[f"output_{kind}"] = str(copy)
            written.append(("copy", copy))
            record(section)
    return Report(section=Frozen(section), html=texts.get("html"), markdown=texts.get("md"), written=tuple(written))


def _text(name: str, docs: list[dict[str, Any]], selection: Selected | None) -> str:
    """One report file's text: of the selected runs (their trends first) or of the runs given."""
    if selection is not None:
        from dbtier.report.runs import markdown, page
        if name == REPORT_FILE:
            return page(selection.query, selection.rows, selection.trends, docs)
        return markdown(selection.query, selection.rows, selection.trends)
    if name == REPORT_FILE:
        from dbtier.report.html import render_html
        return render_html(docs)
    from dbtier.report.markdown import render_markdown
    return render_markdown(docs)


def _verdict_section(v: dict[str, Any]) -> dict[str, Any]:
    return {"sentences": v["sentences"], "caveats": [c["text"] for c in v["caveats"]]}


@dataclass(frozen=True, kw_only=True)
class Show(Result):
    """`dbtier show`'s answer: the section (the run's summary: its figures, tables, method, guards, a lab's
    steps; the verdict's sentences and caveats), the document shown as read (a lab's step runs under
    `_children`) and the whole verdict (each topic's items, the caveats with their kinds)."""
    kind: str = "show"
    document: Frozen
    verdict: Frozen


def show(run: StrPath, start: Start = _no_start) -> Show:
    """The summary and verdict of the run directory (or result.json) `run`."""
    from dbtier.report import summary as FC
    from dbtier.report.inputs import load_runs
    from dbtier.report.verdict.topics import verdict
    [shown] = load_runs([run])
    v = verdict([shown])
    start({"run": os.fspath(run)}, [shown["_run_dir"]])
    section = FC.summary(shown)
    section["verdict"] = _verdict_section(v)
    return Show(section=Frozen(section), document=Frozen(shown), verdict=Frozen(v))


@dataclass(frozen=True, kw_only=True)
class Compare(Result):
    """`dbtier compare`'s answer: the section (each run's `a`/`b`, the `rows` figure by figure with B − A,
    B / A and the evidence rule's verdict, `not_comparable`, `placement`, the `verdict` on the two), the two
    documents as read, the whole verdict, and the figures held back for too little evidence by reason."""
    kind: str = "compare"
    documents: tuple[Frozen, Frozen]
    verdict: Frozen
    unjudged: Frozen


def compare(a: StrPath, b: StrPath, start: Start = _no_start) -> Compare:
    """Runs `a` (the baseline) and `b`, of the same command, side by side; runs of two commands are refused."""
    from dbtier.report import summary as FC
    from dbtier.report.figures import core as F
    from dbtier.report.inputs import load_runs
    from dbtier.report.verdict import rules as R
    from dbtier.report.verdict.topics import verdict
    da, db = load_runs([a, b])
    ka, kb = F.kind(da), F.kind(db)
    if da.get("command") != db.get("command") or ka != kb:
        a_, b_ = os.fspath(a), os.fspath(b)
        raise DbtierError(f"{a_} is a {ka} run and {b_} a {kb} run: compare takes two runs of the same "
                          "command", f"compare two {ka} runs, or show both in one report: dbtier report "
                                     f"{a_} {b_}")
    rows = FC.compare_rows(da, db)
    start({"a": os.fspath(a), "b": os.fspath(b)}, [da["_run_dir"], db["_run_dir"]])
    clash = F.durability_clash([da, db])
    if clash:                       # a durable and a non-durable run: no row is better or worse
        for r in rows:
            r["verdict"] = None
    # the two runs read together: on two tiers, the two-tier answer (TPS per client count, the ratios)
    v = verdict([da, db])
    placed = FC.placement_comparison(da, db)   # where each part went in A and in B
    unjudged: dict[str, list[str]] = {}        # too little evidence: the reason, and the figures it held back
    for r in rows:
        if r.get("verdict") == R.TOO_LITTLE:
            unjudged.setdefault(str(r.get("reason")), []).append(str(r["metric"]))
    section = dict(a=FC.run_info(da), b=FC.run_info(db), rows=rows, not_comparable=clash, placement=placed or None,
                   verdict=_verdict_section(v))
    return Compare(section=Frozen(section), documents=(Frozen(da), Frozen(db)), verdict=Frozen(v),
                   unjudged=Frozen(unjudged))
