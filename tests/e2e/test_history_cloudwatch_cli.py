"""`dbtier history import` of CloudWatch answers end to end: the source told from the files' first bytes for
each saved shape (a boto3 JSON list, CLI answers concatenated, get-metric-data pages in an array, a one-point
answer with --interval), the figures and provenance in the run's JSON, and refusals as one `dbtier: error:`
line (JSON nested 100,000 deep included), never a traceback."""

from __future__ import annotations

import json

import pytest

from conftest import DATA, assert_clean_error, call_main, history_imported

CW = DATA / "history" / "cloudwatch"


def imported(tmp_path, *args):
    return history_imported(tmp_path, "cloudwatch", *args)


@pytest.mark.slow
def test_three_shapes_sniffed_and_read(tmp_path):
    # a boto3 script's JSON list (real): ReadIOPS and WriteIOPS Averages, epoch times
    boto = CW / "boto3-get-metric-statistics-rds-list.json"
    answers = {a["Label"]: [p["Average"] for p in a["Datapoints"]] for a in json.loads(boto.read_text())}
    doc = imported(tmp_path / "a", boto)
    db = doc["databases"][0]
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(answers["ReadIOPS"]))
    assert doc["provenance"]["statistic"] == "Average" and doc["provenance"]["period_s"] == 300

    # CLI answers concatenated: VolumeReadOps Sum 24,000 over 300 s = 80 IOPS at most
    doc = imported(tmp_path / "b", CW / "get-metric-statistics-ebs-concatenated.json", "--database", "ebs01")
    db = doc["databases"][0]
    assert db["name"] == "ebs01" and db["peaks"]["read_iops"]["max"] == pytest.approx(24000 / 300)
    assert doc["provenance"]["basis"] == "5-minute sums divided by the period (CloudWatch's Sum)"

    # get-metric-data pages in an array: reads 2000 + writes 500 at 09:03
    doc = imported(tmp_path / "c", CW / "boto3-get-metric-data-rds-pages.json")
    assert doc["databases"][0]["total"]["iops"]["max"] == pytest.approx(2500)
    assert doc["provenance"]["unit"] == "Bytes/Second, Count/Second"

    # one point: the period given
    doc = imported(tmp_path / "d", CW / "get-metric-statistics-rds-readiops-cli-transcript.json", "--interval", "100h")
    assert doc["databases"][0]["peaks"]["read_iops"]["max"] == pytest.approx(1.3674745832977784)
    assert doc["provenance"]["period_s"] == 360000


def test_refusals_are_one_line(tmp_path):
    r = call_main("history", "import", str(CW / "get-metric-statistics-cpu-awscli-example.json"),
                  "--out", str(tmp_path / "cpu"), cwd=tmp_path)
    assert_clean_error(r, "CPUUtilization: a CPU metric, not disk I/O")
    deep = tmp_path / "deep.json"
    deep.write_text('{"MetricDataResults": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for args in ([str(deep)], ["--source", "cloudwatch", str(deep)]):
        r = call_main("history", "import", *args, "--out", str(tmp_path / "deep"), cwd=tmp_path)
        assert r.returncode not in (0, 70)
        assert_clean_error(r, "deep.json: JSON nested deeper than any AWS answer")
    one = CW / "get-metric-statistics-rds-readiops-cli-transcript.json"
    r = call_main("history", "import", str(one), "--out", str(tmp_path / "one"), cwd=tmp_path)
    assert_clean_error(r, "ReadIOPS: one data point: the period cannot be told", "give --interval PERIOD")
