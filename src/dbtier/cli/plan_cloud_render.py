"""The terminal view of a `plan size --cloud` document: each design's volume sets (one line per role and
set), the monthly price, what binds, the burst replay's outcome and what the data could not say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from dbtier.cli.markup import esc, lit
from dbtier.cli.plan_render import plain_table
from dbtier.model.cloud_plan import group_volumes
from dbtier.model.planner import LABELS, Requirement
from dbtier.model.plandoc import number_text as _n
from dbtier.model.plandoc import usd_text as _usd


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
                      soft_wrap=True)
        for k in ("note",):
            if roles.get(k):
                con.print(f"[dim]{esc(roles[k])}[/dim]", soft_wrap=True)
    first = doc["candidates"][0]["cloud"]
    on = {c["cloud"].get("instance") for c in doc["candidates"]}
    where = (f" on {first['instance']}" if first.get("instance") else " (no instance cap given)") if len(on) == 1 \
        else " (each on the instance named)"
    t = plain_table(f"{first['provider']} designs{where}, cheapest first", ["#", "role", "volumes", "GiB each",
                                                                      "IOPS each", "throughput each", "$ a month",
                                                                      "sized by"], left=3)
    t.columns[2].no_wrap = False
    t.columns[7].no_wrap = False
    for i, c in enumerate(doc["candidates"], 1):
        cl = c["cloud"]
        copies = f" x {cl['copies']} zones" if cl.get("copies", 1) > 1 else ""
        sets = cl.get("sets") or []
        groups = group_volumes(cl["volumes"])
        one = len(groups) == 1
        for j, (n, v) in enumerate(groups):
            s = next((x for x in sets if x.get("role") == v.get("role")), {}) if len(sets) > 1 else {}
            inst = f" on {cl['instance']}" if len(on) > 1 or v.get("type") == "instance-store" else ""
            price, why = (cl["monthly_usd"]["total"], cl["binding"]) if one else (s.get("monthly_usd"), s.get("binding"))
            t.add_row(str(i) if j == 0 else "", lit(v.get("role") or "all"), lit(f"{n} x {v['type']}{inst}{copies}"),
                      _n(v.get("size_gib")), _n(v.get("iops")), throughput_text(v),
                      _usd(price) if (one or s) else "", lit(why or "") if (one or s) else "", end_section=one)
        if not one:
            t.add_row("", "", lit("total"), "", "", "", _usd(cl["monthly_usd"]["total"]),
                      lit((cl.get("caps") or {}).get("binding") or ""), end_section=True)
    con.print(t)
    if roles and roles.get("no_capacity"):
        con.print(f"[yellow]{esc(', '.join(roles['no_capacity']))}: no capacity given, sized at the type's smallest "
                  "volume (give one: --roles ROLE=TYPE:GB)[/yellow]", soft_wrap=True)
    for i, c in enumerate(doc["candidates"], 1):
        cl = c["cloud"]
        b = cl.get("burst") or {}
        if b.get("throttled_intervals") is not None:
            state = (f"runs dry after {_n(b.get('dry_after_s'))} s, {b['throttled_intervals']} interval(s) short by up "
                     f"to {_n(b.get('worst_shortfall'))} a second" if b["throttled_intervals"] else
                     f"lowest balance {_n(b.get('min_balance'))} of {_n(b.get('capacity'))}")
            con.print(esc(f"#{i} {b.get('bucket')}: {state}") + (f" [dim]({esc(b['assumption'])})[/dim]"
                                                                    if b.get("assumption") else ""), soft_wrap=True)
    said: dict[str, list[str]] = {}
    for i, c in enumerate(doc["candidates"], 1):
        for note in c["cloud"].get("notes") or []:
            said.setdefault(note, []).append(f"#{i}")
    for note, which in said.items():
        con.print(f"[yellow]{', '.join(which)}: {esc(note)}[/yellow]", soft_wrap=True)
    if doc.get("burst_checked") is False and doc.get("burst_note") and \
            not any(n.startswith("burst credits not checked") for n in said):
        con.print(f"[yellow]{esc(doc['burst_note'])}[/yellow]", soft_wrap=True)
    for m in doc.get("cloud_missed") or []:
        con.print(f"[dim]{esc(m['type'])}: {esc(m['reason'])}[/dim]", soft_wrap=True)
    for note in doc.get("cloud_notes") or []:
        con.print(f"[dim]{esc(note)}[/dim]", soft_wrap=True)
    con.print(f"[dim]prices and limits as of {esc(', '.join(doc['limits_as_of']['volumes_and_instances']))}; "
              f"Run: {esc(run_dir)}[/dim]", soft_wrap=True)
