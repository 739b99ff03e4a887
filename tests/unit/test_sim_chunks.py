"""chunks_of: an in-memory trace cut into contiguous views that put the whole trace back together."""

import numpy as np
import pytest

from dbtier.sim.trace.chunks import chunks_of
from dbtier.sim.trace.traces import from_arrays


def test_chunks_cover_the_trace_in_order_without_copies():
    tr = from_arrays([0.0, 1.0, 2.0, 3.0, 4.0], [0, 1, 0, 0, 1], [0, 8192, 16384, 0, 4096], [4096] * 5,
                     volume=[0, 0, 1, 1, 0])
    parts = list(chunks_of(tr, 2))
    assert [len(c) for c in parts] == [2, 2, 1] and [c.first_request for c in parts] == [0, 2, 4]
    assert np.concatenate([c.offset_bytes for c in parts]).tolist() == [0, 8192, 16384, 0, 4096]
    assert np.concatenate([c.volume for c in parts]).tolist() == [0, 0, 1, 1, 0]
    assert np.shares_memory(parts[1].time_s, tr.time_s)            # views, not copies
    assert [len(c) for c in chunks_of(tr, 10)] == [5]
    with pytest.raises(ValueError):
        next(chunks_of(tr, 0))
