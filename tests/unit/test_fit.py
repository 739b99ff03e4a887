"""cli/fit.py: a table wider than the terminal splits into tables that each fit, its first column repeated, and
no figure is cut; the widths are worked out here by hand from the box's rules and padding."""

from __future__ import annotations

from rich.console import Console

from dbtier.cli.fit import Col, fitted


def _render(tables, width: int) -> str:
    con = Console(width=width, record=True, color_system=None)
    for t in tables:
        con.print(t)
    return con.export_text()


COLS = [Col("name", min_width=8), Col("read IOPS", figure=True), Col("write IOPS", figure=True),
        Col("p99 latency µs", figure=True), Col("note", min_width=10)]
ROWS = [["nvme-enterprise", "1,234,567", "234,567", "1,234.5", "a long note that folds at words"],
        ["sas", "310", "290", "12,345.6", "short"]]


def test_one_table_when_it_fits():
    # name 15 + 9 + 10 + 14 + the note's 31: 79 columns of cells, 5 columns take 3 each and the edges 1: 95
    tables = fitted(95, "devices", COLS, ROWS)
    assert len(tables) == 1
    text = _render(tables, 95)
    assert max(len(line) for line in text.splitlines()) <= 95
    assert "a long note that folds at words" in text


def test_split_repeats_the_first_column_and_cuts_no_figure():
    # widths: name 15 (its longest word), read IOPS 9 and write IOPS 7 (their widest figures), p99 8, note 10
    # (its min_width); a table of n columns takes 3n + 1 beyond its cells. At 40: name + read IOPS = 24 + 7
    # = 31, + write IOPS = 31 + 7 + 3 = 41 > 40: a new table; name + write IOPS + p99 = 30 + 10 = 40 fits,
    # + note = 53 does not: a third
    tables = fitted(40, "devices", COLS, ROWS)
    assert [str(t.title) for t in tables] == ["devices", "(continued)", "(continued)"]
    text = _render(tables, 40)
    assert max(len(line) for line in text.splitlines()) <= 40
    assert "…" not in text
    for figure in ("1,234,567", "234,567", "1,234.5", "12,345.6"):
        assert figure in text
    assert text.count("nvme-enterprise") == 3        # the key column in each of the three tables
    # a figure column's header folds onto lines as wide as its widest figure: 'p99 latency µs' over 8
    assert "latency" in text and "p99 latency µs" not in text
