"""A bounded, seeded fuzz over every history reader: mutated inputs give a result or a DbtierError,
never another exception (no traceback reaches a user)."""

from __future__ import annotations

import random
import tarfile
from pathlib import Path

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

pytestmark = pytest.mark.slow  # a fuzz: `make test` runs it, `make test-fast` does not

H = DATA / "history"
SHARED = H / "dma"   # the real DMA collections (README there)

CASES = {
    "awr": [H / "awr" / "awr_sysstat_PROD.csv", H / "awr" / "awr_iostat_filetype_PROD.csv"],
    "awr-long": [H / "awr" / "dba_hist_sysstat_FIN.csv", H / "awr" / "dba_hist_snapshot_FIN.csv"],
    "sqlserver": [H / "sqlserver" / "file_stats-sql01.csv"],
    "postgres": sorted((H / "real" / "postgres15").glob("*.csv")),
    "diskstats": [H / "real" / "diskstats-vm.txt"],
    "iostat": [H / "real" / "iostat-x-t.txt"],
    "sar": [H / "real" / "sar-d-p.txt"],
}
ROUNDS = 20
ROUNDS_DMA = 10
JUNK = ["", "x", "-1", "1e309", "NaN", "inf", "12,5", "０", '"', "||", "\t", "2024-02-30 25:61:00", "99999999999999999999999"]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True) or [""]
    op = rng.randrange(11)
    i = rng.randrange(len(lines))
    if op == 0:                                   # flip some bytes
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 5)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return b.decode("utf-8", errors="replace")
    if op == 1:                                   # drop a line
        del lines[i]
    elif op == 2:                                 # duplicate a line
        lines.insert(i, lines[i])
    elif op == 3:                                 # cut the file short
        return text[: rng.randrange(len(text) + 1)]
    elif op == 4:                                 # another delimiter on one line
        lines[i] = lines[i].replace(",", rng.choice([";", "|", "\t"])).replace(" ", ",")
    elif op == 5:                                 # junk in one field
        for sep in (",", " "):
            f = lines[i].split(sep)
            if len(f) > 1:
                f[rng.randrange(len(f))] = rng.choice(JUNK)
                lines[i] = sep.join(f)
                break
    elif op == 6:                                 # blank line
        lines.insert(i, "\n")
    elif op == 7:                                 # the first line again in the middle
        lines.insert(i, lines[0])
    elif op == 8:                                 # swap two lines
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 9:                                 # swap two numbers' digits in one line
        lines[i] = lines[i].replace("1", "9").replace("0", "")
    else:                                         # empty
        return ""
    return "".join(lines)


def _run(source: str, files: list[Path]) -> None:
    con = connect()
    try:
        res = read(con, source, [str(f) for f in files], ReadOptions())
        summarise_import(con, res)
    except DbtierError:
        pass
    finally:
        con.close()


@pytest.mark.parametrize("case", list(CASES))
def test_fuzz_reader(case, tmp_path):
    source = case.split("-")[0]
    rng = random.Random(f"dbtier-history-{case}")
    originals = CASES[case]
    for k in range(ROUNDS):
        files = []
        victim = rng.randrange(len(originals))
        for n, f in enumerate(originals):
            text = f.read_text(errors="replace")
            if n == victim:
                for _ in range(rng.randint(1, 3)):
                    text = mutate(text, rng)
            p = tmp_path / f"r{k}" / f.name
            p.parent.mkdir(exist_ok=True)
            p.write_text(text)
            files.append(p)
        try:
            _run(source, files)
        except Exception as exc:   # noqa: BLE001 - the point of the test
            pytest.fail(f"{case} round {k}: {type(exc).__name__}: {exc} (inputs in {files[0].parent})")


def test_fuzz_dma(tmp_path):
    src = tmp_path / "src"
    with tarfile.open(SHARED / "dma-oracle19c-single.tgz") as t:
        for m in t.getmembers():
            if any(k in m.name for k in ("dbahistsysstat", "awrsnapdetails", "dbsummary")):
                t.extract(m, src, filter="data")
    originals = sorted(src.rglob("opdb__*.csv"))
    rng = random.Random("dbtier-history-dma")
    for k in range(ROUNDS_DMA):
        d = tmp_path / f"r{k}"
        d.mkdir()
        victim = rng.randrange(len(originals))
        for n, f in enumerate(originals):
            text = f.read_text(errors="replace")
            if n == victim:
                text = mutate(text, rng)
            (d / f.name).write_text(text)
        try:
            _run("dma", [d])
        except Exception as exc:   # noqa: BLE001
            pytest.fail(f"dma round {k}: {type(exc).__name__}: {exc}")
