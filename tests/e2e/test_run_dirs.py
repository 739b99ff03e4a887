"""Run directories end to end (issue 12): a run is never overwritten or mixed, every run ends with a
final status (SIGTERM included), bad result documents from elsewhere are refused by name, and the
read-only commands leave nothing behind. In-process (`main(argv)`) but for SIGTERM and the read-only
commands' tripwire, which run the real `dbtier` process."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DATA, assert_clean_error, call_main, load_doc, run_dbtier
from samples import PROBE, TPCC, run_dir

MSS = DATA / "history" / "sqlserver" / "file_stats-sql01.csv"
CACHE = ["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing", "sas-15k-73gb"]


def tree_hash(root: Path) -> dict[str, str]:
    """Every file under `root` (relative path -> sha256): what 'byte-identical afterwards' compares."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def catalog_run(tmp_path: Path, out: Path) -> None:
    r = call_main("catalog", "list", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr


# -- never overwritten, never mixed ------------------------------------------------------------------------

def test_out_on_an_existing_run_is_refused_and_the_run_is_untouched(tmp_path):
    out = tmp_path / "r"
    catalog_run(tmp_path, out)
    before = tree_hash(out)
    r = call_main("plan", "size", "--read-iops", "1000", "--capacity-gb", "100", "--out", str(out), cwd=tmp_path)
    err = assert_clean_error(r, f"--out {out}: already a run directory", "--force")
    assert err.count("dbtier: error:") == 1
    assert tree_hash(out) == before


def test_out_on_a_foreign_directory_is_refused_even_with_force(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    before = tree_hash(out)
    r = call_main("catalog", "list", "--out", str(out), cwd=tmp_path)
    assert_clean_error(r, f"--out {out}: not empty")
    r = call_main("catalog", "list", "--out", str(out), "--force", cwd=tmp_path)
    assert_clean_error(r, "not a dbtier run directory", "--force replaces only run directories")
    assert tree_hash(out) == before


@pytest.mark.slow
def test_force_replaces_the_whole_run(tmp_path):
    out = tmp_path / "r"
    catalog_run(tmp_path, out)
    (out / "raw").mkdir(exist_ok=True)
    (out / "raw" / "stale.log").write_text("from the first run")
    (out / "report.html").write_text("old report")
    r = call_main("plan", "size", "--read-iops", "1000", "--capacity-gb", "100", "--out", str(out), "--force",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.rglob("*")) == [".dbtier-run", "result.json"]     # the new run's marker
    doc = load_doc(out)
    assert doc["command"] == "plan" and doc["status"] == "ok"


def test_force_never_removes_what_the_command_reads(tmp_path):
    run = run_dir(tmp_path / "runs", "p1", PROBE)
    before = tree_hash(run)
    r = call_main("report", str(run), "--out", str(run), "--force", cwd=tmp_path)
    assert_clean_error(r, f"--out {run} --force would remove {run}")
    assert tree_hash(run) == before
    r = call_main("show", str(run), "--out", str(tmp_path / "runs"), "--force", cwd=tmp_path)
    assert_clean_error(r, "not a dbtier run directory")
    assert tree_hash(run) == before


def test_empty_out_is_refused(tmp_path):
    r = call_main("catalog", "list", "--out", "", cwd=tmp_path)
    assert_clean_error(r, "--out '': an empty directory name")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", ["input-json", "input-dir-file", "input-dir-new", "any-result-json"])
def test_report_output_never_writes_over_an_input(tmp_path, target):
    run = run_dir(tmp_path / "runs", "p1", PROBE)
    (run / "raw").mkdir()
    (run / "raw" / "fio.json").write_text("{}")
    other = tmp_path / "elsewhere"
    other.mkdir()
    output = {"input-json": run / "result.json", "input-dir-file": run / "raw" / "fio.json",
              "input-dir-new": run / "report.html", "any-result-json": other / "result.json"}[target]
    before = tree_hash(tmp_path / "runs")
    r = call_main("report", str(run), "--output", str(output), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert_clean_error(r, f"--output {output}")
    assert tree_hash(tmp_path / "runs") == before
    assert not (tmp_path / "rep").exists() and not (other / "result.json").exists()


def test_report_output_elsewhere_still_works(tmp_path):
    run = run_dir(tmp_path / "runs", "p1", PROBE)
    r = call_main("report", str(run), "--output", str(tmp_path / "copy.html"), "--out", str(tmp_path / "rep"),
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "copy.html").read_text().startswith("<!DOCTYPE html>")


# -- one lifecycle: SIGTERM on a real process ------------------------------------------------------------

@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_sigterm_leaves_the_run_interrupted_and_no_temp_file(tmp_path):
    """A simulation of 300,000 requests over an eight-size sweep runs for seconds after its run
    directory appears; SIGTERM then must leave status `interrupted`, the reason in errors, exit 130.
    (--in-memory: a streamed run writes its directory only once the replay is done.)"""
    rng = random.Random(12)
    t = 128166372003061629
    lines = []
    for _ in range(300_000):
        t += 10_000
        lines.append(f"{t},h,0,{'Read' if rng.random() < 0.7 else 'Write'},{rng.randrange(0, 1 << 22) * 4096},4096,100")
    trace = tmp_path / "big.csv"
    trace.write_text("\n".join(lines) + "\n")
    out = tmp_path / "sim"
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "simulate", "run", str(trace), *CACHE, "--cache-gb", "1",
                             "--sweep", "0.5,1,2,4,8,16,32,64", "--jobs", "1", "--in-memory", "--out", str(out)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (out / "result.json").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    doc = load_doc(out)
    assert doc["status"] == "interrupted" and doc["finished_at"]
    assert {"message": "interrupted by SIGTERM"} in doc["errors"]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


# -- run documents from elsewhere --------------------------------------------------------------------------

def _doc(**over):
    d = json.loads(PROBE.read_text())
    d.update(over)
    return d


BAD = {
    "not-utf8": (b'{"schema_version": 1, "command": "probe\xff\xfe"}', "not UTF-8 text (byte 39, line 1)"),
    "deep": (b'{"schema_version": 1, "command": "x", "a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
             "nested too deeply"),
    "truncated": (b'{"schema_version": 1, "comm', "not valid JSON (line 1"),
    "a-list": (b"[1, 2]", "not a dbtier result (a JSON list, not an object)"),
    "version-0": (json.dumps(_doc(schema_version=0)).encode(), "schema_version 0 is the pre-release format"),
    "version-bool": (json.dumps(_doc(schema_version=True)).encode(), "schema_version is true, not an integer"),
    "version-str": (json.dumps(_doc(schema_version="1")).encode(), "schema_version is '1', not an integer"),
    "version-newer": (json.dumps(_doc(schema_version=99)).encode(), "schema_version 99 is newer"),
    "command-int": (json.dumps(_doc(command=3)).encode(), "`command` is a number, expected a string"),
    "params-list": (json.dumps(_doc(params=[1])).encode(), "`params` is a list, expected an object"),
    "targets-str": (json.dumps(_doc(targets="x")).encode(), "`targets` is a string, expected a list"),
    "summary-list": (json.dumps(_doc(targets=[{"path": "/x", "summary": [1]}])).encode(),
                     "`targets[0].summary` is a list, expected an object or null"),
    "no-command": (b'{"schema_version": 1}', "not a dbtier result (no `command`)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_show_refuses_a_bad_document_by_name(tmp_path, case):
    data, needle = BAD[case]
    run = tmp_path / "in"
    run.mkdir()
    (run / "result.json").write_bytes(data)
    r = call_main("show", str(run), cwd=tmp_path)
    assert_clean_error(r, f"{run / 'result.json'}: ", needle)
    assert not (tmp_path / "runs").exists()


def test_a_directory_or_a_fifo_named_result_json(tmp_path):
    a = tmp_path / "a"
    (a / "result.json").mkdir(parents=True)
    r = call_main("show", str(a), cwd=tmp_path)
    assert_clean_error(r, f"{a / 'result.json'}: a directory, not a regular file")
    b = tmp_path / "b"
    b.mkdir()
    os.mkfifo(b / "result.json")
    r = call_main("compare", str(b), str(a), cwd=tmp_path, timeout=60)   # opening the FIFO would block
    assert_clean_error(r, f"{b / 'result.json'}: a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("command", [
    ["plan", "value", "--config", "sas-15k-73gb:8:raid10", "--result"],
    ["plan", "size", "--from-history"],
    ["history", "requirement"],
    ["history", "consolidate"],
    ["simulate", "run", str(DATA / "traces" / "policy-17.csv"), "--design", "single", "--device"],
    ["report"],
    ["compare", str(PROBE)],
])
def test_every_reader_of_run_documents_names_the_bad_file(tmp_path, command):
    run = tmp_path / "in"
    run.mkdir()
    (run / "result.json").write_bytes(json.dumps(_doc(schema_version=0)).encode())
    r = call_main(*command, str(run), cwd=tmp_path)
    assert_clean_error(r, f"{run / 'result.json'}: schema_version 0 is the pre-release format")


def test_bench_probe_reference_is_checked_before_the_benchmark(tmp_path):
    run = tmp_path / "in"
    run.mkdir()
    (run / "result.json").write_bytes(b'{"schema_version": 1, "command": "probe", "targets": {}}')
    r = call_main("bench", "dss", "--scale", "0.01", "--data", str(tmp_path), "--probe", str(run), cwd=tmp_path)
    assert_clean_error(r, f"{run / 'result.json'}: `targets` is an object, expected a list")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("damage", ["truncated", "foreign"])
def test_consolidate_names_a_damaged_parquet_file(tmp_path, damage):
    imp = tmp_path / "imp"
    r = call_main("history", "import", "--source", "sqlserver", str(MSS), "--out", str(imp), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    totals = imp / "totals.parquet"
    if damage == "truncated":
        totals.write_bytes(totals.read_bytes()[:200])
    else:
        import duckdb
        totals.unlink()
        duckdb.connect().execute(f"COPY (SELECT 1 AS x) TO '{totals}' (FORMAT parquet)")
    r = call_main("history", "consolidate", str(imp), "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert_clean_error(r, str(totals), "not a readable Parquet file" if damage == "truncated" else "without the column")
    assert not (tmp_path / "c").exists()


# -- read-only commands ----------------------------------------------------------------------------------

@pytest.fixture
def tripwire(tmp_path):
    """fio, postgres and pg_config on PATH that leave a mark when anything runs them."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    mark = tmp_path / "engine-started"
    for name in ("fio", "postgres", "pg_config"):
        (bin_ / name).write_text(f"#!/bin/sh\necho {name} >> {mark}\necho {name}-0.0\n")
        (bin_ / name).chmod(0o755)
    return {"PATH": f"{bin_}:{os.environ['PATH']}"}, mark


@pytest.mark.parametrize("argv", [["show", "RUN"], ["compare", "RUN", "RUN2"], ["catalog", "list"],
                                  ["catalog", "show", "sas-15k-73gb"]])
@pytest.mark.slow
def test_read_only_commands_write_nothing_and_start_no_engine(tmp_path, tripwire, argv):
    env, mark = tripwire
    work = tmp_path / "work"
    work.mkdir()
    a = run_dir(tmp_path / "in", "o1", TPCC)
    b = run_dir(tmp_path / "in", "o2", TPCC)
    argv = [str(a) if x == "RUN" else str(b) if x == "RUN2" else x for x in argv]
    before = tree_hash(tmp_path / "in")
    r = run_dbtier(*argv, cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    r = run_dbtier(*argv, "--json", cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["command"] == argv[0] and doc["status"] == "ok"
    assert list(work.iterdir()) == [] and not mark.exists()
    assert tree_hash(tmp_path / "in") == before
    # --out asks for a run directory: then it is written (and the machine described in full)
    r = run_dbtier(*argv, "--out", str(work / "kept"), cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    assert load_doc(work / "kept")["status"] == "ok" and mark.exists()


def test_lab_refuses_an_existing_lab_directory(tmp_path):
    out = tmp_path / "lab"
    catalog_run(tmp_path, out)
    before = tree_hash(out)
    r = call_main("lab", str(tmp_path), "--out", str(out), cwd=tmp_path)
    assert_clean_error(r, f"--out {out}: already a run directory")
    assert tree_hash(out) == before


SWALLOWED = r"""
import ctypes, os, signal, sys
from dbtier.cli import catalog, main

list_devices = catalog.run_list

def run_list(args):
    # the signal lands while C code runs a Python callback (as numba's cache writer on a first run):
    # ctypes prints and drops the handler's exception, and the command would end normally
    callback = ctypes.CFUNCTYPE(None)(lambda: os.kill(os.getpid(), getattr(signal, sys.argv[1])))
    callback()
    return list_devices(args)

catalog.run_list = run_list
sys.exit(main.main(["catalog", "list", "--out", sys.argv[2]]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_an_interrupt_a_c_callback_swallowed_still_interrupts(tmp_path, sig):
    r = subprocess.run([sys.executable, "-c", SWALLOWED, sig, str(tmp_path / "run")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr and "interrupted" in r.stderr
    assert load_doc(tmp_path / "run")["status"] == "interrupted"


IN_COMPILER = r"""
import os, signal, sys, time
from dbtier.cli import catalog, main

list_devices = catalog.run_list
# code that numba runs while it compiles a kernel (its module's name is what marks it)
scope = {"__name__": "numba.core.compiler", "os": os, "signal": signal, "sys": sys, "time": time}
exec('''
def compile_kernel():
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    end = time.monotonic() + 0.5
    while time.monotonic() < end:       # the handler runs here, between bytecodes
        pass
    print("compiled", flush=True)
''', scope)

def run_list(args):
    code = list_devices(args)
    scope["compile_kernel"]()
    time.sleep(30)                      # the signal, delivered again, ends the command here
    print("not interrupted", flush=True)
    return code

catalog.run_list = run_list
sys.exit(main.main(["catalog", "list", "--out", sys.argv[2]]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_an_interrupt_waits_for_numba_to_finish_compiling(tmp_path, sig):
    """A signal while numba compiles (or writes its cache) is held until that code returns, then ends the
    command: raised inside, it is dropped by llvmlite's callback and leaves a kernel half-built."""
    r = subprocess.run([sys.executable, "-c", IN_COMPILER, sig, str(tmp_path / "run")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 130, r.stderr
    assert r.stdout.endswith("\ncompiled\n"), r.stdout[-300:]
    assert "Traceback" not in r.stderr and "interrupted" in r.stderr
    assert load_doc(tmp_path / "run")["status"] == "interrupted"


# -- names -----------------------------------------------------------------------------------------------------

PLAN = ["plan", "size", "--read-iops", "1000", "--capacity-gb", "100"]


def only_run(runs: Path) -> Path:
    made = [p for p in runs.iterdir() if not p.name.startswith(".")]
    assert len(made) == 1, made
    return made[0]


@pytest.mark.slow
def test_name_ends_the_run_directory_and_is_kept_in_the_document(tmp_path):
    r = call_main(*PLAN, "--name", "azure_E16s.v5-2", "--runs-dir", "r", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = only_run(tmp_path / "r")
    # <UTC timestamp>-<command>-<name>
    stamp, rest = d.name.split("-", 1)
    assert len(stamp) == len("20250101T000000Z") and stamp.endswith("Z") and rest == "plan-azure_E16s.v5-2"
    doc = load_doc(d)
    assert doc["name"] == "azure_E16s.v5-2" and list(doc)[list(doc).index("command") + 1] == "name"
    assert json.loads((d / ".dbtier-run").read_text()) == {"command": "plan", "name": "azure_E16s.v5-2"}


@pytest.mark.slow
@pytest.mark.parametrize("args,name,suffix", [
    (["--cloud", "aws", "--instance", "r6i.4xlarge"], "plan-aws-r6i.4xlarge", "plan-aws-r6i.4xlarge"),
    ([], "plan-onprem", "plan-onprem"),
], ids=["cloud", "onprem"])
def test_a_plan_is_named_after_what_it_sized(tmp_path, args, name, suffix):
    r = call_main(*PLAN, *args, "--runs-dir", "r", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = only_run(tmp_path / "r")
    assert d.name.split("-", 1)[1] == suffix and load_doc(d)["name"] == name     # the command not said twice


def test_history_steps_are_named_and_a_requirement_says_which_import_it_continues(tmp_path):
    awr = DATA / "history" / "awr"
    r = call_main("history", "import", "--source", "awr", str(awr / "awr_sysstat_PROD.csv"),
                  str(awr / "awr_iostat_filetype_PROD.csv"), "--runs-dir", "r", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    imp = only_run(tmp_path / "r")
    assert imp.name.endswith("-history-import-awr") and load_doc(imp)["name"] == "history-import-awr"
    r = call_main("history", "requirement", str(imp), "--database", "PROD", "--out", "req", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert load_doc(tmp_path / "req")["name"] == "history-requirement"
    listed = json.loads(call_main("runs", "--json", "--runs-dir", "r", "--runs-dir", ".", cwd=tmp_path).stdout)
    by = {x["name"]: x for x in listed["rows"]}
    assert by["history-requirement"]["continues"] == str(imp) and by["history-import-awr"]["continues"] is None


def test_the_name_given_wins_over_the_default(tmp_path):
    r = call_main(*PLAN, "--cloud", "aws", "--instance", "r6i.4xlarge", "--name", "mine", "--out", "o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert load_doc(tmp_path / "o")["name"] == "mine"


@pytest.mark.parametrize("bad,why", [
    ("a b", "only letters, digits"), ("x/y", "only letters, digits"), ("", "empty"), ("..", "only dots"),
    ("n" * 65, "65 characters, over 64"), ("é", "only letters, digits"),
])
def test_a_bad_name_is_one_message_and_nothing_is_made(tmp_path, bad, why):
    r = call_main(*PLAN, "--name", bad, "--runs-dir", "r", cwd=tmp_path)
    assert_clean_error(r, "--name", why)
    assert not (tmp_path / "r").exists()


def test_the_report_names_each_run(tmp_path):
    from dbtier.report.base import run_label
    from dbtier.report.html import render_html
    doc = {"command": "plan", "name": "azure", "_run_dir": str(tmp_path / "scratch")}
    assert run_label(doc, 0) == "scratch (azure)"       # --out: the directory does not say it
    assert run_label({**doc, "_run_dir": "runs/20250101T000000Z-plan-azure"}, 0) == "20250101T000000Z-plan-azure"
    html = render_html([{**doc, "status": "ok"}])
    assert "<th>name</th>" in html.replace(' class="num"', "") and "<td>azure</td>" in html
