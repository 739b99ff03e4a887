"""The result document of every command, defined once as types: the published JSON Schema
(schema/result.schema.json) is generated from these by `python -m dbtier.results.schema`.

Every TypedDict here becomes a `$defs` entry (its name in snake_case, its docstring the description).
`Annotated[T, S(...)]` adds JSON Schema keywords (minimum, pattern, description) to T; `Annotated[T, Def("x")]`
names a plain type as `$defs/x`.
results/shape.py derives its fast structural check from the same types (null accepted at every key, as
readers take it for absent, except where a key is `Required[...]`). `EXTRA[cls]` is what keys a type does not list may hold (False: none).
Keys are the JSON keys, as readers use them: renaming one here renames it in the schema only, never in what
the commands write, so a test validates real documents of every command against the generated schema.

`SECTIONS` says which command (and kind: `bench`, `plan`, or `params.action`) adds which section to the
envelope. The sections of the newer commands list their keys as optional: a failed run stops before
writing them, and their types are checked wherever they are present.
"""

from typing import Annotated, Any, Literal, NotRequired, Required, TypedDict


class Def:
    """Annotated metadata: give a plain type a name in `$defs`."""

    def __init__(self, name: str):
        self.name = name


class S:
    """Annotated metadata: JSON Schema keywords added to the type's (a class: hashable, as Annotated needs)."""

    def __init__(self, **keywords: Any):
        self.keywords = keywords


Timestamp = Annotated[str, S(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"), Def("timestamp")]
NumOrNull = Annotated[float | None, Def("num_or_null")]
Status = Literal["running", "ok", "failed", "interrupted"]
Obj = dict[str, Any]


def doc(text: str) -> S:
    return S(description=text)


# -- the envelope (results/document.py) ----------------------------------------------------------------------

class Error(TypedDict):
    message: str
    hint: NotRequired[str | None]
    bug: NotRequired[Annotated[bool, doc("true when the run ended on an unexpected exception (a dbtier bug)")]]
    traceback: NotRequired[Annotated[str, doc("where the bug's traceback was saved, relative to the run "
                                              "directory (raw/traceback.txt)")]]


class BlockDevice(TypedDict):
    name: str
    disk: str
    model: str | None
    driver: NotRequired[str | None]
    virtual: NotRequired[bool]
    rotational: bool | None
    scheduler: str | None
    write_cache: NotRequired[str | None]
    logical_block_bytes: NotRequired[int | None]
    physical_block_bytes: NotRequired[int | None]
    size_bytes: NotRequired[int | None]


class TargetInfo(TypedDict):
    path: str
    mount_point: NotRequired[str]
    filesystem: NotRequired[str | None]
    mount_options: NotRequired[str | None]
    source: NotRequired[str]
    block_device: NotRequired[BlockDevice | None]


class Versions(TypedDict):
    dbtier: str | None
    fio: str | None
    postgresql: str | None
    duckdb: str | None


class Machine(TypedDict):
    hostname: str
    os: NotRequired[str | None]
    kernel: str
    arch: NotRequired[str]
    cpu_model: str | None
    cpu_count: int | None
    memory_bytes: int | None
    targets: list[TargetInfo]
    versions: Versions


class Guard(TypedDict):
    """the cache guard (dbtier.model.guards): whether the run's reads reached the storage"""
    kind: Literal["reads-from-memory", "too-few-reads", "remote"]
    message: str


class Params(TypedDict, total=False):
    """the command's options as given (each command its own; `action`: the subcommand, where it has one)"""
    action: str


class Envelope(TypedDict):
    """Every dbtier command writes one of these as result.json in its run directory. Shared keys are defined
    here; each command adds its own section (dbtier.results.types.SECTIONS)."""
    schema_version: Literal[1]
    command: Required[str]        # Required: the shape check refuses null here too (readers index by it)
    dbtier_version: str
    started_at: Timestamp
    finished_at: Timestamp | None
    status: Status
    machine: Machine
    params: Required[Params]
    errors: Required[list[Error]]
    guards: NotRequired[list[Guard]]
    notes: NotRequired[list[str]]


# -- probe (measure/probe.py, results/probe.py) ----------------------------------------------------------------

class Latency(TypedDict, total=False):
    mean: NumOrNull
    min: NumOrNull
    max: NumOrNull
    p50: NumOrNull
    p90: NumOrNull
    p95: NumOrNull
    p99: NumOrNull
    p999: NumOrNull
    p9999: NumOrNull


class Side(TypedDict):
    iops: float
    bw_bytes_per_s: float
    io_bytes: int
    ios: int
    lat_us: Latency | None


Count1 = Annotated[int, S(minimum=1)]
NonNeg = Annotated[float, S(minimum=0)]


class ProbePoint(TypedDict):
    test: str
    group: Literal["random", "sequential", "commit", "layout", "precondition", "fill"]
    rw: str
    bs_bytes: Annotated[int, S(minimum=512)]
    read_pct: Annotated[int, S(minimum=0, maximum=100)]
    jobs: Count1
    iodepth: Count1
    outstanding: Count1
    iops: NonNeg
    bw_bytes_per_s: NonNeg
    mbps: NonNeg
    lat_us: Latency | None
    commit_lat_us: NotRequired[Latency | None]
    read: Side | None
    write: Side | None
    sync: Obj | None
    cpu_cores: NonNeg
    runtime_s: float
    direct: bool
    raw: str
    hosts: NotRequired[Annotated[int, S(minimum=1), doc("a fleet probe's aggregate point: hosts that answered")]]
    host_names: NotRequired[list[str]]
    phase: NotRequired[Annotated[Literal["confirm", "repeat"], doc(
        "confirm: a longer re-measure around a sweep's peak; repeat: a headline point measured again")]]


class ProbeSummary(TypedDict):
    read_iops_4k: NumOrNull
    write_iops_4k: NumOrNull
    mixed_iops_8k: NumOrNull
    read_lat_us_qd1_p50: NumOrNull
    write_lat_us_qd1_p50: NumOrNull
    read_lat_us_p99_at_max: NumOrNull
    read_mbps_seq: NumOrNull
    write_mbps_seq: NumOrNull
    commit_lat_us_p50: NumOrNull
    commit_lat_us_p99: NumOrNull
    commits_per_s: NumOrNull
    fsync_honesty: Literal["ok", "suspect", None]
    fsync_honesty_reason: str | None


class SteadyState(TypedDict):
    rule: Any
    rounds: int
    round_iops: list[float]
    reached: bool


class FillStep(TypedDict):
    filled_bytes: Any
    fs_used_pct: Any
    seq_write_mbps: Any
    rand_write_iops_4k: Any
    rand_write_lat_us_p99: Any


class HonestyCheck(TypedDict):
    name: Any
    passed: Any
    detail: Any


class FsyncHonesty(TypedDict):
    verdict: Literal["ok", "suspect"]
    reason: str
    checks: list[HonestyCheck]


class ProbeKnee(TypedDict):
    """Where IOPS stop growing in one random sweep (results/probe.knee, the sweep's own stop rule)."""
    test: str
    outstanding: Annotated[float, S(minimum=1)]
    iops: Annotated[float, S(minimum=0)]
    p99_us: float | None
    last_outstanding: Annotated[float, S(minimum=1)]
    last_iops: Annotated[float, S(minimum=0)]
    still_rising: bool


class ProbeTarget(TypedDict):
    path: str
    kind: Annotated[Literal["directory", "device", "fleet"], doc("fleet: a fleet probe's aggregate")]
    status: Status
    direct_io: bool
    file_bytes: Annotated[int, S(minimum=0)]
    points: list[ProbePoint]
    summary: ProbeSummary | None
    steady_state: SteadyState | None
    fill: list[FillStep] | None
    fsync_honesty: FsyncHonesty | None
    knee: NotRequired[Annotated[dict[str, ProbeKnee | None], doc("per random test: its knee, null when not run")]]
    spread: NotRequired[Annotated[dict[str, "ProbeSpread"], doc(
        "per summary figure: how its point's runs varied (each headline point is measured at least twice)")]]


class FleetAggregate(ProbeTarget):
    """A fleet probe's hosts at once: IOPS and MB/s summed per point, latency from their merged fio bins;
    points' outstanding, jobs and iodepth are per host."""
    hosts: Annotated[int, S(minimum=1)]
    complete: Annotated[bool, doc("false when a host stopped answering: later points lack it")]


class FleetHost(TypedDict):
    host: str
    address: str
    port: Annotated[int, S(minimum=1, maximum=65535)]
    checks: Annotated[str, doc("local: the local probe's checks ran (a host of this machine); none otherwise")]
    status: Literal["running", "ok", "dropped"]
    targets: list[ProbeTarget]


class ScalingStep(TypedDict):
    hosts: Annotated[int, S(minimum=1)]
    iops: NonNeg
    iops_per_host: NonNeg
    lat_us_p99: NumOrNull
    worst_host_lat_us_p99: NumOrNull
    host_iops: list[float]
    raw: str


class FleetScaling(TypedDict):
    test: str
    jobs: Count1
    iodepth: Count1
    steps: list[ScalingStep]
    degraded_at_hosts: int | None
    verdict: str
    rule: str


class FleetInfo(TypedDict):
    warnings: list[str]
    left_behind: Annotated[list[str], doc("host:file that could not be removed (a host that stopped answering)")]
    scaling: FleetScaling | None


class ProbeResult(TypedDict):
    targets: list[ProbeTarget]
    hosts: NotRequired[Annotated[list[FleetHost], doc("probe --hosts: each host and its own target")]]
    aggregate: NotRequired[FleetAggregate]
    fleet: NotRequired[FleetInfo]


# -- bench oltp (cli/bench.py, workloads/) ------------------------------------------------------------------------

Role = Literal["data", "index", "wal", "temp", "redo", "undo", "binlog"]
NotMeasured = Literal["server_cpu", "server_devices"]


class Placement(TypedDict):
    """where each role of the engine really is: PostgreSQL data, index, wal, temp; MariaDB data, redo, undo, temp
    (and binlog with the binary log on). With --dsn each is "server", except MariaDB's data with --place data=DIR:
    the directory its tables' files were read back in (DIR/<database>)"""
    data: str
    index: NotRequired[str]
    wal: NotRequired[str]
    temp: str
    redo: NotRequired[str]
    undo: NotRequired[str]
    binlog: NotRequired[str]


class Knee(TypedDict):
    clients: Count1
    tps: NonNeg
    reason: NotRequired[str]
    confirmed: NotRequired[bool]
    still_rising: NotRequired[bool]


class Spread(TypedDict):
    """A repeated figure (dbtier.core.stats.spread): the true median (an even count: the mean of the two middle
    values), min, max, the number of runs n, and (max - min) / median in % (null for n=1: no spread)."""
    median: NumOrNull
    min: NumOrNull
    max: NumOrNull
    n: Annotated[int, S(minimum=0)]
    spread_pct: NumOrNull


class ProbeSpread(Spread):
    """A probe summary figure's runs (results/probe.spreads): its point's measurements."""
    min_runtime_s: Annotated[NumOrNull, doc("the shortest of those runs, in seconds")]


class LatMs(TypedDict):
    p50: NumOrNull
    p95: NumOrNull
    p99: NumOrNull
    max: NumOrNull


class CpuUtil(TypedDict):
    user_pct: Any
    system_pct: Any
    iowait_pct: Any


class DeviceUse(TypedDict):
    device: Any
    iops: Any
    mbps: Any
    await_ms: Any
    busy_pct: Any


class WaitSamples(TypedDict, total=False):
    backend_states: int
    samples: int
    error: str | None


class ReadPath(TypedDict):
    """page reads PostgreSQL asked of the OS (blks_read delta) against read I/Os of the devices under the data
    directories; device_fraction null (with note) for no page reads or no device figures"""
    db_page_reads: NumOrNull
    device_read_ios: NumOrNull
    device_fraction: NumOrNull
    note: NotRequired[str | None]


class InnodbFigures(TypedDict, total=False):
    """SHOW GLOBAL STATUS after - before over a MariaDB point: per-second figures, and the raw deltas (null when
    the counter is missing or went backwards)"""
    buffer_pool_reads: NumOrNull
    buffer_pool_read_requests: NumOrNull
    data_reads: NumOrNull
    data_writes: NumOrNull
    log_bytes: NumOrNull
    fsyncs: NumOrNull
    row_lock_waits: NumOrNull
    buffer_pool_hit_ratio: NumOrNull
    log_waits_per_s: NumOrNull
    fsyncs_per_s: NumOrNull


class Durability(TypedDict):
    """whether a commit of this run survives a power loss with the server's settings; a non-durable run is not
    comparable with a durable one"""
    durable: bool
    reason: str


class OltpPoint(TypedDict):
    clients: Count1
    tps: NonNeg
    tpm: NonNeg
    nopm: float | None
    lat_ms: LatMs
    cpu_util: CpuUtil
    devices: list[DeviceUse]
    bottleneck: Literal["cpu", "storage", "commit", "client", "lock", "other", "unknown"]
    bottleneck_evidence: NotRequired[str]
    repeats: NotRequired[Count1]
    tps_runs: NotRequired[list[float]]
    tps_spread: NotRequired[Spread]
    tps_spread_pct: NotRequired[NumOrNull]
    shown_run: NotRequired[Count1]
    duration_s: NotRequired[Annotated[NumOrNull, doc(
        "seconds the rates divide by: pgbench's own measured time (transactions / its tps), else the wall time "
        "around pgbench")]]
    duration_source: NotRequired[Literal["pgbench", "sysbench", "sysbench total time", "wall clock", "none"]]
    requested_s: NotRequired[float]
    pgbench_T_s: NotRequired[Count1]
    not_measured: NotRequired[list[NotMeasured]]
    wait_samples: NotRequired[WaitSamples]
    read_path: NotRequired[ReadPath]
    sysbench_time_s: NotRequired[Annotated[Count1, doc("MariaDB: sysbench --time, whole seconds")]]
    latency_excludes_queue: NotRequired[Annotated[bool, doc(
        "sysbench under --rate: latency is service time only, the time queued in sysbench is not counted")]]
    innodb: NotRequired[Annotated[InnodbFigures, doc(
        "MariaDB: InnoDB's counters over the point (model.innodb.innodb_figures and the raw deltas); "
        "PostgreSQL's points have `pg` instead")]]


class OltpStep(TypedDict):
    name: str
    placement: Placement | None
    points: list[OltpPoint]
    knee: Knee | None
    reads_measured: NotRequired[Annotated[bool | None, doc(
        "steps that move tables or indexes: false when the cache guard found the reads came from memory")]]
    emulated_roles: NotRequired[Annotated[list[Role], doc(
        "bench oltp --emulate: the parts of this step on the emulated slow tier (their figures are the "
        "throttle's)")]]


class Memory(TypedDict):
    budget_bytes: Annotated[int | None, S(minimum=0), doc("the limit applied; null when none was (mechanism none)")]
    mechanism: Literal["cgroup2", "cgroup1", "size", "none"]
    data_bytes: Annotated[int | None, S(minimum=0), doc("database size after load")]
    shared_buffers_bytes: Annotated[int | None, S(minimum=0)]
    server_base_bytes: NotRequired[Annotated[int, S(minimum=0), doc(
        "MariaDB: the server's own memory outside its buffer pool, added to the budget")]]
    reason: Annotated[str | None, doc("why unbounded, or what the budget changed")]
    oom_kills: NotRequired[Annotated[int, S(minimum=0)]]


class Emulated(TypedDict):
    dir: str
    mount: str | None
    device: str | None
    read_iops: Count1
    write_iops: Count1
    size_bytes: NotRequired[Annotated[int, S(minimum=0)]]
    mechanism: NotRequired[str]
    label: Literal["emulated"]
    note: str


class OltpResult(TypedDict):
    bench: Literal["oltp"]
    points: list[OltpPoint]
    knee: Knee | None
    placement: Placement | None
    deviations: NotRequired[Annotated[list[str] | None, doc(
        "tpcc: what the TPC-C-like workload is not (null for the other workloads)")]]
    steps: NotRequired[list[OltpStep]]
    not_measured: NotRequired[list[NotMeasured]]
    memory: NotRequired[Annotated[Memory | None, doc(
        "the managed server's memory budget (bench oltp --memory): a memory cgroup bounds the server and the "
        "page cache of its files; null before the load finished")]]
    emulated: NotRequired[Annotated[Emulated | None, doc(
        "bench oltp --emulate: the emulated slow tier (a loop device on a file in dir, throttled); null when "
        "none")]]
    load: NotRequired[Obj | None]
    engine: NotRequired[Annotated[Literal["postgres", "mariadb"], doc("the engine's name (--engine)")]]
    durability: NotRequired[Durability]


class BenchParams(TypedDict, total=False):
    """the verdict groups runs by these (they are hash keys: a list there is refused)"""
    engine: str | None
    scale: float | None
    data: str | None
    temp: str | None


class BenchResult(TypedDict, total=False):
    """every bench kind: what the verdict and the report read before they know the kind"""
    bench: str
    engine: str | None
    params: BenchParams


# -- bench dss and bench backup (cli/bench_dss.py, cli/bench_backup.py) -----------------------------------------

class DssQuery(TypedDict, total=False):
    query: int
    seconds: float | None
    runs_seconds: list[float]
    cold_seconds: float | None
    rows: int | None
    read_bytes: int | None
    write_bytes: int | None
    temp_bytes: int | None
    cold_read_bytes: int | None
    cpu_util: float | None


class DssScan(TypedDict, total=False):
    device: str | None
    achieved_mbps: float | None
    probe_read_mbps_seq: float | None
    ratio: float | None
    note: str | None


class DssResult(TypedDict, total=False):
    bench: Literal["dss"]
    engine: str
    scale: float
    placement: dict[str, str | None] | None
    devices: list[str]
    load: Obj | None
    queries: list[DssQuery]
    runs: list[list[Obj]]
    total_seconds: float | None
    geomean_seconds: float | None
    answers_checked: bool
    answers_ok: bool | None
    scan: DssScan | None


class BackupTarget(TypedDict, total=False):
    target: str
    method: str
    bytes: int | None
    output_bytes: int | None
    seconds: float | None
    mbps: float | None
    compressed: bool
    caches_dropped: bool
    proc_cpu_cores: float | None
    cpu_util: Obj | None
    devices: Obj | None
    bottleneck: str
    bottleneck_evidence: str


class BackupResult(TypedDict, total=False):
    bench: Literal["backup"]
    engine: str
    source: Obj | None
    targets: list[BackupTarget]


# -- lab (cli/lab.py) ----------------------------------------------------------------------------------------------

class LabStep(TypedDict, total=False):
    name: str
    status: str
    run_dir: str | None
    argv: list[str] | None
    seconds: float | None
    error: str | None


class LabResult(TypedDict, total=False):
    steps: list[LabStep]
    requirement: Obj | None
    standing: list[Obj] | None
    report: Obj | None


# -- plan (cli/plan.py, model/planner) ----------------------------------------------------------------------------

class CatalogUsed(TypedDict, total=False):
    files: list[str]
    overridden: Obj
    server: Obj


class Pricing(TypedDict, total=False):
    basis: str
    server_ports: int | None
    server_ports_from: str
    text: str


class PlanCommon(TypedDict, total=False):
    plan: Literal["equivalent", "budget", "size", "value"]
    catalog: CatalogUsed
    pricing: Pricing


class PlanEquivalent(PlanCommon, total=False):
    reference: Obj
    using: Obj
    read_fraction: float
    arrays: dict[str, Obj]
    by_metric: dict[str, Obj]
    matched: dict[str, str]


class PlanBudget(PlanCommon, total=False):
    usd: float
    layout: str
    read_fraction: float
    options: list[Obj]


class PlanRequirement(TypedDict, total=False):
    read_iops: float | None
    write_iops: float | None
    read_mbps: float | None
    write_mbps: float | None
    capacity_gb: float | None
    max_read_latency_us: float | None
    percentile: float | None
    headroom: float | None
    source: str
    absent: list[str]


class PlanSize(PlanCommon, total=False):
    requirement: PlanRequirement
    history: Obj | None
    candidates: list[Obj]
    designs_tried: int
    designs_meeting: int
    binding: str | None
    binding_detail: str | None


class PlanValue(PlanCommon, total=False):
    result: Obj
    config: Obj
    measured: dict[str, Any]
    value: dict[str, float | None]
    figures_used: list[str]


# -- simulate (cli/simulate.py, sim/) -----------------------------------------------------------------------------

class TraceFigures(TypedDict, total=False):
    requests: int
    reads: int
    writes: int
    bytes: int
    duration_s: float | None


class Capture(TypedDict, total=False):
    """simulate capture: the blktrace capture (the trace's figures null when the device was idle)"""
    block_device: str
    trace_file: str
    command_returncode: int | None
    trace: TraceFigures | None


class MrcPoint(TypedDict, total=False):
    cache_bytes: Required[int]
    requests: int
    misses: int
    miss_ratio: float | None
    bytes: int
    byte_misses: int
    byte_miss_ratio: float | None
    sampled_cache_objects: float   # --sample: about how many sampled objects the scaled cache holds


class MrcCurve(TypedDict, total=False):
    policy: Required[str]
    sample_rate: float
    points: list[MrcPoint]


class MrcTrace(TypedDict, total=False):
    format: str
    mode: str                   # "object" (whole objects at their byte sizes) or "block" (block_size blocks)
    requests: int               # what the cache sees: requests, or a block trace's block accesses
    objects: int                # distinct objects (blocks)
    footprint_bytes: int
    ops: dict[str, int]         # a CSV with --columns op=COL: requests by op value (every one counted)
    block_size: int             # block mode: the block each request is cut into
    io_requests: int            # block mode: the trace's requests (reads only with reads_only)
    reads_only: bool


class Mrc(TypedDict, total=False):
    """simulate mrc: the trace and one miss-ratio curve per policy"""
    trace: MrcTrace
    curves: list[MrcCurve]
    estimates: bool             # a SHARDS sample (--sample): the figures are estimates
    note: str


class SimulateResult(TypedDict, total=False):
    trace: TraceFigures
    design: str
    policy: str | None
    read_hit_ratio: float | None
    request_hit_ratio: float | None
    curve: list[Obj] | None
    latency_us: dict[str, dict[str, float | None]]
    device_util: dict[str, float | None]
    resync: Obj | None
    # --volume all: each volume's figures ({volume, trace, read_hit_ratio, request_hit_ratio, latency_us,
    # device_util}); the keys above are then the totals (sim/volumes.py)
    volumes: list[Obj]
    simulation: Obj
    capture: Capture
    # simulate convert: {source: {path, bytes, mtime_ns, sha256}, path, format, requests, volumes,
    # bytes_written, lines, skipped_bad_lines}
    convert: Obj
    mrc: Mrc


# -- history (cli/history.py, history/) ------------------------------------------------------------------------------

Peaks = dict[str, dict[str, float | None] | None]


class HistoryDatabase(TypedDict, total=False):
    name: Required[str]
    intervals: int
    start: str | None
    end: str | None
    peaks: Peaks
    total: Peaks
    capacity_gb: float | None


class Named(TypedDict, total=False):
    name: Required[str]
    peaks: Peaks
    capacity_gb: float | None


class HistoryResult(TypedDict, total=False):
    """every history action: what plan --from-history and the report read before they know the action"""
    kind: str
    source: str
    databases: list[Named]
    peaks: Peaks
    requirement: Obj | None
    series_files: list[str]
    drivers: list[Obj]
    capacity_gb: float | None


class HistoryImport(TypedDict, total=False):
    kind: str
    source: str
    files: list[str]
    profile_tz: str | None
    databases: list[HistoryDatabase]
    series_files: Annotated[list[str], doc("NAME.parquet, or NAME/ for a series written in parts (a batched import)")]
    limitations: list[Any]
    raw_note: Annotated[str, doc("inputs too large to copy into raw/ (params.files names them)")]
    batches: Annotated[int, doc("batches of files the import read (store.batch_bytes() of input each)")]
    skipped_files: Annotated[list[dict[str, str]], doc("--skip-bad-files: {file, error} of each file left out")]
    appended_to: Annotated[str, doc("--into: the import run this one extends (its series and databases are kept)")]
    database_files: Annotated[dict[str, Obj], doc("per database as the source names it: {files, names} (what --into "
                                                  "reads again when new files add to it)")]


class HistoryConsolidate(TypedDict, total=False):
    runs: list[str]
    databases: list[Obj]
    grid: Obj
    grid_databases: list[str]
    intervals: int
    peaks: Peaks
    total: Peaks
    peak_of_sum: dict[str, float | None]
    sum_of_peaks: dict[str, Any]
    drivers: list[Obj]
    capacity_gb: float | None
    series_files: list[str]


# The functional form: `from` (where the figures came from) is a Python keyword.
HistoryRequirement = TypedDict("HistoryRequirement", {
    "requirement": Obj,
    "with_headroom": dict[str, float | None],
    "read_iops": float | None,
    "write_iops": float | None,
    "read_mbps": float | None,
    "write_mbps": float | None,
    "capacity_gb": float | None,
    "percentile": float | None,
    "headroom": float | None,
    "absent": Obj,
    "from": Obj,
}, total=False)


# -- the commands that read runs: report, show, compare; catalog -----------------------------------------------------

class RunRef(TypedDict, total=False):
    command: str
    kind: str
    dir: str
    host: str | None
    status: str | None
    started_at: str | None
    finished_at: str | None


class ReportResult(TypedDict, total=False):
    inputs: list[str]
    report_html: str


class Figure(TypedDict, total=False):
    key: str
    label: str
    group: str
    unit: str
    value: float | str | None
    digits: int
    better: str | None
    detail: bool
    spread: Spread | None


class ShowResult(TypedDict, total=False):
    run: RunRef
    verdict: Obj | None
    figures: list[Figure]
    tables: list[Obj]
    method: list[Obj]
    guards: list[Obj]
    problems: list[Any]
    steps: list[Obj]


class CompareRow(TypedDict, total=False):
    key: str
    metric: str
    group: str
    unit: str
    digits: int
    a: float | str | None
    b: float | str | None
    a_spread: Spread | None
    b_spread: Spread | None
    diff: float | None
    ratio: float | None
    better: str | None


class CompareResult(TypedDict, total=False):
    a: RunRef
    b: RunRef
    rows: list[CompareRow]


class CatalogResult(TypedDict, total=False):
    catalog: CatalogUsed
    server: Obj
    devices: list[Obj]
    device: Obj
    overheads: list[Obj]


EXTRA: dict[type, Any] = {Versions: str | None, ProbeSummary: False}

# (which documents, their section): `when` maps a key (a dotted path into params) to the value it holds.
SECTIONS: list[tuple[dict[str, str], type]] = [
    ({"command": "probe"}, ProbeResult),
    ({"command": "bench"}, BenchResult),
    ({"command": "bench", "bench": "oltp"}, OltpResult),
    ({"command": "bench", "bench": "dss"}, DssResult),
    ({"command": "bench", "bench": "backup"}, BackupResult),
    ({"command": "lab"}, LabResult),
    ({"command": "plan", "plan": "equivalent"}, PlanEquivalent),
    ({"command": "plan", "plan": "budget"}, PlanBudget),
    ({"command": "plan", "plan": "size"}, PlanSize),
    ({"command": "plan", "plan": "value"}, PlanValue),
    ({"command": "simulate"}, SimulateResult),
    ({"command": "history"}, HistoryResult),
    ({"command": "history", "params.action": "import"}, HistoryImport),
    ({"command": "history", "params.action": "consolidate"}, HistoryConsolidate),
    ({"command": "history", "params.action": "requirement"}, HistoryRequirement),
    ({"command": "report"}, ReportResult),
    ({"command": "show"}, ShowResult),
    ({"command": "compare"}, CompareResult),
    ({"command": "catalog"}, CatalogResult),
]
