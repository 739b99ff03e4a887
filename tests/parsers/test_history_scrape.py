"""node_exporter's text scrapes as a history: the real captures of tests/data/history/node_exporter/ (a
`# TIME` file as collectors/node_exporter.sh writes it, one scrape a file named with its time, Prometheus'
`/federate` answers with timestamps), the same files timed by their modification times, and every
refusal. Expected figures are worked out here from the files' own lines (delta of the counter / delta of
the times), never by the reader."""

from __future__ import annotations

import os
import re
import shutil
import statistics

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.sources import detect
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

NE = DATA / "history" / "node_exporter"
TIMED = NE / "scrapes.prom"
PER_FILE = sorted((NE / "per-file").glob("metrics-*.prom"))
FEDERATE = NE / "federate.prom"


def imp(*files, **opts):
    con = connect()
    res = read(con, "prometheus", [str(f) for f in files], ReadOptions(**opts))
    return summarise_import(con, res)


def one(doc):
    assert len(doc["databases"]) == 1
    return doc["databases"][0]


def _value(body: str, name: str, device: str = "vda") -> float:
    m = re.search(rf'^{name}\{{device="{device}"[^}}]*\}} (\S+)', body, re.M)
    assert m, (name, device)
    return float(m.group(1))


def _blocks(text: str) -> list[tuple[float, str]]:
    """(time, scrape) of each `# TIME` block."""
    parts = re.split(r"^# TIME (\S+)\n", text, flags=re.M)[1:]
    return [(float(t), body) for t, body in zip(parts[::2], parts[1::2])]


def _rates(points: list[tuple[float, float]], scale: float = 1.0) -> list[float]:
    return [(b[1] - a[1]) / (b[0] - a[0]) * scale for a, b in zip(points, points[1:])]


# -- the shapes, on the real captures --------------------------------------------------------------------------

def test_time_lines_file():
    """Four scrapes each after a `# TIME` line: reads/s of vda = delta reads_completed / delta time."""
    blocks = _blocks(TIMED.read_text())
    assert len(blocks) == 4
    reads = _rates([(t, _value(b, "node_disk_reads_completed_total")) for t, b in blocks])
    written = _rates([(t, _value(b, "node_disk_written_bytes_total")) for t, b in blocks], 1e-6)
    # by hand from the file: (2.8108444e+07 - 2.8105408e+07) / (1795879401.995807416 - 1795879396.927534379)
    assert reads[0] == pytest.approx(3036 / 5.068273037, rel=1e-6)      # 599.02
    doc = imp(TIMED)
    db = one(doc)
    assert db["name"] == "scrapes" and db["intervals"] == 3
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(reads))
    assert db["peaks"]["read_iops"]["p50"] == pytest.approx(statistics.median(reads))
    assert db["peaks"]["write_mbps"]["max"] == pytest.approx(max(written))
    # vda counts; zram0 and loop0p1 (a loop device's partition) never do
    assert {f["file_type"]: f["role"] for f in db["file_types"]} == {"vda": "part", "zram0": "detail",
                                                                     "loop0p1": "detail"}
    busy = _rates([(t, _value(b, "node_disk_io_time_seconds_total")) for t, b in blocks])
    assert db["busy"]["vda"]["max"] == pytest.approx(max(busy), abs=1e-4)
    p = doc["provenance"]
    assert (p["semantics"], p["times_from"]) == ("counter", "the `# TIME` lines")
    assert p["native_step_s"] == pytest.approx(statistics.median(b[0] - a[0] for a, b in zip(blocks, blocks[1:])))
    assert "sample times from the `# TIME` lines" in p["basis"]
    assert any("4 scrape times of 1 database" in n for n in doc["notes"])


def test_one_scrape_a_file_timed_by_its_name(tmp_path):
    """metrics-20261128T152316Z.prom ...: the times are the names' (UTC), 5 and 6 s apart."""
    assert [f.name for f in PER_FILE] == ["metrics-20261128T152316Z.prom", "metrics-20261128T152321Z.prom",
                                          "metrics-20261128T152327Z.prom"]
    vals = [_value(f.read_text(), "node_disk_reads_completed_total") for f in PER_FILE]
    assert vals == [2.8105396e7, 2.8108431e7, 2.8111458e7]
    expected = [(2.8108431e7 - 2.8105396e7) / 5, (2.8111458e7 - 2.8108431e7) / 6]     # 607.0, 504.5
    doc = imp(*PER_FILE)
    db = one(doc)
    assert db["name"] == "metrics" and db["intervals"] == 2
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(607.0)
    assert sorted(i["read_iops"] for i in db["top_intervals"]) == pytest.approx(sorted(expected))
    assert db["start"].startswith("2026-11-28T15:23:16") or db["start"].startswith("2026-11-28 15:23:16")
    assert doc["provenance"]["times_from"] == "the file names"
    # a name without Z is in --tz: an hour earlier in UTC from Paris, same rates
    local = [tmp_path / f.name.replace("Z.prom", ".prom") for f in PER_FILE]
    for src, dst in zip(PER_FILE, local):
        shutil.copyfile(src, dst)
    d2 = imp(*local, tz="Europe/Paris")
    assert one(d2)["peaks"]["read_iops"]["max"] == pytest.approx(607.0)
    assert "14:23:16" in one(d2)["start"]


def test_one_scrape_a_file_timed_by_its_mtime(tmp_path):
    """No time in the names: the files' modification times (set here a minute apart, as a minute loop of
    `curl -o` would leave them)."""
    files = [tmp_path / f"scrape-{i}.prom" for i in (1, 2, 3)]
    t0 = 1795879396.0
    for i, (src, dst) in enumerate(zip(PER_FILE, files)):
        shutil.copyfile(src, dst)
        os.utime(dst, (t0 + 60 * i, t0 + 60 * i))
    doc = imp(*files)
    db = one(doc)
    assert db["name"] == "scrape" and db["intervals"] == 2
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(3035 / 60, 3027 / 60))
    assert doc["provenance"]["times_from"] == "the files' modification times"
    assert any("cp -p" in n for n in doc["notes"])


def test_federate_answers_with_timestamps():
    """Prometheus' /federate: each sample carries its scrape's time in ms; the instance label names it."""
    text = FEDERATE.read_text()
    pts = [(int(ts) / 1000, float(v)) for v, ts in
           re.findall(r'^node_disk_reads_completed_total\{device="vda",[^}]*\} (\S+) (\d+)$', text, re.M)]
    assert len(pts) == 4
    reads = _rates(pts)
    doc = imp(FEDERATE)
    db = one(doc)
    assert db["name"] == "127.0.0.1:42785" and db["intervals"] == 3
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(reads))
    assert doc["provenance"]["times_from"] == "the samples' timestamps"
    assert one(imp(FEDERATE, database="db01"))["name"] == "db01"


def test_iso_time_lines_and_their_zone(tmp_path):
    """`# TIME 2026-11-28T15:23:16.927Z` and `# TIME 2026-11-28 16:23:16.927` with --tz Europe/Paris:
    the same instants, the same rates."""
    import datetime as dt
    text = TIMED.read_text()

    def iso(m, z):
        t = dt.datetime.fromtimestamp(float(m.group(1)), dt.timezone.utc)
        t = t.astimezone(dt.timezone(dt.timedelta(hours=0 if z else 1))).replace(tzinfo=None)
        return "# TIME " + t.isoformat(sep="T" if z else " ") + ("Z" if z else "")
    a, b = tmp_path / "utc.prom", tmp_path / "paris.prom"
    a.write_text(re.sub(r"^# TIME (\S+)$", lambda m: iso(m, True), text, flags=re.M))
    b.write_text(re.sub(r"^# TIME (\S+)$", lambda m: iso(m, False), text, flags=re.M))
    want = one(imp(TIMED))
    for f, tz in ((a, "UTC"), (b, "Europe/Paris")):
        got = one(imp(f, tz=tz))
        assert got["peaks"]["read_iops"]["max"] == pytest.approx(want["peaks"]["read_iops"]["max"], rel=1e-6)
        assert got["start"] == want["start"]


def test_sniffed_from_the_first_bytes(tmp_path):
    for f in (TIMED, FEDERATE, *PER_FILE):
        assert detect.guess(f) == "prometheus", f
    # a page cut to its samples: a `node_` line first
    bare = tmp_path / "bare.prom"
    bare.write_text("".join(l for l in PER_FILE[0].read_text().splitlines(keepends=True)
                            if l.startswith("node_")))
    assert detect.guess(bare) == "prometheus"


# -- devices: partitions, dm- and md never counted twice -------------------------------------------------------

def _page(counters: dict[str, float]) -> str:
    lines = ["# HELP node_disk_reads_completed_total The total number of reads completed successfully.",
             "# TYPE node_disk_reads_completed_total counter"]
    lines += [f'node_disk_reads_completed_total{{device="{d}"}} {v:.6e}' for d, v in counters.items()]
    lines += ["# HELP node_load1 1m load average.", "# TYPE node_load1 gauge", "node_load1 0.42"]
    return "\n".join(lines) + "\n"


def _timed(pages: list[tuple[str, str]]) -> str:
    return "".join(f"# TIME {t}\n{p}" for t, p in pages)


DEVS = ("sda", "sda1", "sda2", "dm-0", "md0", "nvme0n1", "nvme0n1p1", "loop0", "zram0")


def test_partitions_and_dm_md_never_counted_twice(tmp_path):
    """sda's reads show again in sda1 and dm-0 (LVM over sda1) and md0; nvme0n1's in nvme0n1p1: only the
    whole disks count. 1,800 reads on sda and 3,600 on nvme0n1 in 60 s: 90 IOPS, never more."""
    first = dict.fromkeys(DEVS, 1.726093e6)
    second = {**first, "sda": 1.726093e6 + 1800, "sda1": 1.726093e6 + 1800, "dm-0": 1.726093e6 + 1800,
              "md0": 1.726093e6 + 1800, "nvme0n1": 1.726093e6 + 3600, "nvme0n1p1": 1.726093e6 + 3600}
    f = tmp_path / "db01.prom"
    f.write_text(_timed([("1795879200", _page(first)), ("1795879260", _page(second))]))
    db = one(imp(f))
    assert db["name"] == "db01"
    assert db["peaks"]["read_iops"]["max"] == pytest.approx((1800 + 3600) / 60)
    assert {x["file_type"] for x in db["file_types"] if x["role"] == "part"} == {"sda", "nvme0n1"}
    # --devices: the volume the database is on
    assert one(imp(f, devices="dm-0"))["peaks"]["read_iops"]["max"] == pytest.approx(30)


def test_float_notation_and_unix_ms_time_lines(tmp_path):
    """`1.726093e+06` is 1,726,093; a `# TIME` in milliseconds (date +%s%3N) is taken as such."""
    f = tmp_path / "ms.prom"
    f.write_text(_timed([("1795879200000", _page({"vda": 1.726093e6})),
                         ("1795879230000", 'node_disk_reads_completed_total{device="vda"} 1.729093e+06\n')]))
    assert one(imp(f))["peaks"]["read_iops"]["max"] == pytest.approx(3000 / 30)


# -- refusals --------------------------------------------------------------------------------------------------

def _refused(tmp_path, text: str, needle: str, name: str = "bad.prom", **opts) -> DbtierError:
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(DbtierError, match=needle) as e:
        imp(f, **opts)
    return e.value


def test_one_scrape_is_refused_in_those_words():
    with pytest.raises(DbtierError, match=r"metrics-20261128T152316Z\.prom: one scrape: a rate needs two") as e:
        imp(PER_FILE[0])
    assert "scrape again after an interval" in e.value.hint and "collectors/node_exporter.sh" in e.value.hint


def test_one_time_block_is_one_scrape(tmp_path):
    blocks = TIMED.read_text().split("# TIME ")
    _refused(tmp_path, "# TIME " + blocks[1], r"bad\.prom: one scrape: a rate needs two")


def test_scrapes_of_one_host_named_apart_hint_database(tmp_path):
    files = []
    for i, src in enumerate(PER_FILE[:2]):
        files.append(tmp_path / f"host{i}.prom")
        shutil.copyfile(src, files[-1])
    with pytest.raises(DbtierError, match="one scrape: a rate needs two") as e:
        imp(*files)
    assert "--database NAME" in e.value.hint
    # with --database they are one host's two scrapes (their mtimes: set a minute apart)
    for i, f in enumerate(files):
        os.utime(f, (1795879200 + 60 * i,) * 2)
    assert one(imp(*files, database="db01"))["intervals"] == 1


def test_concatenated_scrapes_without_times(tmp_path):
    page = PER_FILE[0].read_text()
    e = _refused(tmp_path, page + page, r"bad\.prom: line 126: node_boot_time_seconds again: several scrapes with no time")
    assert "# TIME" in e.hint


def test_samples_before_the_first_time_line(tmp_path):
    page = PER_FILE[0].read_text()
    _refused(tmp_path, page + "# TIME 1795879500\n" + page,
             r"line 115: the first `# TIME` line, after samples with no time \(line \d+\)")


@pytest.mark.parametrize("value", ["yesterday", "Sat Nov 28 15:23:16 UTC 2026", "2026-13-01T00:00:00Z", ""])
def test_bad_time_line(tmp_path, value):
    _refused(tmp_path, f"# TIME {value}\n" + _page({"vda": 1}) + "# TIME 1795879260\n" + _page({"vda": 2}),
             r"bad\.prom: line 1: .*a `# TIME` line holds unix seconds or an ISO 8601 time")


def test_time_lines_out_of_order(tmp_path):
    _refused(tmp_path, _timed([("1795879260", _page({"vda": 1})), ("1795879200", _page({"vda": 2}))]),
             r"line 8: `# TIME` 2026-11-28 15:20:00 UTC is not after the one before \(line 1")


def test_time_outside_the_plausible_years(tmp_path):
    _refused(tmp_path, _timed([("100", _page({"vda": 1})), ("160", _page({"vda": 2}))]),
             r"line 1: time 100 s is in the year 1,970, outside 1980-2199")


def test_a_series_twice_in_one_scrape(tmp_path):
    _refused(tmp_path, _timed([("1795879200", _page({"vda": 1}) + _page({"vda": 1})), ("1795879260", _page({"vda": 2}))]),
             r'line 10: node_disk_reads_completed_total\{device="vda"\} twice after the `# TIME` line at line 1')


@pytest.mark.parametrize("value, needle", [
    ("NaN", r"value 'NaN' is not a finite number"),
    ("+Inf", r"value '\+Inf' is not a finite number"),
    ("12,5", r"value '12,5' is not a number"),
    ("1_000", r"value '1_000' is not a number"),
    ("3e19", r"is 2\^64 or more"),
])
def test_bad_counter_values(tmp_path, value, needle):
    _refused(tmp_path, _timed([("1795879200", f'node_disk_reads_completed_total{{device="vda"}} {value}\n'),
                               ("1795879260", 'node_disk_reads_completed_total{device="vda"} 5\n')]),
             rf"bad\.prom: line 2: .*{needle}")


def test_a_negative_counter(tmp_path):
    _refused(tmp_path, _timed([("1795879200", 'node_disk_reads_completed_total{device="vda"} -5\n'),
                               ("1795879260", 'node_disk_reads_completed_total{device="vda"} 5\n')]),
             r"-5 is negative")


def test_other_metrics_values_are_not_judged(tmp_path):
    """Only the disk counters are read: a NaN in a metric left out is no reason to refuse."""
    text = _timed([("1795879200", _page({"vda": 0}) + "node_hwmon_temp_celsius NaN\n"),
                   ("1795879260", _page({"vda": 600}))])
    f = tmp_path / "ok.prom"
    f.write_text(text)
    assert one(imp(f))["peaks"]["read_iops"]["max"] == pytest.approx(10)


@pytest.mark.parametrize("line, needle", [
    ('node_disk_reads_completed_total{device=vda} 5', r"are not name=\"value\" pairs"),
    ('node_disk_reads_completed_total{device="vda" 5', r"are not name=\"value\" pairs"),
    ('{__name__="node_disk_reads_completed_total"} 5', r"is not a sample line"),
    ('node_disk_reads_completed_total{device="vda"}', r"is not name\{labels\} value \[timestamp\]"),
    ('node_disk_reads_completed_total{device="vda"} 5 6 7', r"is not name\{labels\} value \[timestamp\]"),
    ('node_disk_reads_completed_total{device="vda"} 5 soon', r"timestamp 'soon' is not a number of milliseconds"),
])
def test_bad_sample_lines(tmp_path, line, needle):
    _refused(tmp_path, _timed([("1795879200", line + "\n"), ("1795879260", _page({"vda": 2}))]),
             rf"bad\.prom: line 2: .*{needle}")


def test_two_files_of_one_time(tmp_path):
    a = tmp_path / "metrics-20261128T152316Z.prom"
    b = tmp_path / "metrics-2026-11-28T15:23:16Z.prom"
    shutil.copyfile(PER_FILE[0], a)
    shutil.copyfile(PER_FILE[1], b)
    with pytest.raises(DbtierError, match=r"two scrapes of metrics at 2026-11-28 15:23:16 UTC \(from their names\)"):
        imp(a, b)


def test_mtimes_within_a_second_are_copies(tmp_path):
    files = []
    for i, src in enumerate(PER_FILE):
        files.append(tmp_path / f"scrape-{i}.prom")
        shutil.copyfile(src, files[-1])
        os.utime(files[-1], (1795879200 + 0.1 * i,) * 2)
    with pytest.raises(DbtierError, match=r"3 scrapes of scrape whose modification times are within one second"):
        imp(*files)


def test_federate_one_time_two_values(tmp_path):
    text = FEDERATE.read_text()
    line = next(l for l in text.splitlines() if l.startswith('node_disk_reads_completed_total{device="vda"'))
    v, ts = line.rsplit(" ", 2)[1:]
    _refused(tmp_path, text + line.replace(f" {v} ", " 1 ") + "\n",
             r"node_disk_reads_completed_total\{device=\"vda\",.* on another line of the same time")


def test_no_disk_metric_at_all(tmp_path):
    _refused(tmp_path, "# TIME 1795879200\nnode_load1 0.5\n# TIME 1795879260\nnode_load1 0.7\n",
             r"no disk or database I/O metric .* the series are: node_load1")


def test_text_refused_as_another_source(tmp_path):
    with pytest.raises(DbtierError, match="looks like a prometheus"):
        con = connect()
        read(con, "diskstats", [str(TIMED)], ReadOptions())


def test_database_names_from_files():
    from dbtier.history.sources.promtext import name_of, name_time
    assert name_of("/x/metrics-20261102T090000Z.prom") == "metrics"
    assert name_of("db01_2026-11-02_09-00-00.prom") == "db01"
    assert name_of("scrape-001.prom") == "scrape" and name_of("db01.prom") == "db01"
    assert name_of("1795879200.prom") == "node"
    assert name_time("metrics-20261102T090000Z.prom", "UTC") == 1793610000.0      # 2026-11-02 09:00 UTC
    assert name_time("metrics-20261102T100000+0100.prom", "UTC") == 1793610000.0
    assert name_time("metrics-2026-11-02_10-00.prom", "Europe/Paris") == 1793610000.0
    assert name_time("scrape.1793610000.prom", "UTC") == 1793610000.0
    assert name_time("metrics-20261399T250000Z.prom", "UTC") is None and name_time("db01.prom", "UTC") is None


def test_a_database_of_one_scrape_beside_others():
    """A /federate history and one scrape of another host: the history is read, the lone scrape is said."""
    doc = imp(FEDERATE, PER_FILE[0])
    assert [d["name"] for d in doc["databases"]] == ["127.0.0.1:42785"]
    assert any(n.startswith("one scrape of metrics in these files: a rate needs two") for n in doc["notes"])
