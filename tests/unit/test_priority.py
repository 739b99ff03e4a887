"""core/priority: a helper thread's nice value raised, its own only (Linux: a thread's nice value is per
thread); never the main thread's, which child processes would inherit."""

import os
import sys
import threading

import pytest

from dbtier.core.priority import BACKGROUND_NICE, lower_priority


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_a_helper_yields_and_the_rest_of_the_process_does_not():
    main_before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = {}

    def helper() -> None:
        tid = threading.get_native_id()
        before = os.getpriority(os.PRIO_PROCESS, tid)
        seen["done"] = lower_priority()
        seen["change"] = os.getpriority(os.PRIO_PROCESS, tid) - before
        seen["capped"] = [lower_priority() for _ in range(3)] and os.getpriority(os.PRIO_PROCESS, tid)

    t = threading.Thread(target=helper)
    t.start()
    t.join()
    assert seen["done"] is True
    assert seen["change"] == min(BACKGROUND_NICE, 19 - main_before)
    assert seen["capped"] == 19                      # raised again and again: capped at the weakest
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_before
    assert lower_priority() is False                 # the main thread is left alone
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_before
