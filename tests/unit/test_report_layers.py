"""report/'s packages import what their docstrings say they may: figures/ plain values from documents, verdict/
on them, svg/ charts on base.py's escaping, sections/ on all three but the verdict; none of them the page.
Read from the source (ast), so lazy imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "src" / "dbtier" / "report"

# package -> the dbtier.report modules and packages it may import (beside itself and below report/)
MAY = {
    "figures": (),
    "verdict": ("dbtier.report.figures",),
    "svg": ("dbtier.report.base",),
    "sections": ("dbtier.report.base", "dbtier.report.figures", "dbtier.report.svg"),
}


def _report_imports(path: Path) -> set[str]:
    out = set()
    for n in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("dbtier.report"):
            out.add(n.module if n.module != "dbtier.report" else f"dbtier.report.{n.names[0].name}")
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names if a.name.startswith("dbtier.report"))
    return out


@pytest.mark.parametrize("package", sorted(MAY))
def test_a_report_package_imports_only_what_it_may(package):
    own = f"dbtier.report.{package}"
    allowed = (own, *MAY[package])
    found = {(p.name, m) for p in sorted((REPORT / package).glob("*.py")) for m in _report_imports(p)
             if not any(m == a or m.startswith(a + ".") for a in allowed)}
    assert not found, f"report/{package}/ imports what its docstring says it may not: {sorted(found)}"
