"""The policies of `simulate mrc`: each one's replay kernel, its empty state, and what the result document
says of it (what it follows and its parameters). Every policy but `s3fifo-2023` and `belady` is checked
against libCacheSim's own engine (the `libcachesim` package, 0.3.5) on generated traces and its
CloudPhysics trace, miss for miss (tests/unit/test_mrc_libcachesim.py).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dbtier.sim.mrc import kernels as K
from dbtier.sim.mrc import lirs, tinylfu
from dbtier.sim.mrc import queues as Q
from dbtier.sim.policy import twoq

POLICIES = ("lru", "fifo", "clock", "s3fifo", "s3fifo-2023", "sieve", "twoq", "slru", "lfu", "arc", "lirs",
            "wtinylfu", "belady")

LIBCACHESIM = "libCacheSim (libcachesim 0.3.5)"

# what each policy follows, and its parameters (libCacheSim's defaults), for the document
ABOUT: dict[str, dict[str, Any]] = {
    "lru": {"follows": f"{LIBCACHESIM} LRU.c"},
    "fifo": {"follows": f"{LIBCACHESIM} FIFO.c"},
    "clock": {"follows": f"{LIBCACHESIM} Clock.c", "params": {"init_freq": 0, "n_bit_counter": 1}},
    "s3fifo": {"follows": f"{LIBCACHESIM} S3FIFO.c, its rule since December 2024 (before the cache first "
                          "evicts, a miss that finds the small queue full goes to main)",
               "params": {"small_size_ratio": 0.1, "ghost_size_ratio": 0.9, "move_to_main_threshold": 2}},
    "s3fifo-2023": {"follows": "the original S3-FIFO (SOSP '23), libCacheSim's S3FIFOv0.c, the figures its "
                               "test suite asserts",
                    "params": {"small_size_ratio": 0.1, "ghost_size_ratio": 0.9, "move_to_main_threshold": 2}},
    "sieve": {"follows": f"{LIBCACHESIM} Sieve.c"},
    "twoq": {"follows": f"{LIBCACHESIM} TwoQ.c (Ain FIFO, Aout ghost FIFO, Am LRU)",
             "params": {"a_in_size_ratio": twoq.AIN_RATIO, "a_out_size_ratio": twoq.AOUT_RATIO}},
    "slru": {"follows": f"{LIBCACHESIM} SLRU.c (S4LRU)",
             "params": {"n_seg": Q.SLRU_SEGMENTS, "seg_size_ratio": [1 / Q.SLRU_SEGMENTS] * Q.SLRU_SEGMENTS}},
    "lfu": {"follows": f"{LIBCACHESIM} LFU.c (ties: the first to reach the count goes first)"},
    "arc": {"follows": f"{LIBCACHESIM} ARC.c"},
    "lirs": {"follows": f"{LIBCACHESIM} LIRS.c", "params": {"hirs_ratio": lirs.HIR_RATIO}},
    "wtinylfu": {"follows": f"{LIBCACHESIM} WTinyLFU.c (its counting Bloom filter, minimalIncrementCBF)",
                 "params": {"main_cache": "SLRU", "main_seg_size": "1:4", "window_size": tinylfu.WINDOW_RATIO,
                            "cbf_error": tinylfu.CBF_ERROR}},
    "belady": {"follows": "MIN: the object asked for again farthest ahead goes (never again first)"},
}

REPLAY: dict[str, Callable] = {
    "lru": K.lru_replay, "fifo": K.fifo_replay, "clock": K.clock_replay, "s3fifo": K.s3fifo_replay,
    "s3fifo-2023": K.s3fifo2023_replay, "arc": K.arc_replay, "belady": K.belady_replay,
    "sieve": Q.sieve_replay, "twoq": Q.twoq_replay, "slru": Q.slru_replay, "lfu": Q.lfu_replay,
    "lirs": lirs.lirs_replay, "wtinylfu": tinylfu.wtinylfu_replay,
}

NEEDS_IDS = ("wtinylfu",)      # hashes the objects' own ids (its filter), not their codes


def new_state(policy: str, n_objects: int, cap_bytes: int, ids: np.ndarray | None = None,
              memo: dict | None = None) -> tuple[np.ndarray, tuple]:
    """(sc, arrays) of an empty `policy` cache of `cap_bytes` over `n_objects` codes (`ids`: each code's id;
    `memo`: what a policy may keep from one size to the next of the same trace)."""
    if policy in ("sieve", "twoq", "slru", "lfu"):
        return Q.new_state(policy, n_objects)
    if policy == "lirs":
        return lirs.new_state(n_objects)
    if policy == "wtinylfu":
        assert ids is not None and len(ids) == n_objects
        return tinylfu.new_state(ids, cap_bytes, memo)
    return K.new_state(policy, n_objects)
