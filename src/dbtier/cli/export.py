"""`dbtier export metrics|series RUN_DIR...`: runs out to Prometheus.

metrics: every run's headline figures as gauges without timestamps (Prometheus text or OpenMetrics), on
stdout, into node_exporter's textfile directory (--textfile, atomically) or to a Pushgateway (--push, a PUT
that replaces the group). series: the runs' time series as OpenMetrics with timestamps, for
`promtool tsdb create-blocks-from openmetrics`. Both write their own run directory with the text in it.
What can be refused (a run, --textfile, --push, --group, --output) is refused before anything is written.
The work is dbtier.export.calls' (export_metrics, export_series): this module parses, stores and prints.
"""

from __future__ import annotations

import argparse
import sys

from dbtier.cli.common import Sink, add_output_options, emit, usage
from dbtier.export import exposition
from dbtier.export.calls import MetricsRequest, SeriesRequest, export_metrics, export_series


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


# -- export metrics -------------------------------------------------------------------------------------------

def run_metrics(args: argparse.Namespace) -> int:
    req = MetricsRequest(runs=tuple(args.runs), format=args.format, textfile=args.textfile, push=args.push,
                         group=tuple(args.group))
    sink = Sink("export.metrics", args)
    res = export_metrics(req, sink.start_reading, sink.save)
    run = sink.run
    doc = run.doc
    doc.update(res.to_json())
    run.finish()

    def render() -> None:
        if req.push_url is None and req.textfile_dir is None:
            sys.stdout.write(res.text.decode())
            return
        fams = doc["families"]
        print(f"{len(doc['runs'])} run(s), {sum(f['samples'] for f in fams)} series in {len(fams)} families")
        if req.push_url is not None:
            print(f"pushed to {req.push_url}, group " + ", ".join(f"{k}={v}" for k, v in
                                                                   doc["push"]["grouping_key"].items()))
        if req.textfile_dir is not None:
            print(f"wrote {doc['textfile']}")
    emit(doc, args, render)
    return 0


# -- export series --------------------------------------------------------------------------------------------

def run_series(args: argparse.Namespace) -> int:
    req = SeriesRequest(runs=tuple(args.runs), output=args.output)
    sink = Sink("export.series", args)
    res = export_series(req, sink.start_reading, sink.save)
    run = sink.run
    doc = run.doc
    doc.update(res.to_json())
    run.finish()

    def render() -> None:
        if req.output is None:
            sys.stdout.write(res.text.decode())
            return
        print(f"{doc['samples']} samples of {sum(r['series'] for r in doc['runs'])} series from "
              f"{len(doc['runs'])} run(s) in {doc['output']}")
        print(f"backfill: promtool tsdb create-blocks-from openmetrics {doc['output']} DATA_DIR")
    emit(doc, args, render)
    return 0
