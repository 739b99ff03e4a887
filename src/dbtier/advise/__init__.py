"""`dbtier advise`: from a database's own history to where it should live and what each option costs.

options.py turns the planners' answers (model/plan/sizing.py on-prem, model/cloud/sizing.py per provider) into one
row each on one basis, the cost over the service life, and picks the cheapest that meets the requirement;
answer.py words the answer a DBA pastes into a ticket; html.py draws it at the top of report.html. Pure:
the command (cli/advise.py) reads the history and runs the planners.
"""
