"""The dbtier command's own process (the console script and `python -m dbtier`), set up before anything loads:

- the cyclic collector off while the modules load (they make many objects and no garbage: its passes over
  them took about 50 ms of every start), and back on once main has frozen what they made (cli/main.py);
- OpenBLAS without its thread pool (OPENBLAS_NUM_THREADS=1 unless set): dbtier does no linear algebra, and
  the pool's thread, started as numpy loads, spins about 0.1 s of CPU waiting for work, a core's worth of
  the start on a small machine.

A caller that imports dbtier.cli.main and calls main itself keeps its process as it is."""

from __future__ import annotations

import gc
import os

OWN_PROCESS = False         # set when this process is the dbtier command's own (it ends with the command)


def main() -> int:
    global OWN_PROCESS
    OWN_PROCESS = True
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.disable()
    from dbtier.cli.main import main as run
    return run()
