"""fio's JSON, saved from real runs on this project's CI machine (fio 3.33, ext4 on virtio), parsed
into dbtier's units. Expected figures were read off the files by hand."""

from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.measure.fio import FioJob, build_args, fio_failure, parse_output
from dbtier.results.probe import commit_latency

DATA = Path(__file__).parent.parent / "data" / "fio"


def parse(name):
    return parse_output((DATA / name).read_text(), name)


def test_random_read_qd1():
    r = parse("randread-4k-qd1.json")
    assert r["fio_version"] == "fio-3.33"
    assert r["write"] is None and r["sync"] is None
    assert r["read"]["iops"] == pytest.approx(18005.996003)
    assert r["bw_bytes_per_s"] == 73752559
    assert r["read"]["lat_us"]["p50"] == pytest.approx(54.016)     # 54016 ns
    assert r["read"]["lat_us"]["mean"] == pytest.approx(54.982567211)
    assert r["runtime_s"] == 1.5
    assert r["cpu_cores"] == pytest.approx((3.466667 + 42.466667) / 100)


def test_mixed_two_jobs_sums_both_sides_and_counts_cores_per_job():
    r = parse("randrw-8k-70-2x32.json")
    assert r["iops"] == pytest.approx(55266.489007 + 23578.947368)
    assert r["read"]["lat_us"]["p50"] == pytest.approx(724.992)
    assert r["write"]["lat_us"]["p99"] == pytest.approx(1482.752)
    # fio reports CPU per job in % of one core; two jobs -> twice that in cores
    assert r["cpu_cores"] == pytest.approx((6.6 + 14.1) / 100 * 2)


def test_commit_has_sync_phase_and_commit_latency_adds_phases():
    r = parse("commit-fdatasync-w1.json")
    assert r["read"] is None
    assert r["write"]["iops"] == pytest.approx(7572.713643)
    assert r["sync"]["ops"] == 15152
    assert r["sync"]["lat_us"]["p50"] == pytest.approx(112.128)
    c = commit_latency(r["write"]["lat_us"], r["sync"]["lat_us"])
    assert c["p50"] == pytest.approx(r["write"]["lat_us"]["p50"] + 112.128)


def test_commit_under_eatmydata_flushes_in_nanoseconds():
    r = parse("commit-fdatasync-w1-eatmydata.json")
    assert r["sync"]["lat_us"]["p50"] == pytest.approx(0.181)
    assert r["write"]["iops"] == pytest.approx(215058.970515)


def test_sequential_streams():
    r = parse("seqread-1m-4streams.json")
    assert r["bw_bytes_per_s"] == 1449994908
    assert r["read"]["lat_us"]["p50"] == pytest.approx(5537.792)


def test_failed_job_reports_enospc():
    r = parse("enospc-write.txt")
    assert r["error"] == 28
    err = fio_failure(FioJob("fill", "write", 1 << 20, 64 << 20, filename="/x/f"), r["error"], "")
    assert "filled up" in err.message and "/x/f" in err.message


def test_warnings_before_json_are_skipped():
    text = "fio: some warning\n" + (DATA / "randread-4k-qd1.json").read_text()
    assert parse_output(text)["read"]["iops"] == pytest.approx(18005.996003)


@pytest.mark.parametrize("text", ["", "fio: engine io_uring not loadable", '{"jobs": [', '{"jobs": []}'])
def test_broken_output_is_a_clear_error(text):
    with pytest.raises(DbtierError) as e:
        parse_output(text, "raw/x.json")
    assert "raw/x.json" in e.value.message


def test_build_args():
    job = FioJob("rand-read-4k-j2-qd32", "randread", 4096, 1 << 30, filename="/d/data.fio", iodepth=32, numjobs=2,
                 runtime_s=1.0, ramp_s=0.5)
    a = build_args(job, "/r/out.json")
    assert a[0] == "fio"
    for expected in ("--rw=randread", "--bs=4096", "--iodepth=32", "--numjobs=2", "--direct=1",
                     "--ioengine=io_uring", "--group_reporting=1", "--runtime=1000ms", "--ramp_time=500ms",
                     "--time_based=1", "--filename=/d/data.fio", "--output=/r/out.json", "--output-format=json"):
        assert expected in a
    commit = FioJob("commit-w4", "write", 8192, 32 << 20, directory="/d/commit", numjobs=4, ioengine="psync",
                    direct=False, fdatasync=1)
    b = build_args(commit)
    assert "--fdatasync=1" in b and "--direct=0" in b and "--directory=/d/commit" in b
    assert not any(x.startswith("--filename=") for x in b)
    assert job.outstanding == 64


@pytest.mark.parametrize("name, seconds", [("commit-fdatasync-w4.json", 2.0),       # job_runtime 8000 ms / 4
                                           ("seqread-1m-4streams.json", 1.50025),     # 6001 ms / 4
                                           ("randwrite-4k-2x32.json", 1.5)])          # 3000 ms / 2
def test_a_grouped_runs_length_is_the_runs_not_the_threads_sum(name, seconds):
    """fio's group_reporting entry sums job_runtime over its numjobs threads: a 4-writer 2 s run says 8000 ms."""
    assert parse(name)["runtime_s"] == pytest.approx(seconds)
