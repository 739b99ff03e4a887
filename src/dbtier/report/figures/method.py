"""How a result document's numbers were obtained, as (what, how) lines: the Markdown report's and `dbtier
show`'s method section (each kind's lines in its own module beside this one), with the wording of durations
and repeats the OLTP lines and the HTML report share.
"""

from __future__ import annotations

import math
from typing import Any

from dbtier.report.figures.core import fmt, fmt_auto, isnum, point_spread, spread_text, terminal


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """How a document's numbers were obtained, as (what, how) lines: its kind's (dbtier.results.kinds
    `terminal`)."""
    return terminal(doc).method(doc)


def duration_words(asked: float, digits: int | None = None) -> str:
    """'30 s measured' or, for a fractional --duration, '0.4 s asked for, run as 1 s (pgbench -T takes whole
    seconds; rates divide by the time pgbench measured)'."""
    run = max(1, math.ceil(asked))
    shown = fmt_auto(asked) if digits is None else fmt(asked, digits)
    if run == asked:
        return f"{shown} s measured"
    return (f"{shown} s asked for, run as {run} s (pgbench -T takes whole seconds; rates divide by the "
            "time pgbench measured)")


def repeats_text(rep: Any, points: list[dict[str, Any]]) -> str:
    """The repeats line of an OLTP run: how a point's figures come from its runs, and the widest spread."""
    if not (isnum(rep) and rep > 1):
        return "one run per point (n=1: no spread measured; --repeat runs each point several times)"
    spreads = [(sp, q) for q in points if (sp := point_spread(q)) is not None and isnum(sp.get("spread_pct"))]
    text = (f"{fmt(rep)} runs per point; TPS, TPM, NOPM and latency percentiles are the medians of the runs (an "
            "even count: the mean of the two middle values), CPU, devices and the bottleneck those of the run "
            "in the middle by TPS (the lower of the two middle ones for an even count)")
    if spreads:
        sp, q = max(spreads, key=lambda x: x[0]["spread_pct"])
        text += (f"; the widest TPS spread is {fmt(sp['spread_pct'], 1)}% of the median at {fmt(q.get('clients'))} "
                 f"clients ({spread_text(sp, 1)})")
    return text
