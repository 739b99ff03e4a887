"""How the simulator's hot loops are compiled: `@hot`.

nogil, since sweeps replay their sizes on threads; cache, so a machine compiles each kernel once; and
without numba's runtime (NRT). With it, every array or view of one that a kernel hands to an inlined
helper (the list and policy rules of sim/mrc/kernels) costs an atomic reference count on the hot path:
the block cache's LRU replayed 15 M requests/s with it and 39 M without (20 M Zipf requests), same answers.
A `@hot` kernel allocates nothing (its arrays come from the caller); one that did would not compile.
"""

from __future__ import annotations

import numba

hot = numba.njit(nogil=True, cache=True, _nrt=False)
