"""What a result document is: its kind, declared once here.

Every command writes its kind in the document's envelope as `result_kind` (KEY), a dotted name: the command,
then what of it ran (`bench.oltp`, `plan.size`, `history.import`, `simulate.mrc`, `runs.check`); a command
with one kind of result is its own kind (`lab`, `advise`, `report`). The command names its kind when it makes
its run (dbtier.cli.common.Run), so the kind is never inferred from what a document happens to hold.

The key is `result_kind`, not `kind`: a history document already has a top-level `kind` of its own (what
its figures are: `counters`, `hourly`, `series`, `mixed`), which other tools read.

A document written before the key existed gets it when it is read (dbtier.results.document.upgrade),
from the markers the commands left then (`derive`): `bench` and `plan` keys, `params.action`, a fleet
probe's `hosts`, a simulate run's lack of an action.

Each kind has a `label` (what `show`, `compare`, the reports and the exported metrics' `kind` label say:
`bench oltp`, `plan size`; a fleet probe reads `probe` and a simulate run `simulate`, as they always have),
and `index`, the (kind, action) columns of the runs index (`dbtier runs`: `oltp`, `plan`+`size` ...).

This is also the registry of what every part of dbtier makes of a kind, its faces (`Faces`), declared with
the kind: its typed result (the sections its documents carry, in dbtier.results.types: the JSON Schema and
the shape check are made from them), its headline figures, what `dbtier show` and the Markdown report print
beyond them (`terminal`), its HTML report section, its Prometheus metric families and time series, and its
`dbtier runs sql` view. The report, `show`, the exports, the runs index and the schema look a kind's face up
here (dbtier.results.registry resolves the paths) instead of each telling kinds apart. A kind without a face
by nature (a cleanup has no metrics) says None; the figures, the terminal and the section always have one
(GENERIC_*: a document's top-level numbers, nothing more to print, its JSON and parameters). Adding a kind:
its module(s), and one entry in KINDS (with its library call, `call`, where it has one);
tests/unit/test_kind_registry.py checks that every face resolves.

Imports nothing from dbtier: the results types, the loader, the reports and the runs index all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEY = "result_kind"


# Where the faces live: "module:name" paths, resolved when asked (dbtier.results.registry), so that this
# module imports none of them and none of them is imported before it is needed.
_FIG = "dbtier.report.figures."
_SEC = "dbtier.report.sections."
_MET = "dbtier.export.metrics:"
_SER = "dbtier.export.series:"
_VIEW = "dbtier.runsdb.views:"
GENERIC_FIGURES = _FIG + "generic:figures"          # its top-level numbers (and a `requirement`'s)
GENERIC_TERMINAL = _FIG + "generic:TERMINAL"        # no tables, no method lines
GENERIC_SECTION = "dbtier.report.base:generic_section"   # a note, its parameters, machine and JSON


@dataclass(frozen=True, kw_only=True)
class Faces:
    """What each part of dbtier makes of a kind: a "module:name" path each (None: none, on purpose).

    result    the TypedDicts of dbtier.results.types its documents add to the envelope, by name; one that every
              kind of the command lists is the command's section (older documents without result_kind are
              checked by it too), any other the kind's own; () when the kind has no typed result
    figures   (doc) -> list[Figure]: its headline figures (show, compare, the reports, the runs index)
    terminal  a report.figures.core.Terminal: its tables and method lines (show, the Markdown report)
    section   (doc, i) -> str: its section of the HTML report
    metrics   (Builder, run_id, doc) -> None: its Prometheus families (dbtier export metrics), beside the
              dbtier_run families every run has
    series    an export.series.Source: its time series (dbtier export series)
    view      a runsdb.views.View: its view of `dbtier runs sql`, the one of its index kind
    """
    result: tuple[str, ...]
    figures: str
    terminal: str
    section: str
    metrics: str | None
    series: str | None
    view: str | None


@dataclass(frozen=True, kw_only=True)
class Kind(Faces):
    name: str                       # dotted: "bench.oltp"
    label: str                      # what a person reads: "bench oltp"
    index: tuple[str, str | None]   # the runs index's (kind, action)
    writers: tuple[str, ...]        # the command lines that write it ("bench oltp", "history fetch")
    # its library call, "module:name": a function that returns the kind's typed, immutable result (a
    # dbtier.results.result.Result of this kind), which the command stores and renders; None: the command
    # still builds its document itself
    call: str | None = None

    @property
    def command(self) -> str:
        return self.name.partition(".")[0]


def _k(name: str, label: str | None = None, index: tuple[str, str | None] | None = None,
       writers: tuple[str, ...] | None = None, *, call: str | None = None, result: tuple[str, ...], figures: str,
       terminal: str, section: str, metrics: str | None, series: str | None, view: str | None) -> Kind:
    cmd, _, sub = name.partition(".")
    return Kind(name=name, label=label if label is not None else name.replace(".", " "),
                index=index if index is not None else (cmd, sub or None),
                writers=writers or (name.replace(".", " "),), call=call,
                result=result, figures=figures, terminal=terminal, section=section, metrics=metrics, series=series,
                view=view)


def _plain(*result: str) -> dict[str, Any]:
    """The faces of a kind the reports draw generically, with no metrics, series or view of its own."""
    return dict(result=result, figures=GENERIC_FIGURES, terminal=GENERIC_TERMINAL, section=GENERIC_SECTION,
                metrics=None, series=None, view=None)


def _probe() -> dict[str, Any]:
    """A probe's faces, a fleet's too: the same figures, tables and section, with its hosts where it has them."""
    return dict(result=("ProbeResult",), figures=_FIG + "probe:figures", terminal=_FIG + "probe:TERMINAL",
                section=_SEC + "fleet:section", metrics=_MET + "probe", series=_SER + "PROBE", view=_VIEW + "PROBE")


def _bench(sub: str, result: str, series: str | None) -> dict[str, Any]:
    return dict(result=("BenchResult", result), figures=_FIG + f"{sub}:figures", terminal=_FIG + f"{sub}:TERMINAL",
                section=_SEC + f"{sub}:{sub}_section", metrics=_MET + sub, series=series, view=_VIEW + sub.upper())


def _plan(action: str, result: str, terminal: str = "TERMINAL") -> dict[str, Any]:
    return dict(call=f"dbtier.model.plan.calls:{action}_plan", result=(result,), figures=_FIG + f"plan:{action}",
                terminal=_FIG + f"plan:{terminal}", section=_SEC + "plan:plan_section", metrics=_MET + f"plan_{action}", series=None, view=_VIEW + "PLAN")


def _simulate(figures: str = "simulate:figures", terminal: str = GENERIC_TERMINAL,
              metrics: str = "simulate_run") -> dict[str, Any]:
    return dict(result=("SimulateResult",), figures=_FIG + figures, terminal=terminal,
                section=_SEC + "simulate:section", metrics=_MET + metrics, series=_SER + "SIMULATE",
                view=_VIEW + "SIMULATE")


def _history(action: str, result: str, series: str | None) -> dict[str, Any]:
    return dict(result=("HistoryResult", result), figures=GENERIC_FIGURES, terminal=GENERIC_TERMINAL,
                section=_SEC + "history:section", metrics=_MET + f"history_{action}", series=series,
                view=_VIEW + "HISTORY")


KINDS: tuple[Kind, ...] = (
    _k("probe", writers=("probe",), call="dbtier.measure.probe:probe", **_probe()),
    _k("probe.fleet", "probe", ("probe", None), ("probe",), call="dbtier.measure.fleet:run", **_probe()),          # probe --hosts
    _k("bench.oltp", index=("oltp", None), call="dbtier.workloads.oltp:bench",
       **_bench("oltp", "OltpResult", _SER + "OLTP")),
    _k("bench.dss", index=("dss", None), call="dbtier.workloads.dss:run", **_bench("dss", "DssResult", None)),
    _k("bench.backup", index=("backup", None), call="dbtier.workloads.backup:run",
       **_bench("backup", "BackupResult", None)),
    _k("lab", result=("LabResult",), figures=_FIG + "lab:figures", terminal=_FIG + "lab:TERMINAL",
       section=_SEC + "lab:lab_section", metrics=_MET + "lab", series=None,
       view=None),      # its steps are runs of their own, in their kinds' views
    _k("plan.equivalent", **_plan("equivalent", "PlanEquivalent")),
    _k("plan.budget", **_plan("budget", "PlanBudget")),
    _k("plan.size", **_plan("size", "PlanSize", "SIZE_TERMINAL")),
    _k("plan.value", **_plan("value", "PlanValue")),
    _k("simulate.run", "simulate", call="dbtier.sim.request:run", **_simulate()),
    _k("simulate.mrc", call="dbtier.sim.mrc.call:run",
       **_simulate("mrc:figures", _FIG + "mrc:TERMINAL", "simulate_mrc")),
    _k("simulate.capture", call="dbtier.measure.capture:run", **_simulate()),
    _k("simulate.convert", call="dbtier.sim.convert:convert", **_simulate()),
    _k("history.import", writers=("history import", "history fetch"), call="dbtier.history.fleet:import_files",
       **_history("import", "HistoryImport", _SER + "HISTORY_IMPORT")),
    _k("history.consolidate", call="dbtier.history.calls:consolidate",
       **_history("consolidate", "HistoryConsolidate", _SER + "HISTORY_CONSOLIDATE")),
    _k("history.requirement", call="dbtier.history.calls:requirement",
       **_history("requirement", "HistoryRequirement", None)),
    _k("advise", call="dbtier.advise.call:advise", result=("AdviseResult",), figures=_FIG + "advise:figures",
       terminal=GENERIC_TERMINAL, section=_SEC + "advise:section", metrics=None, series=None, view=_VIEW + "ADVISE"),
    _k("report", call="dbtier.report.calls:report", **_plain("ReportResult")),
    _k("show", call="dbtier.report.calls:show", **_plain("ShowResult")),
    _k("compare", call="dbtier.report.calls:compare", **_plain("CompareResult")),
    _k("catalog.list", "catalog", ("catalog", None), call="dbtier.model.plan.catalog_calls:list_catalog", **_plain("CatalogResult")),
    _k("catalog.show", "catalog", ("catalog", None), call="dbtier.model.plan.catalog_calls:show_device", **_plain("CatalogResult")),
    _k("catalog.template", "catalog", ("catalog", None), call="dbtier.model.plan.catalog_calls:device_template", **_plain("CatalogResult")),
    _k("export.metrics", "export", ("export", None), call="dbtier.export.calls:export_metrics", **_plain()),
    _k("export.series", "export", ("export", None), call="dbtier.export.calls:export_series", **_plain()),
    _k("cleanup", call="dbtier.measure.reap:cleanup", **_plain("CleanupResult")),
    _k("runs.list", "runs", writers=("runs",), call="dbtier.runsdb.calls:runs_list", **_plain()),
    _k("runs.sql", "runs", call="dbtier.runsdb.calls:runs_sql", **_plain()),
    _k("runs.trend", "runs", call="dbtier.runsdb.calls:runs_trend", **_plain()),
    _k("runs.check", "runs", call="dbtier.runsdb.calls:runs_check", **_plain()),
)
BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
COMMANDS: tuple[str, ...] = tuple(dict.fromkeys(k.command for k in KINDS))


def of_command(command: str) -> list[Kind]:
    """The kinds a command writes, in KINDS order."""
    return [k for k in KINDS if k.command == command]


# A document of a known command whose action this dbtier does not know (a newer one's: its kind is then its
# command): a plan's section says it has no known action, a history's the same; a simulation reads as one.
UNKNOWN_ACTION: dict[str, Faces] = {
    "plan": Faces(result=(), figures=_FIG + "plan:unknown", terminal=GENERIC_TERMINAL,
                  section=_SEC + "plan:plan_section", metrics=None, series=None, view=_VIEW + "PLAN"),
    "simulate": Faces(result=(), figures=_FIG + "simulate:figures", terminal=GENERIC_TERMINAL,
                      section=GENERIC_SECTION, metrics=None, series=_SER + "SIMULATE", view=_VIEW + "SIMULATE"),
    "history": Faces(result=(), figures=GENERIC_FIGURES, terminal=GENERIC_TERMINAL,
                     section=_SEC + "history:section", metrics=None, series=None, view=_VIEW + "HISTORY"),
}
# Anything else: a document of a command this dbtier does not know, or of none.
GENERIC = Faces(**_plain())


def faces(name: str) -> Faces:
    """The faces of a kind (by name); of a name that is no kind, its command's for an unknown action, else
    the generic ones."""
    return BY_NAME.get(name) or UNKNOWN_ACTION.get(name) or GENERIC


def check(name: str) -> Kind:
    """The Kind of that name; a name not in KINDS is a bug in the command that gave it."""
    k = BY_NAME.get(name)
    if k is None:
        raise ValueError(f"{name!r} is not a kind of result (dbtier.results.kinds.KINDS)")
    return k


def _str(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def derive(doc: dict[str, Any]) -> str | None:
    """The kind of a document written before `result_kind` existed, from what each command wrote then;
    None when they do not say (an unknown command, a history or plan run without its action)."""
    cmd = _str(doc.get("command"))
    given = doc.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    action = _str(params.get("action"))
    sub: str | None
    name: str | None = None
    if cmd == "probe":
        fleet = isinstance(params.get("hosts"), list) or isinstance(doc.get("fleet"), dict)
        name = "probe.fleet" if fleet else "probe"
    elif cmd == "bench":
        sub = _str(doc.get("bench"))
        if sub is None:         # stopped before its section was written: the options each bench alone takes
            sub = "oltp" if "workload" in params else "backup" if "to" in params else "dss" if "temp" in params \
                else None
        name = f"bench.{sub}" if sub else None
    elif cmd == "plan":
        sub = _str(doc.get("plan")) or action
        name = f"plan.{sub}" if sub else None
    elif cmd == "simulate":
        sub = action or ("mrc" if isinstance(doc.get("mrc"), dict) else "run")
        name = f"simulate.{sub}"
    elif cmd is not None and cmd in COMMANDS:
        name = cmd if cmd in BY_NAME else (f"{cmd}.{action}" if action else None)
    return name if name in BY_NAME else None


def kind_of(doc: dict[str, Any]) -> str:
    """The document's kind: its envelope's `result_kind` (when it is a kind of its own command), else
    derived from an older document's markers, else its command (`unknown` without one). Never raises."""
    given = doc.get(KEY)
    if isinstance(given, str) and given in BY_NAME and BY_NAME[given].command == doc.get("command"):
        return given
    return derive(doc) or _str(doc.get("command")) or "unknown"


def label(name: str) -> str:
    """A kind's label ('bench oltp'); a name not in KINDS (a newer or unknown command) as it is, spaced."""
    k = BY_NAME.get(name)
    return k.label if k is not None else name.replace(".", " ")


def label_of(doc: dict[str, Any]) -> str:
    return label(kind_of(doc))


def index_of(doc: dict[str, Any]) -> tuple[str, str | None]:
    """(kind, action) of the document in the runs index: ('oltp', None), ('plan', 'size'), ('runs', 'check')."""
    name = kind_of(doc)
    k = BY_NAME.get(name)
    return k.index if k is not None else (name, None)


def with_kind(doc: dict[str, Any]) -> dict[str, Any]:
    """An older document with `result_kind` added after its command (and name), when `derive` can tell;
    the document itself when it has one already or nothing tells."""
    if KEY in doc:
        return doc
    name = derive(doc)
    if name is None:
        return doc
    return place(doc, name)


def place(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """A copy of `doc` with `result_kind` = name right after `command` (and `name`, when it follows)."""
    out: dict[str, Any] = {}
    after = "name" if "name" in doc else "command"
    for key, value in doc.items():
        if key == KEY:
            continue
        out[key] = value
        if key == after:
            out[KEY] = name
    out.setdefault(KEY, name)
    return out
