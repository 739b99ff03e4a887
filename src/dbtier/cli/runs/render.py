"""Terminal tables of `dbtier runs`: plain fixed-width text (rich lays out 10,000 rows in seconds, this in
milliseconds), names shown as written with control characters made visible. (The values as JSON:
dbtier.runsdb.calls.jsonable.)"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import os
import textwrap
from typing import TYPE_CHECKING, AbstractSet, Any, Sequence

from dbtier.report.figures import core as F

if TYPE_CHECKING:
    from rich.console import Console

_MAX_CELL = 60


def clean(x: Any) -> str:
    """A cell as one line of printable text: a name with an escape sequence cannot drive the terminal."""
    s = "" if x is None else str(x)
    return "".join(c if c.isprintable() else "?" for c in s)


def when(t: Any) -> str:
    return t.strftime("%Y-%m-%d %H:%M") if isinstance(t, _dt.datetime) else ("" if t is None else clean(t))


def number(x: Any, digits: int | None = None) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float, decimal.Decimal)):
        return clean(x)
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    return F.fmt(x, digits) if digits is not None else F.fmt_auto(x)


def cell(x: Any) -> str:
    if isinstance(x, _dt.datetime):
        return when(x)
    if isinstance(x, (int, float, decimal.Decimal)) and not isinstance(x, bool):
        return number(x)
    return clean(x)


def terminal_width(con: Console) -> int | None:
    """The width to fold a table to: the terminal's (or COLUMNS'); None when the output goes to a pipe or a
    file, where whole lines serve grep better."""
    return con.width if con.is_terminal or os.environ.get("COLUMNS") else None


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: AbstractSet[int] = frozenset(),
          max_cell: int = _MAX_CELL, width: int | None = None, fold: AbstractSet[int] = frozenset()) -> str:
    """Columns padded to their widest cell (cut at `max_cell` with '…'); `right` columns right-aligned.
    Wider than `width` (None: never folded): the `fold` columns leave the table for an indented line under
    each row ("header value · header value"), uncut and wrapped to the width."""
    def cut(s: str) -> str:
        return s if len(s) <= max_cell else s[:max_cell - 1] + "…"

    def widths_of(cols: Sequence[int], body: Sequence[Sequence[str]], heads: Sequence[str]) -> list[int]:
        return [max([len(heads[i])] + [len(r[i]) for r in body]) for i in cols]
    everything = list(range(len(headers)))
    heads = [cut(h) for h in headers]
    full = [[cut(c) for c in r] for r in rows]
    folded = width is not None and bool(fold) and \
        sum(widths_of(everything, full, heads)) + 2 * (len(headers) - 1) > width
    keep = [i for i in everything if not (folded and i in fold)]
    widths = widths_of(keep, full, heads)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, c, w in zip(keep, cells, widths)).rstrip()
    out = [line([heads[i] for i in keep]), line(["-" * w for w in widths])]
    for r, raw in zip(full, rows):
        out.append(line([r[i] for i in keep]))
        if folded:
            extra = " · ".join(f"{headers[i]} {raw[i]}" for i in everything if i in fold and raw[i])
            if extra:
                out += textwrap.wrap(extra, width=max(width or 0, 20), initial_indent="    ",
                                     subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(out) + "\n"


def spread_text(p: dict[str, Any], digits: int) -> str:
    return F.spread_text({k: p.get(k) for k in ("median", "min", "max", "n")}, digits)
