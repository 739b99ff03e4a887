"""Figures a write-back cache gave (results/cache_suspect.py), on hand-made summaries and points and on the
saved real probes; and what the verdict and the lab's catalog standing make of them."""

from __future__ import annotations

import copy
import json

from dbtier.model.lab import media_figures
from dbtier.report.verdict.topics import verdict
from dbtier.results.cache_suspect import cache_suspect, device_class
from samples import DATA

VIRTIO = {"name": "vda", "disk": "vda", "model": "0x1af4", "driver": "virtio_blk", "virtual": True,
          "rotational": None, "rotational_flag": True}
HDD = {"name": "sda", "disk": "sda", "model": "ATA ST20000NM007D", "driver": "sd", "virtual": False,
       "rotational": True}
SSD = {"name": "nvme0n1", "disk": "nvme0n1", "model": "Samsung SSD 980", "driver": "nvme", "virtual": False,
       "rotational": False}


def seq(read: float, write: float) -> dict:
    return {"read_mbps_seq": read, "write_mbps_seq": write}


# -- the device class ------------------------------------------------------------------------------------------

def test_device_class():
    assert device_class(VIRTIO) == "virtual"
    assert device_class(HDD) == "hdd"
    assert device_class(SSD) == "flash"
    assert device_class({**HDD, "name": "md0", "disk": "md0"}) is None            # an array of disks
    assert device_class({**HDD, "model": "DELL PERC H730P Mini"}) is None          # a RAID controller's drive
    assert device_class({**HDD, "rotational": None}) is None
    assert device_class(None) is None


# -- sequential writes above reads ------------------------------------------------------------------------------

def test_the_issues_figures_are_a_cache():
    c = cache_suspect(seq(1303.0, 2767.0), [], VIRTIO)
    assert c["figures"] == ["write_mbps_seq"]
    assert c["why"] == "writes 2,767 MB/s > reads 1,303 MB/s on vda"
    assert c["device_class"] == "virtual"
    assert "--size larger than the RAM" in c["test"] and "--device DEV --destroy-data" in c["test"]


def test_the_margin_is_20_percent_over_reads():
    assert cache_suspect(seq(1000.0, 1200.0), [], VIRTIO) is None               # 1.2 x: within the margin
    assert cache_suspect(seq(1000.0, 1201.0), [], VIRTIO)["figures"] == ["write_mbps_seq"]
    assert cache_suspect(seq(1000.0, 900.0), [], SSD) is None
    # the class-free rule needs no device: 1,300 > 1.2 x 1,000
    assert cache_suspect(seq(1000.0, 1300.0), [], None)["why"] == "writes 1,300 MB/s > reads 1,000 MB/s"


def test_a_hard_disk_writing_faster_than_any_disk_can():
    c = cache_suspect(seq(700.0, 600.0), [], HDD)          # not above its reads, but above 560 MB/s
    assert c["figures"] == ["write_mbps_seq"]
    assert c["why"] == "600 MB/s sequential write on sda, above the 560 MB/s a hard disk sustains"
    assert cache_suspect(seq(250.0, 240.0), [], HDD) is None
    assert cache_suspect(seq(1400.0, 1300.0), [], {**HDD, "name": "md0", "disk": "md0"}) is None   # an array


def test_the_test_names_the_file_and_the_memory():
    c = cache_suspect(seq(1000.0, 2000.0), [], VIRTIO, file_bytes=1 << 30, memory_bytes=16 << 30)
    assert "(the test file was 1.0 GiB; this machine has 16.0 GiB of RAM, a virtual disk's host may have more)" \
        in c["test"]


# -- random writes above reads at the same outstanding I/O ------------------------------------------------------

def pt(test: str, outstanding: int, iops: float) -> dict:
    return {"test": test, "jobs": 1, "iodepth": outstanding, "outstanding": outstanding, "bs_bytes": 4096,
            "iops": iops}


# The read peak is at 32 outstanding I/Os: two runs of 9,000 and 11,000 IOPS, median 10,000 (64: 9,500).
READS = [pt("rand-read-4k", 32, 9000.0), pt("rand-read-4k", 32, 11000.0), pt("rand-read-4k", 64, 9500.0)]


def test_random_writes_twice_the_reads_at_the_read_peak():
    points = READS + [pt("rand-write-4k", 32, 25000.0)]
    c = cache_suspect({}, points, VIRTIO)
    assert c["figures"] == ["write_iops_4k"]
    assert c["why"] == "4 KiB random writes 25,000 IOPS > 2x reads 10,000 IOPS at 32 outstanding I/Os on vda"
    assert cache_suspect({}, points, SSD)["figures"] == ["write_iops_4k"]
    # a hard disk's own write cache reorders queued writes (datasheets show it); an unknown class is not judged
    assert cache_suspect({}, points, HDD) is None
    assert cache_suspect({}, points, None) is None


def test_random_writes_at_twice_the_reads_or_elsewhere_are_not_suspect():
    assert cache_suspect({}, READS + [pt("rand-write-4k", 32, 20000.0)], VIRTIO) is None      # exactly 2x
    assert cache_suspect({}, READS + [pt("rand-write-4k", 8, 50000.0)], VIRTIO) is None       # not at 32


# -- the saved real probes ------------------------------------------------------------------------------------

def _real(name: str) -> tuple[dict, dict]:
    doc = json.loads((DATA / "probe" / name).read_text())
    return doc, doc["targets"][0]


def test_this_machines_virtio_disk():
    doc, t = _real("quick-ext4-virtio.json")
    s, bd = t["summary"], doc["machine"]["targets"][0]["block_device"]
    assert s["write_mbps_seq"] > 1.2 * s["read_mbps_seq"]            # 2,405 MB/s written, 1,552 read
    c = cache_suspect(s, t["points"], bd)
    assert c["figures"] == ["write_mbps_seq"]                        # random writes (94,518) are below reads
    assert c["why"] == "writes 2,405 MB/s > reads 1,552 MB/s on vda"


def test_the_virtio_disk_with_repeats():
    doc, t = _real("quick-ext4-virtio-repeats.json")
    s = t["summary"]
    assert s["write_mbps_seq"] > 1.2 * s["read_mbps_seq"]            # 2,166 > 1.2 x 1,737 = 2,084
    c = cache_suspect(s, t["points"], doc["machine"]["targets"][0]["block_device"])
    assert c["why"] == "writes 2,166 MB/s > reads 1,737 MB/s on vda"


def test_the_fleet_aggregate_is_not_suspect():
    _, t = _real("fleet-2hosts-quick.json")
    assert t["summary"]["write_mbps_seq"] < t["summary"]["read_mbps_seq"]     # 1,951 < 1,980
    assert cache_suspect(t["summary"], t["points"], None) is None             # no device: random not judged


# -- what builds on them ----------------------------------------------------------------------------------------

def test_the_verdict_follows_what_the_probe_stored():
    doc, t = _real("quick-ext4-virtio.json")
    t["cache_suspect"] = None                      # the probe found none: no sentence, backups judged
    good = verdict([doc])["good_for"]
    assert not any(g.get("cache_suspect") for g in good)
    t["cache_suspect"] = cache_suspect(t["summary"], t["points"], VIRTIO)
    [cached] = [g for g in verdict([doc])["good_for"] if g.get("cache_suspect")]
    assert cached["text"].startswith("Not judged for backups on /tmp/pt: the write figure is a cache's (writes "
                                     "2,405 MB/s > reads 1,552 MB/s on vda); repeat with --size")


def test_temp_is_not_placed_by_a_cache_figure():
    doc, t = _real("quick-ext4-virtio.json")
    for k in t["summary"]:                          # every figure judged: two close runs of 1 s
        v = t["summary"][k]
        if isinstance(v, float):
            t.setdefault("spread", {})[k] = {"median": v, "min": v, "max": v, "n": 2, "spread_pct": 0.0,
                                             "min_runtime_s": 1.0}
    hdd = copy.deepcopy(t)
    hdd["path"] = "/mnt/hdd"
    hdd["summary"].update(write_mbps_seq=180.0, read_mbps_seq=190.0)
    doc["targets"].append(hdd)
    doc["machine"]["targets"].append({"path": "/mnt/hdd", "block_device": {"name": "sdb"}})
    [place] = verdict([doc])["placement"]
    assert "temp" not in place["recommended"] and "sequential write" not in place["text"]
    hdd["summary"].update(write_mbps_seq=1400.0, read_mbps_seq=1500.0)   # a media figure: still not set
    assert "temp" not in verdict([doc])["placement"][0]["recommended"]     # against a cache's
    t["summary"]["write_mbps_seq"] = 1500.0         # /tmp/pt's writes no longer above its reads: both compared
    assert verdict([doc])["placement"][0]["recommended"]["temp"] == "/tmp/pt"


def test_the_catalog_standing_leaves_a_cache_figure_out():
    t = {"summary": {"read_mbps_seq": 1303.0, "write_mbps_seq": 2767.0, "read_iops_4k": 1000.0},
         "cache_suspect": {"figures": ["write_mbps_seq"]}}
    assert media_figures(t) == {"read_mbps_seq": 1303.0, "read_iops_4k": 1000.0}
    assert media_figures({"summary": {"write_mbps_seq": 1.0}, "cache_suspect": None}) == {"write_mbps_seq": 1.0}


# -- what the renderers show ------------------------------------------------------------------------------------

def test_the_report_marks_the_cache_figure_and_the_virtual_flag():
    from dbtier.report.sections.probe import probe_section
    doc, _ = _real("quick-ext4-virtio.json")        # saved before either check: both recomputed from it
    html = probe_section(doc, 0)
    assert '2,405 <span class="bad"' in html and "(cache)</span>" in html
    assert ("sequential write: a write-back cache&#x27;s figure, not the media&#x27;s (writes 2,405 MB/s &gt; "
            "reads 1,552 MB/s on vda)" in html or "sequential write: a write-back cache's figure" in html)
    assert "<th>rotational</th><td>unknown (virtual disk)</td>" in html


def test_the_terminal_summary_marks_the_cache_figure():
    from rich.console import Console

    from dbtier.cli.probe.tables import probe_summary_table
    from dbtier.report.figures.labels import rotational_text
    doc, t = _real("quick-ext4-virtio.json")
    t["cache_suspect"] = cache_suspect(t["summary"], t["points"], VIRTIO)
    console = Console(width=200, record=True)
    console.print(probe_summary_table(t))
    text = " ".join(console.export_text().split())      # the caption wraps at the table's width
    assert "2,405 (cache)" in text
    assert "sequential write: a write-back cache's figure, not the media's (writes 2,405 MB/s > reads 1,552 MB/s " \
           "on vda)" in text
    assert rotational_text(VIRTIO) == "unknown (virtual disk)"
    assert rotational_text({"rotational": True, "virtual": True}) == "unknown (virtual disk)"   # an older record
    assert (rotational_text(HDD), rotational_text(SSD), rotational_text({})) == ("yes", "no", "—")
