"""The Markdown report: the verdict and the key tables of one or more runs, to paste into a ticket.

Pure: documents in (a lab with its step runs attached), a string out. GitHub-flavoured
Markdown: headings, bullet lists and pipe tables only, so it reads as plain text too.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from dbtier import __version__
from dbtier.report.figures import core as F
from dbtier.report import summary as FC
from dbtier.report.figures import fleet as FF
from dbtier.report.figures import method as FM
from dbtier.report.figures import tables as FT
from dbtier.report.verdict.topics import TOPIC_LABELS, TOPICS, thresholds, verdict
from dbtier.core.parts import dict_at
from dbtier.results import kinds


# Text from documents (database, host, device and path names, error messages) is written so that it
# reads as typed: Markdown and HTML in it are escaped, never rendered (a name `<script>` or `[x](y)`
# stays text). `_` is escaped only where it could start or end emphasis, so pg_basebackup stays plain.
_MD_SPECIAL = re.compile(r"[\\`*\[\]<|~]|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _md(x: Any) -> str:
    """Text from a document for Markdown: one line, special characters backslash-escaped."""
    text = "" if x is None else str(x)
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), re.sub(r"[\r\n]+", " ", text))


def _code(x: Any) -> str:
    """Text from a document as an inline code span: a fence longer than any backtick run inside it."""
    text = re.sub(r"[\r\n]+", " ", "" if x is None else str(x))
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(x: Any, digits: int = 0) -> str:
    return F.fmt(x, digits) if F.isnum(x) else ("—" if x is None else _md(x))


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: Sequence[int] = (),
           numeric: Sequence[bool] | None = None) -> list[str]:
    if numeric is None:
        numeric = [any(F.isnum(r[k]) for r in rows if k < len(r)) for k in range(len(columns))]
    out = ["| " + " | ".join(_cell(c) for c in columns) + " |",
           "|" + "|".join("---:" if numeric[k] else "---" for k in range(len(columns))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(_cell(v, digits[k] if k < len(digits) else 0) for k, v in enumerate(r)) + " |")
    return out


def _figures_rows(figs: Sequence[F.Figure]) -> list[str]:
    runs = any(f.spread for f in figs if f.value is not None)  # repeated figures: medians, and their runs
    out = ["| measure | value | unit |" + (" runs (min–max, n) |" if runs else ""),
           "|---|---:|---|" + ("---|" if runs else "")]
    for f in figs:
        if f.value is None:
            continue
        label = (f"{f.group}: " if f.group and f.group not in f.label else "") + f.label
        out.append(f"| {_cell(label)} | {_cell(f.value, f.digits)} | {_cell(f.unit)} |"
                   + (f" {_cell(F.spread_text(f.spread, f.digits))} |" if runs else ""))
    return out


def _side_by_side(kind: str, docs: Sequence[dict[str, Any]]) -> list[str]:
    rows = []
    for f0, vals in FC.side_by_side(docs):
        label = (f"{f0.group}: " if f0.group and f0.group not in f0.label else "") + f0.label
        rows.append([label, *(F.fmt(v, f0.digits) if F.isnum(v) else v for v in vals), f0.unit])
    if not rows:
        return []
    cols = ["measure", *(F.run_name(d) for d in docs), "unit"]
    clash = F.durability_clash(docs)
    return [f"### {kind}: {len(docs)} runs", "", *([f"> **Not comparable:** {_md(clash)}.", ""] if clash else []),
            *_table(cols, rows, numeric=[False, *([True] * len(docs)), False]), ""]


def _run(doc: dict[str, Any], i: int, level: str = "##") -> list[str]:
    name = F.run_name(doc, i)
    out = [f"{level} {_md(F.kind(doc))} · {_md(name)}", "",
           f"status **{_md(doc.get('status') or 'unknown')}**, started {_md(doc.get('started_at') or '—')}"
           + (f", {_code(doc.get('_run_dir'))}" if doc.get("_run_dir") else ""), ""]
    errs = [e.get("message") if isinstance(e, dict) else str(e) for e in doc.get("errors") or []]
    out += [f"> **Error:** {_md(e)}" for e in errs if e] + ([""] if any(errs) else [])
    notice = FF.fleet_notice(doc)
    if notice:
        out += [f"> **{_md(notice[0].upper() + notice[1:])}**", ""]
    figs = [f for f in F.figures(doc) if not f.detail] if doc.get("command") != "lab" else []
    table = _figures_rows(figs) if any(f.value is not None for f in figs) else []
    if table:
        out += table + [""]
    for t in FT.tables(doc):
        out += [f"**{_md(t.title)}**", "", *_table(t.columns, t.rows, t.digits), ""]
    fleet = FF.fleet_lines(doc)
    if fleet:
        out += [f"- {_md(a)}: {_md(b)}" for a, b in fleet] + [""]
    m = FM.method(doc)
    if m:
        out += ["How the numbers were obtained:", ""] + [f"- {_md(a)}: {_md(b)}" for a, b in m] + [""]
    return out


def _machines(docs: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, dict[str, Any]] = {}
    for d in docs:
        m = d.get("machine")
        if isinstance(m, dict) and m.get("hostname"):
            seen.setdefault(str(m["hostname"]), m)
    out = []
    for host, m in seen.items():
        mem = m.get("memory_bytes")
        out.append(f"- **{_md(host)}**: {_md(m.get('os') or '—')}, kernel {_md(m.get('kernel') or '—')}, "
                   f"{_md(m.get('cpu_model') or '—')} × {_md(m.get('cpu_count') or '?')}"
                   + (f", {mem / 2**30:.1f} GiB memory" if F.isnum(mem) else ""))
        for t in F.dicts(m.get("targets")):
            bd = dict_at(t, "block_device")
            out.append(f"  - {_code(t.get('path') or t.get('device'))}: {_md(t.get('filesystem') or '—')} on "
                       f"{_md(bd.get('name') or '—')} ({_md(bd.get('model') or bd.get('driver') or '—')}"
                       + (", virtual" if bd.get("virtual") else "")
                       + (f", write cache {_md(bd['write_cache'])}" if bd.get("write_cache") else "") + ")")
    return out


def render_markdown(docs: list[dict[str, Any]]) -> str:
    """The verdict, the runs side by side, each run's key figures and tables, and the machines."""
    docs = [d for d in docs if isinstance(d, dict)]
    out = ["# dbtier report", ""]
    v = verdict(docs)
    out += ["## Verdict", ""]
    lines = [f"- **{TOPIC_LABELS[t]}**: {_md(it['text'])}" for t in TOPICS for it in v.get(t) or []]
    out += lines or ["No verdict: these runs hold no probe, benchmark or plan figures to judge from."]
    out += [""] + [f"> **Note:** {_md(c['text'])}" for c in v.get("caveats") or []]
    if v.get("caveats"):
        out.append("")
    out += ["The rules of thumb, and the evidence a sentence needs (short of it, the sentence says what is missing):",
            "", *[f"- {_md(what)}: {_md(rule)}" for what, rule in thresholds()], ""]
    out += ["## Runs", "",
            *_table(["#", "command", "run", "status", "started", "finished"],
                    [[i + 1, F.kind(d), F.run_name(d, i), d.get("status") or "unknown", d.get("started_at"),
                      d.get("finished_at")] for i, d in enumerate(docs)], numeric=[True, False, False, False, False,
                                                                                     False]), ""]
    flat = [d for d in F.expand(docs) if kinds.kind_of(d) not in ("lab", "report", "unknown")]
    groups: dict[str, list[dict[str, Any]]] = {}      # by label: a kind's runs, a fleet's with the single hosts'
    for d in flat:
        groups.setdefault(kinds.label_of(d), []).append(d)
    sbs = [line for k, g in groups.items() if len(g) >= 2 for line in _side_by_side(k, g)]
    if sbs:
        out += ["## Side by side", ""] + sbs
    for i, d in enumerate(docs):
        out += _run(d, i)
        if d.get("command") == "lab":
            for _, child, _ in F.children(d):
                if child is not None:
                    out += _run(child, 0, "###")
    mach = _machines(F.expand(docs))
    if mach:
        out += ["## Machines", ""] + mach + [""]
    out.append(f"_Written by dbtier {__version__}._")
    return "\n".join(out).rstrip() + "\n"
