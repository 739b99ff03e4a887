"""The result types of the commands that measure: probe, bench oltp, bench dss and bench backup
(dbtier.results.types re-exports them; see its docstring)."""

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from dbtier.results.types_base import (doc, S, NumOrNull, Status, Obj)  # noqa: F401


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


class CacheSuspect(TypedDict):
    """Figures a write-back cache gave rather than the media (results/cache_suspect.py: writes above reads,
    or above what the device class sustains); the verdict does not judge by them."""
    figures: Annotated[list[Literal["write_mbps_seq", "write_iops_4k"]], doc("the summary keys concerned")]
    why: Annotated[str, doc("the figures that show it, e.g. 'writes 2,767 MB/s > reads 1,303 MB/s on vda'")]
    test: Annotated[str, doc("what would measure the media instead")]
    device_class: Annotated[Literal["virtual", "hdd", "flash", None], doc(
        "from the machine's block device; null: unknown or an array of disks")]


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
    cache_suspect: NotRequired[Annotated[CacheSuspect | None, doc(
        "figures a write-back cache gave (null: none); absent in documents that predate the check")]]


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


# -- bench oltp (cli/bench/command.py, workloads/) ------------------------------------------------------------------------

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


class PlacedPart(TypedDict):
    """where one placed part went (measure/placed.py): its directory (or file), the whole disk under it as
    /proc/diskstats names it (vda; an emulated tier's loop device), the filesystem and the mount point; all
    but dir null where unknown (a --dsn server's host)"""
    dir: str | None
    device: str | None
    fs: str | None
    mount: str | None


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
    pgbench_scale: NotRequired[Annotated[Count1 | None, doc(
        "pgbench's \"scaling factor\" line, checked against the loaded scale (null for tpcc)")]]
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
    placement_where: NotRequired[Annotated[dict[str, PlacedPart] | None, doc(
        "each role's directory, device, filesystem and mount (null: a --dsn server's, not known here)")]]
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
    read_iops: Annotated[int, S(minimum=0)]     # 0: no IOPS limit (a bytes-per-second tier, bench backup)
    write_iops: Annotated[int, S(minimum=0)]
    read_bps: NotRequired[Annotated[int, S(minimum=0)]]     # bytes per second; 0: no bytes limit
    write_bps: NotRequired[Annotated[int, S(minimum=0)]]
    roles: NotRequired[list[str]]                          # bench backup: "source", "target" on the tier
    size_bytes: NotRequired[Annotated[int, S(minimum=0)]]
    mechanism: NotRequired[str]
    label: Literal["emulated"]
    note: str


class OltpResult(TypedDict):
    bench: Literal["oltp"]
    points: list[OltpPoint]
    knee: Knee | None
    placement: Placement | None
    placement_where: NotRequired[Annotated[dict[str, PlacedPart] | None, doc(
        "each role's directory, device, filesystem and mount (a matrix: its last step's; null: --dsn)")]]
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


# -- bench dss and bench backup (cli/bench/dss.py, cli/bench/backup.py) -----------------------------------------

class DssQuery(TypedDict, total=False):
    query: int
    seconds: float | None
    runs_seconds: list[float]
    cold_seconds: float | None
    rows: int | None
    read_bytes: int | None
    write_bytes: int | None
    temp_bytes: int | None
    temp_device_write_bytes: Annotated[int | None, doc(
        "what the temp directory's device wrote while the query ran, in the run its figures come from")]
    temp_bytes_runs: list[int]
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
    placement_where: Annotated[dict[str, PlacedPart] | None, doc(
        "data's and temp's directory (or file), device, filesystem and mount")]
    devices: list[str]
    load: Obj | None
    queries: list[DssQuery]
    runs: list[list[Obj]]
    total_seconds: float | None
    geomean_seconds: float | None
    answers_checked: bool
    answers_ok: bool | None
    scan: DssScan | None
    temp_tier: Annotated[Obj | None, doc(
        "whether the spill reached the temp directory's device: {device, rule, temp_tier_exercised (null: nothing "
        "spilled), runs: [{run, spill_bytes, device_write_bytes, temp_tier_exercised, queries_spilled}], guard}")]
    memory: Annotated[Obj | None, doc(
        "the queries' memory budget (bench dss --memory): {budget_bytes, mechanism (cgroup1, cgroup2, none), "
        "reason, oom_kills}")]
    emulated: Annotated[Emulated | None, doc("bench dss --emulate: the emulated slow tier; null when none")]
    emulated_roles: Annotated[list[str], doc("bench dss --emulate: the roles (data, temp) on the emulated tier")]


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
    null_mbps: float | None        # a directory run's reference: its method's null sink (median MB/s)
    null_method: str               # ... another method's, when it has none of its own (plain)
    run: int                       # which of the runs this record's bytes, seconds and MB/s are
    runs: int
    mbps_runs: list[float]
    seconds_runs: list[float]
    mbps_spread: Obj
    warmup_runs: int                # backups run first and not measured (the first of a series: 1)
    at_throttle: bool              # the rate is at an emulated tier's throttle: the limit, whatever the null sink
    raw_files: list[str]           # its program output, under the run directory


class BackupResult(TypedDict, total=False):
    bench: Literal["backup"]
    engine: str
    source: Obj | None
    targets: list[BackupTarget]
    emulated: Emulated | None
