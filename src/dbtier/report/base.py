"""The parts every report section is built from: escaping, numbers and times, tables, key-value lists,
figure frames, and the run chrome (a run's heading, errors, cache guards, machine, JSON, the generic section).

Cells and values handed to the table builders are HTML already: escape data with `esc` first.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from contextlib import contextmanager
from contextvars import ContextVar
from html import escape
from typing import Any, Callable, Iterable, Iterator, Sequence

from dbtier.core.units import human_bytes
from dbtier.model.guards import doc_guards
from dbtier.report.figures.core import get, isnum  # one definition, shared with the Markdown report and `show`
from dbtier.core.parts import dict_at


# -- escaping, numbers and times, tables, key-value lists, figure frames --------------------------

def esc(x: Any) -> str:
    """`x` as HTML text (None as nothing): every section escapes data through this one function."""
    return escape("" if x is None else str(x))


def num(x: Any, digits: int = 0) -> str:
    if not isnum(x):
        return "—"
    return f"{x:,.{digits}f}"


def _parse_time(ts: Any) -> _dt.datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return _dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def time_text(ts: Any) -> str:
    t = _parse_time(ts)
    if t is None:
        return esc(ts) if ts else "—"
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if t.tzinfo is not None else "")


def duration_text(start: Any, end: Any) -> str:
    a, b = _parse_time(start), _parse_time(end)
    if a is None or b is None:
        return "—"
    try:
        s = (b - a).total_seconds()
    except TypeError:
        return "—"
    if s < 0:
        return "—"
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {sec} s"
    h, m = divmod(m, 60)
    return f"{h} h {m} min"


def badge(status: Any) -> str:
    s = str(status or "unknown")
    cls = s if s in ("ok", "failed", "interrupted", "running", "abandoned", "suspect") else "unknown"
    return f'<span class="badge {cls}">{esc(s)}</span>'


def yes_no(x: Any) -> str:
    if x is True:
        return "yes"
    if x is False:
        return "no"
    return "—" if x is None else esc(x)


def run_label(doc: dict[str, Any], i: int) -> str:
    """The run's directory name (lab/step for a lab's step run), with the run's name (--name) after it
    when the directory's name does not already hold it (a run written with --out)."""
    d = doc.get("_run_dir")
    name = os.path.basename(os.path.normpath(d)) if isinstance(d, str) and d else f"run {i + 1}"
    parent = doc.get("_parent")     # a lab's step run: lab/step
    label = f"{parent}/{name}" if isinstance(parent, str) and parent else name
    given = doc.get("name")
    if isinstance(given, str) and given and given not in name:
        label += f" ({given})"
    return label


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]], num_cols: Iterable[int] = (),
               cls: str = "", num_from: int | None = None, wide: bool = False) -> str:
    """Cells are HTML already (escape before); columns in num_cols (or from num_from on) are right-aligned;
    `wide`: in a box that scrolls sideways on a narrow screen."""
    nums = set(num_cols) if num_from is None else set(range(num_from, len(headers)))
    head = "".join(f'<th{" class=num" if i in nums else ""}>{h}</th>' for i, h in enumerate(headers))
    body = []
    for r in rows:
        body.append("<tr>" + "".join(f'<td{" class=num" if i in nums else ""}>{c}</td>'
                                     for i, c in enumerate(r)) + "</tr>")
    c = f' class="{cls}"' if cls else ""
    table = f"<table{c}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<div class="wide">{table}</div>' if wide else table


def kv_table(rows: Iterable[tuple[str, str]]) -> str:
    """Key/value table; values are HTML already."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="kv"><tbody>{body}</tbody></table>'


def figure_frame(chart: str, caption: str = "") -> str:
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f"<figure>{chart}{cap}</figure>"


def json_value(v: Any) -> str:
    if isinstance(v, str):
        return esc(v)
    if v is None:
        return "—"
    if isinstance(v, bool):
        return yes_no(v)
    if isnum(v):
        return esc(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return ", ".join(f"<code>{esc(x)}</code>" if isinstance(x, str) else esc(x) for x in v) or "—"
    return f'<code>{esc(json.dumps(v, default=str))}</code>'

# -- the run chrome: machine --------------------------------------------------------------------

def machine_section(doc: dict[str, Any]) -> str:
    m = doc.get("machine")
    if not isinstance(m, dict) or not m:
        return ""
    cpu = m.get("cpu_model") or "—"
    if isnum(m.get("cpu_count")):
        cpu = f"{cpu} × {m['cpu_count']} CPUs"
    rows = [("host", esc(m.get("hostname") or "—")), ("OS", esc(m.get("os") or "—")),
            ("kernel", esc(m.get("kernel") or "—") + (f" ({esc(m['arch'])})" if m.get("arch") else "")),
            ("CPU", esc(cpu)),
            ("memory", esc(human_bytes(m["memory_bytes"])) if isnum(m.get("memory_bytes")) else "—")]
    known = {"hostname", "os", "kernel", "arch", "cpu_model", "cpu_count", "memory_bytes", "targets", "versions"}
    rows += [(k.replace("_", " "), json_value(v)) for k, v in m.items() if k not in known]
    out = ["<h4>Host</h4>", kv_table(rows)]
    mts = [t for t in (m.get("targets") or []) if isinstance(t, dict)]
    storage = ""
    if mts:
        def bd(t: dict[str, Any]) -> dict[str, Any]:
            return t["block_device"] if isinstance(t.get("block_device"), dict) else {}

        def blocks(t: dict[str, Any]) -> str:
            b = bd(t)
            if not isnum(b.get("logical_block_bytes")):
                return "—"
            return f"{b['logical_block_bytes']} / {esc(b.get('physical_block_bytes', '?'))} B"

        attrs: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
            ("mount point", lambda t: esc(t.get("mount_point") or "—")),
            ("filesystem", lambda t: esc(t.get("filesystem") or "—")),
            ("mount options", lambda t: f'<code class="wrap">{esc(t.get("mount_options") or "—")}</code>'),
            ("source", lambda t: esc(t.get("source") or "—")),
            ("device", lambda t: esc(" · ".join(dict.fromkeys(str(x) for x in (bd(t).get("name"), bd(t).get("disk"))
                                                              if x)) or "—")),
            ("device model", lambda t: esc(bd(t).get("model") or "—")),
            ("driver", lambda t: esc(bd(t).get("driver") or "—")),
            ("virtual", lambda t: yes_no(bd(t).get("virtual"))),
            ("rotational", lambda t: yes_no(bd(t).get("rotational"))),
            ("scheduler", lambda t: esc(bd(t).get("scheduler") or "—")),
            ("write cache", lambda t: esc(bd(t).get("write_cache") or "—")),
            ("logical / physical block", blocks),
            ("device size", lambda t: esc(human_bytes(bd(t)["size_bytes"])) if isnum(bd(t).get("size_bytes"))
             else "—"),
        ]
        heads = ["", *(f"<code>{esc(t.get('path') or t.get('device'))}</code>" for t in mts)]
        cells = [[esc(name), *(fn(t) for t in mts)] for name, fn in attrs]
        storage = "<h4>Storage</h4>" + '<div class="wide">' + html_table(heads, cells, cls="storage") + "</div>"
        if any(bd(t).get("virtual") for t in mts):
            storage += ('<p class="reason">On a virtual disk the rotational flag and the write-cache mode are the '
                        'hypervisor driver\'s defaults and say little about the media underneath.</p>')
    versions = m.get("versions")
    tools = ""
    if isinstance(versions, dict) and versions:
        tools = "<h4>Tool versions</h4>" + kv_table(
            (k, esc(v) if v is not None else '<span class="na">not installed</span>') for k, v in versions.items())
    host = "".join(out)
    shown = _MACHINES_SHOWN.get()
    if shown is not None:       # a report of several runs: each part in full once, then where it was
        label = run_label(doc, 0)
        host, storage, tools = (_once(shown, part, what, label) for part, what in
                                ((host, "host"), (storage, "storage"), (tools, "tool versions")))
    return ('<h3>Machine</h3><div class="top"><div>' + host + "</div><div>" + tools + "</div></div>"
            + storage)


# Within one report of several runs (`machines_once`): each part of a machine section (host, storage, tool
# versions) already shown in full -> the run that showed it.
_MACHINES_SHOWN: ContextVar[dict[str, str] | None] = ContextVar("machines_shown", default=None)


@contextmanager
def machines_once() -> Iterator[None]:
    """While drawing a report of several runs: a machine section part identical to one drawn before is a
    pointer to it (a lab's steps on one machine repeat the same host, storage and tools)."""
    token = _MACHINES_SHOWN.set({})
    try:
        yield
    finally:
        _MACHINES_SHOWN.reset(token)


def _once(shown: dict[str, str], part: str, what: str, label: str) -> str:
    if not part:
        return part
    if part in shown:
        return f'<p class="reason">{esc(what.capitalize())}: the same as for <b>{esc(shown[part])}</b> above.</p>'
    shown[part] = label
    return part

# -- the run chrome: heading, errors, JSON, the generic section, cache guards -------------------------

def errors_html(doc: dict[str, Any]) -> str:
    errs = doc.get("errors")
    if not isinstance(errs, list) or not errs:
        return ""
    items = []
    for e in errs:
        if isinstance(e, dict):
            where = f"<code>{esc(e.get('target'))}</code>: " if e.get("target") else ""
            hint = f" <span class=reason>next: {esc(e.get('hint'))}</span>" if e.get("hint") else ""
            items.append(f"<li>{where}{esc(e.get('message'))}{hint}</li>")
        else:
            items.append(f"<li>{esc(e)}</li>")
    return f'<div class="note bad"><b>Errors</b><ul>{"".join(items)}</ul></div>'


def run_head(doc: dict[str, Any], i: int, anchor: str) -> str:
    return (f'<h2 id="{anchor}">{esc(doc.get("command") or "unknown")} · {esc(run_label(doc, i))} '
            f'{badge(doc.get("status"))}</h2>'
            f'<p class="sub">started {time_text(doc.get("started_at"))} · '
            f'finished {time_text(doc.get("finished_at"))} · '
            f'took {duration_text(doc.get("started_at"), doc.get("finished_at"))}'
            + (f' · dbtier {esc(doc.get("dbtier_version"))}' if doc.get("dbtier_version") else "")
            + (f' · <code>{esc(doc.get("_run_dir"))}</code>' if doc.get("_run_dir") else "") + "</p>")


def json_details(doc: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in doc.items() if k not in ("_children", "_parent")}, indent=2, default=str,
                      sort_keys=False)
    return f"<details><summary>Result document (JSON)</summary><pre>{esc(text)}</pre></details>"

def generic_section(doc: dict[str, Any], i: int, note: str = "") -> str:
    anchor = f"run-{i + 1}"
    out = [run_head(doc, i, anchor)]
    if not note:
        note = (f"This report does not draw {doc.get('command') or 'unknown'} runs yet: their parameters, machine "
                "and result document follow.")
    out.append(f'<p class="note">{esc(note)}</p>')
    out.append(errors_html(doc))
    out.append(run_tail(doc))
    return f'<section class="run generic">{"".join(out)}</section>'


def module_section(doc: dict[str, Any], i: int, module: str, body: str) -> str:
    """A run's section around a body its kind's module drew: heading, errors, the body, parameters, machine,
    JSON (the simulate, history and advise sections)."""
    out = [run_head(doc, i, f"run-{i + 1}"), errors_html(doc), body, run_tail(doc)]
    return f'<section class="run {esc(module)}">{"".join(out)}</section>'


def run_tail(doc: dict[str, Any]) -> str:
    """What closes a run's section: its parameters, machine and result document."""
    out = []
    params = doc.get("params")
    if isinstance(params, dict) and params:
        out.append("<h4>Parameters</h4>" + kv_table((k, json_value(v)) for k, v in params.items()))
    out.append(machine_section(doc))
    out.append(json_details(doc))
    return "".join(out)

_GUARD_TITLES = {"reads-from-memory": "Cache guard: the reads came from memory",
                 "too-few-reads": "Cache guard: too few page reads to judge",
                 "remote": "Cache guard: the server's devices were not measured"}


def guards_html(doc: dict[str, Any]) -> str:
    """The cache guard (dbtier.model.guards), above the run's figures: it says what they measured."""
    out = []
    for g in doc_guards(doc):
        k = str(g.get("kind"))
        out.append(f'<div class="note{" bad" if k == "reads-from-memory" else ""} guard"><b>'
                   f'{esc(_GUARD_TITLES.get(k, "Guard: " + k))}</b>: {esc(g.get("message"))}</div>')
    return "".join(out)

# -- shared by the bench kinds (oltp, dss, backup) --------------------------------------------------

def plural(n: Any, word: str) -> str:
    return f"{num(n)} {word}" + ("" if n == 1 else "s")

def path_under(path: str, d: str) -> bool:
    d = d.rstrip("/") or "/"
    return path == d or path.startswith(d if d.endswith("/") else d + "/")


def block_device_of(doc: dict[str, Any], path: Any) -> str:
    """The block device under a directory, from the machine's targets (the longest matching path)."""
    if not isinstance(path, str):
        return ""
    best, name = -1, ""
    for t in get(doc, "machine", "targets") or []:
        if isinstance(t, dict) and isinstance(t.get("path"), str) and path_under(path, t["path"]):
            bd = dict_at(t, "block_device")
            if len(t["path"]) > best:
                best = len(t["path"])
                name = " · ".join(str(x) for x in (bd.get("name"), t.get("filesystem")) if x)
    return name


def to_mb(b: Any) -> float | None:
    return b / 1e6 if isnum(b) else None


def engine_label(e: Any) -> str:
    return {"duckdb": "DuckDB", "postgres": "PostgreSQL"}.get(e, str(e or "?"))
