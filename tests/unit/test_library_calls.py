"""Commands as library calls: `plan size`, `simulate run` and `history import` called from Python, with no
argv and no run directory, give typed, immutable results whose section is what the command writes.

Each test runs the command as a user does and the library call with the same inputs, and compares the
section key by key with the command's stored document (the document, not the code under test, is the
reference); the frozen mapping is checked against the plain dict it was made from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import call_main, load_doc
from dbtier.results.result import Frozen, Result, freeze, thaw

DATA = Path(__file__).parent.parent / "data"

# what the command's run adds beside the call's section: the envelope, and what it did with the run
# directory (an import's series moved into it, its inputs copied)
ENVELOPE = {"schema_version", "command", "result_kind", "dbtier_version", "started_at", "finished_at", "status",
            "machine", "params", "errors", "name", "owner", "_run_dir"}


def test_a_frozen_section_cannot_change_and_gives_back_the_same_json():
    plain = {"a": 1, "b": [1, {"c": [2.5, None]}], "d": {"e": "x"}, "t": (1, 2)}
    f = freeze(plain)
    assert isinstance(f, Frozen) and isinstance(f["b"], tuple) and isinstance(f["b"][1], Frozen)
    with pytest.raises(TypeError):
        f["a"] = 2                                        # no __setitem__
    with pytest.raises(AttributeError):
        f._items = {}
    with pytest.raises(TypeError):
        f["d"]["e"] = "y"
    # the same JSON as the plain dict, and a new dict each time (changing it leaves the result as it was)
    assert json.dumps(thaw(f), sort_keys=False) == json.dumps(plain, sort_keys=False)
    out = Result(kind="plan.size", section=f).to_json()
    out["d"]["e"] = "changed"
    assert f["d"]["e"] == "x"
    with pytest.raises(ValueError, match="not a kind of result"):
        Result(kind="plan.sizes", section=f)
    r = Result(kind="simulate.run", section={"x": [1]}, warnings=["w"])   # a plain dict is frozen on the way in
    assert isinstance(r.section, Frozen) and r["x"] == (1,) and r.warnings == ("w",)
    with pytest.raises(AttributeError):
        r.kind = "probe"                                  # type: ignore[misc]


def _section_matches(section: dict, doc: dict, added: frozenset = frozenset()) -> None:
    """The call's section is the document but for the envelope and what the command `added` beside it."""
    assert set(section) == set(doc) - ENVELOPE - added
    for k, v in section.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                assert json.loads(json.dumps(vv)) == doc[k][kk], (k, kk)
        assert json.loads(json.dumps(v)) == doc[k], k


@pytest.mark.slow
def test_plan_size_as_a_library_call_is_the_commands_answer(tmp_path):
    from dbtier.model.plan.calls import PlanSize, SizeRequest, size_plan
    from dbtier.model.plan.catalog import load_catalog
    from dbtier.model.plan.requirement import Requirement
    r = call_main("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "4000",
                  "--top", "3", "--out", "run", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    req = Requirement(read_iops=20000, write_iops=5000, capacity_gb=4000)
    res = size_plan(SizeRequest(requirement=req, catalog=load_catalog(), top=3))
    assert isinstance(res, PlanSize) and res.kind == "plan.size" == doc["result_kind"]
    _section_matches(res.to_json(), doc)
    # the typed sizing beside the section: its ranked candidates are the section's
    assert [(c.evaluation.config.device.id, c.evaluation.config.count, c.binding) for c in res.sizing.candidates] \
        == [(c["device"], c["count"], c["binding"]) for c in doc["candidates"]]
    assert res.section["candidates"][0]["price_usd"] == doc["candidates"][0]["price_usd"]
    with pytest.raises(TypeError):
        res.section["candidates"][0]["price_usd"] = 0


@pytest.mark.slow
def test_simulate_run_as_a_library_call_is_the_commands_answer(tmp_path):
    from dbtier.sim import simulate as sim
    from dbtier.sim.device import devices
    from dbtier.sim.request import SimRequest, SimulateRun, run
    trace = DATA / "traces" / "msr-hm1.csv"
    r = call_main("simulate", "run", str(trace), "--design", "read-cache", "--cache", "intel-x25e-32gb",
                  "--backing", "sas-15k-73gb", "--cache-gb", "0.01", "--out", "run", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    models = devices.resolve("read-cache", {"cache": "intel-x25e-32gb", "backing": "sas-15k-73gb"}, None)
    phases = []
    res = run(SimRequest(trace, sim.Params(design="read-cache", cache_gb=0.01), models),
              progress=lambda phase, frac: phases.append(phase))
    assert isinstance(res, SimulateRun) and res.kind == "simulate.run" == doc["result_kind"] and phases
    got = res.to_json()
    # the replay's own timings are the one figure two runs do not share
    for d in (got, doc):
        d["simulation"].pop("timings_s")
    _section_matches(got, doc)
    assert res["read_hit_ratio"] == doc["read_hit_ratio"]


@pytest.mark.slow
def test_history_import_as_a_library_call_is_the_commands_answer(tmp_path):
    from dbtier.core.workdir import workdir
    from dbtier.history.fleet import HistoryImport, import_files
    from dbtier.history.tables import ReadOptions
    src = DATA / "history" / "real" / "diskstats-vm.txt"
    r = call_main("history", "import", "--source", "diskstats", str(src), "--out", "run", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    with workdir(0, "the test's import", "dbtier-test-") as work:
        res = import_files(work, "diskstats", [str(src)], [src.stat().st_size], ReadOptions(), 10, "UTC")
        assert isinstance(res, HistoryImport) and res.kind == "history.import" == doc["result_kind"]
        # the series, as parts in the working directory: the files the command moved into its run
        assert sorted(res.parts) == sorted(doc["series_files"]) and all(p.exists() for ps in res.parts.values()
                                                                        for p in ps)
    assert res.batches == doc["batches"] == 1 and res.skipped == ()
    # what the command adds: the batches, where the series went, its inputs' copies
    _section_matches(res.to_json(), doc, frozenset({"batches", "series_files", "raw_note"}))


@pytest.mark.slow
def test_plan_equivalent_budget_and_value_as_library_calls_are_the_commands_answers(tmp_path):
    from dbtier.model.plan import calls
    from dbtier.model.plan.catalog import load_catalog
    from dbtier.results.store import load_run
    catalog = load_catalog()
    r = call_main("plan", "equivalent", "--reference", "intel-x25e-32gb", "--using", "sas-15k-73gb", "--layout",
                  "raid10", "--out", "eq", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    res = calls.equivalent_plan(calls.EquivalentRequest(catalog=catalog, reference="intel-x25e-32gb",
                                                        using="sas-15k-73gb", layout="raid10"))
    doc = load_doc(tmp_path / "eq")
    assert res.kind == doc["result_kind"] == "plan.equivalent"
    _section_matches(res.to_json(), doc)
    r = call_main("plan", "budget", "--usd", "50000", "--devices", "intel-x25e-32gb,sas-15k-73gb", "--out", "bu",
                  "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    res_b = calls.budget_plan(calls.BudgetRequest(catalog=catalog, usd=50000,
                                                  devices=("intel-x25e-32gb", "sas-15k-73gb")))
    doc = load_doc(tmp_path / "bu")
    assert res_b.kind == doc["result_kind"] == "plan.budget" and len(res_b.options) == 2
    _section_matches(res_b.to_json(), doc)
    # a measured run priced: a saved OLTP bench document, in a run directory of its own
    bench = tmp_path / "bench" / "result.json"
    bench.parent.mkdir()
    bench.write_text((DATA / "bench" / "oltp-tpcc.json").read_text())
    r = call_main("plan", "value", "--result", str(bench.parent), "--config", "sas-15k-73gb:8:raid10", "--out", "va",
                  "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    from dbtier.model.guards import doc_guards
    measured = load_run(str(bench.parent))
    res_v = calls.value_plan(calls.ValueRequest(catalog=catalog, run=measured, run_dir=str(bench.parent),
                                                config="sas-15k-73gb:8:raid10", guards=tuple(doc_guards(measured))))
    doc = load_doc(tmp_path / "va")
    assert res_v.kind == doc["result_kind"] == "plan.value" and res_v.configured.count == 8
    _section_matches(res_v.to_json(), doc)


@pytest.mark.slow
def test_simulate_mrc_as_a_library_call_is_the_commands_answer(tmp_path):
    from dbtier.sim.mrc.call import MrcRequest, SimulateMrc, run
    trace = DATA / "objects" / "cloudPhysicsIO.oracleGeneral.bin"
    r = call_main("simulate", "mrc", str(trace), "--policy", "lru,s3fifo", "--sizes", "1MiB,16MiB", "--out", "run",
                  "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    started, seen = [], []
    res = run(MrcRequest(trace=trace, policies=("lru", "s3fifo"), sizes="1MiB,16MiB"),
              progress=lambda what, frac: seen.append(frac), start=lambda: started.append(len(seen)))
    assert isinstance(res, SimulateMrc) and res.kind == doc["result_kind"] == "simulate.mrc"
    assert started and seen and seen[-1] == 1.0          # started once the trace was read, then the replays
    _section_matches(res.to_json(), doc)
    assert [c["policy"] for c in res["mrc"]["curves"]] == ["lru", "s3fifo"]


@pytest.mark.slow
def test_history_consolidate_and_requirement_as_library_calls_are_the_commands_answers(tmp_path):
    from dbtier.history.calls import (ConsolidateRequest, HistoryConsolidate, HistoryRequirement,
                                      RequirementRequest, consolidate, requirement)
    src = DATA / "history" / "real" / "diskstats-vm.txt"
    for name in ("db1", "db2"):
        r = call_main("history", "import", "--source", "diskstats", str(src), "--database", name, "--out", name,
                      "--json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    runs = (str(tmp_path / "db1"), str(tmp_path / "db2"))
    r = call_main("history", "consolidate", *runs, "--out", "cons", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "cons")
    seen = []

    def into(name):
        def start(inputs):
            seen.append(list(inputs))
            (tmp_path / name).mkdir()
            return tmp_path / name
        return start

    res = consolidate(ConsolidateRequest(runs=runs), into("lib-cons"))
    assert isinstance(res, HistoryConsolidate) and res.kind == doc["result_kind"] == "history.consolidate"
    assert seen == [list(runs)] and res.inputs == runs
    _section_matches(res.to_json(), doc)
    # the series it wrote where start() said: the command's own files, row for row
    import duckdb
    for f in doc["series_files"]:
        q = "SELECT count(*), sum(hash(COLUMNS(*))) FROM read_parquet('{}')"
        assert duckdb.sql(q.format(tmp_path / "lib-cons" / f)).fetchall() == \
            duckdb.sql(q.format(tmp_path / "cons" / f)).fetchall(), f
    # a requirement of one consolidation run, and of an import of two databases (their sum, consolidated
    # where start() said: the section's source names that directory)
    r = call_main("history", "import", "--source", "diskstats", str(src), "--database", "db2", "--into",
                  runs[0], "--out", "both", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for run_dir, pct in (("cons", "99"), ("both", "95")):
        out = f"req-{run_dir}"
        r = call_main("history", "requirement", str(tmp_path / run_dir), "--percentile", pct, "--out", out, "--json",
                      cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        doc = load_doc(tmp_path / out)
        res_r = requirement(RequirementRequest(run=str(tmp_path / run_dir), percentile=pct), into("lib-" + out))
        assert isinstance(res_r, HistoryRequirement) and res_r.kind == doc["result_kind"] == "history.requirement"
        got = res_r.to_json()
        if run_dir == "both":
            assert "consolidated" in got and got["from"]["run_dir"] == str(tmp_path / ("lib-" + out))
            got["from"]["run_dir"] = doc["from"]["run_dir"]      # each names its own run's sum.parquet
        _section_matches(got, doc)
        assert res_r["requirement"]["read_iops"] == doc["read_iops"]


@pytest.mark.slow
def test_advise_as_a_library_call_is_the_commands_answer(tmp_path):
    from dbtier.advise import plan
    from dbtier.advise.call import Advise, AdviseRequest, advise
    from dbtier.results.store import load_run
    rac = DATA / "history" / "awr" / "awr_sysstat_PRODRAC.csv"
    r = call_main("history", "import", str(rac), "--out", "imp", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("advise", str(tmp_path / "imp"), "--cloud", "aws", "--capacity-gb", "500", "--out", "adv",
                  "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "adv")
    catalog, prices, graded = plan.prepared_catalog(None, "production")
    dirs = []
    res = advise(AdviseRequest(clouds=("aws",), capacity_gb=500, catalog=catalog, prices=prices, grade=graded),
                 [load_run(str(tmp_path / "imp"))],
                 lambda inputs: dirs.append(tmp_path / "lib") or (tmp_path / "lib").mkdir() or tmp_path / "lib")
    assert isinstance(res, Advise) and res.kind == doc["result_kind"] == "advise"
    # two instances summed: their sum's series written where start() said, and the source names it
    assert dirs == [tmp_path / "lib"] and (tmp_path / "lib" / "sum.parquet").exists()
    got = res.to_json()
    assert got["from"]["run_dir"] == str(tmp_path / "lib")
    got["from"]["run_dir"] = doc["from"]["run_dir"]          # each names its own run's sum.parquet
    _section_matches(got, doc)
    assert res["advice"]["recommended"] == doc["advice"]["recommended"]


@pytest.mark.slow
def test_simulate_convert_as_a_library_call_is_the_commands_answer(tmp_path):
    import duckdb
    from dbtier.sim.convert import ConvertRequest, SimulateConvert, convert
    trace = DATA / "traces" / "msr-hm1.csv"
    r = call_main("simulate", "convert", str(trace), "--out", "run", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    (tmp_path / "lib").mkdir()
    res = convert(ConvertRequest(trace=trace), tmp_path / "lib")
    assert isinstance(res, SimulateConvert) and res.kind == doc["result_kind"] == "simulate.convert"
    got = res.to_json()
    assert got["convert"]["path"] == str(res.path) and res.path.parent == tmp_path / "lib"
    got["convert"]["path"] = doc["convert"]["path"]        # each in its own directory
    _section_matches(got, doc)
    def rows(p):        # a file per volume, under volume=N/
        return duckdb.sql(f"SELECT count(*), sum(hash(COLUMNS(*))) FROM read_parquet('{p}/*/*.parquet')").fetchall()
    assert rows(res.path) == rows(tmp_path / doc["convert"]["path"]) and rows(res.path)[0][0] > 0


def test_the_readmes_python_example_runs_and_prints_the_commands_answer(tmp_path, capsys):
    import re
    from conftest import ROOT
    text = (ROOT / "README.md").read_text()
    [code] = re.findall(r"<!-- python-example -->\n```python\n(.*?)```", text, re.S)
    exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    r = call_main("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "4000", "--top",
                  "3", "--json", "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    assert lines == [f"{c['description']}: ${c['tco']['total_usd']:,.0f} over 5 years, bound by {c['binding']}"
                     for c in doc["candidates"]] and len(lines) == 3


@pytest.mark.parametrize("change, says", [
    ({"duration_s": float("nan")}, "--duration must be positive, got nan"),
    ({"warmup_s": -1.0}, "--warmup must be positive, got -1.0"),
    ({"warehouses": 0}, "--warehouses must be positive, got 0"),
    ({"repeat": 0}, "--repeat must be positive, got 0"),
    ({"rate": 0.0}, "--rate must be positive, got 0.0"),
    ({"clients": ()}, "--clients must be positive counts, got []"),
    ({"steps": ()}, "a bench oltp request has no placement step"),
])
def test_a_bench_oltp_request_built_by_hand_is_checked_as_the_options_are(change, says):
    from dbtier.core.errors import DbtierError
    from dbtier.workloads.oltp import OltpRequest
    base = {"steps": (("single", {}),), "dir": "/srv/db"}
    with pytest.raises(DbtierError) as e:
        OltpRequest(**{**base, **change})
    assert e.value.message == says


def test_a_bench_oltp_request_counts_its_directories_and_seconds_by_hand():
    from dbtier.workloads.oltp import OltpRequest
    req = OltpRequest(steps=(("all-slow", {"data": "/slow"}), ("all-fast", {"data": "/fast", "wal": "/fast"})),
                      dir="/srv", clients=(1, 4), repeat=3, duration_s=10, warmup_s=2)
    assert req.dirs() == ["/fast", "/slow", "/srv"]
    assert req.total_s() == 2 * 2 * 3 * (10 + 2) == 144
    assert OltpRequest(steps=(("single", {}),), dir="/srv", warmup_s=0).warmup_s == 0   # no warm-up is allowed


@pytest.mark.slow
def test_plan_size_cloud_as_a_library_call_is_the_commands_answer(tmp_path):
    from dbtier.model.cloud.design import CloudPlanRequest, PlanCloud, cloud_plan
    from dbtier.model.plan.requirement import Requirement
    r = call_main("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "4000",
                  "--cloud", "aws", "--instance", "auto", "--headroom", "0.3", "--top", "3", "--out", "run",
                  "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    need = Requirement(read_iops=20000, write_iops=5000, capacity_gb=4000, headroom=0.3)
    res = cloud_plan(CloudPlanRequest(provider="aws", requirement=need, instance="auto", top=3))
    assert isinstance(res, PlanCloud) and res.kind == "plan.size" == doc["result_kind"]
    _section_matches(res.to_json(), doc)
    # the typed designs beside the section: the cheapest a month first, the section's top 3 of them
    months = [c.contract()["cloud"]["monthly_usd"]["total"] for c in res.found]
    assert months == sorted(months) and len(res.found) == doc["designs_meeting"] >= 3
    assert [c["cloud"]["monthly_usd"]["total"] for c in doc["candidates"]] == months[:3]


@pytest.mark.parametrize("change, says", [
    ({"provider": "gcp", "instances_file": "types.json"}, "--instances-file reads `aws ec2 describe-instance-types`"),
    ({"roles": "auto"}, "--roles sizes one volume set per role from the history's file types: it needs"),
])
def test_a_cloud_plan_request_refuses_what_the_command_refuses(change, says):
    from dbtier.core.errors import DbtierError
    from dbtier.model.cloud.design import CloudPlanRequest
    from dbtier.model.plan.requirement import Requirement
    with pytest.raises(DbtierError) as e:
        CloudPlanRequest(**{"provider": "aws", "requirement": Requirement(read_iops=1000), **change})
    assert e.value.message.startswith(says)
