"""One run directory -> one index row: who ran what, where and when, and its key figures.

The figures are report/figures/core.py's (`figures(doc)`: the same keys, labels, units, better direction and
spread that `show` and `compare` use), split into an `item` (a probe's target path, a backup method, a
query, a plan device) and a `key` (the figure's own name, e.g. `read_iops_4k`). History documents have no
headline figures there beyond their top-level numbers, so their per-database peaks are added here, named
as in the document (`peaks.read_iops.p99` -> `read_iops_p99`).

A directory whose result.json cannot be read (`load_run` refuses it) becomes a `damaged` row with the
reason; nothing here raises for a bad document.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Any, Iterable

from dbtier.core.errors import DbtierError
from dbtier.core.units import count_text
from dbtier.report.figures import core as F
from dbtier.results import kinds, registry
from dbtier.results.store import RESULT_FILE, load_run, marker_of
from dbtier.runsdb.views import VIEWS, View
from dbtier.core.parts import dict_at

DAMAGED = "damaged"

# The figures shown in the listing's `summary` column first, per kind of the index: its view's (the first
# item's when the kind has items); a kind without them (a lab: its step counts) shows its first figures.
SUMMARY_KEYS: dict[str, tuple[str, ...]] = {v.name: v.summary for v in VIEWS.values()}
_SUMMARY_MAX = 3

_HISTORY_METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")
_HISTORY_STATS = ("p50", "p95", "p99", "max")
_PROBE_PREFIX = re.compile(r"^t\d+\.")


def kind_of(doc: dict[str, Any]) -> tuple[str, str | None]:
    """(kind, action), the index's columns for the document's kind (dbtier.results.kinds `index`): 'probe';
    'oltp', 'dss', 'backup' for bench; ('plan', 'size'), ('history', 'import'), ('simulate', 'mrc'),
    ('runs', 'check') ...; any other command is its own kind."""
    return kinds.index_of(doc)


def _time(ts: Any) -> _dt.datetime | None:
    """A document's ISO time as naive UTC (the index's time zone), None when it is not one."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        t = _dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.astimezone(_dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t


def _text(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def _figure_row(f: F.Figure, view: View | None, doc: dict[str, Any]) -> dict[str, Any]:
    key, item = f.key, ""
    targets = view is not None and view.targets
    if targets:                 # a probe's figures are per target: the item is the target's path
        key, item = _PROBE_PREFIX.sub("", f.key), f.group or ""
    elif "." in f.key:
        item, key = f.key.rsplit(".", 1)
    v = f.value
    sp = F.spread_of(f.spread) or {}
    target = F.machine_target(doc, item) if targets else None
    return {"item": item, "key": key, "figure_key": f.key, "label": f.label,
            "value": float(v) if F.isnum(v) else None,
            "text": v if isinstance(v, str) else (F.fmt(v) if isinstance(v, bool) else None),
            "unit": f.unit or None, "digits": int(f.digits or 0), "better": f.better, "detail": bool(f.detail),
            "median": _num(sp.get("median")), "min": _num(sp.get("min")), "max": _num(sp.get("max")),
            "n": int(sp["n"]) if F.isnum(sp.get("n")) else None, "spread_pct": _num(sp.get("spread_pct")),
            "device": F.device_of(doc, item) if target else None,
            "model": _text(F.get(target, "block_device", "model")) if target else None}


def _num(x: Any) -> float | None:
    return float(x) if F.isnum(x) else None


def _history_figures(doc: dict[str, Any]) -> list[F.Figure]:
    """Per-database peaks of an import (and a consolidation's), named as in the document."""
    out: list[F.Figure] = []

    def stats(prefix: str, block: Any, group: str) -> None:
        for metric, by in (block or {}).items() if isinstance(block, dict) else ():
            for s in _HISTORY_STATS:
                v = F.get(by, s)
                if F.isnum(v):
                    unit = "IOPS" if metric.endswith("iops") else "MB/s"
                    key = f"{metric}_{s}"
                    out.append(F.Figure(f"{prefix}{key}", f"{metric.replace('_', ' ')} {s}", v, unit, 1, None,
                                        group))
    action = kinds.kind_of(doc).partition(".")[2]
    for db in F.dicts(doc.get("databases")):
        name = str(db.get("name") or "?")
        p = f"{name}."
        if action == "import":
            stats(p, db.get("peaks"), name)
            stats(p, db.get("total"), name)
            for k, unit in (("intervals", ""), ("capacity_gb", "GB"), ("instances", "")):
                if F.isnum(db.get(k)):
                    out.append(F.Figure(p + k, k.replace("_", " "), db[k], unit, 0, None, name))
            for k in ("start", "end"):
                if isinstance(db.get(k), str):
                    out.append(F.Figure(p + k, k, db[k], "", 0, None, name))
        else:
            for k, unit in (("peak_iops", "IOPS"), ("peak_mbps", "MB/s")):
                if F.isnum(db.get(k)):
                    out.append(F.Figure(p + k, k.replace("_", " "), db[k], unit, 1, None, name))
    if action == "consolidate":     # the sum's own peaks: peak_of_sum (the per-database rows keep theirs)
        for block in ("peak_of_sum", "sum_of_peaks", "sum_of_peaks_grid"):
            for m in ("iops", "mbps"):
                v = F.get(doc, block, m)
                if F.isnum(v):
                    out.append(F.Figure(f"{block}_{m}", f"{block.replace('_', ' ')} {m}", v,
                                        "IOPS" if m == "iops" else "MB/s", 1))
    return out


def figure_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The figures of a document as index rows, as its kind's view takes them (dbtier.results.kinds `view`;
    may raise on a malformed document)."""
    view: View | None = registry.face_of(doc, "view")
    figs = F.figures(doc)
    if view is not None and view.peaks:     # the generic figures repeat a requirement under `requirement.`
        figs = [f for f in figs if f.group != "requirement"] + _history_figures(doc)
    return [_figure_row(f, view, doc) for f in figs]


def _summary(view: View | None, rows: list[dict[str, Any]]) -> str | None:
    """'read_iops_4k=12,345 read_mbps_seq=980': the kind's headline figures, named as the columns are."""
    wanted = view.summary if view is not None else ()
    have = [r for r in rows if not r["detail"] and (r["value"] is not None or r["text"] is not None)]
    items = list(dict.fromkeys(r["item"] for r in have))
    first = next((i for i in [""] + items if any(r["key"] in wanted and r["item"] == i for r in have)),
                 items[0] if items else "")
    by_key = {r["key"]: r for r in have if r["item"] == first}
    keys = [k for k in wanted if k in by_key][:_SUMMARY_MAX] or list(by_key)[:_SUMMARY_MAX]
    parts = []
    for k in keys:
        r = by_key[k]
        v = (r["text"] if r["value"] is None else count_text(r["value"]) if float(r["value"]).is_integer()
             else F.fmt(r["value"], r["digits"]))          # a count is a count: batches=1, not 1.00
        parts.append(f"{k}={v}")
    if not parts:
        return None
    per_item = view is not None and view.item is not None      # probe targets, backup methods, databases
    more = len([i for i in items if i]) - 1 if per_item and first else 0
    head = f"{first}: " if first and view is not None and view.item is not None and not view.targets else ""
    return head + " ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _first_target(doc: dict[str, Any]) -> dict[str, Any]:
    ts = F.dicts(F.get(doc, "machine", "targets"))
    return ts[0] if ts else {}


def row_of(doc: dict[str, Any], run_id: str, mtime_ns: int, size: int, lab: str | None = None) -> dict[str, Any]:
    """The index row of a loaded document (never raises: a part that fails marks the row damaged)."""
    kind, action = kind_of(doc)
    started, finished = _time(doc.get("started_at")), _time(doc.get("finished_at"))
    t = _first_target(doc)
    errors = F.dicts(doc.get("errors"))
    status = doc.get("status") if isinstance(doc.get("status"), str) else "unknown"
    row: dict[str, Any] = {"run_id": run_id, "mtime_ns": mtime_ns, "size": size, "command": _text(doc.get("command")),
           "name": _text(doc.get("name")), "continues": continues(doc), "kind": kind, "action": action, "status": status,
           "reason": _text(errors[0].get("message")) if errors and status != "ok" else None,
           "started_at": started, "finished_at": finished,
           "seconds": (finished - started).total_seconds() if started and finished else None,
           "host": _text(F.get(doc, "machine", "hostname")), "dbtier_version": _text(doc.get("dbtier_version")),
           "target": _text(t.get("path")) or _text(t.get("device")),
           "device": _text(F.get(t, "block_device", "name")) or _text(F.get(t, "block_device", "disk")),
           "model": _text(F.get(t, "block_device", "model")), "filesystem": _text(t.get("filesystem")),
           "lab": lab, "summary": None, "figures": []}
    try:
        rows = figure_rows(doc)
        if kind == "lab":       # its steps are runs of their own: the lab row keeps its own counts
            rows = [r for r in rows if "/" not in r["figure_key"]]
    except Exception as exc:  # noqa: BLE001 - a document figures.py cannot read is listed as damaged
        row.update(status=DAMAGED, reason=f"its figures cannot be read ({type(exc).__name__}: {exc})")
        return row
    row["figures"] = rows
    row["summary"] = _summary(registry.face_of(doc, "view"), rows)
    return row


def continues(doc: dict[str, Any]) -> str | None:
    """The run(s) this one continues, as its params name them: a history requirement's import or
    consolidation (`run`), a consolidation's imports (`runs`), an import appended to an earlier one (`into`),
    a plan sized from a history run (`from_history`). Runs it only reads (report, compare) continue none."""
    params = dict_at(doc, "params")
    key = {"history.requirement": "run", "history.consolidate": "runs", "history.import": "into",
           "plan.size": "from_history"}.get(kinds.kind_of(doc))
    v = params.get(key) if key else None
    if isinstance(v, list):
        v = ", ".join(x for x in v if isinstance(x, str)) or None
    return _text(v)


def damaged_row(run_id: str, reason: str, mtime_ns: int = -1, size: int = -1, lab: str | None = None,
                marker: dict[str, Any] | None = None) -> dict[str, Any]:
    """The row of a run directory whose document cannot be read (`marker`: what its marker says)."""
    m = marker or {}
    return {"run_id": run_id, "mtime_ns": mtime_ns, "size": size, "command": m.get("command"),
            "name": m.get("name"), "continues": None, "kind": None, "action": None,
            "status": DAMAGED, "reason": reason, "started_at": None, "finished_at": None, "seconds": None,
            "host": None, "dbtier_version": None, "target": None, "device": None, "model": None, "filesystem": None,
            "lab": lab, "summary": None, "figures": []}


def read_row(root: str, run_id: str, lab: str | None = None) -> dict[str, Any]:
    """Read ROOT/RUN_ID/result.json in place and make its row; a missing or refused file: a damaged row."""
    d = os.path.join(root, run_id)
    file = os.path.join(d, RESULT_FILE)
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return damaged_row(run_id, f"no {RESULT_FILE}", lab=lab, marker=marker_of(d))
    except OSError as exc:
        return damaged_row(run_id, f"{RESULT_FILE}: {exc.strerror or exc}", lab=lab, marker=marker_of(d))
    try:
        doc = load_run(d)
    except DbtierError as exc:      # its message names the file: the row names the run already
        return damaged_row(run_id, exc.message.replace(file, RESULT_FILE), st.st_mtime_ns, st.st_size, lab,
                           marker_of(d))
    except (OSError, RecursionError, ValueError) as exc:
        return damaged_row(run_id, f"{RESULT_FILE}: {type(exc).__name__}: {exc}", st.st_mtime_ns, st.st_size, lab,
                           marker_of(d))
    return row_of(doc, run_id, st.st_mtime_ns, st.st_size, lab)


def read_rows(root: str, items: Iterable[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """read_row for each (run_id, lab): what a worker process runs on its share."""
    return [read_row(root, rid, lab) for rid, lab in items]
