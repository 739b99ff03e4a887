"""Pure parts of the monitoring imports on hand-worked numbers: the fetch's chunks under Prometheus'
11,000-points limit and its queries, time arguments, Azure's grains, CloudWatch's metric names, the
provenance's gaps and its words."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from dbtier.cli.history.fetch import parse_time
from dbtier.core.errors import DbtierError
from dbtier.history import provenance
from dbtier.history.sources import azure
from dbtier.history.sources import cloudwatch
from dbtier.history.sources import promfetch
from dbtier.history.sources import prometheus
from dbtier.history.store import connect


def test_chunks_stay_under_the_points_limit_without_overlap():
    # a day at 15 s: 5,761 samples, one chunk
    assert len(promfetch.plan(0, 86400, 15)) == 1
    # 7 days at 15 s: 40,321 samples -> chunks of 11,000 (10,999 steps), the next one step after
    cs = promfetch.plan(1_000_000, 1_000_000 + 7 * 86400, 15)
    assert [(c.start, c.end) for c in cs] == [
        (1_000_000, 1_000_000 + 10999 * 15), (1_000_000 + 11000 * 15, 1_000_000 + 21999 * 15),
        (1_000_000 + 22000 * 15, 1_000_000 + 32999 * 15), (1_000_000 + 33000 * 15, 1_000_000 + 7 * 86400)]
    for c in cs:
        assert (c.end - c.start) / c.step + 1 <= promfetch.MAX_POINTS
    assert [c.name for c in cs] == [f"prometheus-q1-0000{i}.json" for i in range(1, 5)]
    # two --match: each query chunked the same
    cs = promfetch.plan(0, 100, 1, ['{instance="a:9100"}', 'node_disk_reads_completed_total{device="vda"}'])
    assert [c.name for c in cs] == ["prometheus-q1-00001.json", "prometheus-q2-00001.json"]
    with pytest.raises(DbtierError, match="--end is not after --start"):
        promfetch.plan(10, 10, 1)


def test_queries():
    q = promfetch.queries(None)
    assert q == [promfetch.DEFAULT_SELECTOR]
    names = re.compile(q[0].split('"')[1])
    for name in [*prometheus.METRICS, "node_boot_time_seconds"]:     # every metric the reader maps is fetched
        assert names.fullmatch(name) or names.fullmatch(name + "_total"), name
    q = promfetch.queries(['{instance="db01:9100", device=~"nvme.*"}'])
    assert q[0].startswith('{__name__=~"node_disk_') and q[0].endswith(', instance="db01:9100", device=~"nvme.*"}')
    assert promfetch.queries(["node_disk_reads_completed_total{device='vda'}"]) == \
        ["node_disk_reads_completed_total{device='vda'}"]
    with pytest.raises(DbtierError, match="not a series selector"):
        promfetch.queries(["sum by (device) (x"])
    with pytest.raises(DbtierError, match="not an http"):
        promfetch.check_base("prom:9090")


def test_parse_time():
    now = 1_800_000_000.0
    assert parse_time("now", "UTC", now) == now
    assert parse_time("now-1h", "UTC", now) == now - 3600
    assert parse_time("1764000000", "UTC", now) == 1764000000
    assert parse_time("2026-11-01T00:00:00Z", "UTC", now) == dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc).timestamp()
    assert parse_time("2026-11-01T01:00:00", "Europe/Paris", now) == dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc).timestamp()
    with pytest.raises(DbtierError, match="is not a time"):
        parse_time("yesterday", "UTC", now)


def test_recording_rule_names():
    assert prometheus.base_name("instance:node_disk_reads_completed:rate1m") == ("node_disk_reads_completed", "rate", 60)
    assert prometheus.base_name("job:node_disk_read_bytes:irate30s") == ("node_disk_read_bytes", "rate", 30)
    assert prometheus.base_name("node_disk_reads_completed_total") == ("node_disk_reads_completed", None, None)


def test_azure_grains_and_cloudwatch_names():
    assert azure.grain_seconds("PT1M") == 60 and azure.grain_seconds("PT1H") == 3600
    assert azure.grain_seconds("P1D") == 86400 and azure.grain_seconds("0:05:00") == 300
    assert azure.grain_seconds("1 day, 0:00:00") == 86400 and azure.grain_seconds("soon") is None
    assert cloudwatch.METRICS[cloudwatch.metric_of("vol-0a1b VolumeReadBytes")] == "read_bytes"
    assert cloudwatch.METRICS[cloudwatch.metric_of("w_volumewriteops")] == "write_ios"
    assert cloudwatch.metric_of("Avg Total IOPS") is None


def test_gaps_hand_worked():
    """Step 60: a hole of 60 s (one missing sample) and a 120-s interval are two gaps; a hole of 20 s is none."""
    con = connect()
    con.execute("""CREATE TABLE t AS SELECT * FROM (VALUES
        ('a', TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-01-01 00:01:00', 60.0),
        ('a', TIMESTAMP '2026-01-01 00:01:00', TIMESTAMP '2026-01-01 00:02:00', 60.0),
        ('a', TIMESTAMP '2026-01-01 00:03:00', TIMESTAMP '2026-01-01 00:04:00', 60.0),
        ('a', TIMESTAMP '2026-01-01 00:04:00', TIMESTAMP '2026-01-01 00:06:00', 120.0),
        ('a', TIMESTAMP '2026-01-01 00:06:20', TIMESTAMP '2026-01-01 00:07:20', 60.0),
        ('b', TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-01-01 00:01:00', 60.0))
        AS v(database, start, "end", seconds)""")
    assert provenance.gaps(con, "t", 60) == {"a": 2, "b": 0}
    assert provenance.gaps(con, "t", None) == {"a": 2, "b": 0}       # the median interval: 60 s


def test_provenance_words():
    assert provenance.duration(60) == "1-minute" and provenance.duration(300) == "5-minute"
    assert provenance.duration(15) == "15-s" and provenance.duration(3600) == "1-hour"
    p = provenance.run_level({"source": "azure", "semantics": "rate", "native_step_s": 60.0, "averaging_s": 60.0},
                             [{"restarts": 1, "gaps": 2}, {"restarts": 0, "gaps": 1, "wraps": 3}])
    assert (p["resets"], p["gaps"], p["wraps"]) == (1, 3, 3)
    assert provenance.statistic(p, "p99") == "p99 of 1-minute averages (the source's own; dbtier cannot see inside them)"
    p = provenance.run_level({"source": "diskstats", "semantics": "counter", "native_step_s": None, "averaging_s": None},
                             [{"series_shape": {"median_interval_s": 15.0}}, {"series_shape": {"median_interval_s": 5.0}}])
    assert p["native_step_s"] == 15.0 and p["step_from"] == "the median interval"
    assert p["basis"] == "15-s intervals between counter samples (dbtier's differences)"
