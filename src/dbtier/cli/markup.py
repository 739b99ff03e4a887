"""Names from inputs shown literally on the terminal.

rich reads `[...]` in printed strings, table cells, titles, progress descriptions and status lines
as markup: a database called `[red]` would vanish and one called `[/x]` raises MarkupError. So data
goes into markup strings through `esc()`, and into table cells as `lit()` Text (exact, no markup).
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.text import Text


def esc(x: Any) -> str:
    """`x` as text for a markup string (f"[dim]{esc(path)}[/dim]"): shown as written."""
    return escape("" if x is None else str(x))


def lit(x: Any) -> Text:
    """`x` as a table cell that rich never reads as markup."""
    return Text("" if x is None else str(x))
