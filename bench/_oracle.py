"""libCacheSim's oracleGeneral trace written from request arrays (the mrc benches' generated traces)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

RECORD = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])


def write_oracle_general(path: Path, ids: np.ndarray, keys: np.ndarray, sizes: np.ndarray) -> None:
    """Request i reads object ids[i] (dense) written as keys[i], of sizes[i] bytes; a request a millisecond of
    trace time; zstd-compressed as libCacheSim reads it."""
    import pyarrow as pa
    n = ids.shape[0]
    rec = np.empty(n, RECORD)
    rec["time"] = np.arange(n, dtype=np.uint64) // 1000
    rec["id"] = keys
    rec["size"] = sizes
    # next access (1-based), -1 never: the next position of the same id, from a stable sort by id
    order = np.argsort(ids, kind="stable")
    same = ids[order][1:] == ids[order][:-1]
    nxt = np.full(n, -1, np.int64)
    nxt[order[:-1][same]] = order[1:][same] + 1
    rec["next"] = nxt
    with pa.output_stream(str(path), compression="zstd") as f:
        f.write(rec.tobytes())
