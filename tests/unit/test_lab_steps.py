"""The lab's step requests (dbtier.model.lab_steps): each request's argv against the command line written out
by hand, every argv parsed by the real parser, and cli/lab.py's chain of requests recorded in the lab
document (its calls replaced: no step runs), and each step's library request equal to the one its recorded
command line makes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from dbtier.cli.main import build_parser
from dbtier.model.lab_steps import (BackupStep, DssStep, EmulatedTier, MeasuredLoad, OltpStep, PlanCloudStep,
                                    PlanSizeStep, ProbeStep, ReportStep, backup_steps, dss_steps, oltp_step_name,
                                    oltp_steps, plan_cloud_step, plan_size_step, probe_step)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import call_main  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"

# cli/lab.py's quick and smoke profiles, as far as the steps read them
QUICK = {"oltp_warehouses": "5", "oltp_clients": "1,2,4,8", "oltp_duration": "8", "oltp_warmup": "2",
         "oltp_repeat": "2", "matrix_clients": "1,4", "matrix_duration": "5", "dss_scale": "0.1", "dss_repeat": "2",
         "backup_scale": "5", "backup_methods": "tar,tar-gzip", "backup_repeat": "2"}
SMOKE_PROBE = ["--point-seconds", "0.2", "--size", "128M", "--max-lat-ms", "0.000001"]
SMOKE = {"probe_point_s": "0.2", "probe_size": "128M", "probe_max_lat_ms": "0.000001"}
EMU = EmulatedTier("/s", "150iops")


def test_probe_step():
    assert probe_step(["/f", "/s"], "quick", QUICK).argv() == ["probe", "/f", "/s", "--profile", "quick"]
    smoke = probe_step(["/f"], "smoke", SMOKE)
    assert smoke.name == "probe" and smoke.argv() == ["probe", "/f", "--profile", "quick", *SMOKE_PROBE]


def test_oltp_step_names():
    assert oltp_step_name("postgres", ["postgres"]) == "oltp"                # one engine: the plain name
    assert oltp_step_name("mariadb", ["mariadb"]) == "oltp"
    assert oltp_step_name("mariadb", ["postgres", "mariadb"]) == "oltp-mariadb"


def test_oltp_one_directory_is_a_client_sweep_there():
    [(engine, step)] = oltp_steps(["mariadb"], ["/a"], "/a", "/a", QUICK)
    assert (engine, step) == ("mariadb", OltpStep("oltp", "mariadb", "/a", None, "5", "2", "1,2,4,8", "8", "2"))
    assert step.argv() == ["bench", "oltp", "--engine", "mariadb", "--workload", "tpcc", "--warehouses", "5",
                           "--repeat", "2", "--clients", "1,2,4,8", "--duration", "8", "--warmup", "2", "--dir", "/a"]
    # emulated: the one directory is the emulated tier, the data placed there
    [(_, emulated)] = oltp_steps(["postgres"], ["/a"], "/a", "/a", QUICK, EmulatedTier("/a", "150riops,300wiops"))
    assert emulated.argv()[-5:] == ["/a", "--place", "data=/a", "--emulate", "/a=150riops,300wiops"]


def test_oltp_two_directories_walk_the_placement_matrix_for_each_engine():
    steps = oltp_steps(["postgres", "mariadb"], ["/s", "/f"], "/f", "/s", QUICK, EMU)
    assert [(e, s.name) for e, s in steps] == [("postgres", "oltp-postgres"), ("mariadb", "oltp-mariadb")]
    for e, s in steps:   # the same workload and storage for each engine; only --engine differs
        assert s.argv() == ["bench", "oltp", "--engine", e, "--workload", "tpcc", "--warehouses", "5", "--repeat",
                            "2", "--placement-matrix", "/f,/s", "--clients", "1,4", "--duration", "5", "--warmup",
                            "2", "--dir", "/f", "--emulate", "/s=150iops"]


def test_dss_and_backup_steps_of_the_sample_lab():
    """tests/data/lab/lab.json, a quick lab on two tiers: the DSS steps' argv as it recorded them. Its backup
    steps predate `--repeat`, which the profile's backup_repeat now adds."""
    doc = json.loads((DATA / "lab" / "lab.json").read_text())
    p = doc["params"]
    recorded = {s["name"]: s["argv"] for s in doc["steps"]}
    dss = dss_steps(p["dirs"], p["fast_dir"], p["settings"])
    assert [s.name for s in dss] == ["dss-1", "dss-2"]
    assert [["dbtier", *s.argv()] for s in dss] == [recorded["dss-1"], recorded["dss-2"]]
    backups = backup_steps(p["dirs"], p["fast_dir"], QUICK)
    assert [["dbtier", *s.argv()] for s in backups] == [[*recorded[f"backup-{i}"], "--repeat", "2"] for i in (1, 2)]


def test_dss_steps_the_probe_the_emulated_temp_and_the_memory_limit():
    one, two = dss_steps(["/f", "/s"], "/f", QUICK, 0.02, "/lab/probe", EMU, "80MB")
    assert one.argv() == ["bench", "dss", "--scale", "0.02", "--repeat", "2", "--data", "/f", "--temp", "/f",
                          "--probe", "/lab/probe", "--memory-limit", "80MB"]
    assert two.argv() == ["bench", "dss", "--scale", "0.02", "--repeat", "2", "--data", "/f", "--temp", "/s",
                          "--probe", "/lab/probe", "--emulate", "/s=150iops", "--memory-limit", "80MB"]
    # --dss-scale 1.0 is written as 1; none: the profile's
    assert dss_steps(["/f"], "/f", QUICK, 1.0)[0].argv()[3] == "1"
    assert DssStep("dss-1", "0.1", "2", "/f", "/f").argv() == ["bench", "dss", "--scale", "0.1", "--repeat", "2",
                                                               "--data", "/f", "--temp", "/f"]


def test_backup_to_the_emulated_tier_is_throttled():
    fast, slow = backup_steps(["/f", "/s"], "/f", QUICK, EMU)
    assert fast.argv() == ["bench", "backup", "--to", "/f", "--data", "/f", "--scale", "5", "--methods",
                           "tar,tar-gzip", "--repeat", "2"]
    assert slow == BackupStep("backup-2", "/s", "/f", "5", "tar,tar-gzip", "2", EMU)
    assert slow.argv()[-2:] == ["--emulate", "/s=150iops"]


def test_plan_steps_for_the_measured_load():
    """12.4 read IOPS -> 12, 150.6 write -> 151, 0.04 MB/s read -> 0.0 (left out), 4 MB/s written, 10 GB."""
    req = {"read_iops": 12.4, "write_iops": 150.6, "read_mbps": 0.04, "write_mbps": 4.0, "capacity_gb": 10.0,
           "absent": []}
    rates = ["--read-iops", "12", "--write-iops", "151", "--write-mbps", "4.0", "--capacity-gb", "10"]
    probe = {"targets": [{"summary": {"commits_per_s": 900.0}}]}
    size = plan_size_step(req, {"durability": {"durable": True}}, probe, "/lab/probe")
    assert size == PlanSizeStep(MeasuredLoad(12.4, 150.6, 0.04, 4.0, 10.0), True, "/lab/probe")
    assert size.argv() == ["plan", "size", *rates, "--durable-writes", "required", "--probe", "/lab/probe",
                           "--headroom", "0.3", "--top", "5"]
    assert plan_cloud_step(req, "gcp").argv() == ["plan", "size", *rates, "--cloud", "gcp", "--instance", "auto",
                                                  "--headroom", "0.3", "--top", "5"]
    nothing = {"read_iops": 0.0, "write_iops": 0.4, "read_mbps": None, "write_mbps": None, "capacity_gb": None}
    assert plan_size_step(nothing) is None and plan_cloud_step(nothing, "aws") is None


def test_report_step():
    assert ReportStep("/lab").argv() == ["report", "/lab"]


def _every_step() -> list:
    """One request of each kind with every option it can carry, and the plain ones."""
    load = MeasuredLoad(12.0, 150.0, 0.3, 4.0, 10.0)
    return [ProbeStep(("/f", "/s"), "quick"), ProbeStep(("/f",), "quick", "0.2", "128M", "0.000001"),
            *(s for _, s in oltp_steps(["postgres", "mariadb"], ["/f", "/s"], "/f", "/s", QUICK, EMU)),
            *(s for _, s in oltp_steps(["postgres"], ["/s"], "/s", "/s", QUICK, EMU)),
            *dss_steps(["/f", "/s"], "/f", QUICK, 0.02, "/lab/probe", EMU, "80MB"), *dss_steps(["/f"], "/f", QUICK),
            *backup_steps(["/f", "/s"], "/f", QUICK, EMU),
            PlanSizeStep(load, False, "/lab/probe"), PlanSizeStep(load), PlanCloudStep(load, "azure"),
            ReportStep("/lab")]


@pytest.mark.parametrize("step", _every_step(), ids=lambda s: f"{s.name}:{' '.join(s.argv())}")
def test_every_steps_argv_parses_with_the_real_parser(step):
    argv = [*step.argv(), "--json", "--out", "/lab/x"]     # as cli/lab.py runs it
    ns = build_parser(argv).parse_args(argv)
    assert ns.command == argv[0] and callable(ns.func)
    if argv[0] in ("bench", "plan"):
        assert getattr(ns, f"{argv[0]}_command") == argv[1]
    assert ns.out == "/lab/x" and ns.json


def test_the_lab_records_each_step_as_its_request_writes_it(tmp_path, monkeypatch):
    """`lab FAST SLOW` (quick, both engines, --emulate SLOW, --dss-memory-limit, --cloud gcp) with the
    calls replaced: the probe ranks the second directory fast, the PostgreSQL run measured 12.4 read and
    150.6 write IOPS, 3 MB read and 40 MB written in 10 s (0.3 and 4.0 MB/s), a 2 GB database (10 GB, the
    floor). The document's steps[].argv are the hand-written command lines, and the report runs last."""
    import dbtier.cli.lab as lab_cli
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    A, B, L = (os.path.realpath(p) for p in (a, b, tmp_path / "lab"))
    # the plan passes the probe when its first target measured a commit rate
    probe = {"targets": [{"path": A, "summary": {"read_iops_4k": 100, "commits_per_s": 500.0}},
                         {"path": B, "summary": {"read_iops_4k": 9000}}]}
    oltp = {"knee": {"clients": 4}, "load": {"database_bytes": 2e9}, "durability": {"durable": True},
            "points": [{"clients": 4, "duration_s": 10.0, "devices": [
                {"read_iops": 12.4, "write_iops": 150.6, "read_bytes": 3e6, "write_bytes": 40e6}]}]}
    ran = []

    def call(request, out_dir):
        ran.append((out_dir.name, request.argv()))
        return 0, "", 0.0
    monkeypatch.setattr(lab_cli, "_call", call)
    monkeypatch.setattr(lab_cli, "_load", lambda d: {"probe": probe, "oltp-postgres": oltp}.get(d.name, {}))
    monkeypatch.setattr(lab_cli.os, "geteuid", lambda: 0)     # --emulate asks for root; nothing is mounted here
    r = call_main("lab", A, B, "--engines", "postgres,mariadb", "--emulate", f"{A}=150iops", "--dss-memory-limit",
                  "80MB", "--cloud", "gcp", "--json", "--out", "lab", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["params"]["fast_dir"], doc["params"]["slow_dir"]) == (B, A)   # the emulated one is slow
    oltp_argv = ["--workload", "tpcc", "--warehouses", "5", "--repeat", "2", "--placement-matrix", f"{B},{A}",
                 "--clients", "1,4", "--duration", "5", "--warmup", "2", "--dir", B, "--emulate", f"{A}=150iops"]
    rates = ["--read-iops", "12", "--write-iops", "151", "--read-mbps", "0.3", "--write-mbps", "4.0",
             "--capacity-gb", "10"]
    dss = ["bench", "dss", "--scale", "0.1", "--repeat", "2", "--data", B, "--temp"]
    backup = ["bench", "backup", "--to"]
    expected = {
        "probe": ["probe", A, B, "--profile", "quick"],
        "oltp-postgres": ["bench", "oltp", "--engine", "postgres", *oltp_argv],
        "oltp-mariadb": ["bench", "oltp", "--engine", "mariadb", *oltp_argv],
        "dss-1": [*dss, A, "--probe", f"{L}/probe", "--emulate", f"{A}=150iops", "--memory-limit", "80MB"],
        "dss-2": [*dss, B, "--probe", f"{L}/probe", "--memory-limit", "80MB"],
        "backup-1": [*backup, A, "--data", B, "--scale", "5", "--methods", "tar,tar-gzip", "--repeat", "2",
                     "--emulate", f"{A}=150iops"],
        "backup-2": [*backup, B, "--data", B, "--scale", "5", "--methods", "tar,tar-gzip", "--repeat", "2"],
        "plan-size": ["plan", "size", *rates, "--durable-writes", "required", "--probe", f"{L}/probe",
                      "--headroom", "0.3", "--top", "5"],
        "plan-cloud": ["plan", "size", *rates, "--cloud", "gcp", "--instance", "auto", "--headroom", "0.3",
                       "--top", "5"],
    }
    assert {s["name"]: s["argv"] for s in doc["steps"]} == {k: ["dbtier", *v] for k, v in expected.items()}
    assert [s["name"] for s in doc["steps"]] == list(expected)
    assert ran == [*expected.items(), ("report", ["report", L])]


def test_skipped_steps_are_recorded_without_a_command_line(tmp_path, monkeypatch):
    """--skip probe,dss and an OLTP run that left no document: no probe, no plan; every step named once."""
    import dbtier.cli.lab as lab_cli
    ran = []
    monkeypatch.setattr(lab_cli, "_call", lambda request, out_dir: ran.append(out_dir.name) or (0, "", 0.0))
    monkeypatch.setattr(lab_cli, "_load", lambda d: None)
    r = call_main("lab", ".", "--skip", "probe,dss", "--json", "--out", "lab", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    steps = {s["name"]: (s["status"], s["error"], s["argv"] is None) for s in json.loads(r.stdout)["steps"]}
    assert steps == {"probe": ("skipped", "skipped by --skip", True), "oltp": ("ok", None, False),
                     "dss-1": ("skipped", "skipped by --skip", True), "backup-1": ("ok", None, False),
                     "plan-size": ("skipped", "no measured load: the OLTP step did not finish", True),
                     "plan-cloud": ("skipped", "no measured load to size for", True)}
    assert ran == ["oltp", "backup-1", "report"]


def test_each_steps_library_request_is_the_one_its_command_line_makes(tmp_path):
    """The lab calls each step's library call in its own process and records the step's argv: parsed by the
    real parser and made into a request by the step's own command, that argv gives the very request the lab
    called with (engines, directories and the TPC-H extension checked as the command checks them)."""
    import dataclasses
    import shutil
    from dbtier.cli import lab_calls
    from dbtier.cli.bench.backup import backup_request
    from dbtier.cli.bench.command import oltp_request
    from dbtier.cli.bench.dss import dss_request
    from dbtier.cli.plan.command import size_request
    from dbtier.cli.probe.command import probe_request
    f, s, probe, lab = (tmp_path / n for n in ("f", "s", "probe", "lab"))
    for d in (f, s, probe, lab):
        d.mkdir()
    shutil.copy(DATA / "probe" / "quick-ext4-virtio.json", probe / "result.json")
    f, s, probe = str(f), str(s), str(probe)
    emu = EmulatedTier(s, "150iops")
    load = MeasuredLoad(12.4, 150.6, 0.34, 4.02, 10.0)
    steps = [probe_step([f, s], "quick", QUICK), probe_step([f], "smoke", SMOKE),
             *(st for _, st in oltp_steps(["postgres", "mariadb"], [f, s], f, s, QUICK, emu)),
             *(st for _, st in oltp_steps(["postgres"], [s], s, s, QUICK, emu)),
             *(st for _, st in oltp_steps(["postgres"], [f], f, f, QUICK)),
             *dss_steps([f, s], f, QUICK, 0.02, probe, emu, "80MB"), *backup_steps([f, s], f, QUICK, emu),
             PlanSizeStep(load, False, probe), PlanSizeStep(load), PlanCloudStep(load, "azure")]
    made = {"probe": probe_request, "oltp": oltp_request, "dss": dss_request, "backup": backup_request,
            "size": lambda a: size_request(a)[0]}
    for step in steps:
        argv = step.argv()
        args = build_parser(argv).parse_args(argv)
        theirs = made[argv[1] if argv[0] in ("bench", "plan") else argv[0]](args)
        mine = lab_calls.request(step)
        if hasattr(mine, "catalog"):        # a catalog is loaded afresh each time: the same devices, priced alike
            assert mine.catalog.devices.keys() == theirs.catalog.devices.keys() and mine.terms.probe is not None \
                or step.probe_dir is None
            mine = dataclasses.replace(mine, catalog=theirs.catalog)
        assert mine == theirs, argv
