"""The published JSON Schema is generated from dbtier.results.types, and a real document of every command
validates against it: the commands that need no engine run here in-process on the repository's test data;
probe, bench oltp/dss/backup and lab are saved documents of real runs (tests/data)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from conftest import call_main
from samples import BACKUP_DUCKDB, DSS_SPILL, LAB, MATRIX, MATRIX_EMULATED, PROBE, TPCC, make_lab, run_dir

from dbtier.core.errors import DbtierError
from dbtier.results import types
from dbtier.results.document import upgrade
from dbtier.results.shape import check_document
from dbtier.results.schema import result_schema
from dbtier.results.schema.generate import generate, text

DATA = Path(__file__).resolve().parent.parent / "data"
CARD, DISK = "fusionio-iodrive-duo-1.2tb", "sas-15k-73gb"
CACHE = ["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing", DISK]

SAVED = {"probe": PROBE, "probe-fleet": PROBE.parent / "fleet-2hosts-quick.json", "bench-oltp": TPCC, "bench-oltp-matrix": MATRIX, "bench-oltp-emulated": MATRIX_EMULATED,
         "bench-dss": DSS_SPILL, "bench-dss-lab": LAB / "dss-1.json", "bench-backup": BACKUP_DUCKDB,
         "bench-backup-lab": LAB / "backup-1.json", "lab": LAB / "lab.json", "plan-size-lab": LAB / "plan-size.json"}


def _in_process(root: Path) -> dict[str, dict]:
    probe, oltp = run_dir(root / "runs", "p1", PROBE), run_dir(root / "runs", "o1", TPCC)
    matrix, lab = run_dir(root / "runs", "m1", MATRIX), make_lab(root / "runs")
    argvs = {
        "plan-equivalent": ["plan", "equivalent", "--reference", CARD, "--using", DISK],
        "plan-budget": ["plan", "budget", "--usd", "10000", "--devices", CARD, DISK],
        "plan-size": ["plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "10000"],
        "plan-value": ["plan", "value", "--result", str(probe), "--config", f"{DISK}:8:raid10"],
        "plan-value-bench": ["plan", "value", "--result", str(oltp), "--config", f"{CARD}:2:mirror2"],
        "simulate-cache": ["simulate", "run", str(DATA / "traces" / "msr-hm1.csv"), *CACHE, "--cache-gb", "0.0001"],
        "simulate-single": ["simulate", "run", str(DATA / "traces" / "msr-hm1.csv"), "--design", "single",
                            "--device", DISK],
        "history-import": ["history", "import", "--source", "sqlserver",
                           str(DATA / "history" / "sqlserver" / "file_stats-sql01.csv")],
        "history-consolidate": ["history", "consolidate", str(root / "history-import")],
        "history-requirement": ["history", "requirement", str(root / "history-consolidate"), "--percentile", "95"],
        "advise": ["advise", str(root / "history-import"), "--cloud", "aws", "--current", str(probe)],
        "report": ["report", str(probe), str(oltp)],
        "show": ["show", str(probe)],
        "show-lab": ["show", str(lab)],
        "compare": ["compare", str(oltp), str(matrix)],
        "catalog-list": ["catalog", "list"],
        "catalog-show": ["catalog", "show", DISK],
        "cleanup": ["cleanup", "--dry-run"],
    }
    docs = {}
    for name, argv in argvs.items():      # in order: consolidate reads the import, requirement the consolidation
        r = call_main(*argv, "--out", str(root / name), cwd=root)
        assert r.returncode == 0, (name, r.stderr)
        docs[name] = json.loads((root / name / "result.json").read_text())
    return docs


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(result_schema())   # the schema checked once, not per document


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict[str, dict]:
    docs = _in_process(tmp_path_factory.mktemp("docs"))
    # saved by an older dbtier: read as dbtier reads them, through the upgrade (which adds result_kind)
    docs.update({name: upgrade(json.loads(path.read_text())) for name, path in SAVED.items()})
    return docs


# The kind each document above says it is, by hand (the saved ones: what the upgrade gives them).
KINDS = {"plan-equivalent": "plan.equivalent", "plan-budget": "plan.budget", "plan-size": "plan.size",
         "plan-value": "plan.value", "plan-value-bench": "plan.value", "simulate-cache": "simulate.run",
         "simulate-single": "simulate.run", "history-import": "history.import",
         "history-consolidate": "history.consolidate", "history-requirement": "history.requirement",
         "advise": "advise", "report": "report", "show": "show", "show-lab": "show", "compare": "compare",
         "catalog-list": "catalog.list", "catalog-show": "catalog.show", "cleanup": "cleanup",
         "probe": "probe", "probe-fleet": "probe.fleet", "bench-oltp": "bench.oltp", "bench-oltp-matrix": "bench.oltp",
         "bench-oltp-emulated": "bench.oltp", "bench-dss": "bench.dss", "bench-dss-lab": "bench.dss",
         "bench-backup": "bench.backup", "bench-backup-lab": "bench.backup", "lab": "lab",
         "plan-size-lab": "plan.size"}


@pytest.mark.slow
def test_every_document_says_its_kind(documents):
    assert {name: doc.get("result_kind") for name, doc in documents.items()} == KINDS


def test_the_committed_schema_is_the_generated_one():
    path = Path(__file__).resolve().parents[2] / "src" / "dbtier" / "results" / "schema" / "result.schema.json"
    assert path.read_text() == text(), "run: python -m dbtier.results.schema"
    assert result_schema() == generate()


def test_the_schema_is_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(generate())


def _matches(doc: dict, when: dict[str, str]) -> bool:
    return all((doc["params"].get(k[7:]) if k.startswith("params.") else doc.get(k)) == v for k, v in when.items())


@pytest.mark.slow
def test_every_command_has_a_section_and_every_section_a_real_document(documents):
    assert {d["command"] for d in documents.values()} == {when["command"] for when, _ in types.SECTIONS}
    for when, _ in types.SECTIONS:
        assert any(_matches(d, when) for d in documents.values()), when


@pytest.mark.slow
def test_every_document_validates(documents, validator):
    for name, doc in documents.items():
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, (name, errors[:3])


@pytest.mark.slow
@pytest.mark.parametrize("name, path, value", [
    ("probe", ["targets", 0, "summary", "read_iops_4k"], "fast"),
    ("bench-oltp", ["points", 0, "tps"], "1500"),
    ("bench-dss", ["queries", 0, "seconds"], "slow"),
    ("bench-backup", ["targets", 0, "mbps"], [1]),
    ("lab", ["steps", 0, "seconds"], "10 s"),
    ("plan-size", ["designs_meeting"], "many"),
    ("plan-value", ["value", "usd_per_gb"], "cheap"),
    ("simulate-cache", ["trace", "requests"], 1.5),
    ("history-import", ["databases"], {}),
    ("history-consolidate", ["peaks", "read_iops", "p95"], "high"),
    ("history-requirement", ["read_iops"], True),
    ("report", ["report_html"], 1),
    ("show", ["figures", 0, "digits"], "2"),
    ("compare", ["rows", 0, "ratio"], "2x"),
    ("catalog-show", ["overheads"], "none"),
    ("probe", ["started_at"], "yesterday"),
])
def test_a_wrong_type_fails_validation(documents, validator, name, path, value):
    doc = copy.deepcopy(documents[name])
    validator.validate(doc)
    at = doc
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)


# -- the shape check (results/shape.py) derives from the same types --------------------------------------------

def test_the_shape_check_accepts_every_real_document(documents):
    for name, doc in documents.items():
        check_document(doc, name)


@pytest.mark.parametrize("name, path, value, message", [
    ("history-import", ["databases", 0, "name"], None, "`databases[0].name` is null, expected a string"),
    ("history-import", ["databases", 0, "peaks"], [1], "`databases[0].peaks` is a list, expected an object or null"),
    ("bench-dss", ["params", "data"], ["/a"], "`params.data` is a list, expected a string or null"),
    ("bench-oltp", ["points", 0, "tps"], "1500", "`points[0].tps` is a string, expected a number or null"),
    ("probe", ["targets", 0, "summary", "read_iops_4k"], True,
     "`targets[0].summary.read_iops_4k` is true, expected a number or null"),
    ("plan-size", ["params"], None, "`params` is null, expected an object"),
    ("lab", ["steps", 0, "run_dir"], 3, "`steps[0].run_dir` is a number, expected a string or null"),
])
def test_the_shape_check_names_the_key_and_what_was_expected(documents, name, path, value, message):
    doc = copy.deepcopy(documents[name])
    at = doc
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    with pytest.raises(DbtierError) as e:
        check_document(doc, "result.json")
    assert e.value.message == f"result.json: {message}"


def test_the_probes_stored_knee_validates_and_a_wrong_one_does_not(documents, validator):
    """The knee the probe stores (results.probe.knees over its points) fits the schema; a knee below one
    outstanding I/O or without its fields does not."""
    from dbtier.results.probe import knees
    doc = copy.deepcopy(documents["probe"])
    for t in doc["targets"]:
        t["knee"] = knees(t["points"])
    assert any(k for t in doc["targets"] for k in t["knee"].values())
    validator.validate(doc)
    test, k = next((n, k) for n, k in doc["targets"][0]["knee"].items() if k)
    doc["targets"][0]["knee"][test] = dict(k, outstanding=0)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)
    doc["targets"][0]["knee"][test] = {"test": test}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(doc)
