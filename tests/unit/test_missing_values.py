"""Missing stays missing (issue 13 item 9): no made-up 1s, 0s or 0 µs where nothing was measured."""

from __future__ import annotations

import pytest

from dbtier.model.lab import requirement_from_oltp
from dbtier.model.lab_steps import plan_size_step
from dbtier.core.errors import DbtierError
from dbtier.history.summary import requirement
from dbtier.measure.fio import parse_output
from dbtier.model.plan.planner import Requirement


def plan_size_argv(*args):
    """The lab's `plan size` command line for a requirement (None: no step, nothing to size for)."""
    step = plan_size_step(*args)
    return None if step is None else step.argv()


def _oltp(devices, duration_s=10.0, database_bytes=2e9):
    return {"knee": {"clients": 4}, "load": {"database_bytes": database_bytes},
            "points": [{"clients": 4, "duration_s": duration_s, "devices": devices}]}


def test_lab_requirement_keeps_measured_zero_and_passes_only_positive_figures():
    """Worked example: two devices at the knee, 10 s point: reads 0 + 0 IOPS (all from memory), writes
    120 + 30 = 150 IOPS, 0 read bytes, 40e6 + 10e6 written bytes -> 5.0 MB/s; database 2 GB -> 3 x 2 = 6,
    below the 10 GB floor -> 10 GB. Before the fix the reads were raised to a token 1 IOPS and 1 MB/s."""
    req = requirement_from_oltp(_oltp([
        {"read_iops": 0.0, "write_iops": 120.0, "read_bytes": 0, "write_bytes": 40e6},
        {"read_iops": 0.0, "write_iops": 30.0, "read_bytes": 0, "write_bytes": 10e6}]))
    assert req == {"read_iops": 0.0, "write_iops": 150.0, "read_mbps": 0.0, "write_mbps": 5.0,
                   "capacity_gb": 10.0, "absent": []}
    assert plan_size_argv(req) == ["plan", "size", "--write-iops", "150", "--write-mbps", "5.0",
                                   "--capacity-gb", "10", "--durable-writes", "required",
                                   "--headroom", "0.3", "--top", "5"]


def test_lab_requirement_marks_unmeasured_figures_absent():
    """No duration: MB/s cannot be worked out (was: divided by a made-up 1 s); no database size: no capacity
    (was: the 10 GB floor from a made-up 0 bytes); a device without read_iops: read IOPS unknown."""
    req = requirement_from_oltp(_oltp([{"write_iops": 50.0, "read_bytes": 1e6, "write_bytes": 2e6}],
                                      duration_s=None, database_bytes=None))
    assert req["read_iops"] is None and req["write_iops"] == 50.0
    assert req["read_mbps"] is None and req["write_mbps"] is None and req["capacity_gb"] is None
    assert req["absent"] == ["read_iops", "read_mbps", "write_mbps", "capacity_gb"]
    assert plan_size_argv(req) == ["plan", "size", "--write-iops", "50", "--durable-writes", "required",
                                   "--headroom", "0.3", "--top", "5"]
    assert plan_size_argv({"read_iops": 0.0, "write_iops": None, "capacity_gb": None}) is None


def test_lab_plan_step_passes_the_runs_durability_and_the_probes_commit_rate():
    """A durable OLTP run (or one that does not say) needs durable writes; one that was not durable asked for
    none. A probe with a commit rate is passed as --probe; one without it is not."""
    req = {"write_iops": 50.0}
    probe = {"targets": [{"summary": {"commits_per_s": 900.0}}]}
    loose = {"durability": {"durable": False, "reason": "fsync=off"}}
    assert plan_size_argv(req, loose, probe, "lab/probe") == [
        "plan", "size", "--write-iops", "50", "--durable-writes", "no", "--probe", "lab/probe",
        "--headroom", "0.3", "--top", "5"]
    durable = {"durability": {"durable": True, "reason": "fsync on"}}
    assert plan_size_argv(req, durable, {"targets": [{"summary": {}}]}, "lab/probe") == [
        "plan", "size", "--write-iops", "50", "--durable-writes", "required", "--headroom", "0.3", "--top", "5"]


def test_lab_requirement_divides_bytes_by_the_samplers_window():
    """The device bytes were counted over the sampler's 8 s window (sampled_s), pgbench's own window was
    10 s: 80e6 bytes / 8 s = 10 MB/s (not 8)."""
    o = _oltp([{"read_iops": 5.0, "write_iops": 5.0, "read_bytes": 80e6, "write_bytes": 0}])
    o["points"][0]["sampled_s"] = 8.0
    assert requirement_from_oltp(o)["read_mbps"] == 10.0


def _history_import(peaks, capacity_gb=None):
    return {"schema_version": 1, "command": "history", "params": {"action": "import"}, "_run_dir": "runs/h",
            "source": "sqlserver", "kind": "counters",
            "databases": [{"name": "db1", "peaks": peaks, "capacity_gb": capacity_gb}]}


def test_history_requirement_keeps_a_missing_rate_missing():
    """A source with IOPS but no bytes (p95 read 400, write 100; MB/s absent; no size): before, the MB/s
    and capacity became 0 and the requirement silently lost them; now they are null and listed."""
    doc = _history_import({"read_iops": {"p95": 400.0}, "write_iops": {"p95": 100.0}})
    req, source = requirement(doc, "95", 0.3)
    rates = ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb", "percentile", "headroom")
    assert {k: req[k] for k in rates} == {"read_iops": 400.0, "write_iops": 100.0, "read_mbps": None,
                                          "write_mbps": None, "capacity_gb": None, "percentile": 95, "headroom": 0.3}
    # no series to read (runs/h is not there), no instance count in the document: missing too, and said
    assert req["write_tb_per_day"] is None and req["read_tb_per_day"] is None and req["instances"] is None
    assert set(source["absent"]) == {"read_mbps", "write_mbps", "capacity_gb", "read_tb_per_day", "write_tb_per_day",
                                     "instances"}
    r = Requirement(**{k: req[k] for k in rates if k != "percentile"})
    assert r.given() == ["read_iops", "write_iops"] and r.absent() == ["read_mbps", "write_mbps", "capacity_gb"]
    # with headroom 30%: 400 x 1.3 = 520; an absent figure has no target
    assert r.target("read_iops") == pytest.approx(520.0) and r.target("read_mbps") == 0.0


def test_requirement_all_absent_is_no_requirement():
    with pytest.raises(DbtierError, match="no requirement given"):
        Requirement(read_iops=None, write_iops=0.0)
    with pytest.raises(DbtierError, match="at least 0"):
        Requirement(read_iops=float("nan"))


def test_fio_block_without_latency_is_missing_not_zero():
    """A read block with I/Os but no lat_ns (an older fio, or a trimmed file): latency None, not 0 µs."""
    text = ('{"fio version": "fio-3.33", "jobs": [{"jobname": "j", "error": 0, "job_runtime": 1000,'
            ' "read": {"total_ios": 100, "iops": 100.0, "bw_bytes": 409600, "io_bytes": 409600},'
            ' "write": {"total_ios": 0}, "usr_cpu": 1.0, "sys_cpu": 1.0}]}')
    res = parse_output(text)
    assert res["read"]["iops"] == 100.0
    assert res["read"]["lat_us"]["mean"] is None and res["read"]["lat_us"]["p99"] is None


# -- a part that cannot be drawn is said (issue 13 item 10) ---------------------------------------------------

def test_show_summary_names_a_part_it_could_not_draw(monkeypatch, capsys):
    """A figures function that fails on a document it was not written for (simulated here by making the
    OLTP one raise): before, show raised and the report section vanished; now `problems` names the part and
    the error, show prints it, and the tables and method are still there."""
    from rich.console import Console

    from dbtier.cli.show import print_summary
    from dbtier.report.figures import oltp
    from dbtier.report import summary as FC

    def broken(doc):
        raise ValueError("clients is not a number")
    monkeypatch.setattr(oltp, "figures", broken)     # the bench.oltp kind's figures face
    doc = {"schema_version": 1, "command": "bench", "bench": "oltp", "params": {"workload": "tpcc"},
           "status": "ok", "points": [{"clients": 1, "tps": 10.0}]}
    s = FC.summary(doc)
    assert s["problems"] == [{"section": "figures", "error": "ValueError: clients is not a number"}]
    assert s["method"]
    print_summary(Console(width=200), doc)
    assert "the figures of this run could not be drawn: ValueError: clients is not a number" in capsys.readouterr().out
    good = FC.summary({"schema_version": 1, "command": "catalog", "params": {}})
    assert good["problems"] == []


def test_history_report_says_when_a_series_file_cannot_be_read(tmp_path):
    """An import run whose totals.parquet is not Parquet: the section says a chart was left out and why."""
    from dbtier.report.sections.history import section_html
    (tmp_path / "totals.parquet").write_bytes(b"not parquet at all")
    doc = {"command": "history", "params": {"action": "import"}, "source": "awr", "kind": "counters",
           "databases": [{"name": "PROD", "peaks": {}, "total": {}}], "files": []}
    html = section_html(doc, str(tmp_path))
    assert "a chart of this run was left out" in html and "could not be read" in html


def test_verdict_names_the_figures_a_plan_was_not_sized_for():
    """A plan size run given only write figures (the lab's OLTP read nothing from the device): the verdict
    names the missing reads instead of reading as if they had been sized for."""
    from dbtier.report.verdict.topics import verdict
    doc = {"schema_version": 1, "command": "plan", "plan": "size", "binding": "throughput",
           "requirement": {"read_iops": None, "write_iops": 5357.0, "read_mbps": None, "write_mbps": 45.1,
                           "capacity_gb": 10.0, "headroom": 0.3, "absent": ["read_iops", "read_mbps"]},
           "candidates": [{"description": "2 x ssd mirror2", "price_usd": 300, "capacity_gb": 2000}]}
    [s] = verdict([doc])["sentences"]
    assert s == ("The cheapest configuration for the requirement (5,357 write IOPS, 45.1 write MB/s and 10 GB, "
                 "+30% headroom) (none given for read IOPS and read MB/s: not sized for) is 2 x ssd mirror2 at $300 "
                 "(2,000 GB usable); the binding requirement is throughput.")


def test_history_report_reads_the_run_directory_it_is_given_even_with_glob_characters(tmp_path):
    """A run directory named r[1] beside one named r1: DuckDB would read r[1]/totals.parquet as the glob
    r1/totals.parquet. The report reads the literal one (1 row, not r1's 2)."""
    import duckdb

    from dbtier.report.sections.history import _pq, _query
    for name, n in (("r[1]", 1), ("r1", 2)):
        (tmp_path / name).mkdir()
        duckdb.sql(f"COPY (SELECT range AS x FROM range({n})) TO '{tmp_path / name / 'totals.parquet'}' (FORMAT parquet)")
    run = str(tmp_path / "r[1]")
    assert _query(run, f"SELECT count(*) FROM {_pq(run, 'totals.parquet')}") == [(1,)]
