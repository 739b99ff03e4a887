"""The dbtier command's own process (the console script and `python -m dbtier`): the cyclic collector is off
while the modules load (they make many objects and no garbage: its passes over them took about 50 ms of
every start), and back on once main has frozen what they made (cli/main.py). A caller that imports
dbtier.cli.main and calls main itself keeps its collector as it is."""

from __future__ import annotations

import gc

OWN_PROCESS = False         # set when this process is the dbtier command's own (it ends with the command)


def main() -> int:
    global OWN_PROCESS
    OWN_PROCESS = True
    gc.disable()
    from dbtier.cli.main import main as run
    return run()
