"""`dbtier report RUN_DIR...`: one self-contained HTML page (or a Markdown summary) for one or more runs.

The report only reads result documents (a lab's with its step runs); it writes its own run
directory (`report.html` and/or `report.md` beside its `result.json`) and, with --output, a copy
elsewhere.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.core.files import full_error, is_full
from dbtier.results.store import RESULT_FILE

REPORT_FILE = "report.html"
MD_FILE = "report.md"
FORMATS = {"html": (REPORT_FILE,), "md": (MD_FILE,), "both": (REPORT_FILE, MD_FILE)}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of one or more runs",
                       description="Write one HTML page (the verdict first, charts inline, opens offline, prints "
                       "cleanly) for the given run directories; several runs are shown side by side, a lab with "
                       "every step's run. --format md writes a Markdown summary (the verdict and the key tables) "
                       "to paste into a ticket.")
    p.add_argument("runs", nargs="*", metavar="RUN_DIR",
                   help="run directories written by dbtier (or their result.json files)")
    p.add_argument("--runs", dest="runs_query", metavar="QUERY",
                   help="instead of RUN_DIRs: the runs in --runs-dir (default ./runs) that a SQL boolean over "
                        "the `dbtier runs` columns selects, e.g. \"kind = 'probe' AND host = 'db1'\", with the "
                        "trends of their headline figures")
    p.add_argument("--trend", action="append", metavar="FIGURE",
                   help="with --runs: draw this figure's trend (VIEW.COLUMN, e.g. probe.read_iops_4k; repeat for "
                        "several) instead of each kind's headline figures")
    p.add_argument("--format", choices=sorted(FORMATS), default="html",
                   help="html (report.html, the default), md (report.md) or both")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="also write the report to FILE (with --format both: the HTML; the Markdown beside it, "
                        "as FILE with .md)")
    add_output_options(p)
    p.set_defaults(func=run)


def write_text_atomic(path: Path, text: str) -> None:
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


def _input_dirs(docs: list[dict[str, Any]]) -> list[str]:
    """Every run directory the report reads: the inputs and a lab's step runs."""
    dirs = []
    for d in docs:
        dirs.append(d["_run_dir"])
        dirs += [c["doc"]["_run_dir"] for c in d.get("_children") or [] if c.get("doc")]
    return dirs


def _check_output(output: Path, fmt: str, docs: list[dict[str, Any]]) -> None:
    """--output never overwrites a result.json, an input, or any file inside an input run directory."""
    if str(output).strip() == "":
        raise DbtierError("--output '': an empty file name", f"name a file, e.g. --output {REPORT_FILE}")
    if output.is_dir():
        raise DbtierError(f"--output {output} is a directory", f"name a file, e.g. --output {output / REPORT_FILE}")
    if not output.parent.exists():
        raise DbtierError(f"--output {output}: the directory {output.parent} does not exist",
                          "create it first or choose another place")
    targets = [output] if fmt != "both" else [output, output.with_suffix(".md")]
    inputs = [os.path.realpath(d) for d in _input_dirs(docs)]
    for t in targets:
        real = os.path.realpath(t)
        if t.name == RESULT_FILE:
            raise DbtierError(f"--output {t}: a report is never written as {RESULT_FILE}",
                              f"name the report file, e.g. --output {t.with_name(REPORT_FILE)}")
        inside = next((d for d in inputs if real == d or real.startswith(d.rstrip(os.sep) + os.sep)), None)
        if inside is not None:
            raise DbtierError(f"--output {t}: inside the input run directory {inside}; the report never writes "
                              "into a run it reads", "write it elsewhere, e.g. --output report.html")


def run(args: argparse.Namespace) -> int:
    # The renderers load here, not at start-up: every other command stays fast to start.
    from dbtier.report.html import render_html
    from dbtier.report.inputs import load_runs
    from dbtier.report.markdown import render_markdown
    query = getattr(args, "runs_query", None)
    if (query is None) == (not args.runs):
        raise DbtierError("give run directories or --runs QUERY" + (", not both" if args.runs else ""),
                          "e.g. dbtier report runs/RUN_DIR, or dbtier report --runs \"kind = 'probe'\"")
    if args.trend and query is None:
        raise DbtierError("--trend draws a trend of the runs --runs selects", "add --runs QUERY")
    # Load everything first: a bad input fails before anything is written.
    sel = None
    if query is not None:
        from dbtier.cli.runs.report import select
        sel = select(args)
        docs = sel.docs
    else:
        docs = load_runs(args.runs)
    inputs = [os.path.abspath(d["_run_dir"]) for d in docs]
    output = Path(args.output) if args.output is not None else None
    fmt = getattr(args, "format", "html") or "html"
    if output is not None:
        _check_output(output, fmt, docs)
    run_ = Run("report", args, {"runs": list(args.runs), "format": fmt, "runs_query": query, "trend": args.trend},
               inputs=_input_dirs(docs) + (sel.paths if sel else []))
    doc = run_.doc
    doc["inputs"] = inputs + ([p for p in sel.paths if p not in inputs] if sel else [])
    written: list[tuple[str, Path]] = []
    for name in FORMATS[fmt]:
        if sel is not None:
            from dbtier.report.runs import markdown, page
            text = page(sel.query, sel.rows, sel.trends, docs) if name == REPORT_FILE else markdown(
                sel.query, sel.rows, sel.trends)
        else:
            text = render_html(docs) if name == REPORT_FILE else render_markdown(docs)
        path = run_.dir.path / name
        write_text_atomic(path, text)
        kind = "html" if name == REPORT_FILE else "md"
        doc[f"report_{kind}"] = str(path)
        written.append(("report", path))
        if output is not None:
            copy = output if kind == "html" or fmt == "md" else output.with_suffix(".md")
            write_text_atomic(copy, text)
            doc[f"output_{kind}"] = str(copy)
            written.append(("copy", copy))
    run_.finish()

    out = console(args)

    def render() -> None:
        for label, path in written:
            out.print(f"{label + ':':<8}{path}", markup=False, highlight=False, soft_wrap=True)
    emit(doc, args, render)
    return 0
