"""What any other kind shows: its top-level numbers (and a `requirement` object's) as figures, no tables and
no method lines (GENERIC_FIGURES and GENERIC_TERMINAL in dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.report.figures.core import Figure, Table, Terminal, isnum


def figures(doc: dict[str, Any]) -> list[Figure]:
    """Top-level numbers (and a `requirement` object's): what any document has to compare."""
    out = []
    for k, v in doc.items():
        if k.startswith("_") or k == "schema_version" or isinstance(v, bool):
            continue
        if isnum(v):
            out.append(Figure(k, k.replace("_", " "), v, "", 2))
    req = doc.get("requirement")
    if isinstance(req, dict):
        out += [Figure(f"requirement.{k}", f"requirement: {k.replace('_', ' ')}", v, "", 1, None, "requirement")
                for k, v in req.items() if isnum(v) and not isinstance(v, bool)]
    return out


def no_tables(doc: dict[str, Any]) -> list[Table]:
    return []


def no_method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return []


TERMINAL = Terminal(no_tables, no_method)
