"""The terminal view of a `plan size --cloud` document: each design's volume sets (one line per role and
set), the monthly price, what binds, the burst replay's outcome and what the data could not say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from dbtier.cli.markup import esc, lit
from dbtier.cli.plan.render import plain_table, table_fits
from dbtier.core.units import duration_text
from dbtier.model.cloud.sizing import group_volumes
from dbtier.model.plan.requirement import LABELS, Requirement
from dbtier.model.plan.plandoc import number_text as _n
from dbtier.model.plan.plandoc import usd_text as _usd


def _dur(s: Any) -> str:
    return "?" if s is None else duration_text(s)


def throughput_text(v: dict[str, Any]) -> str:
    key = next((k for k in v if k.startswith("throughput_") and k != "throughput_unit"), None)
    return f"{_n(v[key])} {v.get('throughput_unit')}" if key else "—"


def cloud(con: Console, req: Requirement, doc: dict, run_dir: Path) -> None:
    """`plan size --cloud`: each design's volume sets, provisioned settings and monthly price."""
    parts = [f"{LABELS[k]} {_n(getattr(req, k))}" for k in req.given()]
    con.print(esc(f"requirement: {', '.join(parts)}; headroom {req.headroom:.0%}; from {req.source}"))
    roles = doc.get("roles")
    if roles:
        for role, r in (roles.get("requirements") or {}).items():
            figs = ", ".join(f"{LABELS[k]} {_n(r.get(k))}" for k in ("read_iops", "write_iops", "read_mbps",
                                                                      "write_mbps", "capacity_gb") if r.get(k))
            con.print(esc(f"  {role} ({', '.join(roles['file_types'].get(role, []))}): {figs or 'its type minimum'}"),
                      soft_wrap=False)
        for k in ("note",):
            if roles.get(k):
                con.print(f"[dim]{esc(roles[k])}[/dim]", soft_wrap=False)
    first = doc["candidates"][0]["cloud"]
    on = {c["cloud"].get("instance") for c in doc["candidates"]}
    where = (f" on {first['instance']}" if first.get("instance") else " (no instance cap given)") if len(on) == 1 \
        else " (each on the instance named)"
    title = f"{first['provider']} designs{where}, cheapest first"
    t = _designs_table(title, doc, on, sized_by=True)
    if not table_fits(con, t):
        # a narrow terminal: what sized each design goes under the table, a line each, not into a column
        # folded a word a line
        con.print(_designs_table(title, doc, on, sized_by=False))
        for i, c in enumerate(doc["candidates"], 1):
            for role, why in _sized_by(c["cloud"]):
                con.print(esc(f"#{i}{f' {role}' if role else ''} sized by {why}"), style="dim")
    else:
        con.print(t)
    _after_table(con, doc, roles, run_dir)


def _sized_by(cl: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, what sized it) of a design: the whole design's, or each volume set's and the caps'."""
    groups = group_volumes(cl["volumes"])
    if len(groups) == 1:
        return [("", cl["binding"])] if cl.get("binding") else []
    out = [(str(s.get("role") or ""), str(s["binding"])) for s in cl.get("sets") or [] if s.get("binding")]
    cap = (cl.get("caps") or {}).get("binding")
    return out + ([("total", str(cap))] if cap else [])


def _designs_table(title: str, doc: dict, on: set, sized_by: bool) -> Any:
    cols = ["#", "role", "volumes", "GiB each", "IOPS each", "throughput each", "$ a month"]
    t = plain_table(title, cols + (["sized by"] if sized_by else []), left=3)
    for k, col in enumerate(t.columns):
        if k in (2, 5):     # volumes and throughput fold at spaces; the figures never do, nor 'sized by'
            col.no_wrap = False
            col.overflow = "fold"
            col.min_width = max(len(w) for w in cols[k].split())
        if k == 7:
            col.justify = "left"
    for i, c in enumerate(doc["candidates"], 1):
        cl = c["cloud"]
        copies = f" x {cl['copies']} zones" if cl.get("copies", 1) > 1 else ""
        sets = cl.get("sets") or []
        groups = group_volumes(cl["volumes"])
        one = len(groups) == 1
        for j, (n, v) in enumerate(groups):
            s: dict[str, Any] = next((x for x in sets if x.get("role") == v.get("role")), {}) if len(sets) > 1 else {}
            inst = f" on {cl['instance']}" if len(on) > 1 or v.get("type") == "instance-store" else ""
            price, why = (cl["monthly_usd"]["total"], cl["binding"]) if one else (s.get("monthly_usd"), s.get("binding"))
            row: list[str | Text] = [str(i) if j == 0 else "", lit(v.get("role") or "all"), lit(f"{n} x {v['type']}{inst}{copies}"),
                   _n(v.get("size_gib")), _n(v.get("iops")), throughput_text(v), _usd(price) if (one or s) else ""]
            t.add_row(*row, *([lit(why or "") if (one or s) else ""] if sized_by else []), end_section=one)
        if not one:
            t.add_row("", "", lit("total"), "", "", "", _usd(cl["monthly_usd"]["total"]),
                      *([lit((cl.get("caps") or {}).get("binding") or "")] if sized_by else []), end_section=True)
    return t


def _after_table(con: Console, doc: dict, roles: Any, run_dir: Path) -> None:
    if roles and roles.get("no_capacity"):
        con.print(f"[yellow]{esc(', '.join(roles['no_capacity']))}: no capacity given, sized at the type's smallest "
                  "volume (give one: --roles ROLE=TYPE:GB)[/yellow]", soft_wrap=False)
    for i, c in enumerate(doc["candidates"], 1):
        cl = c["cloud"]
        b = cl.get("burst") or {}
        if b.get("throttled_intervals") is not None:
            state = (f"runs dry after {_dur(b.get('dry_after_s'))}, {b['throttled_intervals']} interval(s) short by up "
                     f"to {_n(b.get('worst_shortfall'))} a second" if b["throttled_intervals"] else
                     f"lowest balance {_n(b.get('min_balance'))} of {_n(b.get('capacity'))}")
            con.print(esc(f"#{i} {b.get('bucket')}: {state}") + (f" [dim]({esc(b['assumption'])})[/dim]"
                                                                    if b.get("assumption") else ""), soft_wrap=False)
    said: dict[str, list[str]] = {}
    for i, c in enumerate(doc["candidates"], 1):
        for note in c["cloud"].get("notes") or []:
            said.setdefault(note, []).append(f"#{i}")
    for note, which in said.items():
        con.print(f"[yellow]{', '.join(which)}: {esc(note)}[/yellow]", soft_wrap=False)
    if doc.get("burst_checked") is False and doc.get("burst_note") and \
            not any(n.startswith("burst credits not checked") for n in said):
        con.print(f"[yellow]{esc(doc['burst_note'])}[/yellow]", soft_wrap=False)
    for m in doc.get("cloud_missed") or []:
        con.print(f"[dim]{esc(m['type'])}: {esc(m['reason'])}[/dim]", soft_wrap=False)
    for note in doc.get("cloud_notes") or []:
        con.print(f"[dim]{esc(note)}[/dim]", soft_wrap=False)
    con.print(f"[dim]prices and limits as of {esc(', '.join(doc['limits_as_of']['volumes_and_instances']))}; "
              f"Run: {esc(run_dir)}[/dim]", soft_wrap=False)
