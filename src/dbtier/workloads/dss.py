"""TPC-H power runs on any engine that runs `bench dss` (workloads/engine.py): data, answers, timing.

Data comes from DuckDB's tpch extension (dbgen), pinned as the
duckdb-extension-tpch package so it loads offline. Every query's answer is
checked against the extension's reference answers where they exist
(SF 0.01, 0.1, 1): a wrong result fails the run instead of being timed.

`run(DssRequest, start, save, show) -> BenchDss` is `dbtier bench dss` as a library call: the request
holds the options, checked when it is made (same refusals, same wording as the command's); the call makes
the emulated tier and the engine, loads the data, runs the power runs and fills the document's section as
it goes (`save` after the load and after every query), and removes what it made whatever happens. What the
terminal shows goes through `show`, a no-op by default (--json, a library user).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, Protocol, cast

from dbtier.core.debris import MARKER
from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.core.units import parse_int
from dbtier.measure import cgroup as memcg
from dbtier.measure import slowtier
from dbtier.measure.machine import devices_for
from dbtier.measure.placed import where
from dbtier.measure.probe import spare_bytes
from dbtier.measure.sampler import Sampler
from dbtier.model.dss import ANSWER_SCALES, QUERIES, check_answer, dss_scan, dss_totals
from dbtier.model.dss import estimate as size_estimate
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RunDir
from dbtier.workloads.engine import Engine, ServerSpec, default_options, engine_class
from dbtier.workloads.settings import EngineOptions, pg_memory_bytes

TPCH_TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")


def tpch_extension() -> str:
    try:
        import duckdb
        import duckdb_extension_tpch
    except ImportError as exc:
        raise DbtierError(f"the TPC-H generator is missing ({exc.name} is not installed)",
                          "install duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 (`uv sync` or `make lab`)") from exc
    default = Path(duckdb_extension_tpch.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "tpch.duckdb_extension"
    path = Path(os.environ.get("DBTIER_TPCH_EXTENSION", default))  # a custom build may be named instead
    if not path.exists():
        raise DbtierError(f"the tpch extension for DuckDB {duckdb.__version__} is missing ({path})",
                          f"install duckdb-extension-tpch=={duckdb.__version__}")
    return str(path)


def drop_caches() -> bool:
    """Empty the OS page cache so the next read is cold (root only)."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def dir_bytes(path: Path, skip: frozenset[str] = frozenset()) -> int:
    """The size of the files under path, those named in `skip` left out."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f in skip:
                continue
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


# dbtier's own files in a spill directory: the clean-up registry's owner marker (core/debris.py)
OWN_FILES = frozenset({MARKER})


def spill_bytes(path: Path) -> int:
    """What the engine has spilled into its temp directory: every file there but dbtier's own."""
    return dir_bytes(path, OWN_FILES)


def tpchgen() -> str:
    import shutil as _sh
    import sys
    exe = Path(sys.executable).parent / "tpchgen-cli"
    found = str(exe) if exe.exists() else _sh.which("tpchgen-cli")
    if not found:
        raise DbtierError("tpchgen-cli is not installed", "install it (`uv sync` installs the pinned one) or pass "
                          "--generator dbgen")
    return found


def generate(scale: float, out: Path, fmt: str = "parquet") -> None:
    from dbtier.measure import executor
    out.mkdir(parents=True, exist_ok=True)
    done = executor.run([tpchgen(), fmt, "-s", f"{scale:g}", "--output-dir", str(out)], timeout_s=24 * 3600)
    if done.returncode != 0:
        msg = (done.stderr or done.stdout).strip().splitlines()
        if any("No space left" in m for m in msg):
            raise DbtierError(f"{out.parent}: the disk filled up while generating TPC-H data",
                              "free space or choose a smaller --scale")
        raise DbtierError(f"tpchgen-cli failed: {msg[-1] if msg else done.returncode}", "see its message above")


def dbgen_csv(scale: float, out: Path) -> None:
    """The tpch extension's dbgen in an in-memory DuckDB, each table written as CSV with a header."""
    import duckdb
    from dbtier.workloads.duck_sql import run_sql    # Ctrl-C stops DuckDB before it goes on
    out.mkdir(parents=True, exist_ok=True)
    c = duckdb.connect()
    try:
        c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
        run_sql(c, f"CALL dbgen(sf = {scale})")
        for t in TPCH_TABLES:
            run_sql(c, f"COPY {t} TO {sql_str(str(out / (t + '.csv')))} (HEADER, DELIMITER ',')")
    finally:
        c.close()


def answers(scale: float) -> dict[int, str] | None:
    if not any(abs(scale - s) < 1e-9 for s in ANSWER_SCALES):
        return None
    import duckdb
    c = duckdb.connect()
    c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
    rows = c.execute("SELECT query_nr, answer FROM tpch_answers() WHERE abs(scale_factor - ?) < 1e-9", [scale]).fetchall()
    c.close()
    return {int(q): a for q, a in rows}


def queries_text() -> dict[int, str]:
    import duckdb
    c = duckdb.connect()
    c.execute(f"LOAD {sql_str(str(tpch_extension()))}")
    q = {int(n): t for n, t in c.execute("SELECT query_nr, query FROM tpch_queries()").fetchall()}
    c.close()
    return q


class TempWatch:
    """The peak size of the spill directory during a query (dbtier's own files left out), polled every
    10 ms: spill files live only as long as the operator that needs them."""

    def __init__(self, path: Path, interval_s: float = 0.01):
        self.path, self.interval_s, self.peak_bytes = path, interval_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dbtier-tempwatch", daemon=True)

    def _loop(self) -> None:
        while True:
            if self.path.exists():
                self.peak_bytes = max(self.peak_bytes, spill_bytes(self.path))
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> "TempWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def engine_error(exc: BaseException, what: str, engine: str) -> BaseException:
    """An engine's exception as the user should see it (DuckDB turns Ctrl-C into 'interrupted')."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
    if isinstance(exc, (KeyboardInterrupt, DbtierError)):
        return exc
    if "interrupted" in text.lower():
        return KeyboardInterrupt()
    if "No space left" in str(exc) or "out of memory" in str(exc).lower():
        return DbtierError(f"{what} failed on {engine}: {text}",
                           "give the temp directory more space or raise --memory-limit; finished queries are kept")
    return DbtierError(f"{what} failed on {engine}: {text}", "see the result's errors")


def proc_io(pid: int | None) -> tuple[int, int] | None:
    """(write_bytes, cancelled_write_bytes) of a process from /proc/PID/io: the bytes it dirtied for the
    storage, and those removed (a deleted or truncated file) before writeback wrote them; None unreadable."""
    if pid is None:
        return None
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return None
    vals = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    try:
        return int(vals["write_bytes"]), int(vals["cancelled_write_bytes"])
    except (KeyError, ValueError):
        return None


def written_between(a: tuple[int, int] | None, b: tuple[int, int] | None) -> int | None:
    """What a process's writes that were not cancelled came to between two proc_io readings: what it sent
    on to the device (or will: still dirty at b), its own alone whatever else writes to that device."""
    if a is None or b is None:
        return None
    return max(0, (b[0] - a[0]) - (b[1] - a[1]))


def power_run(engine: Any, run_no: int, cold: bool, devices: list[str], expected: dict[int, str] | None,
              on_query: Callable[[dict[str, Any]], None], queries: tuple[int, ...] = QUERIES,
              temp_device: str | None = None) -> list[dict[str, Any]]:
    """One single-stream run of the 22 queries; each timed, sampled and checked. temp_bytes is the peak
    spill in the temp directory; temp_device_write_bytes what the temp directory's device wrote meanwhile;
    query_written_bytes what the process running the query wrote and did not cancel (/proc/PID/io; None
    where the engine's process is not known: PostgreSQL's backend)."""
    dropped = drop_caches() if cold else False
    engine.connect()
    out = []
    for q in queries:
        pid = engine.query_pid() if hasattr(engine, "query_pid") else None
        with TempWatch(engine.temp_path) as temp, Sampler(devices, interval_s=0.2) as s:
            io0 = proc_io(pid)
            t0 = time.perf_counter()
            try:
                rows = engine.run_query(q)
            except Exception as exc:
                raise engine_error(exc, f"query {q}", engine.name) from exc
            seconds = time.perf_counter() - t0
            io1 = proc_io(pid)
        overall = s.overall()
        wrong = check_answer(rows, expected[q]) if expected and q in expected else None
        rec = {"query": q, "run": run_no, "cold": cold, "caches_dropped": dropped, "seconds": seconds,
               "rows": len(rows), "temp_bytes": temp.peak_bytes,
               "read_bytes": sum(d["read_bytes"] for d in overall["devices"].values()),
               "write_bytes": sum(d["write_bytes"] for d in overall["devices"].values()),
               "cpu_util": overall["cpu"]["busy_pct"] if overall["cpu"] else None,
               "devices": {n: {"read_bytes": d["read_bytes"], "write_bytes": d["write_bytes"],
                               "busy_pct": d["busy_pct"]} for n, d in overall["devices"].items()},
               "temp_device_write_bytes": overall["devices"][temp_device]["write_bytes"]
               if temp_device in overall["devices"] else None,
               "query_written_bytes": written_between(io0, io1),
               "answer_ok": None if not expected else wrong is None}
        out.append(rec)
        on_query(rec)
        if wrong:
            raise DbtierError(f"query {q} returned a wrong answer on {engine.name}: {wrong}",
                              "the result is not timed; check the engine, the data and the extension versions")
    engine.close_conn()
    return out


def emulate(tier: slowtier.SlowTier, placement: dict[str, str], est: Mapping[str, float],
            doc: dict[str, Any]) -> dict[str, str]:
    """Make the emulated tier (measure/slowtier.py, as bench oltp --emulate) and put every role placed in
    its directory on it instead; doc["emulated"] and doc["emulated_roles"] say so."""
    tier.open_for(3 * est["disk_gb"] * 1e9)      # the database and its spill, three times over
    doc["emulated"] = tier.describe()
    out: dict[str, str] = tier.place(placement)
    doc["emulated_roles"] = sorted(r for r, d in out.items() if d == tier.mount)
    return out


def memory_record(engine: Engine, budget_bytes: int | None) -> dict[str, Any]:
    """How the queries' memory was bounded: {budget_bytes, mechanism (cgroup1, cgroup2, none), reason,
    oom_kills}; an engine without a budgeted worker (PostgreSQL) runs unbounded here."""
    mem = dict(getattr(engine, "memory", None) or {})
    mem.setdefault("budget_bytes", budget_bytes)
    if not budget_bytes:
        unbounded = ("no budget (--memory none, or no --memory-limit): the queries' page cache is unbounded, so "
                     "their spill may stay in memory" if hasattr(engine, "memory") else
                     "the queries run in the server's own processes, which a TPC-H run does not bound (--memory-limit "
                     "sets work_mem: when a sort or hash spills, not where): the page cache is unbounded, so their "
                     "spill may stay in memory")
        mem.update(mechanism="none", reason=mem.get("reason") or unbounded)
    return mem


# ---------------------------------------------------------------- the library call

# DuckDB's allocations outside memory_limit and the worker's interpreter took about 45 MiB at SF 1
# (a 100 MiB budget around memory_limit=60MB was OOM-killed in Q9, 120 MiB ran); the rest is page cache.
DSS_BUDGET_MARGIN_BYTES = 128 * 2**20
DSS_BUDGET_RULE = f"memory_limit + {DSS_BUDGET_MARGIN_BYTES // 2**20} MiB"
METHOD = ("single stream (power run); run 1 cold (database reopened, OS page cache dropped when root), later "
          "runs warm; every answer checked where reference answers exist")


def parse_queries(text: str) -> tuple[int, ...]:
    """The TPC-H query numbers of a list such as `1,3,5-9`, sorted, each once."""
    out: list[int] = []
    try:
        for part in text.split(","):
            a, _, b = part.strip().partition("-")
            lo, hi = parse_int(a), (parse_int(b) if b else None)   # ASCII digits: int() takes '٣' and '1_0'
            if not (1 <= lo <= 22 and (hi is None or 1 <= hi <= 22)):
                raise DbtierError(f"--queries: TPC-H has queries 1 to 22 (got {text})", "for example --queries 1-22")
            out += list(range(lo, hi + 1)) if hi is not None else [lo]
    except ValueError as exc:
        raise DbtierError(f"--queries: {text!r} is not a list of query numbers", "for example --queries 1,3,5-9") from exc
    if not out or any(q < 1 or q > 22 for q in out):
        raise DbtierError(f"--queries: TPC-H has queries 1 to 22 (got {text})", "for example --queries 1-22")
    return tuple(sorted(set(out)))


def memory_budget(engine: str, memory: int | str | None, memory_limit: str | None) -> int | None:
    """The queries' memory budget in bytes (None: unbounded), from --memory (bytes or "none") and
    --memory-limit: DuckDB's memory_limit with DSS_BUDGET_MARGIN_BYTES on top when --memory is not given."""
    if memory == "none":
        return None
    if memory is not None and engine != "duckdb":
        raise DbtierError("--memory applies to --engine duckdb only",
                          "PostgreSQL's temp is bounded by --memory-limit (work_mem); leave --memory out")
    if memory is not None:
        return int(memory)
    if engine == "duckdb" and memory_limit:
        return pg_memory_bytes(memory_limit) + DSS_BUDGET_MARGIN_BYTES
    return None


def emulated_tier(emulate: str | None, temp: str | None, data: str | None) -> slowtier.Emulation | None:
    """The --emulate tier (not yet made), or None; refused unless it names the temp or data directory."""
    if not emulate:
        return None
    emu = slowtier.parse(emulate)
    here = os.path.realpath(emu.dir)
    if here not in {os.path.realpath(d) for d in (temp, data) if d}:
        raise DbtierError(f"--emulate {emulate}: {emu.dir} is neither the --temp nor the --data directory",
                          f"for example --temp {emu.dir} --emulate {emu.dir}=150iops")
    return emu


def probe_reference(probe_dir: str | None, doc: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The --probe run (`doc`, or read from `probe_dir`), refused unless it is a probe run with its targets:
    read before the benchmark starts, not after it."""
    if doc is None:
        if not probe_dir:
            return None
        from dbtier.results.store import load_run
        doc = load_run(probe_dir)
    label = probe_dir or "(the probe document given)"
    if doc.get("command") != "probe":
        raise DbtierError(f"--probe {label}: not a probe run ({doc.get('command')})", "pass a `dbtier probe` run directory")
    targets = (doc.get("machine") or {}).get("targets")
    if not isinstance(targets, list):
        raise DbtierError(f"--probe {label}: its result.json has no machine.targets list",
                          "pass a run directory written by `dbtier probe`")
    return dict(doc)


@dataclass(frozen=True, kw_only=True)
class DssRequest:
    """`dbtier bench dss`: TPC-H at `scale` on `engine` (a name of workloads/engine.py's DSS registry), the
    database under `data` and the queries' spills in `temp` (None: beside the data); `queries` (1 to 22) in
    `repeat` power runs, the first cold; `memory_limit` DuckDB's memory_limit / PostgreSQL's work_mem (as
    written, e.g. "500MB"), `memory` the DuckDB queries' budget (bytes, "none", or None: from memory_limit),
    `threads` DuckDB's (None: all cores), `compression` "on" or "off" (DuckDB); data from `generator`
    ("dbgen" or "tpchgen"); `probe` a probe run of the data directory (or `probe_doc`, the document itself)
    to compare scans with; `port` and `os_user` the managed PostgreSQL's; `options` the engine's own
    settings (None: their defaults); `emulate` "DIR=RATE", the temp or data directory made an emulated
    slow tier.

    Made, it is checked as the command checks its options, in the same order and words: the directories
    exist (made absolute: what the result says), the machine has the memory and disk the scale needs, the
    generator and the engine are installed. What it derives is kept: `estimate` (disk_gb, memory_gb),
    `budget_bytes`, `emulation` (the parsed tier) and the probe run read (`probe_doc`)."""
    engine: str = "duckdb"
    scale: float = 1.0
    data: str
    temp: str | None = None
    memory_limit: str | None = None
    memory: int | str | None = None
    threads: int | None = None
    compression: str = "on"
    repeat: int = 2
    queries: tuple[int, ...] = QUERIES
    generator: str = "dbgen"
    probe: str | None = None
    probe_doc: Mapping[str, Any] | None = None
    port: int | None = None
    os_user: str | None = None
    options: EngineOptions | None = None
    emulate: str | None = None
    estimate: Mapping[str, float] = field(init=False, default_factory=dict)
    budget_bytes: int | None = field(init=False, default=None)
    emulation: slowtier.Emulation | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        cls = engine_class(self.engine, "dss")
        if self.compression not in ("on", "off") or self.generator not in ("dbgen", "tpchgen"):
            raise DbtierError(f"compression {self.compression!r}, generator {self.generator!r}: unknown",
                              "compression is on or off; the generator dbgen or tpchgen")
        queries = tuple(sorted(set(self.queries)))
        if not queries or any(q < 1 or q > 22 for q in queries):
            raise DbtierError(f"--queries: TPC-H has queries 1 to 22 (got {','.join(map(str, self.queries))})",
                              "for example --queries 1-22")
        object.__setattr__(self, "queries", queries)
        if not (self.scale > 0):
            raise DbtierError(f"--scale must be positive, got {self.scale}", "for example --scale 1")
        if not (self.repeat >= 1):
            raise DbtierError(f"--repeat must be at least 1, got {self.repeat}", "for example --repeat 2")
        for flag, d in (("--data", self.data), ("--temp", self.temp)):
            if d and not Path(d).is_dir():
                raise DbtierError(f"{flag} {d}: no such directory", "create it, or pass an existing directory")
        object.__setattr__(self, "data", os.path.abspath(self.data))      # what the result and the report say
        object.__setattr__(self, "temp", os.path.abspath(self.temp) if self.temp else self.temp)
        est = size_estimate(self.engine, self.scale, self.compression)
        try:
            avail = memcg.mem_available_bytes(Path("/proc/meminfo").read_text())
        except OSError:
            avail = None
        if avail is not None and avail < est["memory_gb"] * 1e9:
            raise DbtierError(
                f"not enough memory for TPC-H SF {self.scale:g}: generating it needs about {est['memory_gb']:.1f} GB, "
                f"{avail / 1e9:.1f} GB is available", "choose a smaller --scale")
        free = spare_bytes(self.data, 10)
        if free < est["disk_gb"] * 1e9:
            raise DbtierError(
                f"not enough disk for TPC-H SF {self.scale:g} on {self.engine}: it needs about {est['disk_gb']:.1f} GB "
                f"in {self.data}, which has {max(free, 0) / 1e9:.1f} GB to spare after dbtier's free-space margin",
                "choose a smaller --scale or a directory with more space")
        object.__setattr__(self, "estimate", est)
        object.__setattr__(self, "budget_bytes", memory_budget(self.engine, self.memory, self.memory_limit))
        object.__setattr__(self, "emulation", emulated_tier(self.emulate, self.temp, self.data))
        object.__setattr__(self, "probe_doc", probe_reference(self.probe, self.probe_doc))
        tpch_extension()  # the generator must be there before anything starts
        if self.generator == "tpchgen":
            tpchgen()
        cls.check()
        if self.engine == "postgres" and self.compression == "off":
            raise DbtierError("--compression off applies to DuckDB only",
                              "PostgreSQL has no table compression to switch off; leave --compression out")

    def params(self) -> dict[str, Any]:
        """The run's params: what was asked, the estimate and how it is measured."""
        return {"engine": self.engine, "scale": self.scale, "data": self.data, "temp": self.temp,
                "memory_limit": self.memory_limit, "threads": self.threads, "compression": self.compression,
                "repeat": self.repeat, "queries": list(self.queries), "estimate": dict(self.estimate),
                "generator": self.generator, "memory": self.memory, "emulate": self.emulate, "method": METHOD}


@dataclass(frozen=True, kw_only=True)
class BenchDss(Result):
    """`bench dss`'s answer: the document's section (`placement`, `load`, `runs` and `queries` with their
    totals, `answers_ok`, `temp_tier`, `memory`, `guards`, the emulated tier, the scan against the probe)
    and the run's `params`."""
    kind: str = "bench.dss"
    params: Frozen = field(default_factory=lambda: Frozen({}))


@dataclass(frozen=True)
class PowerShow:
    """What the caller shows while the power runs go: a run starting (its number from 1, cold or warm),
    and each query's record as it is measured."""
    run_started: Callable[[int, bool], None] = lambda run_no, cold: None
    query_done: Callable[[dict[str, Any]], None] = lambda rec: None


def quiet(total: int) -> ContextManager[PowerShow]:
    """Nothing shown (`total`: the queries the power runs time, all told)."""
    return contextlib.nullcontext(PowerShow())


class _DssPaths(Protocol):
    """What a DSS engine (DuckDB, PostgreSQL) holds beyond the Engine calls: where open() put the data and
    the queries' spills."""
    db_path: Path | None
    temp_path: Path | None


def _opened_paths(engine: Engine) -> tuple[Path, Path]:
    """The database and temp paths of a DSS engine, both set by its open()."""
    p = cast(_DssPaths, engine)
    assert p.db_path is not None and p.temp_path is not None
    return p.db_path, p.temp_path


def run(req: DssRequest, start: Callable[[dict[str, Any]], RunDir], save: Callable[[dict[str, Any]], None],
        show: Callable[[int], ContextManager[PowerShow]] = quiet,
        on_note: Callable[[str], None] = lambda text: None) -> BenchDss:
    """`req`'s power runs. `start(params)` makes the run's directory (the server's log goes there) once the
    request is checked; `save(section)` stores the document's section after the load, after every query and
    at the end, so that what is measured survives what comes after; `show(total)` is the terminal's context
    while the engine loads and runs; `on_note` gets the emulated tier's note. The engine and the emulated
    tier are removed whatever happens."""
    cls = engine_class(req.engine, "dss")
    params = req.params()
    run_dir = start(params)
    section: dict[str, Any] = {
        "bench": "dss", "engine": req.engine, "scale": req.scale, "placement": None, "placement_where": None,
        "load": None, "runs": [], "queries": [], "total_seconds": None, "geomean_seconds": None,
        "answers_ok": None, "emulated": None, "emulated_roles": [], "memory": None, "temp_tier": None}
    placement = {"data": req.data, **({"temp": req.temp} if req.temp else {})}
    budget = req.budget_bytes
    engine: Engine | None = None
    tier: slowtier.SlowTier | None = None
    ended = False
    try:
        if req.emulation:
            tier = slowtier.SlowTier(req.emulation)
            placement = emulate(tier, placement, dict(req.estimate), section)
            on_note(section["emulated"]["note"])
        spec = ServerSpec(Path(placement["data"]), placement, port=req.port, os_user=req.os_user,
                          settings=cls.settings(default_options(cls, "dss") if req.options is None else req.options, [1]),
                          options={"memory_limit": req.memory_limit, "threads": req.threads,
                                   "compression": req.compression, "generator": req.generator,
                                   "memory_budget_bytes": budget})
        with show(len(req.queries) * req.repeat) as shown:
            engine = cls(spec)
            engine.open()
            db_path, temp_path = _opened_paths(engine)
            section["placement"] = {"data": str(db_path), "temp": str(temp_path)}
            section["placement_where"] = where(section["placement"])   # each part's directory, disk, filesystem, mount
            devices = devices_for([str(db_path.parent), str(temp_path)])
            section["devices"] = devices
            temp_dev = devices_for([str(temp_path if temp_path.exists() else temp_path.parent)])
            section["temp_tier"] = {"device": temp_dev[0] if temp_dev else None}
            try:
                section["load"] = engine.load_tpch(req.scale)
            except Exception as exc:
                raise engine_error(exc, f"loading TPC-H SF {req.scale:g}", req.engine) from exc
            save(section)
            expected = answers(req.scale) if req.generator == "dbgen" else None
            section["answers_checked"] = expected is not None
            for r in range(req.repeat):
                shown.run_started(r + 1, r == 0)

                def on_query(rec: dict[str, Any], r: int = r) -> None:
                    section["runs"][r].append(rec)
                    dss_totals(section)
                    save(section)
                    shown.query_done(rec)
                section["runs"].append([])
                power_run(engine, r + 1, r == 0, devices, expected, on_query, req.queries,
                          section["temp_tier"]["device"])
                section["memory"] = memory_record(engine, budget)
            dss_scan(section, dict(req.probe_doc) if req.probe_doc is not None else None, devices)
        ended = True
    finally:
        if engine is not None:
            log = engine.server_log()
            if log is not None and log.exists():
                shutil.copy(log, run_dir.raw_path("server-dss.log"))
            engine.close()
            section["memory"] = memory_record(engine, budget)
        if tier is not None:
            for left in tier.close():
                section.setdefault("notes", []).append(f"the emulated tier could not be removed whole: {left}")
        try:
            save(section)
        except Exception:
            if ended:
                raise
            # a failed write here must not hide the error that ended the run (its section was handed over)
    return BenchDss(section=Frozen(section), params=Frozen(params))
