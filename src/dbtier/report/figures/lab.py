"""A lab's headline figures (its steps' counts, then every step run's figures prefixed by the step), its
steps table and how it was run: the `lab` kind's figures and terminal faces (dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.report.figures import core
from dbtier.report.figures.core import Figure, Table, Terminal, children


def figures(doc: dict[str, Any]) -> list[Figure]:
    steps = children(doc)
    statuses = [str(s.get("status")) for s, _, _ in steps]
    out = [Figure("steps_ok", "steps ok", statuses.count("ok"), "", 0, "higher"),
           Figure("steps_failed", "steps failed", statuses.count("failed"), "", 0, "lower")]
    for s, child, _ in steps:
        if child is None:
            continue
        name = str(s.get("name"))
        for f in core.figures(child):
            out.append(Figure(f"{name}/{f.key}", f"{name}: {f.label}", f.value, f.unit, f.digits, f.better,
                              name + (f" · {f.group}" if f.group else ""), f.detail, f.spread))
    return out


def tables(doc: dict[str, Any]) -> list[Table]:
    out: list[Table] = []
    rows = [[s.get("name"), s.get("status"), s.get("seconds"), s.get("run_dir"),
             s.get("error") or err] for s, _, err in children(doc)]
    if rows:
        out.append(Table("Steps", ["step", "status", "seconds", "run", "error"], rows, (0, 0, 0, 0, 0)))
    return out


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    p = dict_at(doc, "params")
    out: list[tuple[str, str]] = []
    if p.get("profile"):
        out.append(("profile", str(p["profile"])))
    if isinstance(p.get("dirs"), list):
        out.append(("directories", ", ".join(map(str, p["dirs"]))))
    return out


TERMINAL = Terminal(tables, method)
