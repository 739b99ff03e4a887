"""report/base.py: the one escaping function and the table, key-value and figure builders every section uses."""

from __future__ import annotations

import ast
from pathlib import Path

from dbtier.report.base import esc, figure_frame, html_table, kv_table, num

REPORT = Path(__file__).resolve().parents[2] / "src" / "dbtier" / "report"


def test_esc_escapes_markup_and_quotes_and_shows_none_as_nothing():
    assert esc('<b a="1">&\'') == "&lt;b a=&quot;1&quot;&gt;&amp;&#x27;"
    assert esc(None) == "" and esc(3.5) == "3.5"


def test_num_groups_thousands_and_marks_what_is_not_a_number():
    assert num(1234567.891, 1) == "1,234,567.9"
    assert num(None) == num(float("nan")) == num(True) == "—"


def test_html_table_right_aligns_the_number_columns_either_way():
    by_index = html_table(["a", "b", "c"], [["x", "1", "2"]], num_cols=(1, 2), cls="t")
    from_one = html_table(["a", "b", "c"], [["x", "1", "2"]], num_from=1, cls="t")
    assert by_index == from_one == ('<table class="t"><thead><tr><th>a</th><th class=num>b</th><th class=num>c</th>'
                                    "</tr></thead><tbody><tr><td>x</td><td class=num>1</td><td class=num>2</td></tr>"
                                    "</tbody></table>")


def test_kv_table_escapes_keys_not_values_and_figure_frame_drops_an_empty_caption():
    assert kv_table([("<k>", "<b>v</b>")]) == ('<table class="kv"><tbody><tr><th>&lt;k&gt;</th><td><b>v</b></td></tr>'
                                              "</tbody></table>")
    assert figure_frame("<svg/>") == "<figure><svg/></figure>"
    assert figure_frame("<svg/>", "c") == "<figure><svg/><figcaption>c</figcaption></figure>"


def test_only_base_escapes_html():
    """Every report module escapes through base.esc: no second definition, no html.escape elsewhere."""
    others = []
    for path in sorted(REPORT.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "html" and path.name != "base.py":
                others.append(path.name)
            if isinstance(node, ast.FunctionDef) and node.name in ("_e", "_esc", "esc") and path.name != "base.py":
                others.append(f"{path.name}:{node.name}")
    assert others == []


def test_no_report_module_is_imported_only_if_present():
    """The sections import their modules outright: no ImportError fallback for a module that may not exist."""
    for path in sorted(REPORT.glob("*.py")):
        text = path.read_text()
        assert "except ImportError" not in text and "import_module" not in text, path.name


def test_html_table_wide_scrolls_sideways_and_numbers_align_right():
    from dbtier.report.base import html_table
    t = html_table(["", "IOPS"], [["read", "5"]], num_from=1, wide=True)
    assert t == ('<div class="wide"><table><thead><tr><th></th><th class=num>IOPS</th></tr></thead>'
                 '<tbody><tr><td>read</td><td class=num>5</td></tr></tbody></table></div>')
    assert html_table(["a"], []) == "<table><thead><tr><th>a</th></tr></thead><tbody></tbody></table>"
