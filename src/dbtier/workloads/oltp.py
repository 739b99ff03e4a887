"""`bench oltp` for any engine of workloads/engine.py: one placement step, bounded and swept.

A step opens the engine's server with the step's placement, loads the workload, bounds the managed
server's memory (a memory cgroup with the page cache inside, the server restarted in it with its
files' cached pages dropped, so points start cold), sweeps the client counts and closes the
server, copying its log into the run directory. `bench(OltpRequest, start, save, hooks) -> BenchOltp`
runs every step of a request: the figures go into the run's section as they come (`save` after each
point), and what the terminal shows goes through `Hooks`, a no-op by default (--json, a library user).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from dbtier.core.errors import DbtierError, Interrupted
from dbtier.measure import cgroup as memcg
from dbtier.measure import slowtier
from dbtier.measure.machine import devices_for
from dbtier.measure.placed import where
from dbtier.measure.probe import spare_bytes
from dbtier.model.guards import mark_oltp
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RunDir
from dbtier.workloads.engine import Engine, ServerSpec, engine_class, run_sweep
from dbtier.workloads.settings import EngineOptions
from dbtier.workloads.parsers.oltp import KNEE_RULE, NOT_MEASURED_REMOTE
from dbtier.workloads.tpcc import DEVIATIONS as TPCC_DEVIATIONS

# Loaded database per tpcc warehouse / pgbench scale unit, about (sizes a data set past free memory).
WAREHOUSE_BYTES, SCALE_BYTES = 110e6, 16e6
# Upper bounds of the size options: far past any real run, small enough that nothing derived overflows.
MAX_WAREHOUSES = 100_000        # about 10 TB of TPC-C-like data
MAX_PGBENCH_SCALE = 1_000_000   # about 16 TB


@dataclass
class Study:
    """One `bench oltp` request, engine-neutral (cli/bench/command.py builds it from the options)."""
    workload: str
    warehouses: int
    scale: int
    clients: list[int]
    repeat: int
    duration_s: float
    warmup_s: float
    rate: float | None
    memory: int | str | None        # a budget in bytes, "none", or None (dbtier's default budget)
    buffer_bytes: int | None        # the buffer pool asked for (shared_buffers, innodb_buffer_pool_size)
    buffer_text: str                # ... as the user wrote it
    matrix: bool = False            # a placement matrix: the document keeps steps[]
    remote: bool = False            # --dsn: the user's server

    def data_bytes_estimate(self) -> float:
        return self.warehouses * WAREHOUSE_BYTES if self.workload == "tpcc" else self.scale * SCALE_BYTES


@dataclass
class Hooks:
    """What the terminal shows; every hook is a no-op by default (--json)."""
    note: Callable[[str], None] = lambda text: None            # a note, once per run (the doc keeps it)
    say: Callable[[str], None] = lambda text: None             # one line
    status: Callable[[str], None] = lambda text: None          # the progress bar's description
    advance: Callable[[float], None] = lambda seconds: None    # seconds of the sweep done
    point: Callable[[dict[str, Any], bool, str], None] = lambda p, first, step: None


def note_once(doc: dict[str, Any], hooks: Hooks, text: str) -> None:
    notes = doc.setdefault("notes", [])
    if text not in notes:
        notes.append(text)
        hooks.note(text)


def sync(doc: dict[str, Any], step: dict[str, Any], study: Study) -> None:
    """One step's figures are the document's (the matrix keeps them in steps[] instead)."""
    if not study.matrix:
        doc.update(points=step["points"], knee=step["knee"], placement=step["placement"], load=step["load"],
                   memory=step.get("memory"), placement_where=step.get("placement_where"))


@dataclass
class Book:
    """A run's document as `bench` keeps it: its params, its section (the keys beside the envelope), where
    raw outputs go and how both are stored (the caller's `save(params, section)`)."""
    params: dict[str, Any]
    doc: dict[str, Any]
    run_dir: RunDir
    store: Callable[[dict[str, Any], dict[str, Any]], None]

    def save(self) -> None:
        self.store(self.params, self.doc)


def run_step(cls: type[Engine], spec: ServerSpec, study: Study, step: dict[str, Any], run: Book, hooks: Hooks,
             fallback: dict[str, str] | None) -> None:
    """Open, load, bound, sweep, close: one step, its figures saved in `run` as they come."""
    emu = run.doc.get("emulated")
    if emu and emu.get("device"):   # the emulated tier's limits: each point's bottleneck reads its rates against them
        spec.options["throttles"] = {emu["device"]: {"read_iops": emu["read_iops"], "write_iops": emu["write_iops"]}}
    eng = cls(spec)
    cg: memcg.MemoryCgroup | None = None
    try:
        eng.open()
        step["placement"] = eng.placement()
        theirs = None if eng.managed else eng.server_settings()
        if theirs is not None:
            # dbtier set nothing on the user's server: its durability is that of its own settings
            durable, why = cls.durability(theirs)
            run.params["settings"] = theirs
            run.doc["durability"] = {"durable": durable, "reason": f"the server's own settings (--dsn): {why}"}
        hooks.status(f"{step['name']}: loading {study.workload}")
        step["load"] = eng.load(study.workload, study.warehouses, study.scale, lambda m: None)
        step["placement"] = eng.placement()   # again: a --dsn server's table files are known once made
        # each part's directory, disk, filesystem and mount (a --dsn server's are on its host: not known here)
        step["placement_where"] = where(step["placement"]) if eng.managed else None
        if eng.managed:
            hooks.status(f"{step['name']}: memory budget")
            cg = memcg.MemoryCgroup(0)   # made before it is filled in: close() in finally sees a half-made one
            step["memory"] = memory_budget(eng, study, step, cg, run.doc, hooks, fallback)
        else:
            step["memory"] = {"budget_bytes": None, "mechanism": "none", "data_bytes": step["load"]["database_bytes"],
                              "shared_buffers_bytes": None, "reason": "--dsn: not a server dbtier starts"}
        sync(run.doc, step, study)
        run.save()
        devices = devices_for(list(step["placement"].values())) if eng.managed else []
        raw = run.run_dir.raw_path("x").parent

        def on_point(point: dict[str, Any], knee_so_far: dict[str, Any] | None) -> None:
            step["points"].append(point)
            step["knee"] = knee_so_far
            sync(run.doc, step, study)
            mark_oltp(run.doc, remote=study.remote)   # the cache guard, over every point so far
            run.save()
            hooks.point(point, len(step["points"]) == 1, step["name"])
        run_sweep(eng, study.workload, study.clients, study.repeat, study.duration_s, study.warmup_s,
                  study.warehouses, study.rate, raw, devices, step["name"],
                  on_clients=lambda c: hooks.status(f"{step['name']}: {c} clients"),
                  on_run=lambda: hooks.advance(study.duration_s + study.warmup_s), on_point=on_point)
    except DbtierError as exc:
        kills = cg.oom_count() if cg is not None and not isinstance(exc, Interrupted) else 0
        if kills:   # the budget, not the storage, ended the run: say so
            assert cg is not None       # the kills were counted in it
            raise DbtierError(f"{exc.message}\nthe kernel killed {kills} server process(es) at the "
                              f"{cg.limit_bytes / 2**20:,.0f} MiB memory budget (out of memory)",
                              "give the server more with --memory (or fewer --clients); finished points are kept"
                              ) from exc
        raise
    finally:
        try:
            log = eng.server_log()
            if log is not None and log.exists():
                shutil.copy(log, run.run_dir.raw_path(f"server-{step['name']}.log"))
            eng.close()
        finally:
            if cg is not None:   # after the server stopped: nothing of it is left inside
                cg.close()
                if step.get("memory") and cg.oom_kills is not None:
                    step["memory"]["oom_kills"] = cg.oom_kills
                if cg.created:
                    run.doc.setdefault("notes", []).append(f"the memory cgroup {cg.made.dir} could not be removed: "
                                                           "a process is still inside it")


def memory_budget(eng: Engine, study: Study, step: dict[str, Any], cg: memcg.MemoryCgroup, doc: dict[str, Any],
                  hooks: Hooks, fallback: dict[str, str] | None) -> dict[str, Any]:
    """Bound the managed server: a memory cgroup with the budget, the buffer pool out of it, the server
    restarted inside it with its files' pages dropped, so measured points start cold. The load ran unbounded."""
    data_bytes = int(step["load"]["database_bytes"])
    requested = study.buffer_bytes
    if requested is None:
        raise ValueError("a managed server's memory budget needs its buffer pool's size (Study.buffer_bytes)")
    mem: dict[str, Any] = {"budget_bytes": None, "mechanism": "none", "data_bytes": data_bytes, "shared_buffers_bytes": requested,
           "reason": None, "rule": memcg.RULE}
    if study.memory == "none":
        mem["reason"] = "--memory none: the server runs unbounded; reads may come from the page cache"
        note_once(doc, hooks, mem["reason"])
        return mem
    share = type(eng).buffer_share(eng.spec.settings)
    budget, cache, sb = memcg.budget_parts(study.memory if isinstance(study.memory, int) else None, data_bytes,
                                           max(study.clients), requested, share)
    if fallback:   # no cgroup can be made here: said once, the data set sized past free memory where it could be
        mem.update(mechanism=fallback["mechanism"], reason=fallback["reason"])
        note_once(doc, hooks, fallback["reason"])
        return mem
    # the server's own memory outside its buffer pool (InnoDB with performance_schema: ~200 MiB), on top
    base = int(getattr(eng, "server_base_bytes", 0))
    cg.limit_bytes = budget + base
    cg.open()
    if cg.mechanism == "none":
        mem["reason"] = (f"no memory cgroup could be made ({cg.reason}): the server runs unbounded, without the "
                         f"{budget / 2**20:,.0f} MiB budget, and reads may come from memory")
        note_once(doc, hooks, mem["reason"])
        return mem
    mem.update(budget_bytes=budget + base, mechanism=cg.mechanism, shared_buffers_bytes=sb, cache_bytes=cache,
               cgroup=cg.made.dir)
    if base:
        mem["server_base_bytes"] = base
    name = getattr(eng, "buffer_name", "the buffer pool")
    if sb != requested:
        part = "a quarter of" if share == 4 else ("all of" if share == 1 else f"1/{share} of")
        mem["reason"] = (f"{name} {sb // 1024} kB ({part} the budget's cache part) instead of "
                         f"{study.buffer_text}: it comes out of the budget")
    if memcg.small_data(data_bytes, cache):
        text = (f"the database ({data_bytes / 2**20:,.0f} MiB) is less than {memcg.DATA_PER_BUDGET}x the memory "
                f"budget's cache part ({cache / 2**20:,.0f} MiB): much of it is read from memory")
        mem["reason"] = "; ".join(x for x in (mem["reason"], text) if x)
    rule = f", default: {memcg.RULE}" if study.memory is None else ""
    hooks.say(f"memory: {(budget + base) / 2**20:,.0f} MiB budget ({cg.mechanism}{rule}), "
              f"{name} {sb / 2**20:,.0f} MiB, database {data_bytes / 2**20:,.0f} MiB")
    eng.bound_memory(cg.made.procs, sb if sb != requested else None,
                     before_start=lambda: memcg.drop_cached(sorted(set(step["placement"].values()))))
    return mem


def no_cgroup_fallback(study: Study, data_dir: str, sized: bool) -> dict[str, str] | None:
    """Where no memory cgroup can be made: {mechanism, reason} from memcg.no_cgroup (None when one can);
    with `size`, the study's data set is set past free memory here."""
    why = memcg.can_make()
    if why is None:
        return None
    try:
        avail = memcg.mem_available_bytes(Path("/proc/meminfo").read_text())
    except OSError:
        avail = None
    tpcc = study.workload == "tpcc"
    mechanism, reason, units = memcg.no_cgroup(
        why, sized, avail, WAREHOUSE_BYTES if tpcc else SCALE_BYTES, MAX_WAREHOUSES if tpcc else MAX_PGBENCH_SCALE,
        spare_bytes(data_dir, 10) if sized and avail is not None else 0, data_dir)
    if units is not None:
        if tpcc:
            study.warehouses = units
        else:
            study.scale = units
    return {"mechanism": mechanism, "reason": reason}


def emulate(study: Study, log_reserve_bytes: int, tier: slowtier.SlowTier, steps: list[tuple[str, dict[str, str]]],
            doc: dict[str, Any], hooks: Hooks) -> list[tuple[str, dict[str, str]]]:
    """Make the emulated tier and put every part placed in its directory on it instead."""
    tier.open_for(3 * study.data_bytes_estimate() + 2 * log_reserve_bytes)
    doc["emulated"] = tier.describe()
    note_once(doc, hooks, tier.describe()["note"])
    return [(n, tier.place(pl)) for n, pl in steps]


@dataclass(frozen=True, kw_only=True)
class OltpRequest:
    """`dbtier bench oltp`: `workload` at `warehouses` (tpcc) or `scale`, swept over `clients`, `repeat` runs
    a point of `duration_s` after `warmup_s`, closed loop or at `rate` transactions/s, on `engine` (a name of
    workloads/engine.py's OLTP registry) with its own settings `options`; each of `steps` (name, {role: dir})
    a managed server placed so (unplaced parts in `dir`), or the user's server at `dsn`; `memory` the managed
    server's budget (bytes, "none", or None: dbtier's default); `sized`: the size was not given, so a machine
    without memory cgroups may set it past free memory; `emulation` a directory of the steps throttled.
    The option types and cli/bench/oltp_checks.py check what needs argv; the numbers are checked here too,
    for a request built by hand."""
    engine: str = "postgres"
    workload: str = "tpcc"
    warehouses: int = 1
    scale: int = 10
    sized: bool = False
    clients: tuple[int, ...] = (1, 2, 4, 8, 16)
    repeat: int = 1
    duration_s: float = 30.0
    warmup_s: float = 5.0
    rate: float | None = None
    memory: int | str | None = None
    options: EngineOptions | None = None     # the engine's own settings; None: each its default
    steps: tuple[tuple[str, Mapping[str, str]], ...]
    dir: str
    dsn: str | None = None
    port: int | None = None
    os_user: str | None = None
    placement_matrix: str | None = None      # "FAST,SLOW", absolute, as the result says it
    emulation: slowtier.Emulation | None = None

    def __post_init__(self) -> None:
        for name, v in (("duration", self.duration_s), ("warmup", self.warmup_s), ("warehouses", self.warehouses),
                        ("scale", self.scale), ("repeat", self.repeat)):
            if not (v > 0 or (v == 0 and name == "warmup")):     # NaN fails it
                raise DbtierError(f"--{name} must be positive, got {v}", f"pass a number above zero to --{name}")
        if self.rate is not None and not (self.rate > 0):
            raise DbtierError(f"--rate must be positive, got {self.rate}", "transactions per second, e.g. --rate 500")
        if not self.clients or min(self.clients) < 1:
            raise DbtierError(f"--clients must be positive counts, got {list(self.clients)}", "for example 1,2,4,8,16")
        if not self.steps:
            raise DbtierError("a bench oltp request has no placement step", "give one step, e.g. ('single', {})")

    def dirs(self) -> list[str]:
        """Every directory the run places something in, and `dir`."""
        return sorted({d for _, pl in self.steps for d in pl.values()} | {self.dir})

    def total_s(self) -> float:
        """The seconds of the sweeps, warm-ups included (what a progress bar counts)."""
        return len(self.steps) * len(self.clients) * self.repeat * (self.duration_s + self.warmup_s)


@dataclass(frozen=True, kw_only=True)
class BenchOltp(Result):
    """`bench oltp`'s answer: the document's section (`points`, `knee`, `placement`, `memory`, `guards`, and
    `steps` for a placement matrix) and its `params`, with the server's own settings on --dsn."""
    kind: str = "bench.oltp"
    params: Frozen = field(default_factory=lambda: Frozen({}))


def oltp_params(req: OltpRequest, cls: type[Engine], study: Study, settings: dict[str, Any]) -> dict[str, Any]:
    """The run's params: what was asked and how it is measured."""
    steps = req.steps
    return {"workload": study.workload, "warehouses": study.warehouses, "scale": study.scale,
            "clients": list(study.clients), "duration_s": req.duration_s, "warmup_s": req.warmup_s,
            "repeat": req.repeat, "rate": req.rate, "mode": "dsn" if req.dsn else "managed",
            "dsn": cls.shown_dsn(req.dsn) if req.dsn else None, "settings": settings, "memory": req.memory,
            "placement_requested": dict(steps[0][1]) if len(steps) == 1 else None,
            "placement_matrix": req.placement_matrix, "engine": cls.label,
            **cls.method(req.duration_s, req.rate),    # latency: how it is measured; duration_note
            "knee_rule": KNEE_RULE,
            "not_measured": list(NOT_MEASURED_REMOTE) if req.dsn else []}


def bench(req: OltpRequest, start: Callable[[dict[str, Any]], RunDir],
          save: Callable[[dict[str, Any], dict[str, Any]], None], hooks: Hooks | None = None) -> BenchOltp:
    """Every step of `req`, one after the other. `start(params)` makes the run's directory (raw outputs
    and server logs go there) once the request is checked and sized; `save(params, section)` stores the
    document's params and section after every point, so what is measured survives what comes after; the
    emulated tier and every server are removed whatever happens."""
    hooks = hooks or Hooks()
    cls = engine_class(req.engine, "oltp")
    opts = req.options if req.options is not None else cls.options_type("oltp")
    clients = list(req.clients)
    study = Study(req.workload, req.warehouses, req.scale, clients, req.repeat, req.duration_s, req.warmup_s,
                  req.rate, req.memory, cls.buffer_request_bytes(opts), cls.buffer_text(opts),
                  matrix=bool(req.placement_matrix), remote=bool(req.dsn))
    steps = [(name, dict(pl)) for name, pl in req.steps]
    fallback = None if req.dsn or req.memory == "none" else \
        no_cgroup_fallback(study, steps[0][1].get("data") or req.dir, req.sized)
    settings = cls.settings(opts, clients)
    params = oltp_params(req, cls, study, settings)
    run = Book(params, {}, start(params), save)
    doc = run.doc
    doc["bench"] = "oltp"
    doc["engine"] = cls.name
    durable, why = cls.durability(settings)
    # a non-durable run is not comparable with a durable one (the verdict and report say so)
    doc["durability"] = {"durable": durable, "reason": why}
    doc["not_measured"] = params["not_measured"]
    if params.get("duration_note"):
        hooks.note(params["duration_note"])
    # What a tpcc run is not, next to its figures (workloads/tpcc.py; docs/commands/bench-oltp.md).
    doc["deviations"] = list(TPCC_DEVIATIONS) if req.workload == "tpcc" else None
    doc.update({"points": [], "knee": None, "placement": None, "placement_where": None, "memory": None, "guards": [],
                "emulated": None})
    if req.placement_matrix:
        doc["steps"] = []
    run.save()
    tier = slowtier.SlowTier(req.emulation) if req.emulation else None
    try:
        if tier:
            steps = emulate(study, cls.log_reserve_bytes(opts), tier, steps, doc, hooks)
        for name, placement in steps:
            step: dict[str, Any] = {"name": name, "placement": None, "placement_where": None, "points": [],
                                    "knee": None, "load": None, "memory": None}
            if tier:
                step["emulated_roles"] = sorted(r for r, d in placement.items() if d == tier.mount)
            if req.placement_matrix:
                doc["steps"].append(step)
            else:  # one step: its figures are the document's, saved as they come
                doc["points"] = step["points"]
            spec = ServerSpec(Path(req.dir), placement, dsn=req.dsn, port=req.port, os_user=req.os_user,
                              settings=settings)
            try:
                run_step(cls, spec, study, step, run, hooks, fallback)
            finally:
                if tier and step["placement"]:   # the parts the cluster really put there
                    assert tier.mount is not None    # emulate() opened the tier before the first step
                    step["emulated_roles"] = sorted(r for r, d in step["placement"].items()
                                                    if str(d).startswith(tier.mount + "/"))
            run.save()
    finally:
        if tier:
            for left in tier.close():
                doc.setdefault("notes", []).append(f"the emulated tier could not be removed whole: {left}")
        run.save()
    if req.placement_matrix:
        # The top-level view is the all-fast step (the best case); every step is in steps[].
        last = doc["steps"][-1]
        doc["points"], doc["knee"], doc["placement"] = last["points"], last["knee"], last["placement"]
        doc["placement_where"] = last.get("placement_where")
        doc["memory"] = last.get("memory")
        run.save()
    return BenchOltp(section=Frozen(doc), params=Frozen(params))
