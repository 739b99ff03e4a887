"""The verdict (dbtier.report.verdict.topics) on saved real documents: exact sentences and the figures they cite.

Where a branch needs storage this project's VM does not have (a slow disk, a second device), the
saved document is changed in one named place and the sentence checked against that change.
"""

from __future__ import annotations

import json

import copy

import pytest

from dbtier.report.inputs import load_runs
from dbtier.report.verdict.topics import TOPICS, verdict
from dbtier.results.store import load_run
from samples import BACKUP_DUCKDB, DSS_SPILL, LAB, MATRIX, PROBE, TPCC, make_lab

VIRTUAL = ("/tmp/pt is on a virtual disk (virtio_blk): its figures are what the hypervisor gives this machine, not "
           "the physical media's.")
GOOD_FOR = ("/tmp/pt (ext4 on vda) is good for latency-bound OLTP (a 4 KiB random read takes 54 µs at queue depth 1, "
            "p50; 109,270 IOPS at the peak), commit-heavy work (an 8 KiB write + fdatasync takes 116 µs, p50; 10,384 "
            "commits/s at best) and sequential scans (1,552 MB/s read).")
# The sample's sequential writes beat its reads: the host's write-back cache (results/cache_suspect.py).
CACHE = ("Not judged for backups on /tmp/pt: the write figure is a cache's (writes 2,405 MB/s > reads 1,552 MB/s on "
         "vda); repeat with --size larger than the RAM that can cache it (the test file was 1.0 GiB; this machine "
         "has 23.6 GiB of RAM, a virtual disk's host may have more), with longer points (--profile full), or on a "
         "blank raw device (--device DEV --destroy-data) to measure the media.")
SATURATES = ("On /tmp/pt, 4 KiB random reads saturate at 64 outstanding I/Os: 109,270 IOPS, p99 987 µs; more load "
             "adds no IOPS (103,755 at 256). 4 KiB random writes stop growing at 128 (94,518 IOPS).")
ONE_STORAGE = ("With one storage measured, data, indexes, WAL and temp can all live on /tmp/pt: a commit takes 116 µs "
               "and a 4 KiB random read 54 µs (p50), both fast enough that no part needs a separate tier.")
MATRIX_SAME = ("The placement matrix cannot tell the tiers apart: /var/tmp/m1/fast and /var/tmp/m1/slow are both on "
               "vda, so the spread of its steps' best TPS (649 to 2,912) is run-to-run variation, not placement.")
# the matrix's last step is all-fast: its sentences name the fast directory, by its device (the model, 0x1af4, is
# virtio's PCI vendor id and names nothing)
MATRIX_SAT = ("OLTP — pgbench tpcb (TPC-B-like), scale 2, placement step all-fast on /var/tmp/m1/fast (vda) — saturates "
              "at 1 client: 893 TPS, p95 4 ms.")
# The saved OLTP runs read from memory (the cache guard, dbtier.model.guards): the bottleneck says so.
GUARD_BN = (" Its reads came from memory (cache guard): this bottleneck is that of the write and commit path; the "
            "data/index read path was not measured.")
MATRIX_BN = ("On /var/tmp/m1/fast (vda), at the OLTP knee (1 client) the bottleneck is the CPU, not the storage: CPU 96% "
             "busy and vda 14% busy with 0.956 ms await." + GUARD_BN)

pytestmark = pytest.mark.usefixtures("unguarded")   # sentences on short saved runs


def texts(v: dict, topic: str) -> list[str]:
    return [x["text"] for x in v[topic]]


@pytest.fixture(scope="module")
def probe() -> dict:
    return load_run(PROBE)


@pytest.fixture(scope="module")
def matrix() -> dict:
    return load_run(MATRIX)


def on_two_devices(matrix: dict) -> dict:
    """The matrix with its slow directory on another device (sdb) than its fast one (vda), and no cache guard
    (as if its reads had reached the devices; the saved run's came from memory: tests/unit/test_cache_guard.py)."""
    m = copy.deepcopy(matrix)
    m["guards"] = []
    for t in m["machine"]["targets"]:
        if t["path"].endswith("/slow"):
            t["block_device"]["name"] = "sdb"
    return m


# -- one document at a time ----------------------------------------------------------------------------------

def test_the_sample_probe(probe):
    v = verdict([probe])
    assert texts(v, "good_for") == [GOOD_FOR, CACHE]
    assert texts(v, "saturates") == [SATURATES]
    assert texts(v, "placement") == [ONE_STORAGE]
    assert texts(v, "bottleneck") == [] and texts(v, "cheapest") == []     # nothing measured them: no sentence
    assert texts(v, "caveats") == [VIRTUAL]
    assert v["sentences"] == [GOOD_FOR, CACHE, SATURATES, ONE_STORAGE]
    # the structured side carries the figures the sentences cite
    assert v["good_for"][0]["uses"] == ["oltp", "commits", "sequential"]
    assert v["saturates"][0]["read_knee"]["outstanding"] == 64
    assert v["placement"][0]["recommended"] == {"data": "/tmp/pt", "indexes": "/tmp/pt", "wal": "/tmp/pt",
                                                "temp": "/tmp/pt"}


def test_the_tpcc_sweep():
    v = verdict([load_run(TPCC)])
    assert v["sentences"] == [
        "OLTP — TPC-C-like, 1 warehouse — saturates at 2 clients: 522 TPS, p95 8.01 ms; the best was 639 TPS at "
        "4 clients.",
        "At the OLTP knee (2 clients) the bottleneck is the CPU, not the storage: CPU 97% busy and vda 60% busy with "
        "0.48 ms await." + GUARD_BN]
    assert v["bottleneck"][0]["bottleneck"] == "cpu" and v["saturates"][0]["knee_tps"] == 521.6


def test_a_matrix_on_one_device_says_it_cannot_tell(matrix):
    v = verdict([matrix])
    assert v["sentences"] == [MATRIX_SAT, MATRIX_BN, MATRIX_SAME]
    assert v["placement"][0]["same_device"] == "vda"


def test_a_matrix_on_two_devices_names_the_biggest_gain(matrix):
    v = verdict([on_two_devices(matrix)])
    assert texts(v, "placement") == [
        "Temp on the fast tier gave the biggest gain in the placement matrix: +137% (1,228 → 2,912 TPS, the best "
        "point of each step). Recommended: WAL and temp on the fast tier (/var/tmp/m1/fast); indexes and tables can "
        "stay on the slow tier (/var/tmp/m1/slow): moving them changed TPS by -48% (indexes) and -4% (tables). "
        "Everything on the fast tier: -32% against everything on the slow one."]
    p = v["placement"][0]
    assert p["biggest"]["role"] == "temp" and p["biggest"]["gain"] == pytest.approx(2912 / 1228.5 - 1)
    assert p["recommended"] == {"fast": ["WAL", "temp"], "slow": ["indexes", "tables"]}


def test_a_matrix_where_no_move_helps(matrix):
    m = on_two_devices(matrix)
    for s in m["steps"]:
        for p in s["points"]:
            p["tps"] = 1010.0 if s["name"] == "wal-fast" else 1000.0
    assert texts(verdict([m]), "placement") == [
        "No move to the fast tier raised TPS beyond noise in the placement matrix (the best: WAL, +1%, within noise of "
        "±5%): for this "
        "load data, indexes, WAL and temp can all stay on the slow tier (/var/tmp/m1/slow). Everything on the fast "
        "tier: +0% against everything on the slow one."]


def test_dss_with_a_small_spill_is_cpu_bound():
    assert verdict([load_run(DSS_SPILL)])["sentences"] == [
        "TPC-H SF 0.3 on DuckDB is CPU-bound: 1 of 22 queries spilled to temp (peak 1.41 MB in Q9, 23% of the time), "
        "and the CPU was 97% busy (22 queries, 1.84 s)."]


def test_dss_temp_heavy_and_io_bound():
    heavy = load_run(DSS_SPILL)
    q9 = next(q for q in heavy["queries"] if q["query"] == 9)
    q9["seconds"] = 1.0                                   # the spilling query now takes 41% of the run
    heavy["total_seconds"] = sum(q["seconds"] for q in heavy["queries"])
    v = verdict([heavy])
    assert texts(v, "bottleneck") == [
        "TPC-H SF 0.3 on DuckDB (temp on t1) is temp-heavy: 1 of 22 queries spilled to temp (peak 1.41 MB in Q9, "
        "41% of the time) of a 2.42 s power run; the CPU was 97% busy."]
    assert v["bottleneck"][0]["class"] == "temp" and v["bottleneck"][0]["spill_share"] == pytest.approx(1 / 2.4189,
                                                                                                        abs=1e-3)
    idle = load_run(DSS_SPILL)
    for q in idle["queries"]:
        q["cpu_util"], q["temp_bytes"] = 30.0, 0
    assert texts(verdict([idle]), "bottleneck") == [
        "TPC-H SF 0.3 on DuckDB waits on storage: no query spilled to temp and the CPU was only 30% busy (22 queries, "
        "1.84 s); the cold scans read 320 MB/s, 21% of the probe's sequential read."]


def test_dss_temp_on_two_devices():
    a, b = load_run(DSS_SPILL), load_run(DSS_SPILL)
    for d, path, dev in ((a, "/mnt/nvme", "nvme0n1"), (b, "/mnt/hdd", "sdb")):
        d["params"]["temp"] = path
        d["machine"]["targets"] = [{"path": path, "block_device": {"name": dev}}]
    for q in b["queries"]:
        q["seconds"] *= 3
    b["total_seconds"] = a["total_seconds"] * 3
    v = verdict([a, b])
    assert texts(v, "placement") == [
        "Put temp on /mnt/nvme: the TPC-H SF 0.3 power run took 1.84 s with temp there against 5.51 s on /mnt/hdd "
        "(200% longer, beyond the runs' noise of ±5%)."]      # single runs (guards lowered): compare's 5% floor
    assert v["placement"][0]["temp_on"] == "/mnt/nvme"
    assert texts(v, "bottleneck")[0].startswith("TPC-H SF 0.3 on DuckDB is CPU-bound: 1 of 22 queries spilled to "
                                                "temp in each run (peak 1.41 MB)")


def test_backups():
    assert verdict([load_run(BACKUP_DUCKDB)])["sentences"] == [
        "Backups (DuckDB) to bk are limited by the target directory (writing): file copy: 531 MB/s to the directory "
        "against 804 MB/s to null; target busy 61%, source busy 61%; EXPORT DATABASE parquet is limited by the CPU "
        "(compression)."]


def test_cheapest_and_value():
    size = load_run(LAB / "plan-size.json")
    assert verdict([size])["sentences"] == [
        "The cheapest configuration for the requirement (1 read IOPS, 1 write IOPS, 2.3 read MB/s, 8.7 write MB/s and "
        "10 GB, +30% headroom) is "
        "2 x nvme-consumer-2tb mirror2 at $340 (2,000 GB usable, 2,800,000 read / 1,550,000 write IOPS); the binding "
        "requirement is capacity."]
    value = {"command": "plan", "plan": "value", "result": {"run_dir": "oltp"},
             "config": {"description": "2 x nvme-enterprise-3.84tb raid1", "price_usd": 900},
             "value": {"tpm_per_usd": 42.6, "tps_per_usd": 0.71, "iops_per_usd": None}}
    assert verdict([value])["sentences"] == [
        "Measured price/performance of oltp on 2 x nvme-enterprise-3.84tb raid1 ($900): 42.6 TPM per $."]


# -- the probe's other verdicts -----------------------------------------------------------------------------

def test_suspect_fsync_is_said_and_commits_are_not_praised(probe):
    p = copy.deepcopy(probe)
    p["targets"][0]["summary"].update(fsync_honesty="suspect", fsync_honesty_reason="fdatasync returned in 1.2 µs")
    v = verdict([p])
    assert texts(v, "good_for") == [
        "/tmp/pt (ext4 on vda) is good for latency-bound OLTP (a 4 KiB random read takes 54 µs at queue depth 1, p50; "
        "109,270 IOPS at the peak) and sequential scans (1,552 MB/s read).",
        "fsync on /tmp/pt is suspect (fdatasync returned in 1.2 µs): its commit figures, and any OLTP figures measured "
        "on it, are not comparable with storage that flushes honestly.", CACHE]
    assert texts(v, "placement") == [
        "With one storage measured (/tmp/pt), its commit figure (116 µs) cannot be trusted while fsync is suspect: "
        "fix that before placing the WAL there; data and indexes suit it (54 µs per 4 KiB random read)."]


def test_slow_random_reads(probe):
    p = copy.deepcopy(probe)
    p["targets"][0]["summary"].update(read_lat_us_qd1_p50=5200.0, commit_lat_us_p50=300.0)
    v = verdict([p])
    assert texts(v, "good_for") == [
        "/tmp/pt (ext4 on vda) is good for commit-heavy work (an 8 KiB write + fdatasync takes 300 µs, p50; 10,384 "
        "commits/s at best) and sequential scans (1,552 MB/s read). It is slow for "
        "latency-bound OLTP (a 4 KiB random read takes 5,200 µs at queue depth 1, p50).", CACHE]
    assert texts(v, "placement") == [
        "The WAL suits /tmp/pt, but data and indexes wait on random reads there: a commit takes 300 µs and a 4 KiB "
        "random read 5,200 µs (p50); put them on flash or give them memory."]


def test_two_probe_targets_on_two_devices_place_each_role(probe):
    p = copy.deepcopy(probe)
    p["targets"][0]["summary"]["write_mbps_seq"] = 1400.0   # below its reads: not a cache's (test_cache_suspect.py)
    hdd = copy.deepcopy(p["targets"][0])
    hdd["path"] = "/mnt/hdd"
    hdd["summary"].update(read_lat_us_qd1_p50=5200.0, commit_lat_us_p50=8300.0, write_mbps_seq=180.0,
                          read_mbps_seq=190.0)
    p["targets"].append(hdd)
    p["machine"]["targets"].append({"path": "/mnt/hdd", "filesystem": "xfs", "block_device": {"name": "sdb"}})
    v = verdict([p])
    assert texts(v, "good_for")[1] == (
        "/mnt/hdd (ext4 on sdb) is slow for latency-bound OLTP (a 4 KiB random read takes 5,200 µs at queue depth 1, "
        "p50), commit-heavy work (a commit takes 8,300 µs, p50) and large scans (190 MB/s sequential read).")
    assert texts(v, "placement") == [
        "From the probe: WAL on /tmp/pt (commit 116 µs p50 against 8,300 on /mnt/hdd); data and indexes on /tmp/pt "
        "(4 KiB random read 54 µs at QD1 against 5,200 on /mnt/hdd); temp on /tmp/pt (sequential write 1,400 MB/s "
        "against 180 on /mnt/hdd)."]


def test_an_interrupted_probe_says_only_what_it_measured(probe):
    p = copy.deepcopy(probe)
    p["status"] = "interrupted"
    t = p["targets"][0]
    t["points"] = [x for x in t["points"] if x["test"] == "rand-read-4k"][:3]
    t["summary"] = {k: None for k in t["summary"]}
    v = verdict([p])
    assert v["sentences"] == ["On /tmp/pt, 4 KiB random reads were still scaling at the largest load measured: "
                              "49,018 IOPS at 4 outstanding I/Os, p99 196 µs."]
    assert texts(v, "caveats")[-1] == "probe (probe) is interrupted: only what it finished counts here."


# -- a lab ------------------------------------------------------------------------------------------------------

def test_the_sample_lab(tmp_path):
    v = verdict(load_runs([make_lab(tmp_path)]))
    assert v["sentences"] == [
        GOOD_FOR, CACHE, SATURATES, MATRIX_SAT, MATRIX_BN,
        "TPC-H SF 0.1 on DuckDB is CPU-bound: no query spilled to temp and the CPU was at least 92% busy (22 queries: "
        "0.826 s with temp on /var/tmp/lab-sample/fast; 0.739 s with temp on /var/tmp/lab-sample/slow).",
        "Backups (PostgreSQL) to /var/tmp/lab-sample/fast (vda) are limited by the source (reading the database) in "
        "every method: pg_basebackup tar wrote 134 MB/s against 86 MB/s to a null sink (source busy 29%, target "
        "busy 29%, backup process 0.14 cores).",
        "Backups (PostgreSQL) to /var/tmp/lab-sample/slow (vda) are limited by the source (reading the database) in "
        "every method: pg_basebackup tar wrote 157 MB/s against 76 MB/s to a null sink (source busy 37%, target "
        "busy 37%, backup process 0.14 cores).",
        # the study's question: the two targets (157 / 134 = 1.17 and 122 / 118 = 1.03 times: under 1.25)
        "Backup targets compared (PostgreSQL: /var/tmp/lab-sample/fast (vda), /var/tmp/lab-sample/slow (vda); MB/s "
        "of source bytes, the medians of the runs): pg_basebackup tar: 157 MB/s to /var/tmp/lab-sample/slow, 134 MB/s "
        "to /var/tmp/lab-sample/fast, about the same (under 1.25 times apart); pg_basebackup tar-gzip: 122 MB/s to "
        "/var/tmp/lab-sample/fast, 118 MB/s to /var/tmp/lab-sample/slow, about the same (under 1.25 times apart).",
        MATRIX_SAME,
        "The TPC-H runs cannot tell the temp tiers apart (0.739 s with temp on /var/tmp/lab-sample/slow, 0.826 s on "
        "/var/tmp/lab-sample/fast): /var/tmp/lab-sample/slow and /var/tmp/lab-sample/fast are both on vda.",
        ONE_STORAGE,
        # the plan sized the load of an OLTP step whose reads came from memory: no cheapest sentence on it.
        # 1,241 page reads of 700,667 accesses over the matrix's points (pg.blks_read, + blks_hit): 99.8% hits
        "The cheapest configuration for the measured load is not judged: oltp's reads came from memory (cache "
        "guard: PostgreSQL found 99.8% of 700,667 page accesses in shared_buffers and read only 1,241 pages: the "
        "data set fit in memory), so its transactions are the write and commit path's, not the study's reads; give "
        "the server less memory than its data (bench oltp --memory, or a larger --scale/--warehouses) and measure "
        "again to judge."]
    m = load_run(MATRIX)
    pts = [p for s in m["steps"] for p in s["points"]]
    reads = sum(p["pg"]["blks_read"] for p in pts)
    assert reads == 1241 and reads + sum(p["pg"]["blks_hit"] for p in pts) == 700667
    # the lab's own tiers are explained by the TPC-H sentence; its OLTP step and warm TPC-H runs read from memory
    assert [c["kind"] for c in v["caveats"]] == ["reads-from-memory"] * 3 + ["virtual"]
    assert texts(v, "caveats")[-1] == VIRTUAL
    assert "Run 2 read 0.2 MB from the devices against a 27.3 MB database" in texts(v, "caveats")[1]


def test_a_lab_with_a_failed_step_and_no_matrix(tmp_path):
    lab = make_lab(tmp_path, oltp=TPCC, plan=False, fail={"backup-2": "pg_basebackup: could not connect"})
    v = verdict(load_runs([lab]))
    assert texts(v, "cheapest") == []                             # no plan-size step: no sentence
    assert "/var/tmp/lab-sample/slow" not in texts(v, "bottleneck")[-1]   # the failed backup is not cited
    assert texts(v, "caveats")[-1] == ("Lab step backup-2 failed: pg_basebackup: could not connect; the verdict uses "
                                       "only the steps that finished.")
    assert texts(v, "saturates")[1].startswith("OLTP — TPC-C-like, 1 warehouse — saturates at 2 clients")


def test_a_lab_whose_tiers_share_a_device_without_dss_says_so(tmp_path):
    lab_dir = make_lab(tmp_path, oltp=None, probe=None, plan=False,
                       fail={"dss-1": "x", "dss-2": "y", "backup-1": "z", "backup-2": "w"})
    v = verdict(load_runs([lab_dir]))
    assert v["sentences"] == []
    assert texts(v, "caveats")[0] == ("/var/tmp/lab-sample/fast and /var/tmp/lab-sample/slow are on the same device "
                                      "(vda): the differences between them in this report are run-to-run variation, "
                                      "not the storage.")



def test_a_lab_whose_slow_tier_is_emulated_is_not_called_one_device(tmp_path):
    # both directories sit on vda, but the slow one was the emulated tier: a loop device of its own
    lab_dir = make_lab(tmp_path, oltp=None, probe=None, plan=False,
                       fail={"dss-1": "x", "dss-2": "y", "backup-1": "z", "backup-2": "w"})
    doc = json.loads((lab_dir / "result.json").read_text())
    doc["params"]["emulate"] = "/var/tmp/lab-sample/slow=150iops"
    (lab_dir / "result.json").write_text(json.dumps(doc))
    v = verdict(load_runs([lab_dir]))
    assert not [c for c in v["caveats"] if c["kind"] == "same_device"]

# -- nothing to say, odd documents ---------------------------------------------------------------------------

def test_no_inputs_no_sentences():
    v = verdict([])
    assert v["sentences"] == [] and all(v[t] == [] for t in TOPICS) and v["caveats"] == []
    assert verdict([{"command": "catalog"}, {"command": "report", "status": "ok"}])["sentences"] == []


def test_malformed_documents_do_not_crash(probe):
    odd = copy.deepcopy(probe)
    odd["machine"]["targets"] = [{"block_device": None}, {"path": "/tmp/pt", "block_device": "x"}, 7]
    odd["targets"].append({"path": "/x", "summary": {"read_lat_us_qd1_p50": "12"}, "points": [7, {"test": 1}]})
    docs = [odd, {"command": "probe", "targets": "nope"},
            {"command": "bench", "bench": "oltp", "points": [{"clients": 1}], "knee": {"clients": 1}},
            {"command": "bench", "bench": "oltp", "steps": [{"name": "all-slow", "points": [{"clients": 1, "tps": 0}]},
                                                            {"name": "index-fast", "points": "x"}]},
            {"command": "bench", "bench": "dss", "queries": [{"query": 1, "seconds": None}]},
            {"command": "bench", "bench": "backup", "targets": [{"target": "dir", "bottleneck": "source"}]},
            {"command": "plan", "plan": "size", "candidates": [{}], "requirement": "x"},
            {"command": "lab", "steps": [{"name": "probe", "status": "failed"}], "params": {"fast_dir": 1}}, {}]
    v = verdict(docs)
    assert isinstance(v["sentences"], list)
    # the broken machine record costs the device name, not the sentence
    assert v["sentences"][0] == GOOD_FOR.replace("(ext4 on vda)", "(ext4)")


# -- issue 13 items 4 and 6 ------------------------------------------------------------------------------

def test_a_repeated_knee_says_its_runs():
    """The knee point (2 clients) run three times at 500, 521.6 and 530 TPS: the median 521.6, and the
    sentence gives the runs' range."""
    doc = copy.deepcopy(load_run(TPCC))
    doc["points"][1].update(tps_runs=[500.0, 521.6, 530.0], repeats=3)
    assert texts(verdict([doc]), "saturates")[0].startswith(
        "OLTP — TPC-C-like, 1 warehouse — saturates at 2 clients: 522 TPS (the median of 3 runs, 500–530 TPS), "
        "p95 8.01 ms")


def test_an_unconfirmed_knee_says_so():
    doc = copy.deepcopy(load_run(TPCC))
    doc["knee"]["confirmed"] = False
    assert texts(verdict([doc]), "saturates")[0].endswith(
        "(only the last point fell short of it: a larger client count would confirm the knee); the best was 639 "
        "TPS at 4 clients.")


def test_a_remote_run_cites_no_client_cpu_as_the_servers():
    """--dsn: the knee point's 97% CPU is this machine's; the sentence leaves it out and says so."""
    doc = copy.deepcopy(load_run(TPCC))
    doc["not_measured"] = ["server_cpu", "server_devices"]
    doc["points"][1]["bottleneck"] = "storage"
    [bn] = verdict([doc])["bottleneck"]
    assert bn["text"] == ("At the OLTP knee (2 clients) the bottleneck is the storage (backends waiting on I/O). "
                          "The server's CPU and devices were not measured (--dsn): the verdict rests on the server's "
                          "wait events and pgbench's own CPU." + GUARD_BN)
    assert bn["cpu_busy_pct"] is None and bn["not_measured"] == ["server_cpu", "server_devices"]


def test_an_unknown_bottleneck_gives_its_reason():
    doc = copy.deepcopy(load_run(TPCC))
    doc["points"][1].update(bottleneck="unknown", bottleneck_evidence=(
        "unknown: the wait-event sampling query failed (server closed the connection unexpectedly); CPU 40% busy"))
    [bn] = verdict([doc])["bottleneck"]
    assert bn["text"] == ("At the OLTP knee (2 clients) the bottleneck is unknown: the wait-event sampling query "
                          "failed (server closed the connection unexpectedly) (CPU 97% busy and vda 60% busy with "
                          "0.48 ms await)." + GUARD_BN)


# The placement matrix on a fast directory and an emulated slow one (a loop device throttled to 150 IOPS, both
# files on vda): the tiers differ, so the verdict names the gains, labels the slow tier emulated, and says so.
EMULATED_CAVEAT = ("bench (bench oltp): /tmp/mx/slow is emulated: a loop device on a file "
                   "there, throttled to 150 read and 150 write I/Os per second; figures through it are the "
                   "throttle's, not that directory's device.")


def test_an_emulated_slow_tier_is_not_the_same_device_and_is_labelled():
    from samples import MATRIX_EMULATED
    doc = load_run(MATRIX_EMULATED)
    # each step's best TPS read straight from the saved points (one client each)
    tps = {s["name"]: s["points"][0]["tps"] for s in doc["steps"]}
    assert tps["all-slow"] < tps["index-fast"] < tps["tables-fast"] < tps["wal-fast"]
    v = verdict([doc])
    text = " ".join(texts(v, "placement"))
    assert "cannot tell the tiers apart" not in text
    gain = tps["wal-fast"] / tps["tables-fast"] - 1
    assert text.startswith(f"WAL on the fast tier gave the biggest gain in the placement matrix: {gain * 100:+.0f}% "
                           f"({tps['tables-fast']:.1f} → {tps['wal-fast']:,.0f} TPS")
    assert "temp can stay on the slow tier (/tmp/mx/slow (emulated: 150 read / 150 write IOPS))" in text
    # temp-fast against wal-fast: +4.8%, under the 5% floor of single runs
    assert f"moving it changed TPS by {(tps['temp-fast'] / tps['wal-fast'] - 1) * 100:+.0f}%, within noise of ±5%" in text
    assert EMULATED_CAVEAT in [c["text"] for c in v["caveats"]]


def test_a_sweep_still_rising_names_no_knee_for_its_bottleneck():
    """The knee at the largest load with throughput still rising is no knee: the sentence says where it looked
    (the last point, 4 clients: 639 TPS, CPU 96.6%, vda 69.3% busy, 0.792 ms await in the saved run) and 'so far'."""
    doc = copy.deepcopy(load_run(TPCC))
    doc["knee"].update(clients=4, tps=639.0, still_rising=True)
    [bn] = verdict([doc])["bottleneck"]
    assert bn["text"].startswith("At the largest OLTP load measured (4 clients; throughput still rising) the "
                                 "bottleneck so far is the CPU")
    assert "CPU 97% busy and vda 69% busy with 0.792 ms await" in bn["text"]
    assert "OLTP knee" not in bn["text"]


def test_a_cpu_just_under_the_saturation_line_is_not_rounded_onto_it():
    """The bottleneck rule calls 90% of the cores or more a saturated CPU (workloads/parsers/oltp.py); a knee
    point at 89.58% named storage must not read 'CPU 90% busy': it says 89.6%. The saved run's last point
    (4 clients, 96.6%) set to 89.58% and its backends to storage, the device queue past 0.5."""
    doc = copy.deepcopy(load_run(TPCC))
    doc["knee"].update(clients=4, tps=639.0, still_rising=True)
    kp = next(p for p in doc["points"] if p["clients"] == 4)
    kp["cpu_util"]["busy_pct"] = 89.58
    kp["bottleneck"] = "storage"
    [bn] = verdict([doc])["bottleneck"]
    assert "the bottleneck so far is the storage" in bn["text"]
    assert "CPU 89.6% busy and vda 69% busy" in bn["text"] and "CPU 90%" not in bn["text"]
