"""The result document of every command, defined once as types: the published JSON Schema
(schema/result.schema.json) is generated from these by `python -m dbtier.results.schema`.

Every TypedDict here becomes a `$defs` entry (its name in snake_case, its docstring the description).
`Annotated[T, S(...)]` adds JSON Schema keywords (minimum, pattern, description) to T; `Annotated[T, Def("x")]`
names a plain type as `$defs/x`.
results/shape.py derives its fast structural check from the same types (null accepted at every key, as
readers take it for absent, except where a key is `Required[...]`). `EXTRA[cls]` is what keys a type does not list may hold (False: none).
Keys are the JSON keys, as readers use them: renaming one here renames it in the schema only, never in what
the commands write, so a test validates real documents of every command against the generated schema.

`SECTIONS` says which command, or which kind of its (`result_kind`), adds which section to the envelope: each
kind's `result` in dbtier.results.kinds, where the kind is declared. The sections of the newer commands list
their keys as optional: a failed run stops before writing them, and their types are checked wherever they
are present.
"""

from typing import Annotated, Any, Literal, Required, TypedDict

from dbtier.results import kinds

from dbtier.results.types_base import (doc, RunOwner, Abandoned, Def, S, Timestamp, NumOrNull, Status, Obj, Error, BlockDevice, TargetInfo, Versions, Machine, Guard, Params, Envelope)  # noqa: F401
from dbtier.results.types_measure import (Latency, Side, Count1, NonNeg, ProbePoint, ProbeSummary, SteadyState, FillStep, HonestyCheck, FsyncHonesty, ProbeKnee, ProbeTarget, FleetAggregate, FleetHost, ScalingStep, FleetScaling, FleetInfo, ProbeResult, Role, NotMeasured, Placement, Knee, Spread, ProbeSpread, LatMs, CpuUtil, DeviceUse, WaitSamples, ReadPath, InnodbFigures, Durability, OltpPoint, OltpStep, Memory, Emulated, OltpResult, BenchParams, BenchResult, DssQuery, DssScan, DssResult, BackupTarget, BackupResult)  # noqa: F401


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


# -- plan (cli/plan/command.py, model/planner) ----------------------------------------------------------------------------

class CatalogUsed(TypedDict, total=False):
    files: list[str]
    overridden: Obj
    server: Obj
    ignored: Annotated[list[Obj], doc("entries of a user's catalog left out, each {id, interface, origin, why} "
                                      "(cloud volumes: plan size --cloud sizes them)")]


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
    mix_rule: Obj        # how IOPS at the read fraction are reckoned (harmonic), with the arithmetic mean


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


# -- simulate (cli/simulate/command.py, sim/) -----------------------------------------------------------------------------

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
    busiest_utilisation: Annotated[dict[str, Obj | None] | None, doc(
        "per device role, its busiest second beside device_util's average: {pct (busy time over the interval, "
        "0-100), at_s (from the first request), requests (arriving in it), interval_s}; None untimed")]
    recommended_cache_gb: Annotated[float | None, doc("--sweep: the size the curve recommends (recommended.rule)")]
    recommended: Annotated[Obj | None, doc(
        "--sweep: {cache_gb, read_hit_ratio, rule, within_pp, per_doubling_pp, within_gb, flattens_at_gb, "
        "flattens_read_hit_ratio, largest_gb, largest_read_hit_ratio} (sim/sweep.py recommend)")]
    # --volume all: each volume's figures ({volume, trace, read_hit_ratio, request_hit_ratio, latency_us,
    # device_util}); the keys above are then the totals (sim/volumes.py)
    volumes: list[Obj]
    simulation: Obj
    capture: Capture
    # simulate convert: {source: {path, bytes, mtime_ns, sha256}, path, format, requests, volumes,
    # bytes_written, lines, skipped_bad_lines}
    convert: Obj
    mrc: Mrc


# -- history (cli/history/command.py, history/) ------------------------------------------------------------------------------

Peaks = dict[str, dict[str, float | None] | None]


class HistoryDatabase(TypedDict, total=False):
    name: Required[str]
    intervals: int
    start: str | None
    end: str | None
    peaks: Peaks
    total: Peaks
    capacity_gb: float | None
    gaps: Annotated[int, doc("places the series is not continuous at its step (history/provenance.py)")]
    busy: Annotated[dict[str, dict[str, float | None]], doc("Prometheus: each device's utilisation (busy time / "
                                                            "elapsed, 0-1), p95 and max over the intervals")]


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
    provenance: Annotated[Obj, doc("source, semantics (counter, delta or rate), native_step_s, averaging_s, resets, "
                                   "wraps, gaps, basis: what the numbers are (history/provenance.py)")]


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
    "by_file_type": Annotated[dict[str, Obj], doc("an import's file types (WAL apart from data where the source "
                                                  "tells them apart), each at its own percentile (history/split.py)")],
}, total=False)


# -- advise: from a history to the options ----------------------------------------------------------------------

class AdviseDatabase(TypedDict, total=False):
    name: Annotated[str, doc("the database (a clustered database's instances are one row, summed)")]
    instances: int | None
    read_iops: float | None
    write_iops: float | None
    read_mbps: float | None
    write_mbps: float | None
    capacity_gb: float | None
    write_tb_per_day: float | None


class AdviseOption(TypedDict, total=False):
    where: Annotated[Literal["on-prem", "aws", "azure", "gcp"], doc("where the database would live")]
    instance: Annotated[str | None, doc("the cloud instance whose volume caps bind (None on-prem)")]
    description: Annotated[str | None, doc("what to buy or provision; a place with no option: its route, or "
                                           "'no option'")]
    purchase_usd: float | None
    monthly_usd: float | None
    total_usd: Annotated[float | None, doc("the cost over service_years: the basis the options are ranked on")]
    per_year_usd: float | None
    service_years: float
    binding: Annotated[str | None, doc("the requirement that decides the size")]
    meets: Annotated[bool, doc("false: no option here, the caveats say why")]
    reserve: Annotated[float | None, doc("the smallest margin over the measured requirement (0.36 = 36% above)")]
    caveats: Annotated[list[str], doc("what would break the option (a burst bucket drained, an instance cap, "
                                      "flash wear, no power-loss protection), or why there is none")]


class Advice(TypedDict, total=False):
    requirement: Obj
    databases: list[AdviseDatabase]
    clustered: bool
    bound: Annotated[str | None, doc("null, or why the figures are bounds or estimates")]
    options: list[AdviseOption]
    recommended: Annotated[int | None, doc("index into options: the cheapest over the service life that meets "
                                           "the requirement; null when none does")]
    assumptions: list[str]
    current: Annotated[Obj, doc("--current: the probed storage against the requirement, figure by figure")]


AdviseResult = TypedDict("AdviseResult", {
    "advice": Advice,
    "requirement": Obj,
    "from": Obj,
    "history_runs": list[str],
    "engine": str | None,
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
    report_html: str        # the files written in the run's directory (--format html, md or both)
    report_md: str
    output_html: str        # their copies (--output FILE)
    output_md: str


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
    verdict: Obj | None


class CatalogResult(TypedDict, total=False):
    catalog: CatalogUsed
    server: Obj
    devices: list[Obj]
    device: Obj
    overheads: list[Obj]


class CleanedEntry(TypedDict, total=False):
    """one registry entry of a dead owner: what was (or, with --dry-run, would be) removed, and what is left"""
    id: str | None
    kind: str | None
    owner: Obj
    removed: list[str]
    left: list[str]


class CleanupResult(TypedDict, total=False):
    dry_run: bool
    registry: str
    removed: list[CleanedEntry]
    live: Annotated[int, doc("entries of dbtier processes still running: never touched")]
    damaged: Annotated[list[str], doc("registry files that were not entries (removed unless --dry-run)")]


EXTRA: dict[type, Any] = {Versions: str | None, ProbeSummary: False}


def _sections() -> list[tuple[dict[str, str], type]]:
    """Each kind's typed result (dbtier.results.kinds: `result`), command by command: a type every kind of the
    command lists is the command's section (`when` its command), any other the kind's own (`when` its
    result_kind), in the order the kinds list them."""
    out: list[tuple[dict[str, str], type]] = []
    for command in kinds.COMMANDS:
        of = kinds.of_command(command)
        for name in dict.fromkeys(t for k in of for t in k.result):
            cls = globals()[name]
            owners = [k for k in of if name in k.result]
            if len(owners) == len(of):
                out.append(({"command": command}, cls))
            else:
                out += [({"command": command, kinds.KEY: k.name}, cls) for k in owners]
    return out


# (which documents, their section): `when` maps a key of the document to the value it holds.
SECTIONS: list[tuple[dict[str, str], type]] = _sections()
