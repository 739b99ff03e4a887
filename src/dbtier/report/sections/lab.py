"""The report section of a `dbtier lab` document: its directories, its steps (each linked to its
run's section, which follows) and what it passed between steps.
"""

from __future__ import annotations

from typing import Any

from dbtier.report.figures import core as F
from dbtier.report.base import (
    badge,
    errors_html,
    esc,
    html_table,
    isnum,
    json_details,
    json_value,
    kv_table,
    machine_section,
    num,
    run_head,
)
from dbtier.report.sections.plan import REQ_LABELS
from dbtier.report.figures.labels import SUMMARY_LABELS
from dbtier.core.parts import dict_at

# -- lab -------------------------------------------------------------------------------------------------------

STANDING_NOTE = ("Closest: the catalog devices whose figures are nearest this target's, by the geometric mean "
                 "distance of the ratios (measured / catalog; for a latency catalog / measured), so 1.00 is the "
                 "catalog's figure, above 1 better than it and below 1 worse. Distance 0 would be a perfect match.")


def standing_html(s: dict[str, Any]) -> str:
    """Where one probed target stands against the catalog: a table of the closest devices with the ratio per
    figure, and what the ratios mean."""
    rows_in = [c for c in (s.get("closest") or []) if isinstance(c, dict)]
    keys = [k for k in SUMMARY_LABELS if any(k in (c.get("ratios") or {}) for c in rows_in)]
    rows = [[f"<b>{esc(c.get('device'))}</b><br><span class=\"reason\">{esc(c.get('name'))}</span>",
             esc(c.get("kind")), num(c.get("distance"), 3),
             *(num((c.get("ratios") or {}).get(k), 2) for k in keys)] for c in rows_in]
    head = f"<p><code>{esc(s.get('path'))}</code></p>"
    if not rows:
        return head + '<p class="na">No catalog device shares a measured figure with this target.</p>'
    return (head + html_table(["device", "kind", "distance", *(esc(SUMMARY_LABELS[k][0]) for k in keys)], rows,
                              num_from=2, wide=True)
            + f'<p class="reason">{esc(STANDING_NOTE)}</p>')

def lab_section(doc: dict[str, Any], i: int, anchors: dict[int, int] | None = None) -> str:
    """The lab itself: its directories, a table of its steps (each linked to its run's section, which
    follows), and what it passed between steps. `anchors` maps a step's position to its section's number
    (none: no step is linked)."""
    anchors = anchors or {}
    out = [run_head(doc, i, f"run-{i + 1}"), errors_html(doc)]
    p = dict_at(doc, "params")
    rows: list[tuple[str, str]] = []
    dirs = p.get("dirs")
    if isinstance(dirs, list):
        rows.append(("directories", "<br>".join(f"<code>{esc(d)}</code> {esc(F.device_of(doc, d) or '')}"
                                                for d in dirs) or "—"))
    for key, label in (("fast_dir", "fast tier"), ("slow_dir", "slow tier")):
        if p.get(key):
            rows.append((label, f"<code>{esc(p[key])}</code>"))
    if p.get("profile"):
        rows.append(("profile", esc(p["profile"])))
    if isinstance(p.get("engines"), list) and p["engines"]:
        rows.append(("OLTP engines", esc(", ".join(map(str, p["engines"])))
                     + (' <span class="reason">(each on the same storage; their runs side by side above)</span>'
                        if len(p["engines"]) > 1 else "")))
    if isinstance(p.get("skip"), list) and p["skip"]:
        rows.append(("skipped", esc(", ".join(map(str, p["skip"])))))
    known = {"dirs", "fast_dir", "slow_dir", "profile", "skip", "engines"}
    for k, v in p.items():
        if k in known:
            continue
        if isinstance(v, dict) and v and all(isinstance(x, (str, int, float)) for x in v.values()):
            rows.append((k.replace("_", " "), '<table class="settings"><tbody>' + "".join(
                f"<tr><td><code>{esc(a)}</code></td><td><code>{esc(b)}</code></td></tr>" for a, b in v.items())
                + "</tbody></table>"))
        else:
            rows.append((k.replace("_", " "), json_value(v)))
    out.append("<h3>The lab</h3>" + kv_table(rows))
    srows = []
    for i, (s, _, err) in enumerate(F.children(doc)):
        link = (f'<a href="#run-{anchors[i] + 1}"><code>{esc(s.get("run_dir"))}</code></a>' if i in anchors
                else (f'<code>{esc(s.get("run_dir"))}</code>' if s.get("run_dir") else "—"))
        note = s.get("error") or (f"its result could not be read: {err}" if err else "")
        argv = s.get("argv")
        srows.append([f"<b>{esc(s.get('name'))}</b>", badge(s.get("status")), num(s.get("seconds"), 1), link,
                      esc(note), f'<code class="wrap">{esc(" ".join(map(str, argv)))}</code>'
                      if isinstance(argv, list) else "—"])
    if srows:
        out.append("<h3>Steps</h3>" + '<div class="wide">' + html_table(
            ["step", "status", "seconds", "run", "note", "command"], srows, num_cols=(2,), cls="steps") + "</div>"
            + '<p class="reason">Each step is a dbtier command run in its own run directory under the lab\'s; '
              "each finished step's run follows as its own section, in step order.</p>")
    else:
        out.append('<p class="na">This lab has no steps yet.</p>')
    req = doc.get("requirement")
    if isinstance(req, dict) and req:
        out.append("<h4>Load passed to the plan</h4>" + kv_table((REQ_LABELS.get(k, k.replace("_", " ")),
                                                                  num(v, 1) if isnum(v) else json_value(v))
                                                                 for k, v in req.items()))
    standing = doc.get("standing")
    if isinstance(standing, list) and standing:
        out.append("<h4>Against the catalog</h4>" + "".join(standing_html(s) for s in standing if isinstance(s, dict)))
    out.append(machine_section(doc))
    out.append(json_details(doc))
    return f'<section class="run lab">{"".join(out)}</section>'
