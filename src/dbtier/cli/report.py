"""`dbtier report RUN_DIR...`: one self-contained HTML page for one or more runs.

The report only reads result documents; it writes its own run directory
(`report.html` beside its `result.json`) and, with --output, a copy elsewhere.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.report.html import render_html
from dbtier.results.store import load_run

REPORT_FILE = "report.html"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of one or more runs",
                       description="Write one HTML page (charts inline, opens offline, prints cleanly) for the "
                       "given run directories; several runs are shown side by side.")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="run directories written by dbtier (or their result.json files)")
    p.add_argument("--output", "-o", metavar="FILE", help="also write the HTML to FILE")
    add_output_options(p)
    p.set_defaults(func=run)


def write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise DbtierError(f"cannot write {path}: {exc.strerror or exc}",
                          "choose another place with --output FILE") from exc


def run(args: argparse.Namespace) -> int:
    # Load everything first: a bad input fails before anything is written.
    docs = [load_run(r) for r in args.runs]
    inputs = [os.path.abspath(d["_run_dir"]) for d in docs]
    output = Path(args.output) if args.output else None
    if output is not None and output.is_dir():
        raise DbtierError(f"--output {output} is a directory", f"name a file, e.g. --output {output / REPORT_FILE}")
    if output is not None and not output.parent.exists():
        raise DbtierError(f"--output {output}: the directory {output.parent} does not exist",
                          "create it first or choose another place")

    run_ = Run("report", args, {"runs": list(args.runs)})
    doc = run_.doc
    html = render_html(docs)
    path = run_.dir.path / REPORT_FILE
    write_text_atomic(path, html)
    doc["inputs"] = inputs
    doc["report_html"] = str(path)
    if output is not None:
        write_text_atomic(output, html)
        doc["output_html"] = str(output)
    run_.finish()

    out = console(args)

    def render() -> None:
        out.print(f"report: {path}", markup=False, highlight=False, soft_wrap=True)
        if output is not None:
            out.print(f"copy:   {output}", markup=False, highlight=False, soft_wrap=True)
    emit(doc, args, render)
    return 0
