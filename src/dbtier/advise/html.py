"""The advice in report.html: the answer at the top, then the options side by side on one basis (the total
over the service life; purchase and monthly price as detail), each database's figures and the assumptions."""

from __future__ import annotations

from typing import Any

from dbtier.advise import answer
from dbtier.report.base import esc


def answer_html(doc: dict[str, Any]) -> str:
    """The answer block that opens the report of an advise run."""
    a = doc.get("advice") or {}
    lines = answer.lines(a)
    head, rest = lines[:1], lines[1:]
    body = "".join(f"<p>{esc(x)}</p>" for x in head + [x.strip() for x in rest])
    return f'<section class="verdict"><h2 id="answer">Answer</h2>{body}</section>'


def section_html(doc: dict[str, Any]) -> str:
    a = doc.get("advice") or {}
    rows = []
    for r in answer.rows(a):
        rows.append("<tr>" + "".join(f"<td>{esc(x)}</td>" for x in r) + "</tr>")
    options = (f"<h3>Options, cheapest over {esc(_years(a))} years first (* recommended)</h3>"
               '<table class="data"><thead><tr>'
               + "".join(f"<th>{esc(c)}</th>" for c in answer.COLUMNS) + "</tr></thead><tbody>"
               + "".join(rows) + "</tbody></table>"
               '<p class="reason">Every option on one basis: its total over the service life (on-prem: purchase, '
               "energy and replacements; cloud: the monthly price x 12 x years). Purchase and monthly price are "
               "detail.</p>")
    caveats = "".join(f"<li><b>{esc(o['where'])}</b>: {esc('; '.join(o.get('caveats') or []))}</li>"
                      for o in a.get("options") or [] if o.get("caveats"))
    dbs = a.get("databases") or []
    dtab = ('<h3>Databases</h3><table class="data"><thead><tr><th>database</th><th>instances</th><th>read IOPS</th>'
            "<th>write IOPS</th><th>read MB/s</th><th>write MB/s</th><th>capacity GB</th><th>written TB/day</th>"
            "</tr></thead><tbody>"
            + "".join(f"<tr><td>{esc(d.get('name'))}</td><td>{esc(answer.num(d.get('instances')))}</td>"
                      + "".join(f"<td>{esc(answer.num(d.get(m), 1 if m.endswith('mbps') else 0))}</td>"
                                for m in ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb"))
                      + f"<td>{esc(answer.num(d.get('write_tb_per_day'), 3))}</td></tr>" for d in dbs[:200])
            + "</tbody></table>")
    assumptions = "".join(f"<li>{esc(x)}</li>" for x in a.get("assumptions") or [])
    return (options + (f"<h3>What would break each option</h3><ul>{caveats}</ul>" if caveats else "") + dtab
            + f"<h3>Assumptions</h3><ul>{assumptions}</ul>")


def _years(a: dict[str, Any]) -> str:
    opts = a.get("options") or []
    return f"{opts[0].get('service_years'):g}" if opts else "?"
