"""Every result document says what it is (`result_kind`, dbtier.results.kinds): each command declares its kind
when it makes its run, every registered command line writes a declared kind, and a document written before
the key existed gets it from the upgrade, derived from the markers it has, with nothing else changed."""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

import orjson
import pytest

from conftest import call_main
from samples import PROBE, run_dir

from dbtier.core.errors import DbtierError
from dbtier.results import kinds
from dbtier.results.document import new_document, upgrade
from dbtier.results.store import dumps, load_run

DATA = Path(__file__).resolve().parent.parent / "data"
SRC = Path(__file__).resolve().parents[2] / "src" / "dbtier"

# Every saved document of tests/data (written before result_kind existed), its kind by hand: from the command
# line that wrote it (tests/data/documents/README.md and the folders' own READMEs).
SAVED = {
    "probe/quick-ext4-virtio.json": "probe",
    "probe/quick-ext4-virtio-repeats.json": "probe",
    "probe/fleet-2hosts-quick.json": "probe.fleet",
    "bench/oltp-tpcc.json": "bench.oltp",
    "bench/oltp-matrix-tpcb.json": "bench.oltp",
    "bench/oltp-matrix-tpcc-emulated.json": "bench.oltp",
    "bench/dss-duckdb-sf0.3-spill.json": "bench.dss",
    "bench/backup-duckdb.json": "bench.backup",
    "lab/lab.json": "lab",
    "lab/dss-1.json": "bench.dss",
    "lab/dss-2.json": "bench.dss",
    "lab/backup-1.json": "bench.backup",
    "lab/backup-2.json": "bench.backup",
    "lab/plan-size.json": "plan.size",
    "documents/history-import-awr.json": "history.import",
    "documents/history-import-sqlserver.json": "history.import",
    "documents/history-consolidate.json": "history.consolidate",
    "documents/history-requirement.json": "history.requirement",
    "documents/plan-equivalent.json": "plan.equivalent",
    "documents/plan-budget.json": "plan.budget",
    "documents/plan-value.json": "plan.value",
    "documents/simulate-run-read-cache.json": "simulate.run",
    "documents/simulate-mrc.json": "simulate.mrc",
    "documents/advise-dma.json": "advise",
    "documents/report.json": "report",
    "documents/compare.json": "compare",
    "documents/catalog-list.json": "catalog.list",
    "documents/cleanup.json": "cleanup",
}


def _saved() -> list[Path]:
    """Every JSON file under tests/data that is a dbtier result document."""
    out = []
    for p in sorted(DATA.rglob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and "schema_version" in doc and "command" in doc:
            out.append(p)
    return out


def test_the_table_covers_every_saved_document():
    assert sorted(str(p.relative_to(DATA)) for p in _saved()) == sorted(SAVED)


@pytest.mark.parametrize("rel", sorted(SAVED))
def test_the_upgrade_gives_a_saved_document_its_kind_and_changes_nothing_else(rel):
    raw = (DATA / rel).read_bytes()
    old = orjson.loads(raw)
    assert kinds.KEY not in old
    new = upgrade(old)
    assert new[kinds.KEY] == SAVED[rel]
    keys = list(new)        # right after the command (and the run's name, when it has one)
    assert keys[keys.index(kinds.KEY) - 1] == ("name" if "name" in old else "command")
    rest = {k: v for k, v in new.items() if k != kinds.KEY}
    assert dumps(rest) == dumps(old)        # the same keys in the same order, the same values
    assert upgrade(new) == new              # a document with its kind is left as it is


def test_the_kind_is_read_from_the_envelope_first():
    doc = {"command": "plan", "plan": "size", "params": {"action": "size"}, kinds.KEY: "plan.value"}
    assert kinds.kind_of(doc) == "plan.value"         # what the command declared, not what the keys suggest
    assert kinds.kind_of({**doc, kinds.KEY: "bench.oltp"}) == "plan.size"   # another command's: derived
    assert kinds.kind_of({**doc, kinds.KEY: "plan.teleport"}) == "plan.size"  # a kind this dbtier lacks: derived


@pytest.mark.parametrize("doc, kind", [
    ({"command": "probe", "params": {"paths": ["/x"]}}, "probe"),
    ({"command": "probe", "params": {"hosts": ["a", "b"]}}, "probe.fleet"),    # stopped before its fleet key
    ({"command": "bench", "params": {"workload": "tpcc"}}, "bench.oltp"),      # stopped before its bench key
    ({"command": "bench", "params": {"engine": "duckdb", "to": "/b"}}, "bench.backup"),
    ({"command": "bench", "params": {"engine": "duckdb", "temp": None}}, "bench.dss"),
    ({"command": "plan", "params": {"action": "budget"}}, "plan.budget"),      # stopped before its plan key
    ({"command": "simulate", "params": {}}, "simulate.run"),
    ({"command": "simulate", "params": {}, "mrc": {}}, "simulate.mrc"),
    ({"command": "simulate", "params": {"action": "convert"}}, "simulate.convert"),
    ({"command": "runs", "params": {"action": "check"}}, "runs.check"),
    ({"command": "export", "params": {"action": "series"}}, "export.series"),
    ({"command": "catalog", "params": {"action": "template"}}, "catalog.template"),
    ({"command": "history", "params": {"action": "import"}, "kind": "counters"}, "history.import"),
    ({"command": "cleanup", "params": {"dry_run": True}}, "cleanup"),
])
def test_an_older_documents_kind_from_its_markers(doc, kind):
    assert kinds.derive(doc) == kind
    assert upgrade({"schema_version": 1, **doc})[kinds.KEY] == kind


@pytest.mark.parametrize("doc, says", [
    ({"command": "frobnicate"}, "frobnicate"),              # a command this dbtier does not know
    ({"command": "history", "params": {}}, "history"),      # no action: not told which
    ({"command": "bench", "params": {}}, "bench"),
    ({}, "unknown"),
])
def test_a_document_whose_markers_do_not_tell_gets_no_kind(doc, says):
    assert kinds.derive(doc) is None
    assert kinds.KEY not in upgrade({"schema_version": 1, **doc})
    assert kinds.kind_of(doc) == says and kinds.label_of(doc) == says


def test_labels_are_what_show_compare_and_the_exports_always_said():
    """The human label of each kind, by hand: a fleet probe reads `probe`, a simulate run `simulate`, and the
    catalog, export and runs commands their command alone, as report/figures/core.py's kind() gave them."""
    want = {"probe": "probe", "probe.fleet": "probe", "bench.oltp": "bench oltp", "bench.dss": "bench dss",
            "bench.backup": "bench backup", "lab": "lab", "plan.equivalent": "plan equivalent",
            "plan.budget": "plan budget", "plan.size": "plan size", "plan.value": "plan value",
            "simulate.run": "simulate", "simulate.mrc": "simulate mrc", "simulate.capture": "simulate capture",
            "simulate.convert": "simulate convert", "history.import": "history import",
            "history.consolidate": "history consolidate", "history.requirement": "history requirement",
            "advise": "advise", "report": "report", "show": "show", "compare": "compare",
            "catalog.list": "catalog", "catalog.show": "catalog", "catalog.template": "catalog",
            "export.metrics": "export", "export.series": "export", "cleanup": "cleanup", "runs.list": "runs",
            "runs.sql": "runs", "runs.trend": "runs", "runs.check": "runs"}
    assert {k.name: k.label for k in kinds.KINDS} == want


def test_the_index_columns_of_each_kind():
    """(kind, action) as `dbtier runs` lists them, by hand: a bench's kind is its workload, and the plan,
    history, simulate and runs verbs say their action."""
    want = {"probe": ("probe", None), "probe.fleet": ("probe", None), "bench.oltp": ("oltp", None),
            "bench.dss": ("dss", None), "bench.backup": ("backup", None), "plan.size": ("plan", "size"),
            "simulate.run": ("simulate", "run"), "history.import": ("history", "import"),
            "catalog.list": ("catalog", None), "export.metrics": ("export", None), "runs.check": ("runs", "check"),
            "lab": ("lab", None), "advise": ("advise", None)}
    assert {n: kinds.BY_NAME[n].index for n in want} == want


# -- what the commands declare ---------------------------------------------------------------------------------

def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[str]:
    """The command lines a parser runs ("bench oltp", "runs sql"); a group that runs alone (runs) counts too."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [" ".join(prefix)]
    out = []
    if prefix and parser.get_default("func") is not None and "usage" not in parser.get_default("func").__qualname__:
        out.append(" ".join(prefix))
    for name, sub in subs[0].choices.items():
        out += _leaves(sub, prefix + (name,))
    return out


def test_every_registered_command_writes_a_declared_kind():
    from dbtier.cli.main import build_parser
    lines = set(_leaves(build_parser()))
    writers = {w: k.name for k in kinds.KINDS for w in k.writers}
    assert lines == set(writers), (sorted(lines - set(writers)), sorted(set(writers) - lines))
    for line, name in writers.items():
        assert line.split()[0] == kinds.BY_NAME[name].command


def test_every_run_a_command_makes_names_a_kind_from_the_list():
    """Each `Run(KIND, ...)` and `Sink(KIND, ...)` (a Run made when a library call asks) in dbtier.cli names its
    kind: a literal from KINDS, or `runs.{action}` whose every action is one."""
    calls = []
    for path in sorted((SRC / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("Run", "Sink"):
                calls.append((path.relative_to(SRC / "cli").as_posix(), node.args[0]))
    # one Run at least for each kind but the runs verbs' (made in one place): the scan found them
    assert len(calls) >= len(kinds.NAMES) - len(kinds.of_command("runs"))
    for where, arg in calls:
        if isinstance(arg, ast.Constant):
            assert arg.value in kinds.NAMES, (where, arg.value)
        elif where == "common.py":      # Sink.start: the kind it was made with
            assert ast.unparse(arg) == "self._kind", where
        else:           # runs_common.make_run: f"runs.{action}", action one of the runs verbs
            assert isinstance(arg, ast.JoinedStr) and where == "runs/common.py", where
            assert ast.unparse(arg) == "f'runs.{action}'"
    made = {a.value for _, a in calls if isinstance(a, ast.Constant)} | {k.name for k in kinds.of_command("runs")}
    assert made == set(kinds.NAMES)         # and every kind in the list is made by some command


def test_a_new_document_carries_its_kind_after_the_command():
    doc = new_document("bench.oltp", {}, {})
    assert list(doc)[:3] == ["schema_version", "command", kinds.KEY]
    assert doc["command"] == "bench" and doc[kinds.KEY] == "bench.oltp"
    with pytest.raises(ValueError, match="'bench' is not a kind of result"):
        new_document("bench", {}, {})


def test_a_kind_of_another_command_is_refused_on_load(tmp_path):
    doc = orjson.loads((DATA / "bench" / "backup-duckdb.json").read_bytes())
    (tmp_path / "result.json").write_bytes(dumps(kinds.place(doc, "plan.size")))
    with pytest.raises(DbtierError) as e:
        load_run(tmp_path)
    assert e.value.message.endswith("`result_kind` is 'plan.size', which is not a kind of its command 'bench'")
    assert "pass a run directory written by dbtier" in e.value.hint


@pytest.mark.slow
def test_the_engine_free_commands_write_their_kind(tmp_path):
    """The commands tests/unit/test_result_schema.py does not run, run here: their documents carry the
    kind they declare."""
    probe = run_dir(tmp_path / "runs", "p1", PROBE)
    trace = DATA / "traces" / "msr-hm1.csv"
    argvs = {
        "export.metrics": ["export", "metrics", str(probe)],
        "export.series": ["export", "series", str(probe)],
        "runs.list": ["runs", "--runs-dir", str(tmp_path / "runs")],
        "runs.sql": ["runs", "sql", "SELECT count(*) FROM runs", "--runs-dir", str(tmp_path / "runs")],
        "runs.trend": ["runs", "trend", "probe.read_iops_4k", "--runs-dir", str(tmp_path / "runs")],
        "runs.check": ["runs", "check", str(probe), "--baseline", str(probe), "--runs-dir", str(tmp_path / "runs")],
        "simulate.mrc": ["simulate", "mrc", str(DATA / "objects" / "cloudPhysicsIO.oracleGeneral.bin"),
                         "--policy", "lru", "--sizes", "128MiB"],
        "simulate.convert": ["simulate", "convert", str(trace)],
        "catalog.template": ["catalog", "template"],
    }
    for kind, argv in argvs.items():
        out = tmp_path / kind
        r = call_main(*argv, "--out", str(out), cwd=tmp_path)
        assert r.returncode in (0, 1), (kind, r.stderr)      # runs check: 1 would be a regression, still written
        doc = json.loads((out / "result.json").read_text())
        assert (doc["command"], doc[kinds.KEY]) == (kind.split(".")[0], kind), kind
