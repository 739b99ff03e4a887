"""Each command's terminal tables at 80 and 200 columns: `plan size` (on-prem and cloud), `history import` +
`requirement`, `show` of every kind of saved run (probe, bench oltp/dss/backup, simulate run and mrc), `compare`,
`runs`, `advise`, `simulate run --sweep` and `simulate mrc`: every figure whole (no '…' cut, no '3.61e+03' exponent),
and at 80 columns no line wider than the terminal."""

from __future__ import annotations

import pytest

from conftest import DATA, call_main
from runs_corpus import make_corpus

pytestmark = pytest.mark.slow      # each runs the CLI end to end for a second or more

AWR = DATA / "history" / "awr" / "awr_sysstat_PROD.csv"
ONPREM = ("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "10000")


SHOWN = ("probe", "probe-repeats", "oltp", "oltp-matrix", "dss", "backup", "simulate-run-read-cache", "simulate-mrc")
TRACE = DATA / "traces" / "msr-hm1.csv"


def _outputs(tmp_path, columns: int) -> dict[str, str]:
    env = {"COLUMNS": str(columns)}
    make_corpus(tmp_path / "rr")
    runs = {
        "plan": (*ONPREM, "--out", "p"),
        "cloud": (*ONPREM, "--cloud", "aws", "--instance", "auto", "--out", "c"),
        "import": ("history", "import", "--source", "awr", str(AWR), "--out", "a"),
        "requirement": ("history", "requirement", "a", "--out", "r"),
        **{f"show {k}": ("show", f"rr/{k}") for k in SHOWN},
        "compare oltp": ("compare", "rr/oltp", "rr/oltp-matrix", "--out", "c1"),
        "compare probe": ("compare", "rr/probe", "rr/probe-repeats", "--out", "c2"),
        "runs": ("runs", "--runs-dir", "rr"),
        "sweep": ("simulate", "run", str(TRACE), "--design", "read-cache", "--cache", "nvme-enterprise-3.84tb",
                  "--backing", "sas-15k-73gb", "--sweep", "--out", "s1"),
        "advise": ("advise", str(AWR), "--out", "adv"),
        "mrc": ("simulate", "mrc", str(DATA / "objects" / "cloudPhysicsIO.oracleGeneral.bin"), "--policy", "lru,fifo",
                "--out", "m1"),
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


def test_tables_fold_rather_than_cut(tmp_path):
    """What a narrow terminal changes: a table too wide goes on in a second one ("(continued)") that repeats
    its first column, and `runs` puts host, device and figures on a line under each run; at 200 columns
    neither happens."""
    narrow, wide = _outputs(tmp_path / "n", 80), _outputs(tmp_path / "w", 200)
    assert "(continued)" in narrow["compare probe"] and "(continued)" not in wide["compare probe"]
    # the sweep's figures, each under a header with its unit, and whole: 18,300 TPM (305 TPS x 60)
    assert "18,300" in narrow["show oltp"] and "p95" in narrow["show oltp"] and " ms " in narrow["show oltp"]
    assert "\n    host vm · device vda" in narrow["runs"] and "\n    host vm" not in wide["runs"]
    # a spread that a cut would end at '68,161…': whole at both widths
    for out in (narrow, wide):
        assert "68,161–70,748, n=2" in out["compare probe"]
        # the simulated cache, 0.001 GB, said in the unit its size calls for
        assert "a 1 MB lru cache" in " ".join(out["show simulate-run-read-cache"].split())
