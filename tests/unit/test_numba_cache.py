"""Numba's cache is kept per content of every module holding or lending kernels (dbtier/__init__.py): a
kernel inlining a helper from another module must not be loaded stale after a change to that helper alone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import dbtier

PKG = Path(dbtier.__file__).parent


def test_every_module_with_kernels_is_in_the_stamp():
    uses = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                  if re.search(r"njit|@hot\b|^import numba|^from numba", p.read_text(), re.M))
    assert uses == sorted(dbtier._KERNEL_MODULES)


def test_a_change_to_an_inlined_helper_alone_moves_the_cache(tmp_path):
    copy = tmp_path / "dbtier"
    for rel in dbtier._KERNEL_MODULES:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PKG / rel, copy / rel)
    before = dbtier.kernel_stamp(str(copy))
    assert before == dbtier.kernel_stamp(str(PKG))          # the content, not where or when it was written
    slots = copy / "sim" / "cache" / "slots.py"
    slots.write_text(slots.read_text() + "\n# a change to the table's helpers\n")
    assert dbtier.kernel_stamp(str(copy)) != before
    slots.unlink()
    assert dbtier.kernel_stamp(str(copy)) not in (before, dbtier.kernel_stamp(str(PKG)))


def test_the_cache_directory_is_set_before_numba_and_a_users_is_kept(tmp_path):
    code = "import dbtier, numba.core.config as c, os; print(os.environ['NUMBA_CACHE_DIR'], c.CACHE_DIR)"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    ours, seen = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout.split()
    assert ours == seen == str(tmp_path / ".cache" / "dbtier" / "numba" / dbtier.kernel_stamp(str(PKG)))
    mine = str(tmp_path / "mine")
    out = subprocess.run([sys.executable, "-c", code], env={**env, "NUMBA_CACHE_DIR": mine}, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [mine, mine]


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
