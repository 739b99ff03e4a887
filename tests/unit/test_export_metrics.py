"""dbtier.export on saved real documents: every kind's metrics parse with prometheus_client's strict
OpenMetrics parser, carry no timestamps and no `job`/`instance` label, and hold the documents' own figures
(read here from the JSON, not through the code under test); the series are in the order promtool's
backfill needs (the strict parser refuses interleaved series and time going backwards)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om
from prometheus_client.parser import text_string_to_metric_families as parse_text

from dbtier.export import exposition, metrics, series
from dbtier.export.families import METRICS, RESERVED_LABELS, SERIES
from dbtier.results.store import load_run
from samples import BACKUP_DUCKDB, DSS_SPILL, LAB, MATRIX, PROBE, TPCC

SAVED = {"probe": PROBE, "oltp": TPCC, "matrix": MATRIX, "dss": DSS_SPILL, "backup": BACKUP_DUCKDB,
         "plan": LAB / "plan-size.json"}


def pairs(*names: str) -> list[tuple[str, dict]]:
    return [(n, load_run(SAVED[n])) for n in names]


def raw(name: str) -> dict:
    return json.loads(Path(SAVED[name]).read_text())


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """{(sample name, labels): value} from OpenMetrics text, through the strict parser; no timestamps."""
    out = {}
    for fam in parse_om(text):
        for s in fam.samples:
            assert s.timestamp is None, s
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, f"duplicate series {key}"
            out[key] = s.value
    return out


def value(got: dict, name: str, **labels: str) -> float:
    return got[(name, frozenset(labels.items()))]


@pytest.fixture(scope="module")
def every_kind() -> list[tuple[str, dict]]:
    return pairs(*SAVED)


def test_the_family_table_keeps_prometheus_naming():
    for name, spec in {**METRICS, **SERIES}.items():
        assert re.fullmatch(r"dbtier_[a-z0-9_]+", name), name
        assert not name.endswith("_total"), name      # nothing dbtier exports is a counter
        assert not RESERVED_LABELS & set(spec.labels), name
        assert spec.labels[0] == "run_id", name
        assert not re.search(r"_(ms|us|kb|mb|gb|pct|percent)(_|$)", name), name   # base units only
        assert spec.help.endswith("."), name


def test_every_kind_parses_strictly_without_timestamps_or_target_labels(every_kind):
    fams = metrics.families(every_kind)
    om = exposition.text(fams, "openmetrics").decode()
    assert om.endswith("# EOF\n")
    got = samples(om)
    labels = {k for _, ls in got for k, _ in ls}
    assert not labels & {"job", "instance", "le", "quantile"}
    for fam in parse_om(om):
        assert fam.name.startswith("dbtier_")
        for unit in ("seconds", "bytes", "ratio"):
            if fam.name.endswith("_" + unit):
                assert fam.unit == unit, fam.name
    # the Prometheus text holds the same samples, also without timestamps
    prom = exposition.text(fams, "prometheus").decode()
    lenient = {(s.name, frozenset(s.labels.items())): s.value for f in parse_text(prom) for s in f.samples}
    assert lenient == got
    assert all(s.timestamp is None for f in parse_text(prom) for s in f.samples)
    assert "_total" not in prom


def test_one_run_info_per_run_and_only_run_id_elsewhere(every_kind):
    got = samples(exposition.text(metrics.families(every_kind), "openmetrics").decode())
    infos = [dict(ls) for n, ls in got if n == "dbtier_run_info"]
    assert sorted(i["run_id"] for i in infos) == sorted(SAVED)
    oltp = next(i for i in infos if i["run_id"] == "oltp")
    doc = raw("oltp")
    assert oltp["command"] == "bench" and oltp["kind"] == "bench oltp"
    assert oltp["host"] == doc["machine"]["hostname"] and oltp["dbtier_version"] == doc["dbtier_version"]
    assert oltp["target"] == doc["machine"]["targets"][0]["path"] and oltp["workload"] == "tpcc"
    start = datetime.fromisoformat(doc["started_at"].replace("Z", "+00:00")).timestamp()
    assert value(got, "dbtier_run_start_timestamp_seconds", run_id="oltp") == pytest.approx(start)
    for n, ls in got:
        if not n.startswith("dbtier_run_info"):
            assert "host" not in dict(ls) and "command" not in dict(ls), n


def test_probe_figures_in_base_units():
    got = samples(exposition.text(metrics.families(pairs("probe")), "openmetrics").decode())
    t = raw("probe")["targets"][0]
    s, target = t["summary"], t["path"]
    lab = {"run_id": "probe", "target": target}
    assert value(got, "dbtier_probe_operations_per_second", test="read_4k", **lab) == s["read_iops_4k"]
    assert value(got, "dbtier_probe_operations_per_second", test="commit", **lab) == s["commits_per_s"]
    assert value(got, "dbtier_probe_throughput_bytes_per_second", test="read_seq", **lab) == \
        pytest.approx(s["read_mbps_seq"] * 1e6)
    assert value(got, "dbtier_probe_latency_seconds", test="commit", percentile="p99", **lab) == \
        pytest.approx(s["commit_lat_us_p99"] / 1e6)
    assert value(got, "dbtier_probe_fsync_honest", **lab) == (1.0 if s["fsync_honesty"] == "ok" else 0.0)


def test_oltp_knee_and_sweep():
    got = samples(exposition.text(metrics.families(pairs("oltp", "matrix")), "openmetrics").decode())
    doc = raw("oltp")
    knee = next(p for p in doc["points"] if p["clients"] == doc["knee"]["clients"])
    assert value(got, "dbtier_oltp_transactions_per_second", run_id="oltp", point="knee") == knee["tps"]
    assert value(got, "dbtier_oltp_new_orders_per_second", run_id="oltp", point="knee") == \
        pytest.approx(knee["nopm"] / 60)
    assert value(got, "dbtier_oltp_latency_seconds", run_id="oltp", point="knee", percentile="p95") == \
        pytest.approx(knee["lat_ms"]["p95"] / 1000)
    assert value(got, "dbtier_oltp_cpu_busy_ratio", run_id="oltp", point="knee") == \
        pytest.approx(knee["cpu_util"]["busy_pct"] / 100)
    for p in doc["points"]:
        assert value(got, "dbtier_oltp_sweep_transactions_per_second", run_id="oltp", step="",
                     clients=str(p["clients"])) == p["tps"]
    m = raw("matrix")
    for step in m["steps"]:
        for p in step["points"]:
            assert value(got, "dbtier_oltp_sweep_transactions_per_second", run_id="matrix", step=step["name"],
                         clients=str(p["clients"])) == p["tps"]


def test_dss_backup_and_plan():
    got = samples(exposition.text(metrics.families(pairs("dss", "backup", "plan")), "openmetrics").decode())
    dss = raw("dss")
    assert value(got, "dbtier_dss_power_run_seconds", run_id="dss") == dss["total_seconds"]
    for q in dss["queries"]:
        assert value(got, "dbtier_dss_query_seconds", run_id="dss", query=str(q["query"])) == q["seconds"]
    for t in raw("backup")["targets"]:
        sink = {"dir": "directory", "null": "null"}[t["target"]]
        assert value(got, "dbtier_backup_throughput_bytes_per_second", run_id="backup", method=t["method"],
                     sink=sink) == pytest.approx(t["mbps"] * 1e6)
    c = raw("plan")["candidates"][0]
    assert value(got, "dbtier_plan_cheapest_price", run_id="plan", currency="USD") == c["price_usd"]
    assert value(got, "dbtier_plan_cheapest_capacity_bytes", run_id="plan") == pytest.approx(c["capacity_gb"] * 1e9)
    info = next(dict(ls) for n, ls in got if n == "dbtier_plan_cheapest_info")
    assert info["configuration"] == c["description"]


def test_a_missing_figure_is_left_out_not_zero():
    doc = load_run(PROBE)
    doc["targets"][0]["summary"]["read_iops_4k"] = None
    doc["targets"][0]["summary"]["fsync_honesty"] = None
    got = samples(exposition.text(metrics.families([("p", doc)]), "openmetrics").decode())
    names = {(n, dict(ls).get("test")) for n, ls in got}
    assert ("dbtier_probe_operations_per_second", "read_4k") not in names
    assert ("dbtier_probe_operations_per_second", "write_4k") in names
    assert not any(n == "dbtier_probe_fsync_honest" for n, _ in got)


def _series(text: str) -> dict[tuple[str, frozenset], list[tuple[float, float]]]:
    out: dict = {}
    for fam in parse_om(text):          # strict: a series split in two or time going back is refused
        for s in fam.samples:
            assert s.timestamp is not None
            out.setdefault((s.name, frozenset(s.labels.items())), []).append((float(s.timestamp), s.value))
    return out


def test_series_are_grouped_and_in_time_order_with_the_documents_values():
    fams, records = series.families(pairs("oltp", "probe", "matrix", "dss"))
    text = exposition.text(fams, "openmetrics").decode()
    got = _series(text)
    for ts in got.values():
        assert [t for t, _ in ts] == sorted({t for t, _ in ts})
    # each series' samples are contiguous lines in the file
    seen, last = set(), None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key = line.rsplit(" ", 2)[0]
        if key != last:
            assert key not in seen, f"{key} split"
            seen.add(key)
            last = key
    doc = raw("oltp")
    start = datetime.fromisoformat(doc["started_at"].replace("Z", "+00:00")).timestamp()
    p = doc["points"][0]
    cpu = got[("dbtier_series_oltp_cpu_busy_ratio", frozenset({"run_id": "oltp", "step": "",
                                                              "clients": str(p["clients"])}.items()))]
    assert cpu == [(pytest.approx(start + x["t_s"], abs=1e-3), pytest.approx(x["cpu"]["busy_pct"] / 100))
                   for x in p["series"]]
    t = raw("probe")["targets"][0]
    reads = [q["iops"] for q in t["points"] if q["test"] == "rand-read-4k"]
    key = ("dbtier_series_probe_operations_per_second",
           frozenset({"run_id": "probe", "target": t["path"], "test": "rand-read-4k"}.items()))
    assert [v for _, v in got[key]] == reads
    by = {r["run_id"]: r for r in records}
    assert by["dss"]["series"] == 0 and by["dss"]["time_basis"] is None      # a power run has no series
    assert by["oltp"]["samples"] == sum(1 for k, v in got.items() if dict(k[1])["run_id"] == "oltp" for _ in v)
