"""`dbtier export metrics` and `dbtier export series` as library calls, each a request in and a typed,
immutable result out:

    export_metrics(MetricsRequest, start, save) -> ExportMetrics   headline figures as gauges, no timestamps
    export_series(SeriesRequest, start, save) -> ExportSeries      time series with timestamps, for a backfill

Both read run directories (a lab's step runs too, as LAB/STEP) and make the exposition text.
`start(params, inputs)` is called once everything that can be refused has been (a run that cannot be read,
--textfile, --push, --group, --output, no series at all), with the runs read, and gives the directory the
text is written into (the command's run directory; None: none, and the section's `file` is None).
`save(section)` is called each time the section is complete so far: before a push, so that a push that
fails leaves the text to send again, and after it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.core.files import write_bytes_atomic
from dbtier.export import exposition
from dbtier.export import metrics as M
from dbtier.export import series as S
from dbtier.export.families import METRICS, label_names
from dbtier.report.figures import core as F
from dbtier.report.inputs import load_runs
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RESULT_FILE

SERIES_FILE = "series.om"

Pairs = list[tuple[str, dict[str, Any]]]
# (params, the run directories read) -> the directory the text goes to, or None for none
Start = Callable[[dict[str, Any], list[str]], Path | None]
Save = Callable[[dict[str, Any]], None]


def _nowhere(_params: dict[str, Any], _inputs: list[str]) -> Path | None:
    return None


def _unsaved(_section: dict[str, Any]) -> None:
    return None


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


def load_pairs(paths: Sequence[str]) -> Pairs:
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


def _inputs(pairs: Pairs) -> list[str]:
    return [d["_run_dir"] for _, d in pairs]


def _runs_doc(pairs: Pairs) -> list[dict[str, Any]]:
    return [{"run_id": rid, "kind": F.kind(d), "run_dir": d["_run_dir"]} for rid, d in pairs]


def _write(out: Path | None, name: str, data: bytes) -> str | None:
    if out is None:
        return None
    write_bytes_atomic(out / name, data)
    return name


# -- export metrics -------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class MetricsRequest:
    """The runs (directories, or result documents) whose headline figures go out, as text in `format`
    (prometheus: text 0.0.4; openmetrics: 1.0); `textfile`: node_exporter's textfile directory, dbtier.prom
    written there; `push`: a Pushgateway's base URL, its group `group`'s KEY=VALUE labels over job=dbtier and
    instance=<this host> (with `push` only).

    Made, the textfile directory and the URL are checked (`textfile_dir`, `push_url`: what is written to);
    the grouping key is checked once the runs are read (`grouping_key`), so that a run that cannot be read
    is named first."""
    runs: tuple[str, ...]
    format: str = "prometheus"
    textfile: str | None = None
    push: str | None = None
    group: tuple[str, ...] = ()
    textfile_dir: Path | None = field(init=False)
    push_url: str | None = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))
        object.__setattr__(self, "group", tuple(self.group))
        object.__setattr__(self, "textfile_dir",
                           exposition.check_textfile_dir(self.textfile) if self.textfile is not None else None)
        object.__setattr__(self, "push_url", exposition.check_push_url(self.push) if self.push is not None else None)
        if self.group and self.push_url is None:
            raise DbtierError("--group without --push: a grouping key is the Pushgateway's", "add --push URL")

    def grouping_key(self) -> dict[str, str] | None:
        """The Pushgateway group's labels (None without `push`): never a label the metrics carry, which the
        Pushgateway would overwrite."""
        if self.push_url is None:
            return None
        return exposition.grouping_key(list(self.group), label_names(METRICS.values()) | {"currency"})


@dataclass(frozen=True, kw_only=True)
class ExportMetrics(Result):
    """`export metrics`' answer: the section (the runs, the format, each family's sample count, the file the
    text went to, the push and the textfile when made), the text itself in the request's format, and the run
    directories read."""
    kind: str = "export.metrics"
    text: bytes
    inputs: tuple[str, ...]


def export_metrics(req: MetricsRequest, start: Start = _nowhere, save: Save = _unsaved) -> ExportMetrics:
    pairs = load_pairs(req.runs)
    fams = M.families(pairs)
    key = req.grouping_key()
    data = exposition.text(fams, req.format)
    prom = data if req.format == "prometheus" else exposition.text(fams, "prometheus")
    inputs = _inputs(pairs)
    out = start({"action": "metrics", "runs": list(req.runs), "format": req.format, "textfile": req.textfile,
                 "push": req.push, "group": list(req.group)}, inputs)
    section: dict[str, Any] = {
        "runs": _runs_doc(pairs), "format": req.format,
        "families": [{"name": f.name, "type": f.type, "samples": len(f.samples)} for f in fams],
        "file": _write(out, exposition.file_name(req.format), data)}
    if req.format != "prometheus":     # the text a push or textfile sends, kept too
        _write(out, exposition.file_name("prometheus"), prom)
    save(section)
    if req.push_url is not None and key is not None:
        kept = str(out / exposition.file_name("prometheus")) if out is not None else None
        exposition.push(req.push_url, key, fams, kept)
        section["push"] = {"url": req.push_url, "grouping_key": key, "method": "PUT"}
        save(section)
    if req.textfile_dir is not None:
        section["textfile"] = str(exposition.write_textfile(req.textfile_dir, prom))
        save(section)
    return ExportMetrics(section=Frozen(section), text=data, inputs=tuple(inputs))


# -- export series --------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SeriesRequest:
    """The runs (directories, or result documents) whose time series go out as OpenMetrics with timestamps;
    `output`: a file to write the text to as well (atomically), checked once the runs are read
    (`output_file`: it may not lie inside one of them)."""
    runs: tuple[str, ...]
    output: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))

    def output_file(self, inputs: Sequence[str]) -> Path | None:
        """`output` as the file to write (None without one), or one error naming what is wrong with it:
        no file name, a directory that is missing or not writable, a place inside a run directory read."""
        if self.output is None:
            return None
        out = self.output
        p = Path(out)
        if out.strip() == "" or p.is_dir():
            raise DbtierError(f"--output {out!r}: not a file name", f"name a file, e.g. --output {SERIES_FILE}")
        if not p.parent.is_dir():
            raise DbtierError(f"--output {p}: the directory {p.parent} does not exist", "create it first")
        if not os.access(p.parent, os.W_OK | os.X_OK):
            raise DbtierError(f"--output {p}: {p.parent} is not writable by this user", "choose another place")
        real = os.path.realpath(p)
        for d in inputs:
            if real.startswith(os.path.realpath(d) + os.sep):
                raise DbtierError(f"--output {p}: inside the run directory {d} it reads", "write it elsewhere")
        return p


@dataclass(frozen=True, kw_only=True)
class ExportSeries(Result):
    """`export series`' answer: the section (each run's series, samples and time range, the families, the
    file the text went to, the --output file when written), the OpenMetrics text, and the run directories
    read."""
    kind: str = "export.series"
    text: bytes
    inputs: tuple[str, ...]


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat().replace("+00:00", "Z")


def export_series(req: SeriesRequest, start: Start = _nowhere, save: Save = _unsaved) -> ExportSeries:
    pairs = load_pairs(req.runs)
    inputs = _inputs(pairs)
    output = req.output_file(inputs)
    fams, records = S.families(pairs)
    if not fams:
        kinds = ", ".join(f"{r['run_id']} ({r['kind']})" for r in records)
        raise DbtierError(f"no time series in {kinds}",
                          "series come from probe, bench oltp, history import/consolidate and simulate runs; "
                          "`dbtier export metrics` exports any run's figures")
    data = exposition.text(fams, "openmetrics")
    out = start({"action": "series", "runs": list(req.runs), "output": req.output}, inputs)
    section: dict[str, Any] = {
        "runs": [{**r, "first": _iso(r["first"]), "last": _iso(r["last"])} for r in records],
        "format": "openmetrics", "samples": sum(r["samples"] for r in records),
        "families": [{"name": f.name, "samples": len(f.samples)} for f in fams],
        "file": _write(out, SERIES_FILE, data)}
    save(section)
    if output is not None:
        try:
            write_bytes_atomic(output, data, output.with_name(f".{output.name}.{os.getpid()}.tmp"))
        except OSError as exc:
            raise DbtierError(f"--output {output}: cannot write it: {exc.strerror or exc}",
                              "free space there or choose another place") from None
        section["output"] = str(output)
    return ExportSeries(section=Frozen(section), text=data, inputs=tuple(inputs))
