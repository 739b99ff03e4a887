"""`plan size` (on-prem and cloud) and `history import` + `requirement` at 80 and 200 columns: every
figure whole (no '…' cut, no '3.61e+03' exponent), and at 80 columns no line wider than the terminal."""

from __future__ import annotations

import pytest

from conftest import DATA, call_main

pytestmark = pytest.mark.slow      # each runs the CLI end to end for a second or more

AWR = DATA / "history" / "awr" / "awr_sysstat_PROD.csv"
ONPREM = ("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "10000")


def _outputs(tmp_path, columns: int) -> dict[str, str]:
    env = {"COLUMNS": str(columns)}
    runs = {
        "plan": (*ONPREM, "--out", "p"),
        "cloud": (*ONPREM, "--cloud", "aws", "--instance", "auto", "--out", "c"),
        "import": ("history", "import", "--source", "awr", str(AWR), "--out", "a"),
        "requirement": ("history", "requirement", "a", "--out", "r"),
    }
    out = {}
    for name, args in runs.items():      # in order: requirement reads the import's run
        r = call_main(*args, cwd=tmp_path, env=env)
        assert r.returncode == 0, (name, r.stderr)
        out[name] = r.stdout
    return out


@pytest.mark.parametrize("columns", [80, 200])
def test_figures_are_whole_at_any_width(tmp_path, columns):
    for name, text in _outputs(tmp_path, columns).items():
        assert "…" not in text, (name, text)
        assert "e+0" not in text and "e-0" not in text, (name, text)
        if columns == 80:
            wide = [line for line in text.splitlines() if len(line) > 80]
            assert wide == [], (name, wide)


def test_units_said_at_80_columns(tmp_path):
    out = _outputs(tmp_path, 80)
    # AWR snapshots an hour apart: the interval said in hours, not '3.6e+03-s'
    assert "1-hour intervals" in out["import"] and "1-hour intervals" in out["requirement"]
    # the PROD sample writes ~150 GB a day: said in GB, not as a fraction of a TB
    assert " GB/day" in out["requirement"] and "TB/day (" not in out["requirement"]
    assert "(years)" in out["plan"]
    # the cloud designs keep whole words: 'volumes' and 'sized by' are not cut or folded a word a line
    assert "volumes" in out["cloud"] and "sized by" in out["cloud"]
