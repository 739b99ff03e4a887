"""`dbtier history`: the group and its actions (command.py), import (imports.py), fetch from Prometheus
(fetch.py) and their terminal output (render.py). They may import cli/'s shared modules and history/,
model/, results/, report/ and core/, never another command's package (advise imports imports.py)."""
