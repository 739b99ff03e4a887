"""A helper thread's scheduling priority lowered, so that the thread a run waits on gets a core of its own.

A streamed replay runs more threads than a small machine has cores: the cache replay, on which the run
waits from its first chunk to its last, beside the working-set count and the queueing models, which only
have to keep up. The kernel's scheduler shares a core evenly between runnable threads; a helper whose nice
value is raised yields to the replay when both want the same core: on 2 cores the large-footprint replay
is quicker with its helpers lowered (bench/simulate_scale.py --sections footprint). Not the reader: the
replay waits on it too (lowered, it starves while the helpers take their first chunks and the replay idles).
Linux only (there a thread's nice value is its own); elsewhere, or where refused, nothing changes. Only ever
raised: an unprivileged process cannot lower it again, so it is set on threads that end with the run, never on
the main thread (a child process would inherit it).
"""

from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICE = 10


def lower_priority(step: int = BACKGROUND_NICE) -> bool:
    """Raise the calling thread's nice value by `step` (at most 19); False where not done."""
    if not sys.platform.startswith("linux") or threading.current_thread() is threading.main_thread():
        return False
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + step))
    except (OSError, AttributeError):
        return False
    return True
