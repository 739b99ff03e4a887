"""The reports: what a person reads of result documents. Reads documents only and never measures; it
writes only the report files, where its caller says (calls.py).

Here the page and its neighbours: html.py (the HTML report: style, verdict, runs, contents, one section per
run), markdown.py (the Markdown report), compare.py (the side by side of runs of one kind), summary.py
(what `dbtier show` prints of a run and what `dbtier compare` sets against each other), runs.py (the report of
runs a query selects, with trends), inputs.py (loading run directories, a lab's step runs attached) and
base.py (the HTML parts every section is built from); calls.py `report`, `show` and `compare` as library
calls returning typed results. Beneath them, by domain:

- figures/  each kind's headline figures, tables and method lines: plain values from documents;
- verdict/  the verdict's sentences and caveats, on those figures;
- sections/ each kind's HTML section;
- svg/      the charts, as self-contained SVG.

Which module draws which kind is dbtier.results.kinds' registry (resolved by dbtier.results.registry).
May import dbtier.results, dbtier.model, dbtier.core and dbtier.advise (its answer's HTML); never cli/.
"""
