"""iostat input dbtier cannot read as I/O intervals: one DbtierError each, naming the file and what it lacks,
with the next step. Real captures (tests/data/history/iostat/README.md) where sysstat makes the case,
else one of them changed as each test says."""

from __future__ import annotations

import json
import re

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.store import connect
from dbtier.history.tables import ReadOptions

IO = DATA / "history" / "iostat"
T_JSON = IO / "iostat-x-t-json.json"


def refused(*files, match: str, **opts) -> DbtierError:
    with pytest.raises(DbtierError, match=match) as e:
        read(connect(), "iostat", [str(f) for f in files], ReadOptions(**opts))
    assert e.value.hint, "every refusal says the next step"
    return e.value


def edited(tmp_path, src, old: str, new: str, count: int = 1, name: str = "edited.json"):
    text = src.read_text()
    assert old in text
    p = tmp_path / name
    p.write_text(text.replace(old, new, count))
    return p


def test_one_report_only():
    e = refused(IO / "iostat-x-json-once.json", interval_s=60,
                match="one report only: iostat's first report is the average since boot")
    assert "at least two reports" in e.hint


def test_json_without_t_needs_the_interval():
    e = refused(IO / "iostat-x-json.json", match=r"iostat-x-json.json: no report times: iostat was run without -t: "
                                                 "give --interval")
    assert "--interval SECONDS" in e.hint and "iostat -x -t" in e.hint


def test_text_without_t_needs_the_interval():
    refused(IO / "iostat-x.txt", match="iostat-x.txt: no report times: iostat was run without -t: give --interval")


def test_json_that_is_not_sysstats(tmp_path):
    p = tmp_path / "other.json"
    p.write_text('{"hosts": [{"statistics": []}]}')
    refused(p, match="JSON, but not sysstat's: its first key is 'hosts'")
    p.write_text("[1, 2]")
    refused(p, match=r"JSON that begins with '\[', not sysstat's")


def test_another_sources_json_is_named():
    refused(DATA / "history" / "cloudwatch" / "get-metric-statistics-ebs-datadog.json",
            match="looks like a cloudwatch .* file, not iostat")


def test_sars_json():
    refused(IO / "sadf-j-d.json", match=r"sar's JSON \(`sadf -j`\), not iostat's")


def test_iostat_without_x():
    refused(IO / "iostat-no-x-json.json", interval_s=1,
            match=r"report 1 \(line 11\): loop0: no r/s, w/s, rkB/s, wkB/s \(tps alone: iostat without -x\)")


def test_cpu_only():
    refused(IO / "iostat-c-json.json", interval_s=1, match="sysstat JSON without device figures")


def test_a_start_that_is_not_a_time():
    refused(IO / "iostat-x-json.json", interval_s=1, start="yesterday", match="--start 'yesterday': not an ISO 8601")


def test_a_time_of_day_without_a_header_date(tmp_path):
    p = edited(tmp_path, IO / "iostat-x-json.json", '"date": "11/28/26",', "")
    refused(p, interval_s=1, start="09:00", match="a time of day, but .* has no header date")
    refused(p, interval_s=1, match="no report times: iostat was run without -t, and no header date")


def test_a_zero_interval():
    refused(IO / "iostat-x-json.json", interval_s=0, match="--interval 0: not a number of seconds between reports")


def test_reports_with_and_without_times(tmp_path):
    p = edited(tmp_path, T_JSON, '"timestamp": "11/28/26 15:23:08",', "")
    refused(p, match=r"report 3 \(line 32\): a report without a time after reports with one")


def test_a_report_time_dbtier_cannot_read(tmp_path):
    p = edited(tmp_path, T_JSON, "11/28/26 15:23:08", "yesterday noon")
    refused(p, match=r"report 3 \(line 32\): report time 'yesterday noon' is not one dbtier reads")


def test_report_times_going_back(tmp_path):
    p = edited(tmp_path, T_JSON, "11/28/26 15:23:09", "11/28/26 15:23:01")
    refused(p, match="report time 2026-11-28 15:23:01 UTC is not after the previous one")


def test_json_cut_before_its_first_report(tmp_path):
    p = tmp_path / "cut.json"
    p.write_text(T_JSON.read_text()[:120])
    refused(p, match="the JSON ends at line 7 before its first report")


def test_json_broken_in_the_middle(tmp_path):
    p = edited(tmp_path, T_JSON, '"r/s": 317.00,', '"r/s": 317.00;')
    refused(p, match="line 30: not valid JSON")


def test_json_nested_too_deep(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text('{"sysstat": {"hosts": [{"statistics": [' + "[" * 100_000 + "]" * 100_000 + "]}]}}")
    refused(p, match="JSON nested too deep")


@pytest.mark.parametrize("value, said", [('"317"', "'r/s' is '317', not a number"), ("true", "'r/s' is 'True'"),
                                         ("-3", "r/s -3 is negative or not finite"),
                                         ("NaN", "r/s nan is negative or not finite"),
                                         ("1e30", "r/s 1e+30 is absurd")])
def test_a_figure_that_is_not_a_rate(tmp_path, value, said):
    p = edited(tmp_path, T_JSON, '"r/s": 317.00,', f'"r/s": {value},')
    refused(p, match=r"report 2 \(line 21\): vda: " + re.escape(said))


def test_an_implausible_rate(tmp_path):
    p = edited(tmp_path, T_JSON, '"r/s": 317.00,', '"r/s": 5e9,')
    refused(p, match=r"report 2 \(line 21\): vda: read iops: 5e\+09 I/Os a second is absurd")


def test_a_device_without_its_name(tmp_path):
    p = edited(tmp_path, T_JSON, '{"disk_device": "vda", "r/s": 317.00', '{"r/s": 317.00')
    refused(p, match=r"report 2 \(line 21\): a device without its \"disk_device\" name")


def test_no_whole_disk(tmp_path):
    p = tmp_path / "loops.json"
    doc = json.loads(T_JSON.read_text())
    for rep in doc["sysstat"]["hosts"][0]["statistics"]:
        rep["disk"] = [d for d in rep["disk"] if d["disk_device"] != "vda"]
    p.write_text(json.dumps(doc))
    e = refused(p, match=r"no whole disk among the devices \(loop0, loop1, loop2, loop3\)")
    assert "--devices" in e.hint
