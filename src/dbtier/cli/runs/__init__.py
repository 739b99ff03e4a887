"""`dbtier runs`: the listing (command.py), sql and trend (verbs.py), check (check.py), the report of
runs (report.py), what they share (common.py) and the plain-text tables (render.py). They may import cli/'s
shared modules and runsdb/, results/, report/ and core/, never another command's package."""
