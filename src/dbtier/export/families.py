"""Every metric family dbtier exports: its name, labels and help, in one table.

Naming (Prometheus' conventions): the prefix `dbtier_`; base units in the name (`_seconds`, `_bytes`,
`_ratio` for 0-1, `_per_second` for rates); no `_total` (nothing here is a counter: a finished run's
figures are gauges); `dbtier_run_info` carries each run's metadata, every other series only `run_id` and
its own dimensions. The label names `job` and `instance` belong to the scrape and the Pushgateway's
grouping key, `le` and `quantile` to histograms and summaries: none is used here (a percentile is the
label `percentile`: p50, p95, p99, max). Money is not a base unit: a price carries `currency`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric

RESERVED_LABELS = frozenset({"job", "instance", "le", "quantile"})
UNITS = ("seconds", "bytes", "ratio")        # declared as the OpenMetrics UNIT when the name ends in one


@dataclass(frozen=True)
class Spec:
    labels: tuple[str, ...]
    help: str
    info: bool = False


def _s(labels: str, help: str, info: bool = False) -> Spec:
    return Spec(tuple(labels.split()), help, info)


RUN_INFO_LABELS = "run_id command kind host target engine workload status dbtier_version"

# Headline figures (dbtier export metrics): no timestamps.
METRICS: dict[str, Spec] = {
    "dbtier_run": _s(RUN_INFO_LABELS, "One series per dbtier run: its metadata (join on run_id).", True),
    "dbtier_run_start_timestamp_seconds": _s("run_id", "When the run started (Unix time)."),
    "dbtier_run_duration_seconds": _s("run_id", "The run's wall-clock time, start to finish."),
    # probe (fio)
    "dbtier_probe_operations_per_second": _s(
        "run_id target test", "Probe: the sweep's peak IOPS (read_4k, write_4k, mixed_8k) or commits per second "
        "(commit: write + fdatasync at one outstanding I/O)."),
    "dbtier_probe_throughput_bytes_per_second": _s(
        "run_id target test", "Probe: sequential read or write bandwidth (read_seq, write_seq), best block size."),
    "dbtier_probe_latency_seconds": _s(
        "run_id target test percentile", "Probe: completion latency (fio clat): 4 KiB random at one outstanding "
        "I/O (read_4k_qd1, write_4k_qd1), at the sweep's highest load (read_4k_max_load), a commit (commit)."),
    "dbtier_probe_fsync_honest": _s(
        "run_id target", "Probe: 1 when fdatasync took the time of a real device flush, 0 when it looks cached."),
    "dbtier_probe_read_knee_outstanding": _s(
        "run_id target", "Probe: outstanding I/Os where 4 KiB random read IOPS stop growing (the knee)."),
    # bench oltp
    "dbtier_oltp_transactions_per_second": _s(
        "run_id point", "OLTP: transactions per second at the knee (point=knee) and at the best point (best)."),
    "dbtier_oltp_new_orders_per_second": _s(
        "run_id point", "OLTP (TPC-C-like): new-order transactions per second (NOPM / 60)."),
    "dbtier_oltp_latency_seconds": _s("run_id point percentile", "OLTP: transaction latency at the point."),
    "dbtier_oltp_clients": _s("run_id point", "OLTP: concurrent clients at the point."),
    "dbtier_oltp_cpu_busy_ratio": _s("run_id point", "OLTP: the server's CPU busy fraction at the point."),
    "dbtier_oltp_device_busy_ratio": _s("run_id point device", "OLTP: a device's busy fraction at the point."),
    "dbtier_oltp_durable": _s("run_id", "OLTP: 1 when committed transactions were durable (fsync on, honest)."),
    "dbtier_oltp_sweep_transactions_per_second": _s(
        "run_id step clients", "OLTP: transactions per second at each client count (step: the placement step)."),
    "dbtier_oltp_sweep_latency_seconds": _s(
        "run_id step clients percentile", "OLTP: transaction latency at each client count."),
    # bench dss
    "dbtier_dss_power_run_seconds": _s("run_id", "DSS: the TPC-H power run's total time (22 queries)."),
    "dbtier_dss_query_geomean_seconds": _s("run_id", "DSS: geometric mean of the per-query times."),
    "dbtier_dss_query_seconds": _s("run_id query", "DSS: one TPC-H query's time."),
    "dbtier_dss_scale_factor": _s("run_id", "DSS: TPC-H scale factor."),
    "dbtier_dss_peak_temp_bytes": _s("run_id", "DSS: the largest temp spill of one query."),
    "dbtier_dss_spilled_queries": _s("run_id", "DSS: queries that spilled to temp."),
    "dbtier_dss_cpu_busy_ratio": _s("run_id", "DSS: CPU busy fraction, weighted by each query's time."),
    "dbtier_dss_answers_correct": _s("run_id", "DSS: 1 when every answer matched the reference, 0 otherwise."),
    "dbtier_dss_cold_scan_throughput_bytes_per_second": _s("run_id", "DSS: the cold scan's read bandwidth."),
    # bench backup
    "dbtier_backup_throughput_bytes_per_second": _s(
        "run_id method sink", "Backup: full-backup bandwidth to a directory (sink=directory) or a null sink (null)."),
    "dbtier_backup_source_bytes": _s("run_id", "Backup: the source database's size."),
    "dbtier_backup_output_bytes": _s("run_id method", "Backup: what the method wrote to the directory."),
    "dbtier_backup_duration_seconds": _s("run_id method", "Backup: the directory run's time."),
    # plan
    "dbtier_plan_cheapest": _s("run_id configuration binding", "Plan: the cheapest configuration that meets "
                               "the requirement, and what binds it.", True),
    "dbtier_plan_cheapest_price": _s(
        "run_id currency", "Plan: the cheapest configuration's price (purchase; cloud: over the service life)."),
    "dbtier_plan_cheapest_monthly_price": _s("run_id currency", "Plan (cloud): the cheapest design's price a month."),
    "dbtier_plan_cheapest_capacity_bytes": _s("run_id", "Plan: the cheapest configuration's usable capacity."),
    "dbtier_plan_cheapest_operations_per_second": _s("run_id op", "Plan: the cheapest configuration's random IOPS."),
    "dbtier_plan_cheapest_throughput_bytes_per_second": _s("run_id op", "Plan: the cheapest configuration's bandwidth."),
    "dbtier_plan_designs_meeting": _s("run_id", "Plan: designs that meet the requirement."),
    "dbtier_plan_price": _s("run_id currency", "Plan value: the configuration's price."),
    "dbtier_plan_match_devices": _s("run_id metric", "Plan equivalent: devices needed to match the reference."),
    "dbtier_plan_match_price": _s("run_id metric currency", "Plan equivalent: their price."),
    "dbtier_plan_budget_devices": _s("run_id device", "Plan budget: devices the budget buys."),
    "dbtier_plan_budget_operations_per_second": _s("run_id device", "Plan budget: their IOPS (the mix)."),
    "dbtier_plan_budget_capacity_bytes": _s("run_id device", "Plan budget: their capacity."),
    # history
    "dbtier_history_operations_per_second": _s(
        "run_id database op percentile", "History: IOPS over the intervals (op read, write, total; a "
        "consolidation's sum is database=sum)."),
    "dbtier_history_throughput_bytes_per_second": _s(
        "run_id database op percentile", "History: bandwidth over the intervals."),
    "dbtier_history_intervals": _s("run_id database", "History: intervals imported."),
    "dbtier_history_consolidation_gain": _s(
        "run_id", "History consolidate: sum of the databases' peaks / peak of their sum (IOPS)."),
    "dbtier_requirement_operations_per_second": _s(
        "run_id op percentile basis", "Requirement: IOPS at the percentile (basis=measured, or with_headroom)."),
    "dbtier_requirement_throughput_bytes_per_second": _s(
        "run_id op percentile basis", "Requirement: bandwidth at the percentile."),
    "dbtier_requirement_capacity_bytes": _s("run_id basis", "Requirement: capacity."),
    "dbtier_requirement_headroom_ratio": _s("run_id", "Requirement: the margin added on top (0.3 = 30%)."),
    "dbtier_requirement_bytes_per_day": _s("run_id op basis", "Requirement: bytes read or written a day."),
    # simulate
    "dbtier_simulate_read_hit_ratio": _s("run_id counted", "Simulate: read hit ratio of the cache (counted "
                                         "in blocks or requests)."),
    "dbtier_simulate_latency_seconds": _s("run_id op percentile", "Simulate: modelled latency of the replay."),
    "dbtier_simulate_requests": _s("run_id", "Simulate: requests replayed."),
    "dbtier_simulate_device_busy_ratio": _s("run_id role", "Simulate: a device's modelled busy fraction."),
    "dbtier_simulate_resync_bytes": _s("run_id", "Simulate: bytes resynchronised after the failed side returns."),
    "dbtier_simulate_resync_seconds": _s("run_id", "Simulate: time the resync takes."),
    "dbtier_simulate_unprotected_seconds": _s("run_id", "Simulate: time without redundancy."),
    "dbtier_simulate_miss_ratio": _s("run_id policy cache_bytes", "Simulate mrc: miss ratio by policy and "
                                     "cache size."),
    # lab
    "dbtier_lab_steps": _s("run_id status", "Lab: steps by final status (each step's run is exported too)."),
}

# Time series (dbtier export series): gauges with timestamps.
SERIES: dict[str, Spec] = {
    "dbtier_series_probe_operations_per_second": _s("run_id target test", "Probe point: IOPS, in the order run."),
    "dbtier_series_probe_throughput_bytes_per_second": _s("run_id target test", "Probe point: bandwidth."),
    "dbtier_series_probe_latency_seconds": _s("run_id target test percentile", "Probe point: completion latency."),
    "dbtier_series_probe_outstanding": _s("run_id target test", "Probe point: outstanding I/Os (the load)."),
    "dbtier_series_oltp_cpu_busy_ratio": _s("run_id step clients", "OLTP sample: CPU busy fraction."),
    "dbtier_series_oltp_device_operations_per_second": _s("run_id step clients device op", "OLTP sample: device IOPS."),
    "dbtier_series_oltp_device_throughput_bytes_per_second": _s(
        "run_id step clients device op", "OLTP sample: device bandwidth."),
    "dbtier_series_oltp_device_busy_ratio": _s("run_id step clients device", "OLTP sample: device busy fraction."),
    "dbtier_series_history_operations_per_second": _s(
        "run_id database op", "History interval: IOPS (stamped at the interval's end)."),
    "dbtier_series_history_throughput_bytes_per_second": _s(
        "run_id database op", "History interval: bandwidth (stamped at the interval's end)."),
    "dbtier_series_simulate_requests_per_second": _s("run_id", "Simulate timeline: requests per second."),
    "dbtier_series_simulate_read_latency_seconds": _s("run_id statistic", "Simulate timeline: read latency "
                                                      "(statistic mean or p99)."),
    "dbtier_series_simulate_read_hit_ratio": _s("run_id", "Simulate timeline: read hit ratio."),
}


def unit_of(name: str) -> str:
    return next((u for u in UNITS if name.endswith("_" + u)), "")


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class Builder:
    """Metric families being filled: `add` one sample (a value that is not a finite number is left out),
    `info` one info series. Every sample names exactly its family's labels (a bug otherwise). Families come
    out in the order first used, samples in the order added."""

    def __init__(self, specs: dict[str, Spec]):
        self.specs = specs
        self._fams: dict[str, Metric] = {}

    def _family(self, name: str, labels: dict[str, Any]) -> tuple[Metric, list[str]]:
        spec = self.specs[name]
        if set(labels) != set(spec.labels):
            raise ValueError(f"{name}: labels {sorted(labels)} instead of {sorted(spec.labels)}")
        fam = self._fams.get(name)
        if fam is None:
            if spec.info:
                fam = InfoMetricFamily(name, spec.help, labels=[])
            else:
                fam = GaugeMetricFamily(name, spec.help, labels=list(spec.labels), unit=unit_of(name))
            self._fams[name] = fam
        return fam, [_text(labels[k]) for k in spec.labels]

    def add(self, name: str, value: Any, timestamp: float | None = None, **labels: Any) -> bool:
        if isinstance(value, bool):
            value = int(value)
        if not finite(value):
            return False
        fam, values = self._family(name, labels)
        if not isinstance(fam, GaugeMetricFamily):
            raise ValueError(f"{name}: an info family takes info(), not a value")
        fam.add_metric(values, float(value), timestamp=timestamp)
        return True

    def info(self, name: str, **labels: Any) -> None:
        fam, values = self._family(name, labels)
        if not isinstance(fam, InfoMetricFamily):
            raise ValueError(f"{name}: a gauge family takes add(), not info")
        fam.add_metric([], dict(zip(self.specs[name].labels, values)))

    def families(self) -> list[Metric]:
        return [f for f in self._fams.values() if f.samples]


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def label_names(specs: Iterable[Spec]) -> set[str]:
    return {lab for s in specs for lab in s.labels}
