"""Numba's cache is kept per content of every module holding or lending kernels (dbtier/__init__.py): a
kernel inlining a helper from another module must not be loaded stale after a change to that helper alone.
The modules are found by reading the package, and the stamp is made when numba is first imported, not by
`import dbtier`."""

from __future__ import annotations

import pytest

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dbtier

PKG = Path(dbtier.__file__).parent


def _by_ast() -> list[str]:
    """The same set found another way: each module's imports parsed, not matched as text."""
    def file_of(dotted: str) -> str | None:
        rel = Path(*dotted.split(".")[1:])
        for cand in (rel.with_name(rel.name + ".py") if rel.parts else None, rel / "__init__.py"):
            if cand is not None and (PKG / cand).is_file():
                return cand.as_posix()
        return None

    out: set[str] = set()
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text())
        mods = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        sim_names = {f"dbtier.sim.{a.name}" for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and n.module == "dbtier.sim" for a in n.names}
        if not any(m == "numba" or m.startswith("numba.") or m == "dbtier.sim.jit" for m in mods | sim_names):
            continue
        out.add(p.relative_to(PKG).as_posix())
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "dbtier":
                out |= {file_of(f"{n.module}.{a.name}") or file_of(n.module) for a in n.names} - {None}
            elif isinstance(n, ast.Import):
                out |= {file_of(a.name) for a in n.names if a.name.split(".")[0] == "dbtier"} - {None}
    return sorted(out)


@pytest.mark.slow
def test_the_stamp_covers_every_module_with_kernels_and_what_they_import():
    found = dbtier.kernel_modules(str(PKG))
    assert found == _by_ast()
    # by hand: a kernel module in each package that has them, a helper inlined from another module (slots,
    # the policies' rules), and a module without numba that a kernel module takes constants from
    assert {"history/dense.py", "sim/jit.py", "sim/cache/kernels.py", "sim/cache/slots.py", "sim/policy/lru.py",
            "sim/mrc/kernels.py", "sim/device/latency.py", "sim/trace/csvscan.py",
            "sim/trace/batch.py"} <= set(found)
    assert "sim/simulate.py" not in found and "cli/main.py" not in found


def test_a_change_to_an_inlined_helper_alone_moves_the_cache(tmp_path):
    copy = tmp_path / "dbtier"
    for rel in dbtier.kernel_modules(str(PKG)):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PKG / rel, copy / rel)
    before = dbtier.kernel_stamp(str(copy))
    assert before == dbtier.kernel_stamp(str(PKG))          # the content, not where or when it was written
    (copy / "sim" / "other.py").write_text('"""Neither numba nor imported by a kernel module."""\n')
    assert dbtier.kernel_stamp(str(copy)) == before
    slots = copy / "sim" / "cache" / "slots.py"
    slots.write_text(slots.read_text() + "\n# a change to the table's helpers\n")
    changed = dbtier.kernel_stamp(str(copy))
    assert changed != before
    slots.unlink()
    assert dbtier.kernel_stamp(str(copy)) not in (before, changed)
    (copy / "sim" / "new_kernels.py").write_text("import numba\n")     # a new kernel module: no list to extend
    assert "sim/new_kernels.py" in dbtier.kernel_modules(str(copy))


@pytest.mark.slow
def test_the_cache_directory_is_set_when_numba_is_first_imported_and_a_users_is_kept(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    ours = str(tmp_path / ".cache" / "dbtier" / "numba" / dbtier.kernel_stamp(str(PKG)))

    def run(code: str, extra: dict | None = None) -> list[str]:
        return subprocess.run([sys.executable, "-c", code], env={**env, **(extra or {})}, capture_output=True,
                              text=True, check=True).stdout.split()

    # `import dbtier` alone (the CLI's start) reads nothing, sets nothing and makes no directory
    assert run("import dbtier, os, sys; print('NUMBA_CACHE_DIR' in os.environ, 'numba' in sys.modules)") == \
        ["False", "False"]
    assert not (tmp_path / ".cache").exists()
    seen = "import numba.core.config as c, os; print(os.environ['NUMBA_CACHE_DIR'], c.CACHE_DIR)"
    assert run("import dbtier; " + seen) == [ours, ours]
    # a module that imports numba before any other dbtier.sim module (history's kernels), and sim's own door
    assert run("import dbtier.history.dense; " + seen) == [ours, ours]
    assert run("from dbtier.sim.cache import replay; " + seen) == [ours, ours]
    mine = str(tmp_path / "mine")
    assert run("import dbtier; " + seen, {"NUMBA_CACHE_DIR": mine}) == [mine, mine]


def test_other_versions_caches_are_pruned_after_a_month_and_this_ones_kept(tmp_path):
    root = tmp_path / "numba"
    for name, age_days in (("current", 400), ("old", 31), ("recent", 29)):
        (root / name / "sim").mkdir(parents=True)
        (root / name / "sim" / "k.nbi").write_bytes(b"x")
        t = 1e9 - age_days * 86400
        os.utime(root / name, (t, t))
    dbtier.prune_kernel_caches(str(root), "current", now=1e9)
    assert sorted(p.name for p in root.iterdir()) == ["current", "recent"]
    dbtier.prune_kernel_caches(str(tmp_path / "absent"), "current")       # nothing there: nothing to do
