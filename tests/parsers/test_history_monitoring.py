"""The monitoring-system readers on saved outputs: real Prometheus answers (query_range as curl and
`promtool query range -o json` saved them, `promtool tsdb dump`, a rate() result) and a real
VictoriaMetrics export, captured on this machine (tests/data/history/README.md); Azure Monitor answers
copied from public docs, and files written in their layouts (CloudWatch's: test_history_cloudwatch.py); pg_stat_io of PostgreSQL
16/17 and 18 in the collector's layout. Figures are checked against an independent computation from the
files; bad input gets one message naming the file and line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

H = DATA / "history"
PROM = H / "real" / "prometheus"
QR = PROM / "query_range-node-disk.json"


def imp(source: str, *files, **opts):
    con = connect()
    res = read(con, source, [str(f) for f in files], ReadOptions(**opts))
    return summarise_import(con, res), con


def one(doc):
    assert len(doc["databases"]) == 1
    return doc["databases"][0]


def _series(name: str, device: str = "vda") -> list[tuple[float, float]]:
    """The query_range file's own samples of one series (the independent computation)."""
    for s in json.loads(QR.read_text())["data"]["result"]:
        if s["metric"]["__name__"] == name and s["metric"].get("device") == device:
            return [(float(t), float(v)) for t, v in s["values"]]
    raise AssertionError(name)


def _rates(name: str, scale: float = 1.0) -> list[float]:
    pts = _series(name)
    return sorted((b[1] - a[1]) / (b[0] - a[0]) * scale for a, b in zip(pts, pts[1:]))


# -- Prometheus ----------------------------------------------------------------------------------------------

def test_query_range_counters_are_differenced_like_diskstats():
    doc, _ = imp("prometheus", QR)
    db = one(doc)
    assert db["name"] == "127.0.0.1:54619"           # the instance label
    reads = _rates("node_disk_reads_completed_total")
    assert db["intervals"] == len(reads) == 29
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(reads[-1])
    assert db["peaks"]["write_mbps"]["max"] == pytest.approx(_rates("node_disk_written_bytes_total", 1e-6)[-1])
    # zram0 is not a whole disk (diskstats' rule): kept as detail, never added
    roles = {f["file_type"]: f["role"] for f in db["file_types"]}
    assert roles == {"vda": "part", "zram0": "detail"}
    p = doc["provenance"]
    assert (p["source"], p["semantics"], p["native_step_s"], p["resets"], p["gaps"]) == ("prometheus", "counter", 1.0, 0, 0)
    # busy: node_disk_io_time_seconds_total's increase over elapsed time
    busy = _rates("node_disk_io_time_seconds_total")
    assert db["busy"]["vda"]["max"] == pytest.approx(busy[-1], abs=1e-4)
    ft = {f["file_type"]: f for f in db["file_types"]}
    rt, rd = _series("node_disk_read_time_seconds_total"), _series("node_disk_reads_completed_total")
    lat = sorted((b[1] - a[1]) * 1000 / (d[1] - c[1]) for a, b, c, d in zip(rt, rt[1:], rd, rd[1:]) if d[1] > c[1])
    assert ft["vda"]["read_lat_ms"]["p50"] == pytest.approx(lat[len(lat) // 2] if len(lat) % 2 else
                                                            (lat[len(lat) // 2 - 1] + lat[len(lat) // 2]) / 2)


def test_promtool_json_and_tsdb_dump_give_the_same_figures():
    """The same window three ways: the API's answer, promtool's bare matrix, and the raw scrape samples of
    `promtool tsdb dump` (ms timestamps, 0.567 s off the query's steps: each step held one scrape)."""
    ref = one(imp("prometheus", QR)[0])
    for f in (PROM / "promtool-query-range.json", PROM / "promtool-tsdb-dump.txt"):
        db = one(imp("prometheus", f)[0])
        for m in ("read_iops", "write_iops", "read_mbps", "write_mbps"):
            assert db["peaks"][m] == pytest.approx(ref["peaks"][m]), (f, m)


def test_victoriametrics_export_matches_fio():
    """The real VictoriaMetrics export of node_exporter while fio read at 200 IOPS (fio said 199.99)."""
    doc, _ = imp("prometheus", H / "real" / "victoriametrics" / "export-node-disk.jsonl")
    db = one(doc)
    assert db["intervals"] == 19
    assert db["peaks"]["read_iops"]["p50"] == pytest.approx(200, rel=0.02)
    assert "vmexport" in doc["notes"][0]


def test_rate_results_are_the_sources_averages():
    doc, _ = imp("prometheus", PROM / "query_range-rate.json")
    db = one(doc)
    vals = sorted(float(v) for _, v in json.loads((PROM / "query_range-rate.json").read_text())
                  ["data"]["result"][0]["values"])
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(vals[-1])
    assert db["intervals"] == len(vals)
    p = doc["provenance"]
    assert (p["semantics"], p["native_step_s"], p["averaging_s"]) == ("rate", 5.0, 5)
    assert p["basis"].startswith("5-s averages (the source's own")


def test_devices_option_and_a_partition_named(tmp_path):
    doc, _ = imp("prometheus", QR, devices="zram0", database="db01")
    db = one(doc)
    assert db["name"] == "db01"
    assert {f["file_type"]: f["role"] for f in db["file_types"]} == {"vda": "detail", "zram0": "part"}
    with pytest.raises(DbtierError, match="--devices: sdb not in the data"):
        imp("prometheus", QR, devices="sdb")


def test_counter_reset_is_a_new_segment(tmp_path):
    """A counter that goes back (an exporter restart, a reboot without node_boot_time_seconds) is a reset:
    the interval over it is dropped, never a negative or a huge rate."""
    doc = json.loads(QR.read_text())
    for s in doc["data"]["result"]:
        if s["metric"].get("device") == "vda":
            s["values"] = [[t, v] if i < 15 else [t, str(float(v) - float(s["values"][14][1]))]
                           for i, (t, v) in enumerate(s["values"])]
        if s["metric"]["__name__"] == "node_boot_time_seconds":
            s["values"] = [[t, v] if i < 15 else [t, str(float(v) + 100)] for i, (t, v) in enumerate(s["values"])]
    f = tmp_path / "reset.json"
    f.write_text(json.dumps(doc))
    got = imp("prometheus", f)[0]
    db = one(got)
    assert db["restarts"] == 1 and db["intervals"] == 28 and got["provenance"]["resets"] == 1
    assert got["provenance"]["gaps"] == 1        # the dropped interval is a hole in the series
    assert db["peaks"]["read_iops"]["max"] <= one(imp("prometheus", QR)[0])["peaks"]["read_iops"]["max"]


def _bad_qr(tmp_path, edit) -> Path:
    text = QR.read_text()
    f = tmp_path / "bad.json"
    f.write_text(edit(text))
    return f


@pytest.mark.parametrize("edit, needle", [
    (lambda t: t.replace('"1622.816"', '"NaN"', 1), r"bad\.json: line 1: node_disk_io_time_seconds_total\{device=\"vda\".* value 'NaN' is not a finite number"),
    (lambda t: t.replace('"1623"', '"+Inf"', 1), r"value '\+Inf' is not a finite number"),
    (lambda t: t.replace("[1795697082,", "[1795697082000,"), r"sample time 1795697082000 is in milliseconds"),
    (lambda t: '{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per '
     'timeseries. Try decreasing the query resolution (?step=XX)"}', r'line 1: the Prometheus API answered status "error" \(bad_data: exceeded maximum resolution'),
    (lambda t: t.replace('"resultType":"matrix"', '"resultType":"vector"'), r"resultType 'vector': an instant query"),
    (lambda t: t[:5000], r"line 1: not valid JSON"),
    (lambda t: t.replace(',"device":"vda"', ''), r"series node_disk_io_time_seconds_total\{instance=.*has no 'device' label"),
    (lambda t: t.replace('"__name__":"node_disk_read_bytes_total",', ''), r"has no metric name \(a function result"),
])
def test_bad_query_range_answers(tmp_path, edit, needle):
    with pytest.raises(DbtierError, match=needle):
        imp("prometheus", _bad_qr(tmp_path, edit))


def test_bad_input_line_is_where_the_sample_is(tmp_path):
    """A pretty-printed answer: the message names the line the NaN is on."""
    doc = json.loads(QR.read_text())
    doc["data"]["result"][3]["values"][7][1] = "NaN"
    f = tmp_path / "pretty.json"
    f.write_text(json.dumps(doc, indent=1))
    want = next(i for i, line in enumerate(f.read_text().splitlines(), 1) if '"NaN"' in line)
    with pytest.raises(DbtierError, match=rf"pretty\.json: line {want}: "):
        imp("prometheus", f)


def test_bad_dump_and_export_lines(tmp_path):
    lines = (PROM / "promtool-tsdb-dump.txt").read_text().splitlines()
    lines[4] = lines[4].rsplit(" ", 2)[0] + " +Inf " + lines[4].rsplit(" ", 1)[1]
    f = tmp_path / "dump.txt"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(DbtierError, match=r"dump\.txt: line 5: .* value '\+Inf' is not a finite number"):
        imp("prometheus", f)
    # NaN in a dump is a staleness marker: skipped and counted
    lines = (PROM / "promtool-tsdb-dump.txt").read_text().splitlines()
    lines.insert(30, lines[29].rsplit(" ", 2)[0] + " NaN " + str(int(lines[29].rsplit(" ", 1)[1]) + 1))
    f.write_text("\n".join(lines) + "\n")
    assert any("1 staleness markers" in n for n in imp("prometheus", f)[0]["notes"])
    ex = (H / "real" / "victoriametrics" / "export-node-disk.jsonl").read_text().splitlines()
    ex[2] = ex[2].replace('"values":[', '"values":[null,', 1)
    f = tmp_path / "vm.jsonl"
    f.write_text("\n".join(ex) + "\n")
    with pytest.raises(DbtierError, match=r"vm\.jsonl: line 3: .* values but .* timestamps"):
        imp("prometheus", f)


def test_mixed_counters_and_rates_refused():
    with pytest.raises(DbtierError, match="one import is all counters or all rates"):
        imp("prometheus", QR, PROM / "query_range-rate.json")


def test_exporters_metrics_map(tmp_path):
    """postgres_exporter and mysqld_exporter counters in the documented names (with and without _total), in
    a query_range answer written by hand: blocks x 8 KiB, bgwriter pages as writes, InnoDB bytes as given."""
    def s(name, labels, vals):
        return {"metric": {"__name__": name, "instance": "pg01:9187", **labels},
                "values": [[1764000000 + 60 * i, str(v)] for i, v in enumerate(vals)]}
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        s("pg_stat_database_blks_read", {"datname": "app"}, [0, 6000, 18000]),
        s("pg_stat_database_blks_read", {"datname": "postgres"}, [0, 600, 600]),
        s("pg_stat_bgwriter_buffers_clean_total", {}, [0, 1200, 1200]),
        s("pg_stat_checkpointer_buffers_written_total", {}, [0, 0, 6000]),
        s("pg_stat_database_temp_bytes", {"datname": "app"}, [0, 0, 60e6]),
        {"metric": {"__name__": "mysql_global_status_innodb_data_reads", "instance": "my01:9104"},
         "values": [[1764000000, "0"], [1764000060, "3000"]]},
        {"metric": {"__name__": "mysql_global_status_innodb_data_read", "instance": "my01:9104"},
         "values": [[1764000000, "0"], [1764000060, str(3000 * 16384)]]},
    ]}}
    f = tmp_path / "exporters.json"
    f.write_text(json.dumps(doc))
    got = {d["name"]: d for d in imp("prometheus", f)[0]["databases"]}
    pg, my = got["pg01:9187"], got["my01:9104"]
    assert pg["peaks"]["read_iops"]["max"] == pytest.approx(200)           # (12000 + 0) / 60 vs (6000 + 600) / 60
    assert pg["peaks"]["read_mbps"]["max"] == pytest.approx(200 * 8192 / 1e6)
    assert pg["peaks"]["write_iops"]["max"] == pytest.approx(100)          # 6000 checkpointer pages / 60 s
    ft = {f["file_type"]: f for f in pg["file_types"]}
    assert ft["temp files"]["max_write_mbps"] == pytest.approx(1.0)
    assert my["peaks"]["read_iops"]["max"] == pytest.approx(50)
    assert my["peaks"]["read_mbps"]["max"] == pytest.approx(50 * 16384 / 1e6)


def test_not_a_prometheus_file(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"hello": 1}')
    with pytest.raises(DbtierError, match=r"x\.json: line 1: not a Prometheus query_range answer"):
        imp("prometheus", f)
    with pytest.raises(DbtierError, match="looks like a diskstats"):
        imp("prometheus", H / "real" / "diskstats-vm.txt")


# -- Azure Monitor -------------------------------------------------------------------------------------------

AZ = H / "azure"


def test_azure_disk_averages_and_a_missing_grain():
    doc, _ = imp("azure", AZ / "az-metrics-list-disk.json")
    db = one(doc)
    assert db["name"] == "sqldata01"                       # from the resource id
    assert db["intervals"] == 3 and db["gaps"] == 1        # 10:02 has no average: a gap, not a zero
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(1200)
    assert db["peaks"]["write_mbps"]["max"] == pytest.approx(3.6864)
    p = doc["provenance"]
    assert (p["semantics"], p["native_step_s"], p["averaging_s"]) == ("rate", 60.0, 60.0)


def test_azure_vm_total_and_per_disk_detail():
    """The VM's Disk ... metrics are its total; Data Disk ... per LUN are detail (never added again); the
    CLI's `0:01:00` interval; Disk Read Bytes are totals per minute."""
    doc, _ = imp("azure", AZ / "az-metrics-list-vm.json")
    db = one(doc)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(2500)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(1228800000 / 60 / 1e6)
    roles = {f["file_type"]: f["role"] for f in db["file_types"]}
    assert roles == {"all disks": "total", "data disk LUN 0": "detail", "data disk LUN 1": "detail"}


def test_azure_real_answer_without_disk_metrics():
    with pytest.raises(DbtierError, match=r"no disk I/O metric with data \(the metrics are: Percentage CPU\)"):
        imp("azure", AZ / "rest-metrics-list-vm-cpu-msdocs.json")


def test_azure_mixed_grain(tmp_path):
    d = json.loads((AZ / "az-metrics-list-disk.json").read_text())
    f1, f2 = tmp_path / "a.json", tmp_path / "b.json"
    f1.write_text(json.dumps(d))
    d["interval"] = "PT5M"
    f2.write_text(json.dumps(d))
    with pytest.raises(DbtierError, match="a mixed time grain"):
        imp("azure", f1, f2)


# -- PostgreSQL pg_stat_io (16/17 and 18 column sets) --------------------------------------------------------

PGIO = H / "pg_stat_io"


def test_pg_stat_io_16():
    doc, _ = imp("postgres", PGIO / "pg_stat_io-16.csv")
    db = one(doc)
    # interval 2: client reads 12000 + temp reads 1200 + autovacuum 600 -> (12000 + 600) / 60 data, 20 temp
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(230)
    # interval 2: client writes 60 + extends 600 + bgwriter 600 + checkpointer 6000 + vacuum 60 = 7320 / 60
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(122)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(230 * 8192 / 1e6)
    ft = {f["file_type"]: f for f in db["file_types"]}
    assert ft["data fsync"]["role"] == "detail" and ft["data fsync"]["max_write_iops"] == pytest.approx(1.0)
    assert any("16/17" in n for n in doc["notes"])


def test_pg_stat_io_18_bytes_and_wal():
    doc, _ = imp("postgres", PGIO / "pg_stat_io-18.csv")
    db = one(doc)
    ft = {f["file_type"]: f for f in db["file_types"]}
    assert set(ft) == {"data", "wal", "data fsync", "wal fsync"}
    assert ft["wal"]["role"] == "part" and ft["wal"]["max_write_iops"] == pytest.approx(101)
    assert ft["data"]["max_read_iops"] == pytest.approx(100)
    # 18's read_bytes, not reads x 8 KiB: 196608000 bytes in 60 s (4 blocks a read)
    assert ft["data"]["max_read_mbps"] == pytest.approx(196608000 / 60 / 1e6)
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(111 + 101)
    assert ft["wal fsync"]["max_write_iops"] == pytest.approx(101)


def test_pg_stat_io_unknown_version(tmp_path):
    text = (PGIO / "pg_stat_io-18.csv").read_text().replace("stats_reset", "read_blocks,stats_reset")
    text = re.sub(r"(\+00)\n", r"\1\n", text)
    f = tmp_path / "pg_stat_io.csv"
    f.write_text("\n".join(line if line.startswith("sample_time") else line.rsplit(",", 1)[0] + ",1," +
                           line.rsplit(",", 1)[1] for line in text.splitlines()) + "\n")
    with pytest.raises(DbtierError, match=r"pg_stat_io\.csv: line 1: pg_stat_io of an unknown PostgreSQL version.*"
                       r"unknown: read_blocks"):
        imp("postgres", f)
    g = tmp_path / "pg_stat_io-nobytes.csv"
    shutil.copyfile(PGIO / "pg_stat_io-16.csv", g)
    g.write_text(g.read_text().replace(",op_bytes,", ",opbytes,"))
    with pytest.raises(DbtierError, match=r"against 16/17's: not there: op_bytes; unknown: opbytes"):
        imp("postgres", g)
