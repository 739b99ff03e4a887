"""The CloudWatch reader on saved answers in every shape (tests/data/history/cloudwatch/README.md says where
each comes from): real AWS CLI and boto3 output, and files written in their documented layouts. Figures are
worked out here from the files (IOPS = Sum / period for a Count, a /Second rate as it is); every refusal
gets one message naming the file and line and what the file lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.sources import detect
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

CW = DATA / "history" / "cloudwatch"
EBS_DATA = CW / "get-metric-data-ebs.json"


def imp(*files, **opts):
    con = connect()
    res = read(con, "cloudwatch", [str(f) for f in files], ReadOptions(**opts))
    return summarise_import(con, res)


def one(doc):
    assert len(doc["databases"]) == 1
    return doc["databases"][0]


def write(tmp_path: Path, *docs, name: str = "cw.json", concat: bool = False) -> Path:
    """JSON answers as the CLI prints them (indent 4), concatenated or as the one document given."""
    f = tmp_path / name
    f.write_text("\n".join(json.dumps(d, indent=4) for d in docs) + "\n" if concat or len(docs) > 1
                 else json.dumps(docs[0], indent=4))
    return f


def answer(label, stat, unit, values, start=1793700000, step=300, label_first=True, more=None):
    """A get-metric-statistics answer: `values` one a period from `start` (epoch), CLI v2 times."""
    import datetime as dt
    pts = []
    for k, v in enumerate(values):
        t = dt.datetime.fromtimestamp(start + k * step, dt.timezone.utc).isoformat()
        pts.append({"Timestamp": t, stat: v, **(more or {}), "Unit": unit})
    return {"Label": label, "Datapoints": pts} if label_first else {"Datapoints": pts, "Label": label}


# -- the shapes, read -----------------------------------------------------------------------------------------

def test_every_saved_shape_is_sniffed_as_cloudwatch():
    for f in sorted(CW.glob("*.json")):
        assert detect.guess(f) == "cloudwatch", f.name


def test_boto3_list_of_rds_answers_with_epoch_times():
    """Real: a boto3 script's json.dump of four get_metric_statistics answers (one line, epoch seconds,
    ResponseMetadata): ReadIOPS and WriteIOPS Averages (Count/Second) are taken as they are; CPUUtilization and
    FreeableMemory are left out by name."""
    f = CW / "boto3-get-metric-statistics-rds-list.json"
    answers = {a["Label"]: {p["Timestamp"]: p["Average"] for p in a["Datapoints"]} for a in json.loads(f.read_text())}
    reads, writes = answers["ReadIOPS"], answers["WriteIOPS"]
    doc = imp(f)
    db = one(doc)
    assert db["intervals"] == 12
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(reads.values()))       # 0.6367...
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(max(writes.values()))     # 0.6033...
    assert db["total"]["iops"]["max"] == pytest.approx(max(reads[t] + writes[t] for t in reads))
    assert db["start"] == "2018-02-21T07:53:00Z" and db["end"] == "2018-02-21T08:53:00Z"   # 1519199580 + 12 x 300 s
    assert db["peaks"]["read_mbps"]["max"] is None                                    # not fetched: missing, never 0
    p = doc["provenance"]
    assert (p["statistic"], p["unit"], p["period_s"], p["semantics"]) == ("Average", "Count/Second", 300.0, "rate")
    assert p["basis"].startswith("5-minute averages (CloudWatch's Average")
    assert any("CPUUtilization (a CPU metric, not disk I/O)" in n and "FreeableMemory (a memory metric" in n
               for n in doc["notes"])


def test_concatenated_cli_answers_label_before_and_after_and_an_empty_one():
    """Written: four `aws cloudwatch get-metric-statistics --statistics Sum --period 300` answers appended to one
    file (CLI v1: `Z` times; Label after Datapoints as the CLI prints it, before it as others save it);
    VolumeWriteBytes has no datapoints. VolumeReadOps Sum 18,000 / 24,000 / 12,000 over 300 s = 60 / 80 / 40
    IOPS; writes 6,000 / 9,000 / 3,000 = 20 / 30 / 10; reads 300 / 600 / 150 MB a period = 1 / 2 / 0.5 MB/s."""
    doc = imp(CW / "get-metric-statistics-ebs-concatenated.json")
    db = one(doc)
    assert db["intervals"] == 3 and db["start"] == "2026-11-02T10:00:00Z" and db["end"] == "2026-11-02T10:15:00Z"
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(80)
    assert db["peaks"]["read_iops"]["p50"] == pytest.approx(60)
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(30)
    assert db["total"]["iops"]["max"] == pytest.approx(110)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(2.0)
    assert db["peaks"]["write_mbps"]["max"] is None
    assert any(n.startswith("no points: VolumeWriteBytes") for n in doc["notes"])
    p = doc["provenance"]
    assert (p["statistic"], p["unit"], p["period_s"], p["semantics"]) == ("Sum", "Bytes, Count", 300.0, "delta")
    assert p["basis"] == "5-minute sums divided by the period (CloudWatch's Sum)"


def test_real_cli_transcript_one_point_needs_the_period():
    """Real: two `get-metric-statistics --statistics Average --period 360000` answers of RDS ReadIOPS as the CLI
    v2 printed them one after the other (the first empty; `+00:00` times). One point: the period is not in the
    answer, so --interval gives it."""
    f = CW / "get-metric-statistics-rds-readiops-cli-transcript.json"
    with pytest.raises(DbtierError, match=r"transcript\.json: line 7: ReadIOPS: one data point: the period cannot "
                                          r"be told(.|\n)*give --interval PERIOD"):
        imp(f)
    doc = imp(f, interval_s=360000)
    db = one(doc)
    assert db["intervals"] == 1 and db["peaks"]["read_iops"]["max"] == pytest.approx(1.3674745832977784)
    assert db["start"] == "2024-12-21T00:00:00Z"
    assert doc["provenance"]["period_s"] == 360000.0


def test_get_metric_data_pages_in_a_json_array_joined():
    """Written: two boto3 get_metric_data pages saved as a JSON array (str() times with a space, newest first),
    the first PartialData with a NextToken. RDS per minute: reads 1200 1500 900 2000 1100, writes 300 400 250 500
    350, ReadThroughput 8 KiB a read, ReadLatency 0.5 0.6 0.4 0.8 0.5 ms. Ids name the statistic (r_avg); the
    others are taken as Average and said so."""
    doc = imp(CW / "boto3-get-metric-data-rds-pages.json")
    db = one(doc)
    assert db["intervals"] == 5 and db["start"] == "2026-11-03T09:00:00Z" and db["end"] == "2026-11-03T09:05:00Z"
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(2000)
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(500)
    assert db["total"]["iops"]["max"] == pytest.approx(2500)                 # 09:03: 2000 + 500
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(2000 * 8192 / 1e6)
    ft = one_type(db)
    assert ft["file_type"] == "orders-db"                                    # the label beside the metric's name
    assert ft["read_lat_ms"]["p50"] == pytest.approx(0.5)                   # 0.4 0.5 0.5 0.6 0.8
    assert ft["read_lat_ms"]["p95"] == pytest.approx(0.6 + 0.8 * 0.2)
    assert any("taken as ReadLatency Average, ReadThroughput Average" in n for n in doc["notes"])
    assert any(n.startswith("not Complete (read, and joined with the pages after them): Ids r_avg") for n in doc["notes"])
    p = doc["provenance"]
    assert (p["statistic"], p["period_s"], p["averaging_s"]) == ("Average", 60.0, 60.0)


def one_type(db):
    assert len(db["file_types"]) == 1
    return db["file_types"][0]


def test_aurora_results_alone_with_epoch_seconds():
    """Written: MetricDataResults alone (a script's save of the list), epoch seconds, ascending: Aurora's
    VolumeReadIOPs 90,000 120,000 60,000 per 300 s = 300 400 200 IOPS; writes 30,000 45,000 15,000 = 100 150 50."""
    doc = imp(CW / "get-metric-data-aurora-results-epoch.json")
    db = one(doc)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(400)
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(150)
    assert db["total"]["iops"]["max"] == pytest.approx(550)
    assert db["start"] == "2026-11-04T00:00:00Z"
    assert one_type(db)["file_type"] == "Aurora cluster volume"
    assert doc["provenance"]["statistic"] == "Sum"


def test_get_metric_data_ebs_pages_merged_newest_first():
    """get-metric-data-ebs.json: two volumes, Id r0 in two pages (PartialData, then Complete)."""
    doc = imp(EBS_DATA, database="ebsdb")
    db = one(doc)
    # volume 1 reads per 300 s: 90000, 180000, 150000, 60000; volume 2: 30000, 30000, -, 60000
    assert db["intervals"] == 4
    assert db["peaks"]["read_iops"]["max"] == pytest.approx((180000 + 30000) / 300)
    assert db["peaks"]["read_iops"]["p95"] == pytest.approx(500 + 0.85 * 200)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(2949120000 / 300 / 1e6)
    assert db["start"] == "2026-11-02T10:00:00Z" and db["end"] == "2026-11-02T10:20:00Z"
    ft = {f["file_type"]: f for f in db["file_types"]}
    assert set(ft) == {"vol-0a1b2c3d4e5f60718", "vol-0f0e0d0c0b0a09080"}
    assert ft["vol-0a1b2c3d4e5f60718"]["read_lat_ms"]["p50"] == pytest.approx(0.5)   # 45 s / 90000 reads ...
    p = doc["provenance"]
    assert (p["semantics"], p["native_step_s"], p["statistic"]) == ("delta", 300.0, "Sum")


def test_datadog_ebs_answer_unordered():
    """Real: an EBS VolumeWriteBytes Sum answer from DataDog's guide, points not in time order."""
    db = one(imp(CW / "get-metric-statistics-ebs-datadog.json"))
    assert db["intervals"] == 3 and db["start"] == "2018-02-08T20:00:00Z"
    assert db["peaks"]["write_mbps"]["max"] == pytest.approx(1601536 / 300 / 1e6)
    assert db["peaks"]["read_iops"]["max"] is None


def test_rds_maximum_is_the_busiest_minute_said_in_the_basis(tmp_path):
    """ReadIOPS and WriteIOPS Maximum per 300 s: taken as they are (the busiest 1-minute rate), said so."""
    f = write(tmp_path, answer("ReadIOPS", "Maximum", "Count/Second", [900.0, 1400.0]),
              answer("WriteIOPS", "Maximum", "Count/Second", [100.0, 300.0]), concat=True)
    doc = imp(f)
    db = one(doc)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(1400) and db["total"]["iops"]["max"] == pytest.approx(1700)
    p = doc["provenance"]
    assert (p["statistic"], p["semantics"], p["averaging_s"]) == ("Maximum", "rate", 60.0)
    assert p["basis"].startswith("the busiest 1-minute rate of each 5-minute period (CloudWatch's Maximum")
    assert any("their sum can exceed any one minute's" in n for n in doc["notes"])


def test_average_chosen_when_several_statistics_were_fetched(tmp_path):
    """--statistics Average Maximum Minimum SampleCount: a rate's Average is read, the rest are not refused."""
    f = write(tmp_path, answer("ReadIOPS", "Average", "Count/Second", [50.0, 70.0],
                               more={"Maximum": 400.0, "Minimum": 1.0, "SampleCount": 5.0}))
    doc = imp(f)
    assert one(doc)["peaks"]["read_iops"]["max"] == pytest.approx(70)
    assert doc["provenance"]["statistic"] == "Average"


def test_ec2_instance_metrics_cover_its_ebs_volumes(tmp_path):
    """EC2's EBSReadOps (all the instance's volumes) beside EBS's VolumeReadOps of one volume: the volume is
    detail, the instance's total counts once: 60,000 / 300 = 200 IOPS, not 200 + 100."""
    a = write(tmp_path, answer("i-0123456789abcdef0 EBSReadOps", "Sum", "Count", [60000.0, 60000.0]), name="ec2.json")
    b = write(tmp_path, answer("vol-0a1b2c3d4e5f60718 VolumeReadOps", "Sum", "Count", [30000.0, 30000.0]),
              name="ebs.json")
    doc = imp(a, b, database="db01")
    db = one(doc)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(200)
    assert any("EBS volume metrics kept as detail" in n for n in doc["notes"])


def test_ebs_latency_from_total_time_and_a_latency_left_out(tmp_path):
    """VolumeTotalReadTime Sum 45 s over 90,000 reads = 0.5 ms; WriteLatency's Maximum is left out (said)."""
    f = write(tmp_path, answer("VolumeReadOps", "Sum", "Count", [90000.0, 90000.0]),
              answer("VolumeTotalReadTime", "Sum", "Seconds", [45.0, 45.0]),
              answer("WriteLatency", "Maximum", "Seconds", [0.01, 0.01]), concat=True)
    doc = imp(f)
    assert one_type(one(doc))["read_lat_ms"]["p95"] == pytest.approx(0.5)
    assert any("WriteLatency Maximum (the latency is read from WriteLatency's Average)" in n for n in doc["notes"])


def test_epoch_milliseconds_digit_strings_and_camel_case(tmp_path):
    """Times as epoch milliseconds and digit strings, keys in camelCase (other SDKs' serializers)."""
    t0 = 1793700000
    d = {"label": "VolumeReadOps", "datapoints": [{"timestamp": (t0 + 300) * 1000, "sum": 3000.0, "unit": "Count"},
                                                  {"timestamp": str(t0), "sum": 6000.0, "unit": "Count"}]}
    db = one(imp(write(tmp_path, d)))
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(20) and db["intervals"] == 2


def test_messages_and_a_page_without_its_next_said(tmp_path):
    d = json.loads(EBS_DATA.read_text())
    d["MetricDataResults"] = d["MetricDataResults"][:6]          # the Complete page of r0 left out
    d["MetricDataResults"][1]["Messages"] = [{"Code": "Warning", "Value": "w0 had gaps"}]
    d["Messages"] = [{"Code": "MaxMetricsExceeded", "Value": "Maximum number of allowed metrics exceeded"}]
    d["NextToken"] = "xyz"
    notes = imp(write(tmp_path, d))["notes"]
    assert any("CloudWatch said Warning: w0 had gaps" in n for n in notes)
    assert any("the answer: CloudWatch said MaxMetricsExceeded" in n for n in notes)
    assert any("its last page has a NextToken" in n for n in notes)
    assert any("not Complete: Ids r0" in n and "their range may be cut short" in n for n in notes)


def test_interval_longer_than_the_points_spacing_is_refused_shorter_gaps_kept(tmp_path):
    f = write(tmp_path, answer("VolumeReadOps", "Sum", "Count", [3000.0, 3000.0]))
    with pytest.raises(DbtierError, match=r"--interval 600: VolumeReadOps \(.*cw\.json: line 3\) has points 300 s "
                                          r"apart: its period is at most 300 s"):
        imp(f, interval_s=600)
    assert one(imp(f, interval_s=60))["peaks"]["read_iops"]["max"] == pytest.approx(50)   # 3000 / 60


# -- refusals, each with its message ------------------------------------------------------------------------

def _refused(tmp_path, needle, *docs, concat=False, **opts):
    f = write(tmp_path, *docs, concat=concat)
    with pytest.raises(DbtierError, match=needle) as exc:
        imp(f, **opts)
    assert "cw.json" in str(exc.value)
    return str(exc.value)


def test_cpu_metric_refused_by_name():
    """Real: the AWS CLI's own get-metric-statistics example (CPUUtilization Maximum, Label after Datapoints)."""
    with pytest.raises(DbtierError, match=r"cpu-awscli-example\.json: line 2: CPUUtilization: a CPU metric, not disk "
                                          r"I/O: no disk I/O metric in the file(.|\n)*next: fetch ReadIOPS"):
        imp(CW / "get-metric-statistics-cpu-awscli-example.json")


def test_metric_math_label_refused():
    """Real: Example 1 of the AWS CLI's get-metric-data documentation: a metric-math label names no metric."""
    with pytest.raises(DbtierError, match=r"example\.json: line 4: Id 'm3' \(label 'Avg Total IOPS'\): names no "
                                          r"metric dbtier reads"):
        imp(CW / "get-metric-data-awscli-example.json")


@pytest.mark.parametrize("label, stat, unit, needle", [
    ("VolumeReadOps", "Maximum", "Count", r"line 3: VolumeReadOps: a Maximum of a Count: a per-period total, give Sum"),
    ("EBSWriteBytes", "Average", "Bytes", r"EBSWriteBytes: an Average of a Bytes: a per-period total, give Sum"),
    ("VolumeReadIOPs", "Minimum", "Count", r"VolumeReadIOPs: a Minimum of a Count: the smallest sample"),
    ("DiskReadOps", "SampleCount", "Count", r"DiskReadOps: SampleCount: how many samples CloudWatch holds in each "
                                            r"period, not I/O; give Sum"),
    ("ReadIOPS", "Sum", "Count/Second", r"ReadIOPS: a Sum of a Count/Second rate: the per-minute rates of the period "
                                        r"added up, not a rate; give Average"),
    ("ReadThroughput", "Minimum", "Bytes/Second", r"ReadThroughput: a Minimum of a Bytes/Second rate: the slowest "
                                                  r"minute"),
    ("WriteIOPS", "SampleCount", "Count/Second", r"WriteIOPS: SampleCount: how many per-minute samples"),
])
def test_a_statistic_that_is_not_io_is_refused_with_why(tmp_path, label, stat, unit, needle):
    msg = _refused(tmp_path, needle, answer(label, stat, unit, [1.0, 2.0]))
    assert "next: fetch it again with --statistics" in msg


def test_a_percentile_is_refused(tmp_path):
    d = {"Label": "VolumeReadOps", "Datapoints": [
        {"Timestamp": "2026-11-02T10:00:00Z", "ExtendedStatistics": {"p99": 3.0}, "Unit": "Count"},
        {"Timestamp": "2026-11-02T10:05:00Z", "ExtendedStatistics": {"p99": 4.0}, "Unit": "Count"}]}
    _refused(tmp_path, r"VolumeReadOps: p99: a percentile of the samples in the period, not its total; give Sum", d)
    r = {"MetricDataResults": [{"Id": "r", "Label": "ReadIOPS p99", "Timestamps": [1793700000, 1793700060],
                                "Values": [1.0, 2.0], "StatusCode": "Complete"}]}
    _refused(tmp_path, r"ReadIOPS: p99: a percentile of the per-minute rates", r)


def test_means_and_maxima_do_not_add_up(tmp_path):
    _refused(tmp_path, r"ReadIOPS \(Average, .*\) is a mean over the period, WriteIOPS \(Maximum, .*\) the busiest "
                       r"minute: they do not add up",
             answer("ReadIOPS", "Average", "Count/Second", [1.0, 2.0]),
             answer("WriteIOPS", "Maximum", "Count/Second", [1.0, 2.0]), concat=True)


def test_one_metric_with_two_statistics_refused(tmp_path):
    _refused(tmp_path, r"ReadIOPS: Maximum in Count/Second here, Average in Count/Second at .*cw\.json: line 3",
             answer("ReadIOPS", "Average", "Count/Second", [1.0, 2.0]),
             answer("ReadIOPS", "Maximum", "Count/Second", [1.0, 2.0], start=1793800000), concat=True)


@pytest.mark.parametrize("label, unit, needle", [
    ("ReadIOPS", "Bytes", r"ReadIOPS in Bytes: ReadIOPS is published in Count/Second \(dbtier reads Count or "
                          r"Count/Second\)"),
    ("VolumeReadBytes", "Kilobytes", r"VolumeReadBytes in Kilobytes: VolumeReadBytes is published in Bytes"),
])
def test_a_unit_that_is_not_the_metric_refused(tmp_path, label, unit, needle):
    _refused(tmp_path, needle, answer(label, "Sum", unit, [1.0, 2.0]))


def test_mixed_units_in_one_answer_refused(tmp_path):
    d = answer("VolumeReadOps", "Sum", "Count", [1.0, 2.0])
    d["Datapoints"][1]["Unit"] = "Count/Second"
    _refused(tmp_path, r"VolumeReadOps: datapoints in Count and Count/Second", d)


def test_a_datapoint_without_the_statistic_refused(tmp_path):
    d = answer("VolumeReadOps", "Sum", "Count", [1.0, 2.0, 3.0])
    d["Datapoints"][1] = {"Timestamp": d["Datapoints"][1]["Timestamp"], "Maximum": 9.0, "Unit": "Count"}
    _refused(tmp_path, r"VolumeReadOps: a datapoint at 2026-11-0\dT\d\d:\d\d:00Z without Sum \(others have it\)", d)


def test_two_answers_of_one_metric_disagreeing_refused(tmp_path):
    msg = _refused(tmp_path, r"line 1\d: VolumeReadOps: 2026-11-0\dT\d\d:\d\d:00Z is 9 here and 1 at .*cw\.json: line 3",
                   answer("VolumeReadOps", "Sum", "Count", [1.0, 2.0]),
                   answer("VolumeReadOps", "Sum", "Count", [9.0, 2.0]), concat=True)
    assert "save each one's in its own file" in msg


def test_overlapping_pages_with_other_values_refused(tmp_path):
    d = json.loads(EBS_DATA.read_text())
    d["MetricDataResults"].append({**d["MetricDataResults"][6], "Values": [1.0, 90000.0]})
    _refused(tmp_path, r"line 1\d\d: Id 'r0' .*: 2026-11-02T10:05:00Z is 1 here and 180000 at .*cw\.json: line 100", d)


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d["MetricDataResults"][1].pop("Values"), r"line \d+: MetricDataResults\[1\] \(Id w0.* has no Values"),
    (lambda d: d["MetricDataResults"][5].update(Timestamps=["2026-11-02T10:15:00+00:00", "2026-11-02T10:14:00+00:00",
                                                              "2026-11-02T10:13:00+00:00"]),
     r"a mixed period: .* 60 s apart, .* 300 s apart"),
    (lambda d: d["MetricDataResults"][2].update(StatusCode="Forbidden"), r"rb0.*StatusCode Forbidden"),
    (lambda d: d["MetricDataResults"][2].update(StatusCode="InternalError", Messages=[{"Code": "E", "Value": "boom"}]),
     r"rb0.*StatusCode InternalError \(Id rb0 .*CloudWatch said E: boom\)"),
    (lambda d: d["MetricDataResults"][0].update(Timestamps=["yesterday", "2026-11-02T10:10:00+00:00"]),
     r"line 4: Id r0 .*: timestamp \"yesterday\" is not ISO 8601 or epoch seconds"),
    (lambda d: d["MetricDataResults"][0].update(Timestamps=[1e12 * 1000, 0]), r"timestamp .* is outside 1980-2199"),
    (lambda d: d["MetricDataResults"][0].update(Values=[float("nan"), 1.0]),
     r"Id r0 .*: value nan at .* is not a count, size, rate or time"),
    (lambda d: d["MetricDataResults"][0].update(Values=[-5.0, 1.0]), r"value -5\.0 at .* is not a count"),
    (lambda d: d["MetricDataResults"][0].update(Values=["12", 1.0]), r"value \"12\" at .* is not a number"),
    (lambda d: d["MetricDataResults"][0].update(Values=[1e30, 1.0]), r"read ios at .*: 3\.33333e\+27 I/Os a second is "
                                                                     r"absurd"),
    (lambda d: d.update(MetricDataResults={"Id": "x"}), r"line \d: MetricDataResults is an object, not a list"),
])
def test_bad_get_metric_data(tmp_path, edit, needle):
    """No Values, a mixed period, Forbidden and InternalError results, bad times and values."""
    d = json.loads(EBS_DATA.read_text())
    edit(d)
    _refused(tmp_path, needle, d)


def test_not_an_answer_refused(tmp_path):
    _refused(tmp_path, r"line 1: JSON value 1 \(Metrics, NextToken\) is neither a get-metric-statistics answer",
             {"Metrics": [], "NextToken": "x"})
    _refused(tmp_path, r"element 2 of the list is a list, not a CloudWatch answer", [answer("ReadIOPS", "Average",
                                                                                             "Count/Second", [1.0]), []])
    _refused(tmp_path, r"ReadIOPS: Datapoints is \"none\", not a list", {"Label": "ReadIOPS", "Datapoints": "none"})


def test_only_empty_answers_refused(tmp_path):
    _refused(tmp_path, r"no data points \(ReadIOPS \(.*cw\.json: line 3\), WriteIOPS .*: Datapoints or Values empty",
             {"Label": "ReadIOPS", "Datapoints": []}, {"Label": "WriteIOPS", "Datapoints": []}, concat=True)


def test_json_nested_100000_deep_refused_in_one_line(tmp_path):
    f = tmp_path / "cw.json"
    f.write_text('{"MetricDataResults": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(DbtierError, match=r"cw\.json: JSON nested deeper than any AWS answer .*not a CloudWatch "
                                          r"answer") as exc:
        imp(f)
    assert "\n" not in str(exc.value).split("\n  next:")[0]


def test_broken_json_and_a_number_too_long_refused(tmp_path):
    f = tmp_path / "cw.json"
    f.write_text('{"Label": "ReadIOPS",\n "Datapoints": [\n')
    with pytest.raises(DbtierError, match=r"cw\.json: line 3: not valid JSON"):
        imp(f)
    f.write_text('{"Label": "ReadIOPS", "Datapoints": [{"Timestamp": 1793700000, "Average": ' + "9" * 5000 + "}]}")
    with pytest.raises(DbtierError, match=r"cw\.json: line 1: not valid JSON \(Exceeds the limit"):
        imp(f)


def test_another_source_refused_naming_it():
    with pytest.raises(DbtierError, match=r"looks like a azure .* file, not CloudWatch output"):
        imp(DATA / "history" / "azure" / "az-metrics-list-disk.json")
