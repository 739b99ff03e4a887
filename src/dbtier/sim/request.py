"""What `simulate run` asks (`SimRequest`) and how the trace is replayed for it: `run` picks the way.

- a text trace, or a converted one of one volume, is streamed chunk after chunk (`simulate_stream`): memory
  stays bounded whatever the trace's size;
- it is read whole first (`simulate`) when something needs it whole: --in-memory, --sort, --fail,
  --volume NAME, or a converted copy that cannot be streamed;
- --volume all replays each volume on its own (volumes.py), on this machine's cores or a Dask cluster.

Every way gives the same document. Everything that can be refused is refused before the caller's `start()`,
which the caller uses to make its run directory: before the replay of a trace read whole or of the volumes,
after a streamed one (a malformed line part-way then leaves nothing written); `early()` comes before a
streamed replay, for what the caller would refuse only when making it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, cast

from dbtier.core.errors import DbtierError
from dbtier.results.result import Frozen, Result
from dbtier.sim import simulate as sim
from dbtier.sim import volumes
from dbtier.sim.device.latency import DeviceModel
from dbtier.sim.trace import columnar
from dbtier.sim.trace.traces import Trace, read_chunks, read_trace


@dataclass(frozen=True)
class SimRequest:
    """One `simulate run`: the trace (a file, or a convert or capture run directory), the design's
    parameters and devices, and how the trace is read."""
    trace: Path
    params: sim.Params
    devices: Mapping[str, DeviceModel]
    format: str = "auto"
    columns: str | None = None
    skip_bad: bool = False
    sort: bool = False
    in_memory: bool = False         # read it whole before replaying it
    volume: str | None = None       # one volume of a multi-volume trace; volumes.ALL: each on its own
    cluster: str | None = None      # with volumes.ALL: a Dask scheduler's address


@dataclass(frozen=True, kw_only=True)
class SimulateRun(Result):
    """`simulate run`'s answer: the section it adds to the document (the contract's keys and `simulation`),
    read-only, and the warnings to print."""
    kind: str = "simulate.run"


def _answer(doc: dict[str, Any], warnings: list[str]) -> SimulateRun:
    return SimulateRun(section=Frozen(doc), warnings=tuple(warnings))


def run(req: SimRequest, progress: sim.Progress = lambda _phase, _frac: None, start: Callable[[], None] = lambda: None,
        early: Callable[[], None] = lambda: None) -> SimulateRun:
    """The request's trace through its design, the way the module docstring says; `progress(phase, frac)`
    as it goes. The library call of `dbtier simulate run`: the command adds what it returns to its run's
    document."""
    path = req.trace
    devices = dict(req.devices)
    if path.is_dir() and req.volume == volumes.ALL:      # each worker reads its own volume's file
        check_flags(req)
        return _volumes(req, devices, columnar.volume_source(path), progress, start)
    if streams(req):
        return _stream(req, devices, progress, start, early)
    return _whole(req, devices, progress, start)


def streams(req: SimRequest) -> bool:
    """A text trace, or a converted one of one volume, is streamed unless something needs it whole."""
    if req.in_memory or req.volume is not None or req.params.failure is not None:
        return False
    if req.trace.is_dir():
        check_flags(req)
        return columnar.streamable(req.trace)
    return not req.sort


def check_flags(req: SimRequest) -> None:
    """A converted copy is read with its convert run's options: those of a text trace are refused."""
    for flag, given in (("--format", req.format != "auto"), ("--columns", req.columns), ("--sort", req.sort),
                        ("--skip-bad", req.skip_bad)):
        if given:
            raise DbtierError(f"{flag} reads a text trace; {req.trace} is a converted one (read with the options "
                              "of its convert run)", f"leave {flag} out, or convert the trace again with it")


def read_converted(req: SimRequest) -> Trace:
    """A convert run's columnar copy, read whole (one volume's file when one is asked)."""
    check_flags(req)
    return columnar.read(req.trace, None if req.volume in (None, volumes.ALL) else req.volume)


def _whole(req: SimRequest, devices: dict[str, DeviceModel], progress: sim.Progress,
           start: Callable[[], None]) -> SimulateRun:
    """The trace read whole, then replayed."""
    if req.trace.is_dir():          # a convert run: its columnar copy, one volume's file when one is asked
        trace = read_converted(req)
    else:
        trace = read_trace(req.trace, req.format, req.columns, skip_bad=req.skip_bad, sort=req.sort,
                           progress=lambda frac: progress("reading the trace", frac))
    if req.volume == volumes.ALL:
        return _volumes(req, devices, volumes.from_trace(trace), progress, start)
    if req.volume and trace.volumes != (req.volume,):
        trace = trace.only_volume(req.volume)
    sim.check_params(req.params, trace, devices)
    start()
    out = sim.simulate(trace, req.params, devices, progress=progress)
    return _answer({**out.contract, "simulation": out.details}, out.warnings)


def _stream(req: SimRequest, devices: dict[str, DeviceModel], progress: sim.Progress, start: Callable[[], None],
            early: Callable[[], None]) -> SimulateRun:
    """The trace streamed through the design; `start()` once the replay has read it all."""
    early()
    if req.trace.is_dir():
        chunks, meta = columnar.chunks(req.trace, sim.CHUNK_REQUESTS)
    else:
        reader = read_chunks(req.trace, req.format, req.columns, skip_bad=req.skip_bad, requests=sim.CHUNK_REQUESTS)
        # its meta is complete once the replay has read the chunks
        chunks, meta = (lambda: iter(reader)), (lambda: cast(Trace, reader.meta))
    out = sim.simulate_stream(chunks, meta, req.params, devices, progress=progress)
    start()
    return _answer({**out.contract, "simulation": out.details}, out.warnings)


def _volumes(req: SimRequest, devices: dict[str, DeviceModel], src: volumes.Source, progress: sim.Progress,
             start: Callable[[], None]) -> SimulateRun:
    """Each volume through the design on its own (volumes.py), then the total."""
    p = req.params
    sim.check_params(p, None, devices)
    client = volumes.connect(req.cluster) if req.cluster else None
    start()
    results = volumes.run(src, p, devices, jobs=p.jobs, client=client,
                          done=lambda r, k, n: progress(f"volumes replayed ({k} of {n})", k / n))
    doc = volumes.combine(results, p.design, p.policy if p.design == "read-cache" else None, src.summary)
    doc["simulation"] = volumes.details(results, src, p, devices, req.cluster)
    return _answer(doc, [f"volume {r.volume}: {w}" for r in results for w in r.warnings])
