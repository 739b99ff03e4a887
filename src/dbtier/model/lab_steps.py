"""The lab's steps as typed requests: one frozen dataclass per step kind, built from the lab's options and
the earlier steps' results (the probe's directory, the requirement the OLTP run measured), each with one
method `argv()`, the only place that step's command line is written. Pure: no process, no file read.

cli/lab_calls.py makes each step its command's library request, with the values its argv gives, and calls
it in the lab's process; the lab document records each step's `dbtier ARGV`, the command line that makes
the same request, so one step can be run again alone, as it ran in the lab.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence, Union


@dataclass(frozen=True)
class EmulatedTier:
    """`lab --emulate DIR=RATE` as the steps pass it on: DIR (absolute) throttled to RATE (as given)."""
    dir: str
    rate: str

    @property
    def text(self) -> str:
        return f"{self.dir}={self.rate}"

    def option(self) -> list[str]:
        return ["--emulate", self.text]


@dataclass(frozen=True)
class ProbeStep:
    """`probe DIR ...` over every directory with the probe profile `profile`, and the lab profile's own
    overrides where it has them (smoke: short points on a small file that check the wiring)."""
    name: ClassVar[str] = "probe"
    dirs: tuple[str, ...]
    profile: str
    point_s: str | None = None
    size: str | None = None
    max_lat_ms: str | None = None

    def argv(self) -> list[str]:
        return (["probe", *self.dirs, "--profile", self.profile]
                + (["--point-seconds", self.point_s] if self.point_s is not None else [])
                + (["--size", self.size] if self.size is not None else [])
                + (["--max-lat-ms", self.max_lat_ms] if self.max_lat_ms is not None else []))


@dataclass(frozen=True)
class OltpStep:
    """`bench oltp --engine E`, the tpcc workload: a client sweep on the one directory, or with a slow
    tier the placement matrix fast,slow. An emulated tier throttles the run; with one directory the
    data is placed on it (the emulated tier is that directory)."""
    name: str
    engine: str
    fast: str
    slow: str | None          # None: one directory, a sweep there
    warehouses: str
    repeat: str
    clients: str
    duration: str
    warmup: str
    emulate: EmulatedTier | None = None

    def argv(self) -> list[str]:
        argv = ["bench", "oltp", "--engine", self.engine, "--workload", "tpcc", "--warehouses", self.warehouses,
                "--repeat", self.repeat]
        if self.slow is not None:
            argv += ["--placement-matrix", f"{self.fast},{self.slow}"]
        argv += ["--clients", self.clients, "--duration", self.duration, "--warmup", self.warmup,
                 "--dir", self.fast]
        if self.emulate is not None:
            argv += ([] if self.slow is not None else ["--place", f"data={self.emulate.dir}"]) + self.emulate.option()
        return argv


@dataclass(frozen=True)
class DssStep:
    """`bench dss`: a TPC-H power run with its data on the fast tier and its temp on `temp`; the probe's
    directory when the probe ran, the emulated tier's throttle when `temp` is it."""
    name: str
    scale: str
    repeat: str
    data: str
    temp: str
    probe_dir: str | None = None
    emulate: EmulatedTier | None = None
    memory_limit: str | None = None

    def argv(self) -> list[str]:
        return (["bench", "dss", "--scale", self.scale, "--repeat", self.repeat, "--data", self.data,
                 "--temp", self.temp]
                + (["--probe", self.probe_dir] if self.probe_dir is not None else [])
                + (self.emulate.option() if self.emulate is not None and self.emulate.dir == self.temp else [])
                + (["--memory-limit", self.memory_limit] if self.memory_limit is not None else []))


@dataclass(frozen=True)
class BackupStep:
    """`bench backup` of a database on the fast tier to `to`, throttled when `to` is the emulated tier."""
    name: str
    to: str
    data: str
    scale: str
    methods: str
    repeat: str
    emulate: EmulatedTier | None = None

    def argv(self) -> list[str]:
        return (["bench", "backup", "--to", self.to, "--data", self.data, "--scale", self.scale,
                 "--methods", self.methods, "--repeat", self.repeat]
                + (self.emulate.option() if self.emulate is not None and self.emulate.dir == self.to else []))


# The rate options of `plan size`: (option, requirement key, format); a figure is passed when its formatted
# value is above 0 (a measured 0 is no load to size for, and 0.04 MB/s reads as 0.0).
_RATES = (("--read-iops", "read_iops", ".0f"), ("--write-iops", "write_iops", ".0f"),
          ("--read-mbps", "read_mbps", ".1f"), ("--write-mbps", "write_mbps", ".1f"),
          ("--capacity-gb", "capacity_gb", ".0f"))


@dataclass(frozen=True)
class MeasuredLoad:
    """The requirement the OLTP run measured (model/lab.py requirement_from_oltp); None: not measured."""
    read_iops: float | None = None
    write_iops: float | None = None
    read_mbps: float | None = None
    write_mbps: float | None = None
    capacity_gb: float | None = None

    @classmethod
    def of(cls, req: Mapping[str, Any]) -> MeasuredLoad:
        def num(key: str) -> float | None:
            v = req.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        return cls(*(num(key) for _, key, _ in _RATES))

    def options(self) -> list[str]:
        """The figures above 0 as `plan size` options (none: nothing to size for)."""
        argv = []
        for opt, key, fmt in _RATES:
            v = getattr(self, key)
            if v is not None and float(format(v, fmt)) > 0:
                argv += [opt, format(v, fmt)]
        return argv

    def figures(self) -> dict[str, float | None]:
        """Each figure as its option gives it to `plan size`: rounded as written, None unless above 0."""
        out: dict[str, float | None] = {}
        for _, key, fmt in _RATES:
            v = getattr(self, key)
            out[key] = float(format(v, fmt)) if v is not None and float(format(v, fmt)) > 0 else None
        return out


@dataclass(frozen=True)
class PlanSizeStep:
    """`plan size` for the measured load, 30 % headroom, the 5 cheapest: durable writes unless the OLTP run
    was not durable; the probe's directory when it measured a commit rate, so devices without power-loss
    protection are priced at a measured flush-bound rate."""
    name: ClassVar[str] = "plan-size"
    load: MeasuredLoad
    durable: bool = True
    probe_dir: str | None = None

    def argv(self) -> list[str]:
        return (["plan", "size", *self.load.options(), "--durable-writes", "required" if self.durable else "no"]
                + (["--probe", self.probe_dir] if self.probe_dir is not None else [])
                + ["--headroom", "0.3", "--top", "5"])


@dataclass(frozen=True)
class PlanCloudStep:
    """`plan size --cloud PROVIDER --instance auto` for the same load: the provider's volumes as it sells
    them, on the cheapest instance whose caps carry the load sustained."""
    name: ClassVar[str] = "plan-cloud"
    load: MeasuredLoad
    provider: str

    def argv(self) -> list[str]:
        return ["plan", "size", *self.load.options(), "--cloud", self.provider, "--instance", "auto",
                "--headroom", "0.3", "--top", "5"]


@dataclass(frozen=True)
class ReportStep:
    """`report LAB_DIR`: the lab's report, once its own status and time are final."""
    name: ClassVar[str] = "report"
    lab_dir: str

    def argv(self) -> list[str]:
        return ["report", self.lab_dir]


LabStep = Union[ProbeStep, OltpStep, DssStep, BackupStep, PlanSizeStep, PlanCloudStep, ReportStep]


# -- the requests, from the lab's options (dirs absolute, the profile's settings) and earlier results -------

def probe_step(dirs: Sequence[str], profile: str, settings: Mapping[str, Any]) -> ProbeStep:
    """The probe profile of the lab profile's name where probe has one (quick, full), else quick with the lab
    profile's probe settings."""
    return ProbeStep(tuple(dirs), profile if profile in ("quick", "full") else "quick", settings.get("probe_point_s"),
                     settings.get("probe_size"), settings.get("probe_max_lat_ms"))


def oltp_step_name(engine: str, engines: Sequence[str]) -> str:
    """'oltp' for one engine (the lab's step name before --engines), 'oltp-<engine>' for each of several."""
    return "oltp" if len(engines) == 1 else f"oltp-{engine}"


def oltp_steps(engines: Sequence[str], dirs: Sequence[str], fast: str, slow: str, settings: Mapping[str, Any],
               emulate: EmulatedTier | None = None) -> list[tuple[str, OltpStep]]:
    """(engine, its OLTP step) in the order given: the same tpcc workload and storage for every engine; two
    or more directories walk the placement matrix fast,slow (the profile's matrix clients and duration)."""
    matrix = len(dirs) >= 2
    return [(e, OltpStep(oltp_step_name(e, engines), e, fast if matrix else dirs[0], slow if matrix else None,
                         settings["oltp_warehouses"], settings["oltp_repeat"],
                         settings["matrix_clients" if matrix else "oltp_clients"],
                         settings["matrix_duration" if matrix else "oltp_duration"], settings["oltp_warmup"],
                         emulate))
            for e in engines]


def dss_steps(dirs: Sequence[str], fast: str, settings: Mapping[str, Any], scale: float | None = None,
              probe_dir: str | None = None, emulate: EmulatedTier | None = None,
              memory_limit: str | None = None) -> list[DssStep]:
    """dss-1, dss-2, ...: temp on each directory in turn, data on the fast tier; `scale` (lab --dss-scale)
    over the profile's."""
    sf = settings["dss_scale"] if not scale else f"{scale:g}"
    return [DssStep(f"dss-{i + 1}", sf, settings["dss_repeat"], fast, d, probe_dir, emulate, memory_limit)
            for i, d in enumerate(dirs)]


def backup_steps(dirs: Sequence[str], fast: str, settings: Mapping[str, Any],
                 emulate: EmulatedTier | None = None) -> list[BackupStep]:
    """backup-1, backup-2, ...: a database on the fast tier backed up to each directory in turn."""
    return [BackupStep(f"backup-{i + 1}", d, fast, settings["backup_scale"], settings["backup_methods"],
                       settings["backup_repeat"], emulate)
            for i, d in enumerate(dirs)]


def plan_size_step(req: Mapping[str, Any], oltp: Mapping[str, Any] | None = None,
                   probe: Mapping[str, Any] | None = None, probe_dir: str | None = None) -> PlanSizeStep | None:
    """The plan for the measured requirement (None: no figure above 0, nothing to size for). A run that
    says it was not durable (fsync off, synchronous_commit off, innodb_flush_log_at_trx_commit=2) asked for
    no durable writes; one that was, or does not say, needs them. The probe is passed when its first target
    measured a commit rate above 0."""
    load = MeasuredLoad.of(req)
    if not load.options():
        return None
    dur = (oltp or {}).get("durability")
    durable = dur.get("durable") if isinstance(dur, dict) else None
    targets = (probe or {}).get("targets")
    first = targets[0] if isinstance(targets, list) and targets and isinstance(targets[0], dict) else {}
    rate = (first.get("summary") or {}).get("commits_per_s")
    measured = isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0
    return PlanSizeStep(load, durable is not False, probe_dir if probe_dir and measured else None)


def plan_cloud_step(req: Mapping[str, Any], provider: str) -> PlanCloudStep | None:
    """The cloud plan for the measured requirement on `provider` (None: nothing to size for)."""
    load = MeasuredLoad.of(req)
    return PlanCloudStep(load, provider) if load.options() else None
