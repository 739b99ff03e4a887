"""A bench backup run's headline figures (the source's size; each method's MB/s to the directory and to null,
and its limiting side), its throughput table and how its numbers were obtained: the `bench.backup` kind's
figures and terminal faces (dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.report.figures.core import Figure, Table, Terminal, backup_methods, get, isnum


def figures(doc: dict[str, Any]) -> list[Figure]:
    src = get(doc, "source", "database_bytes")
    out = [Figure("engine", "engine", doc.get("engine") or get(doc, "params", "engine")),
           Figure("target", "backup directory", get(doc, "params", "to")),
           Figure("source_mb", "source database", src / 1e6 if isnum(src) else None, "MB", 0)]
    for m in backup_methods(doc):
        name = m["method"]
        out += [Figure(f"{name}.dir_mbps", f"{name} → directory", m["dir_mbps"], "MB/s", 0, "higher", name,
                       spread=m["dir_spread"]),
                Figure(f"{name}.null_mbps", f"{name} → null", m["null_mbps"], "MB/s", 0, "higher", name,
                       spread=m["null_spread"]),
                Figure(f"{name}.limit", f"{name}: limiting side", m["limit"], group=name)]
    return out


def tables(doc: dict[str, Any]) -> list[Table]:
    out: list[Table] = []
    rows = [[m["method"], m["dir_mbps"], m["null_mbps"],
             m["dir_mbps"] / m["null_mbps"] if isnum(m["dir_mbps"]) and isnum(m["null_mbps"]) and m["null_mbps"]
             else None, m["limit"], m["evidence"]] for m in backup_methods(doc)]
    if rows:
        out.append(Table("Backup throughput", ["method", "to directory MB/s", "to null MB/s", "dir / null",
                                               "limiting side", "evidence"], rows, (0, 0, 0, 2, 0, 0)))
    return out


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    p = dict_at(doc, "params")
    out: list[tuple[str, str]] = []
    if p.get("method"):
        out.append(("method", str(p["method"])))
    methods = p.get("methods")
    if isinstance(methods, list):
        out.append(("backups", ", ".join(map(str, methods))))
    return out


TERMINAL = Terminal(tables, method)
