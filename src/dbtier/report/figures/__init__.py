"""Each kind's headline figures, tables and method lines (what `dbtier show`, `compare`, the Markdown report,
the side-by-side tables, the verdict, the runs index and the exported metrics read): documents in, plain
values out. core.py the shared readers (Figure, Table, a sweep's view, a probe's knee ...) and the lookup of a
kind's figures; one module per kind for its own (probe, oltp, dss, backup, plan, simulate, mrc, lab, advise,
generic: any other kind's top-level numbers); tables.py and method.py the lookups of the rest.

May import dbtier.results, dbtier.model and dbtier.core, and its own modules; never sections/, verdict/,
svg/ or the page.
"""
