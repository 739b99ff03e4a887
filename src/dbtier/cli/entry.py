"""The dbtier command's own process (the console script and `python -m dbtier`), set up before anything loads:

- the cyclic collector off while the modules load (they make many objects and no garbage: its passes over
  them took about 50 ms of every start), and back on once main has frozen what they made (cli/main.py);
- OpenBLAS without its thread pool (OPENBLAS_NUM_THREADS=1 unless set): dbtier does no linear algebra, and
  the pool's thread, started as numpy loads, spins about 0.1 s of CPU waiting for work, a core's worth of
  the start on a small machine.

A caller that imports dbtier.cli.main and calls main itself keeps its process as it is."""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Iterator

OWN_PROCESS = False         # set when this process is the dbtier command's own (it ends with the command)


def main() -> int:
    global OWN_PROCESS
    OWN_PROCESS = True
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.disable()
    from dbtier.cli.main import main as run
    return run()


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    """No cyclic collection inside (a replay: numba's kernel loading made the collector hold the GIL about
    80 ms of its start while the reader and the replay waited). In dbtier's own process, about to end, what
    was made inside is then frozen, not walked by a last pass (35 ms); a caller's process collects as before."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if OWN_PROCESS:
            gc.freeze()
        if was:
            gc.enable()
