"""`dbtier advise`: from a database's own history to where it should live and what each option costs.

options.py turns the planners' answers (model/plan/sizing.py on-prem, model/cloud/sizing.py per provider) into one
row each on one basis, the cost over the service life, and picks the cheapest that meets the requirement;
answer.py words the answer a DBA pastes into a ticket; html.py draws it at the top of report.html; plan.py
runs the planners. call.py is the advice as a library call (AdviseRequest and import runs' documents in, a
typed, immutable Advise out): it sums the history (dbtier.history.calls) and runs plan.py. The command
(cli/advise.py) imports or fetches the history into its run directory, calls, stores and renders.

May import: dbtier.core, dbtier.model, dbtier.history (call.py), dbtier.results; never measure/, report/ or
cli/.
"""
