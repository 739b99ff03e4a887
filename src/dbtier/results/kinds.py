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

Imports nothing from dbtier: the results types, the loader, the reports and the runs index all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEY = "result_kind"


@dataclass(frozen=True)
class Kind:
    name: str                       # dotted: "bench.oltp"
    label: str                      # what a person reads: "bench oltp"
    index: tuple[str, str | None]   # the runs index's (kind, action)
    writers: tuple[str, ...]        # the command lines that write it ("bench oltp", "history fetch")

    @property
    def command(self) -> str:
        return self.name.partition(".")[0]


def _k(name: str, label: str | None = None, index: tuple[str, str | None] | None = None,
       writers: tuple[str, ...] | None = None) -> Kind:
    cmd, _, sub = name.partition(".")
    return Kind(name, label if label is not None else name.replace(".", " "),
                index if index is not None else (cmd, sub or None), writers or (name.replace(".", " "),))


KINDS: tuple[Kind, ...] = (
    _k("probe", writers=("probe",)),
    _k("probe.fleet", "probe", ("probe", None), ("probe",)),          # probe --hosts
    _k("bench.oltp", index=("oltp", None)),
    _k("bench.dss", index=("dss", None)),
    _k("bench.backup", index=("backup", None)),
    _k("lab"),
    _k("plan.equivalent"),
    _k("plan.budget"),
    _k("plan.size"),
    _k("plan.value"),
    _k("simulate.run", "simulate"),
    _k("simulate.mrc"),
    _k("simulate.capture"),
    _k("simulate.convert"),
    _k("history.import", writers=("history import", "history fetch")),
    _k("history.consolidate"),
    _k("history.requirement"),
    _k("advise"),
    _k("report"),
    _k("show"),
    _k("compare"),
    _k("catalog.list", "catalog", ("catalog", None)),
    _k("catalog.show", "catalog", ("catalog", None)),
    _k("catalog.template", "catalog", ("catalog", None)),
    _k("export.metrics", "export", ("export", None)),
    _k("export.series", "export", ("export", None)),
    _k("cleanup"),
    _k("runs.list", "runs", writers=("runs",)),
    _k("runs.sql", "runs"),
    _k("runs.trend", "runs"),
    _k("runs.check", "runs"),
)
BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
COMMANDS: tuple[str, ...] = tuple(dict.fromkeys(k.command for k in KINDS))


def of_command(command: str) -> list[Kind]:
    """The kinds a command writes, in KINDS order."""
    return [k for k in KINDS if k.command == command]


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
