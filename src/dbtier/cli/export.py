"""`dbtier export metrics|series RUN_DIR...`: runs out to Prometheus.

metrics: every run's headline figures as gauges without timestamps (Prometheus text or OpenMetrics), on
stdout, into node_exporter's textfile directory (--textfile, atomically) or to a Pushgateway (--push, a PUT
that replaces the group). series: the runs' time series as OpenMetrics with timestamps, for
`promtool tsdb create-blocks-from openmetrics`. Both write their own run directory with the text in it.
What can be refused (a run, --textfile, --push, --group, --output) is refused before anything is written.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbtier.cli.common import Run, add_output_options, emit, usage
from dbtier.core.errors import DbtierError
from dbtier.core.files import write_bytes_atomic
from dbtier.export import exposition, metrics, series
from dbtier.export.families import METRICS, label_names
from dbtier.report.figures import core as F
from dbtier.report.inputs import load_runs
from dbtier.results.store import RESULT_FILE

SERIES_FILE = "series.om"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="runs out to Prometheus: metrics, a Pushgateway, a textfile, a backfill",
                       description="Export runs to a monitoring stack: `metrics` (headline figures as gauges, for "
                       "a scrape, node_exporter's textfile collector or a Pushgateway) and `series` (time series "
                       "with timestamps, for `promtool tsdb create-blocks-from openmetrics`).")
    esub = p.add_subparsers(dest="export_command", metavar="WHAT")
    m = esub.add_parser("metrics", help="headline figures as gauges (Prometheus text or OpenMetrics)",
                        description="Every run's headline figures as gauges named dbtier_*, in base units, one "
                        "dbtier_run_info series per run with its metadata, every other series labelled run_id "
                        "and its own dimensions; no timestamps. Printed on stdout unless --textfile or --push "
                        "takes it; always written into this command's run directory.")
    m.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories written by dbtier (or result.json)")
    m.add_argument("--format", choices=exposition.FORMATS, default="prometheus",
                   help="prometheus (text 0.0.4, the default; what the textfile collector and the Pushgateway "
                        "read) or openmetrics (1.0, ends with # EOF)")
    m.add_argument("--textfile", metavar="DIR", help="write DIR/dbtier.prom atomically (node_exporter's "
                   "--collector.textfile.directory); always the Prometheus text")
    m.add_argument("--push", metavar="URL", help="PUT to the Pushgateway at URL (e.g. http://pushgateway:9091): "
                   "the group's earlier metrics are replaced")
    m.add_argument("--group", action="append", default=[], metavar="KEY=VALUE",
                   help="the Pushgateway grouping key (repeatable; default job=dbtier and instance=<this host>); "
                        "never the run id, or every run would leave a group behind")
    add_output_options(m)
    m.set_defaults(func=run_metrics)
    s = esub.add_parser("series", help="time series as OpenMetrics with timestamps, for a backfill",
                        description="The runs' time series (probe points, OLTP per-second samples, history "
                        "intervals, simulate timelines) as OpenMetrics 1.0 with timestamps, each series' samples "
                        "together and in time order, for `promtool tsdb create-blocks-from openmetrics FILE "
                        "DATA_DIR`. Printed on stdout unless --output; always written into this command's run "
                        "directory (series.om).")
    s.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories written by dbtier (or result.json)")
    s.add_argument("--output", "-o", metavar="FILE", help="also write the OpenMetrics text to FILE (atomically)")
    add_output_options(s)
    s.set_defaults(func=run_series)
    p.set_defaults(func=usage(p))


# -- the runs -----------------------------------------------------------------------------------------------

def _run_id(arg: str) -> str:
    """A run's id is its directory's name (a result.json named by itself: its directory's; any other
    document file: its name without .json)."""
    p = Path(os.path.normpath(arg))
    if p.is_dir() or p.name == RESULT_FILE:
        return (p if p.is_dir() else p.parent).resolve().name
    return p.stem


def _doc_file(path: str) -> str:
    return os.path.realpath(os.path.join(path, RESULT_FILE) if os.path.isdir(path) else path)


def load_pairs(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(run_id, document) of each run named and of a lab's step runs (LAB/STEP: two labs both have a probe
    step); a document named twice (a lab's step named on its own too) counts once; two different runs with
    one id are refused (their series would be one)."""
    docs = load_runs(paths)
    pairs: list[tuple[str, dict[str, Any], str]] = []
    for arg, doc in zip(paths, docs):
        rid = _run_id(arg)
        pairs.append((rid, doc, _doc_file(arg)))
        for _, child, _ in F.children(doc):
            if child is not None:
                pairs.append((f"{rid}/{Path(child['_run_dir']).resolve().name}", child, _doc_file(child["_run_dir"])))
    out: dict[str, tuple[dict[str, Any], str]] = {}
    files: set[str] = set()
    for rid, doc, file in pairs:
        if file in files:
            continue
        if rid in out:
            raise DbtierError(f"two runs have the id {rid!r} ({out[rid][1]} and {file}): their series would be one",
                              "export them one at a time, or copy one to a directory of another name")
        out[rid] = (doc, file)
        files.add(file)
    return [(rid, d) for rid, (d, _) in out.items()]


def _inputs(pairs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [d["_run_dir"] for _, d in pairs]


def _runs_doc(pairs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"run_id": rid, "kind": F.kind(d), "run_dir": d["_run_dir"]} for rid, d in pairs]


def _write(run: Run, name: str, data: bytes) -> str | None:
    if run.dir is None:
        return None
    write_bytes_atomic(run.dir.path / name, data)
    return name


# -- export metrics -------------------------------------------------------------------------------------------

def run_metrics(args: argparse.Namespace) -> int:
    textfile = exposition.check_textfile_dir(args.textfile) if args.textfile is not None else None
    url = exposition.check_push_url(args.push) if args.push is not None else None
    if args.group and url is None:
        raise DbtierError("--group without --push: a grouping key is the Pushgateway's", "add --push URL")
    pairs = load_pairs(args.runs)
    fams = metrics.families(pairs)
    key = exposition.grouping_key(args.group, label_names(METRICS.values()) | {"currency"}) if url else None
    data = exposition.text(fams, args.format)
    prom = data if args.format == "prometheus" else exposition.text(fams, "prometheus")
    run = Run("export.metrics", args, {"action": "metrics", "runs": list(args.runs), "format": args.format,
                               "textfile": args.textfile, "push": args.push, "group": list(args.group)},
              inputs=_inputs(pairs))
    doc = run.doc
    doc.update({"runs": _runs_doc(pairs), "format": args.format,
                "families": [{"name": f.name, "type": f.type, "samples": len(f.samples)} for f in fams],
                "file": _write(run, exposition.file_name(args.format), data)})
    if args.format != "prometheus":     # the text a push or textfile sends, kept too
        _write(run, exposition.file_name("prometheus"), prom)
    run.save()
    if url is not None:
        kept = str(run.dir.path / exposition.file_name("prometheus")) if run.dir is not None else None
        exposition.push(url, key, fams, kept)      # type: ignore[arg-type]
        doc["push"] = {"url": url, "grouping_key": key, "method": "PUT"}
        run.save()
    if textfile is not None:
        doc["textfile"] = str(exposition.write_textfile(textfile, prom))
        run.save()
    run.finish()

    def render() -> None:
        if url is None and textfile is None:
            sys.stdout.write(data.decode())
            return
        print(f"{len(pairs)} run(s), {sum(len(f.samples) for f in fams)} series in {len(fams)} families")
        if url is not None:
            print(f"pushed to {url}, group " + ", ".join(f"{k}={v}" for k, v in key.items()))   # type: ignore[union-attr]
        if textfile is not None:
            print(f"wrote {doc['textfile']}")
    emit(doc, args, render)
    return 0


# -- export series --------------------------------------------------------------------------------------------

def _check_output(out: str, pairs: list[tuple[str, dict[str, Any]]]) -> Path:
    p = Path(out)
    if out.strip() == "" or p.is_dir():
        raise DbtierError(f"--output {out!r}: not a file name", f"name a file, e.g. --output {SERIES_FILE}")
    if not p.parent.is_dir():
        raise DbtierError(f"--output {p}: the directory {p.parent} does not exist", "create it first")
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise DbtierError(f"--output {p}: {p.parent} is not writable by this user", "choose another place")
    real = os.path.realpath(p)
    for d in _inputs(pairs):
        if real.startswith(os.path.realpath(d) + os.sep):
            raise DbtierError(f"--output {p}: inside the run directory {d} it reads", "write it elsewhere")
    return p


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat().replace("+00:00", "Z")


def run_series(args: argparse.Namespace) -> int:
    pairs = load_pairs(args.runs)
    output = _check_output(args.output, pairs) if args.output is not None else None
    fams, records = series.families(pairs)
    if not fams:
        kinds = ", ".join(f"{r['run_id']} ({r['kind']})" for r in records)
        raise DbtierError(f"no time series in {kinds}",
                          "series come from probe, bench oltp, history import/consolidate and simulate runs; "
                          "`dbtier export metrics` exports any run's figures")
    data = exposition.text(fams, "openmetrics")
    run = Run("export.series", args, {"action": "series", "runs": list(args.runs), "output": args.output},
              inputs=_inputs(pairs))
    doc = run.doc
    doc.update({"runs": [{**r, "first": _iso(r["first"]), "last": _iso(r["last"])} for r in records],
                "format": "openmetrics", "samples": sum(r["samples"] for r in records),
                "families": [{"name": f.name, "samples": len(f.samples)} for f in fams],
                "file": _write(run, SERIES_FILE, data)})
    run.save()
    if output is not None:
        try:
            write_bytes_atomic(output, data, output.with_name(f".{output.name}.{os.getpid()}.tmp"))
        except OSError as exc:
            raise DbtierError(f"--output {output}: cannot write it: {exc.strerror or exc}",
                              "free space there or choose another place") from None
        doc["output"] = str(output)
    run.finish()

    def render() -> None:
        if output is None:
            sys.stdout.write(data.decode())
            return
        print(f"{doc['samples']} samples of {sum(r['series'] for r in records)} series from {len(pairs)} run(s) "
              f"in {output}")
        print(f"backfill: promtool tsdb create-blocks-from openmetrics {output} DATA_DIR")
    emit(doc, args, render)
    return 0
