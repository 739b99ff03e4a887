"""No default directory inside dbtier's own checkout: `bench oltp|dss|backup` and `probe` run from the source
tree without --dir/--data/PATH would write their files into it and measure whatever disk it sits on; they are
refused with what to pass. Elsewhere "." stays the default. Engine-free: the refusal comes before anything
starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_clean_error, call_main

from dbtier.cli.own_checkout import dbtier_checkout, default_dir
from dbtier.core.errors import DbtierError

REPO = Path(__file__).resolve().parents[2]


def _checkout(root: Path, name: str = "dbtier", git_file: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if git_file:   # a worktree: .git is a file naming the real git directory
        (root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n")
    else:
        (root / ".git").mkdir()
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0.1.0"\n')
    (root / "src").mkdir()
    return root


def test_a_directory_inside_a_dbtier_checkout_is_found_at_its_root(tmp_path):
    root = _checkout(tmp_path / "dbtier")
    assert dbtier_checkout(root / "src") == root and dbtier_checkout(root) == root
    assert dbtier_checkout(_checkout(tmp_path / "wt", git_file=True)) == tmp_path / "wt"
    assert dbtier_checkout(_checkout(tmp_path / "other", name="other")) is None   # another project's checkout
    (tmp_path / "plain").mkdir()
    assert dbtier_checkout(tmp_path / "plain") is None
    assert dbtier_checkout(REPO) == REPO                       # this very checkout


def test_the_default_is_refused_there_and_kept_elsewhere(tmp_path):
    root = _checkout(tmp_path / "dbtier")
    with pytest.raises(DbtierError) as e:
        default_dir(None, "--dir", "--dir /mnt/nvme/dbtier", cwd=root / "src")
    assert e.value.message.startswith("--dir: give the directory to test; the current directory is dbtier's own "
                                      f"checkout ({root})")
    assert "--dir /mnt/nvme/dbtier" in str(e.value.hint)
    assert default_dir(".", "--dir", "x", cwd=root) == "."      # given on the command line: taken as given
    assert default_dir("/mnt/x", "--dir", "x", cwd=root) == "/mnt/x"
    (tmp_path / "plain").mkdir()
    assert default_dir(None, "--dir", "x", cwd=tmp_path / "plain") == "."


@pytest.mark.parametrize("argv, flag", [
    (["bench", "oltp"], "--dir"),
    (["bench", "oltp", "--place", "wal=/tmp"], "--dir"),     # data would still land in the current directory
    (["bench", "dss"], "--data"),
    (["bench", "backup", "--to", "/tmp"], "--data"),
    (["probe"], "PATH"),
])
def test_each_command_says_what_to_pass_inside_the_checkout(tmp_path, argv, flag):
    root = _checkout(tmp_path / "dbtier")
    r = call_main(*argv, cwd=root / "src")
    assert_clean_error(r, f"{flag}: give the directory to test", "dbtier's own checkout", str(root))
    assert sorted(p.name for p in root.iterdir()) == [".git", "pyproject.toml", "src"]   # nothing written there
    assert not any((root / "src").iterdir())
