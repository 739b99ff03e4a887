"""Each kind's section of the HTML report, one module per kind (probe with fleet.py for `probe --hosts`,
oltp, dss, backup, plan with plan_cloud.py and plan_life.py, simulate with mrc.py, history, lab, advise): a
document in, HTML out.

May import report/base.py, report/figures/, report/svg/, and dbtier.results, dbtier.model, dbtier.core,
dbtier.advise; never report/verdict/ or the page (html.py, markdown.py, compare.py).
"""
