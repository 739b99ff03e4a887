"""Terminal tables that fit the terminal without cutting a figure.

rich shrinks a table wider than the terminal by cutting cells ("18,3…", "clie…"). Here a figure column is never
wrapped nor cut: it is as wide as its widest figure, and its header folds onto more lines to that width. A text
column may fold its words down to `min_width`. When the columns still do not fit, the table is split: the first
`key` columns, then as many of the rest as fit, again for what is left (titled "(continued)"), so every figure is
shown whole at any width.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Sequence, TypeAlias

from rich import box as rbox
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

# A text column folds its words onto more lines down to its min_width, never below its longest word up to
# WORD_MAX columns (a longer word, a path say, folds where it must).
TEXT_MIN = 14
WORD_MAX = 24

# A cell: rich Text, or a string of rich markup.
Cell: TypeAlias = Text | str


@dataclass(frozen=True)
class Col:
    header: str
    figure: bool = False          # a figure: right-aligned, never folded nor cut
    min_width: int = TEXT_MIN     # a text column's narrowest width


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain


def _widest(cells: Sequence[Cell]) -> int:
    return max((cell_len(line) for c in cells for line in _plain(c).split("\n")), default=0)


def _header(text: str, width: int) -> str:
    """A figure column's header folded onto lines of at most `width` (a word longer stands alone)."""
    return "\n".join(textwrap.wrap(text, width=max(width, 1), break_long_words=False)) or text


def _widths(cols: Sequence[Col], rows: Sequence[Sequence[Cell]]) -> tuple[list[int], list[int]]:
    """Each column's narrowest width (a figure's widest cell; a text column's longest word up to its
    `min_width`) and its natural width (its widest cell or header line)."""
    least: list[int] = []
    natural: list[int] = []
    for i, c in enumerate(cols):
        cells = [r[i] for r in rows if i < len(r)]
        words = max((cell_len(w) for w in c.header.split()), default=0)
        widest = _widest(cells)
        if c.figure:
            least.append(max(widest, words))
            natural.append(max(least[-1], cell_len(c.header)))
        else:
            longest_word = max((cell_len(w) for x in cells for w in _plain(x).split()), default=0)
            least.append(max(words, min(longest_word, WORD_MAX), min(c.min_width, widest)))
            natural.append(max(least[-1], widest, cell_len(c.header)))
    return least, natural


def _share(least: list[int], natural: list[int], room: int) -> list[int]:
    """Widths from `least` up towards `natural`, a column at a time to the one furthest from its natural width,
    while `room` lasts."""
    w = list(least)
    room -= sum(w)
    while room > 0:
        i = max(range(len(w)), key=lambda k: natural[k] - w[k])
        if natural[i] <= w[i]:
            break
        w[i] += 1
        room -= 1
    return w


def _extra(n: int, edge: bool) -> int:
    """Columns a table's box and padding take beyond its cells: one space either side of each cell and a rule
    between columns; boxed, a rule at both edges too (3n + 1), else no edge padding either (3n - 3)."""
    return 3 * n + 1 if edge else 3 * (n - 1)


def fitted(width: int, title: str, cols: Sequence[Col], rows: Sequence[Sequence[Cell]], key: int = 1,
           caption: str | None = None, boxed: bool = True) -> list[Table]:
    """The table of `cols` and `rows` as one or more rich tables no wider than `width` (see the module doc).
    Cells are Text or markup strings; titles are shown as given (escape them first)."""
    need, natural = _widths(cols, rows)
    groups: list[list[int]] = []
    rest = list(range(key, len(cols)))
    while rest or not groups:
        g = list(range(min(key, len(cols))))
        while rest and (len(g) == key or sum(need[i] for i in g + [rest[0]]) + _extra(len(g) + 1, boxed) <= width):
            g.append(rest.pop(0))
        groups.append(g)
    out: list[Table] = []
    for n, g in enumerate(groups):
        t = Table(title="(continued)" if n else title, title_justify="left",
                  caption=caption if n == len(groups) - 1 else None, caption_justify="left",
                  box=rbox.HEAVY_HEAD if boxed else rbox.SIMPLE_HEAD, pad_edge=boxed, show_edge=boxed)
        widths = _share([need[i] for i in g], [natural[i] for i in g], width - _extra(len(g), boxed))
        for i, w in zip(g, widths):
            c = cols[i]
            if c.figure:
                t.add_column(_header(c.header, w), justify="right", no_wrap=True, width=w)
            else:
                t.add_column(c.header, width=w, overflow="fold")
        for r in rows:
            t.add_row(*(r[i] if i < len(r) else "" for i in g))
        out.append(t)
    return out
