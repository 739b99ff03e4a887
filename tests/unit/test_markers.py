"""The fast tier is split by marker: every test that starts an engine (PostgreSQL, fio, a DuckDB benchmark,
blktrace, a loop device or a mount) is marked `engine`, so `pytest -m "not engine"` never starts one.

A test counts as engine-marked when its module sets `pytestmark` with `pytest.mark.engine`, when it is
decorated with it, or when it asks for a fixture conftest.ENGINE_FIXTURES marks automatically. A test that
mentions a command that runs an engine (read in its body, its decorators and the module's helpers it
calls) but is not marked must be named in REFUSED_BEFORE_ANY_ENGINE below with the reason it never
starts one: a new test cannot slip into the fast tier unnoticed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ENGINE_FIXTURES, ROOT

TESTS = ROOT / "tests"

# What starts an engine: the dbtier commands that run one (when the test runs dbtier: a parser-only test
# starts nothing), and the helpers that manage one directly.
COMMAND_SIGNS = re.compile(
    r'(run_dbtier|call_main|dbtier|main)\(\s*\[?\s*"(lab|probe)"'  # `dbtier lab`, `dbtier probe` (fio)
    r'|"dbtier",\s*"(lab|probe)"|[(\[]\s*\[\s*"(lab|probe)",'       # ... as an argv or a parametrized one
    r'|"bench",\s*"(oltp|dss|backup)"'                               # PostgreSQL, DuckDB, pg_basebackup
    r'|"simulate",\s*"capture"'                                      # blktrace on a real device
    r'|\[\s*"fio",'                                                   # fio by hand
)
RUNS_DBTIER = re.compile(r'\b(run_dbtier|call_main|main)\(|subprocess\.|Popen\(|"-m",\s*"dbtier"')
DIRECT_SIGNS = re.compile(r'\bpostgres_processes\(|\bCluster\(|dbtier\.workloads\.(postgres|mariadb)\b|\bDuckDBEngine\b|\bmariadb\.Server\(')


def _runs_an_engine(text: str) -> bool:
    return bool(DIRECT_SIGNS.search(text) or (COMMAND_SIGNS.search(text) and RUNS_DBTIER.search(text)))


# (file, test) -> why it never starts an engine although it names a command that does.
REFUSED_BEFORE_ANY_ENGINE = {
    ("unit/test_bench_dss_call.py", "test_the_call_gives_the_section_the_command_stores"):
        "a stand-in engine replaces DuckDB: nothing is started",
    ("unit/test_bench_dss_call.py", "test_the_engine_is_closed_and_the_section_saved_when_a_query_fails"):
        "a stand-in engine replaces DuckDB: nothing is started",
    ("e2e/test_hostile_options.py", "test_bench_with_a_bad_option_fails_before_any_engine"):
        "a bad option is refused by the parser",
    ("e2e/test_hostile_options.py", "test_malformed_dsn_is_refused_before_anything"):
        "a malformed --dsn is refused before connecting",
    ("e2e/test_hostile_options.py", "test_unreachable_dsn_ends_the_run_failed_with_the_error"):
        "--dsn to a closed port: the connection is refused, nothing is started",
    ("e2e/test_hostile_options.py", "test_non_finite_and_overflowing_options_are_refused"):
        "a bad option is refused by the parser",
    ("e2e/test_run_dirs.py", "test_bench_probe_reference_is_checked_before_the_benchmark"):
        "the --probe document is refused before DuckDB starts",
    ("unit/test_own_checkout.py", "test_each_command_says_what_to_pass_inside_the_checkout"):
        "run inside dbtier's own checkout without --dir/--data/PATH: refused before anything starts",
    ("unit/test_report_mariadb.py", "test_lab_refuses_an_unknown_engine"):
        "--engines with an unknown engine is refused before the lab's run or any step",
    ("unit/test_backup_emulate.py", "test_emulate_refusals_come_before_anything_is_built"):
        "a bad --emulate is refused before the run directory, the tier or the engine",
    ("e2e/test_run_dirs.py", "test_lab_refuses_an_existing_lab_directory"):
        "the existing --out is refused before any step",
    ("unit/test_lab_steps.py", "test_the_lab_records_each_step_as_its_request_writes_it"):
        "the lab's children are replaced: its steps are recorded, none runs",
    ("unit/test_lab_steps.py", "test_skipped_steps_are_recorded_without_a_command_line"):
        "the lab's children are replaced: its steps are recorded, none runs",
    ("e2e/test_simulate_cli.py", "test_capture_without_blktrace_installed"):
        "blktrace is not on PATH",
    ("e2e/test_simulate_cli.py", "test_capture_on_tmpfs_has_no_block_device"):
        "a tmpfs has no block device to trace",
    ("e2e/test_simulate_cli.py", "test_capture_options_after_the_target_are_options"):
        "the device does not exist",
    ("e2e/test_simulate_cli.py", "test_capture_of_a_missing_target"):
        "the device does not exist",
}


def _is_engine_mark(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "engine" and isinstance(n.value, ast.Attribute)
               and n.value.attr == "mark" for n in ast.walk(node))


def _module_marked(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                 for t in s.targets) and _is_engine_mark(s.value)
               for s in tree.body)


def _unmarked_engine_tests(path: Path) -> list[str]:
    """Tests in path that mention an engine command and are neither marked nor listed."""
    source = path.read_text()
    tree = ast.parse(source)
    if _module_marked(tree):
        return []
    funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    lines = source.splitlines()
    own: dict[str, tuple[str, set[str]]] = {}      # name -> (its lines with decorators, module functions it names)
    for name, fn in funcs.items():
        first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
        own[name] = ("\n".join(lines[first - 1:fn.end_lineno]),
                     {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in funcs})

    def text(name: str) -> str:
        """The test's source with its decorators, and that of the module functions it calls (transitively)."""
        seen, todo, parts = {name}, [name], []
        while todo:
            body, calls = own[todo.pop()]
            parts.append(body)
            todo += sorted(calls - seen)
            seen |= calls
        return "\n".join(parts)

    rel = str(path.relative_to(TESTS))
    bad = []
    for name, fn in funcs.items():
        if not name.startswith("test_"):
            continue
        if any(_is_engine_mark(d) for d in fn.decorator_list):
            continue
        if ENGINE_FIXTURES & {a.arg for a in fn.args.args}:
            continue
        if _runs_an_engine(text(name)) and (rel, name) not in REFUSED_BEFORE_ANY_ENGINE:
            bad.append(f"{rel}::{name}")
    return bad


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py")
                  if p.parent != TESTS / "data" and p.resolve() != Path(__file__).resolve())  # not this file's examples


@pytest.mark.slow
def test_every_test_that_runs_an_engine_is_marked():
    bad = [t for p in _test_files() for t in _unmarked_engine_tests(p)]
    assert bad == [], ("these tests run an engine but are not marked `engine` (add `pytestmark = "
                       "pytest.mark.engine` or the decorator, or list the test in REFUSED_BEFORE_ANY_ENGINE "
                       f"with the reason it starts nothing): {bad}")


def test_the_engine_modules_are_marked_whole():
    """The e2e modules built around a real engine carry the module mark (not test by test)."""
    for name in ("test_bench_oltp", "test_bench_oltp_emulate", "test_bench_oltp_memory", "test_bench_dss_backup",
                 "test_lab", "test_tpcc_fidelity", "test_probe"):
        assert _module_marked(ast.parse((TESTS / "e2e" / f"{name}.py").read_text())), name


def _is_mark(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.value, ast.Attribute)
               and n.value.attr == "mark" for n in ast.walk(node))


@pytest.mark.slow
def test_every_property_test_is_marked_slow():
    """Hypothesis tests (@given) run hundreds of examples each: `make test` runs them, the fast tier not."""
    bad = []
    for path in _test_files():
        tree = ast.parse(path.read_text())
        module_slow = any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                            for t in s.targets) and _is_mark(s.value, "slow")
                          for s in tree.body)
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
                continue
            given = any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "given" for d in fn.decorator_list)
            if given and not module_slow and not any(_is_mark(d, "slow") for d in fn.decorator_list):
                bad.append(f"{path.relative_to(TESTS)}::{fn.name}")
    assert bad == [], f"property tests not marked slow: {bad}"


def test_the_refusal_list_names_existing_unmarked_tests():
    """A stale entry would let a renamed test through unchecked."""
    for (rel, name), why in REFUSED_BEFORE_ANY_ENGINE.items():
        tree = ast.parse((TESTS / rel).read_text())
        assert not _module_marked(tree), rel
        assert any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body), (rel, name)
        assert why


def test_the_guard_sees_an_unmarked_engine_test(tmp_path):
    """The check itself: an unmarked test running `dbtier probe` is caught; marked, it is not."""
    d = tmp_path / "tests" / "e2e"
    d.mkdir(parents=True)
    body = 'def test_x(tmp_path):\n    run_dbtier("probe", str(tmp_path), cwd=tmp_path)\n'
    (d / "test_x.py").write_text("from conftest import run_dbtier\n\n" + body)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(__import__(__name__, fromlist=["TESTS"]), "TESTS", tmp_path / "tests")
        assert _unmarked_engine_tests(d / "test_x.py") == ["e2e/test_x.py::test_x"]
        (d / "test_x.py").write_text("import pytest\n\npytestmark = pytest.mark.engine\n\n" + body)
        assert _unmarked_engine_tests(d / "test_x.py") == []
        (d / "test_x.py").write_text("def helper(p):\n    return ['bench', 'oltp']\n\n"
                                     'def test_y(tmp_path):\n    run_dbtier(*helper(tmp_path), "bench", "oltp")\n')
        assert _unmarked_engine_tests(d / "test_x.py") == ["e2e/test_x.py::test_y"]
