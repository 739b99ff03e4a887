"""The report section of a `dbtier advise` run: its options side by side, as dbtier.advise.html draws them (the
`advise` kind's section face, dbtier.results.kinds). The answer that opens the report is the page's."""

from __future__ import annotations

from typing import Any

from dbtier.report.base import module_section


def section(doc: dict[str, Any], i: int) -> str:
    from dbtier.advise import html as advise_html
    return module_section(doc, i, "advise", advise_html.section_html(doc))
