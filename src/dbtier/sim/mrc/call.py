"""`simulate mrc` as a library call: `run(MrcRequest) -> SimulateMrc`.

One read of the trace, spilled to a working directory of its own as dense codes (spill.py), then each
policy's curve at every size (curves.py; SHARDS estimates with a sample). Everything that can be refused (a
sample rate, sizes, --columns) is refused before the trace is read; `start()` comes once the trace has been
read and the sizes are known: the command makes its run directory there, so a trace that fails to parse
leaves none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from dbtier.core.units import human_bytes
from dbtier.core.workdir import workdir
from dbtier.results.result import Frozen, Result
from dbtier.sim.mrc import curves as mrc, spill as mrc_spill

if TYPE_CHECKING:
    from dbtier.sim.trace.objects import ObjectChunk

Progress = Callable[[str, float], None]


@dataclass(frozen=True, kw_only=True)
class MrcRequest:
    """The curves of `trace` for `policies` (names as curves.parse_policies gives them) at `sizes` (None: 1%
    to 100% of the footprint), from a SHARDS `sample` at that rate (None or 1: every request); a block trace
    is cut into objects of `block_size` bytes, its reads only with `reads_only`."""
    trace: Path
    policies: tuple[str, ...] = ("lru",)
    sizes: str | None = None
    sample: float | None = None
    format: str = "auto"
    columns: str | None = None
    block_size: int = 8192
    reads_only: bool = False


@dataclass(frozen=True, kw_only=True)
class SimulateMrc(Result):
    """`simulate mrc`'s answer: the document's section (`mrc`: the trace as read, one curve per policy)."""
    kind: str = "simulate.mrc"


def run(req: MrcRequest, progress: Progress = lambda _what, _frac: None,
        start: Callable[[], None] = lambda: None) -> SimulateMrc:
    """The request's curves; `progress(what, fraction)` as it goes, `start()` once the trace is read."""
    path, policies = req.trace, list(req.policies)
    if req.sample is not None:
        mrc.sample(np.zeros(0, np.uint64), req.sample)     # a rate outside (0, 1] refused before reading
    mrc.parse_sizes(req.sizes, 1 << 62)                     # and sizes that are not sizes
    mode, fmt, parsed = mrc_spill.trace_mode(path, req.format, req.columns)  # a bad --columns refused before reading
    cols: Any = parsed          # an object trace's ObjectColumns, a block trace's --columns text, or None
    ops: dict[str, int] = {}
    rate = req.sample if req.sample is not None and req.sample < 1.0 else None
    with workdir(path.stat().st_size, f"the spilled codes of {path}", "dbtier-mrc-") as work:
        if mode == "object":
            from dbtier.sim.trace import objects
            reqs: Any = _counted(objects.read_objects(path, fmt, columns=cols), ops)
        else:           # block granularity: each request's blocks, each an object of block_size bytes
            from dbtier.sim.trace.traces import read_chunks
            reqs = blocks = mrc_spill.BlockObjects(read_chunks(path, fmt, cols), req.block_size, str(path),
                                                   req.reads_only)
        # one read of the trace, spilled as codes (16 bytes a request; a sample's only): memory holds no trace
        spill = mrc_spill.scan(reqs, work, str(path), rate, keep_next="belady" in policies,
                               progress=lambda n: progress(f"reading the trace: {n:,} requests", 0.0))
        # with a sample, the trace's objects and footprint are the sample's, scaled
        src: Any = spill if rate is None else mrc.Sampled(spill, rate, spill.total_requests, spill.total_bytes)
        caches = mrc.parse_sizes(req.sizes, src.footprint_bytes)
        start()
        what = f"{', '.join(policies)} at {len(caches)} sizes"

        def step(k: int, n: int) -> None:
            progress(f"{what}: {k} of {n} replays", k / n)
        if rate is None:
            got = mrc.curves(policies, spill, caches, progress=step)      # on every core
        else:          # SHARDS: estimates (Belady's next requests are the sample's own)
            got = mrc.sampled_curves(policies, src, caches, progress=step)
        curves = [{"policy": pol, **mrc.about(pol), "sample_rate": 1.0 if rate is None else rate,
                   "points": [p.doc() for p in got[pol]]} for pol in policies]
    out: dict[str, Any] = {"trace": {"format": fmt, "mode": mode, "requests": spill.total_requests,
                                     "objects": src.n_objects, "footprint_bytes": src.footprint_bytes},
                           "curves": curves, "estimates": rate is not None}
    if mode == "block":     # requests: the block accesses the cache sees; io_requests: the trace's own
        out["trace"].update({"block_size": req.block_size, "io_requests": blocks.requests,
                             "reads_only": req.reads_only})
    elif cols is not None and cols.op is not None:
        out["trace"]["ops"] = ops        # requests by op value: recorded, all of them counted
    if rate is not None:
        out["note"] = (f"SHARDS spatial sample at {rate:g} of the objects (SHARDS-adj): every figure of the "
                       "curves, and the trace's objects and footprint, are estimates")
        few = [c for c in caches if src.cache_objects(c) < mrc.FEW_SAMPLED_OBJECTS]
        for cur in curves:
            for pt in cur["points"]:
                pt["sampled_cache_objects"] = round(src.cache_objects(pt["cache_bytes"]), 1)
        if few:
            out["note"] += (
                f"; at {len(few)} of the {len(caches)} sizes (up to {human_bytes(max(few))}) the sample's cache "
                f"holds under {mrc.FEW_SAMPLED_OBJECTS:,} objects (sampled_cache_objects): those estimates are "
                "rough (errors past 0.01 were measured there), take a larger --sample or no sample for them")
    return SimulateMrc(section=Frozen({"mrc": out}))


def _counted(chunks: Iterator[ObjectChunk], ops: dict[str, int]) -> Iterator[ObjectChunk]:
    """The chunks, their requests by op value added into `ops` on the way (a CSV with op=COL)."""
    for c in chunks:
        for k, v in (c.ops or {}).items():
            ops[k] = ops.get(k, 0) + v
        yield c
