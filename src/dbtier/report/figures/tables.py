"""The key tables of a result document beyond its figures (points, queries, methods, candidates, steps):
its kind's (dbtier.results.kinds `terminal`: each kind's in its own module beside this one), read by the
Markdown report, `dbtier show` and the tests, as core.py's figures are.
"""

from __future__ import annotations

from typing import Any

from dbtier.report.figures.core import Table, terminal


def tables(doc: dict[str, Any]) -> list[Table]:
    """The key tables of one document beyond its figures (points, queries, methods, candidates, steps)."""
    return terminal(doc).tables(doc)
