"""`instances` and `clustered` from the samples (single-instance AWR and DMA, the two-instance FIN export and
the hand-made PRODRAC), and the DMA mean day worked by hand from the 19c collection's own numbers."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from conftest import DATA
from dbtier.history import read
from dbtier.history.store import connect
from dbtier.history.summary import requirement, summarise_import
from dbtier.history.tables import ReadOptions

AWR = DATA / "history" / "awr"
DMA19 = Path(__file__).resolve().parent.parent / "data" / "history" / "dma" / "dma-oracle19c-single.tgz"


def imp(source: str, *files, **opts):
    con = connect()
    try:
        res = read(con, source, [str(f) for f in files], ReadOptions(**opts))
        return summarise_import(con, res)
    finally:
        con.close()


def inst(doc):
    return {d["name"]: (d["instances"], d["clustered"]) for d in doc["databases"]}


@pytest.mark.slow
def test_single_instance_awr_and_dma_samples_say_one():
    assert inst(imp("awr", AWR / "awr_sysstat_PROD.csv", AWR / "awr_iostat_filetype_PROD.csv")) == {"PROD": (1, False)}
    assert inst(imp("dma", DMA19)) == {"VBOXNCDB": (1, False)}


def test_a_two_instance_rac_database_says_two_on_each_instance_series():
    """PRODRAC (hand-made from PROD with a second instance, README there): each instance is its own series,
    NAME/INSTANCE, and each says the database runs on 2 instances."""
    assert inst(imp("awr", AWR / "awr_sysstat_PRODRAC.csv")) == {"PRODRAC/1": (2, True), "PRODRAC/2": (2, True)}
    fin = imp("awr", AWR / "dba_hist_sysstat_FIN.csv", AWR / "dba_hist_snapshot_FIN.csv")
    assert inst(fin) == {"DBID 1177042553/1": (2, True), "DBID 1177042553/2": (2, True)}


def test_sources_without_instances_say_null():
    doc = imp("sqlserver", DATA / "history" / "sqlserver" / "file_stats-sql01.csv")
    assert set(inst(doc).values()) == {(None, None)}


def _extract(tgz: Path, name: str) -> list[dict[str, str]]:
    """One pipe-delimited extract of the collection as {column: text} rows (blank lines skipped)."""
    with tarfile.open(tgz) as t:
        member = next(m for m in t.getmembers() if f"opdb__{name}__" in m.name)
        lines = [l for l in t.extractfile(member).read().decode().splitlines() if l.strip()]
    head = [h.strip().lower() for h in lines[0].split("|")]
    return [dict(zip(head, (v.strip() for v in l.split("|")))) for l in lines[1:]]


@pytest.mark.slow
def test_dma_mean_day_by_hand_from_the_collection():
    """Hour h's mean rate is SUM_VALUE / SUM_SNAPS_DIFF_SECS of that hour's snapshots; the mean day is the
    sum over the 24 hours of that rate x 3,600 s. The days: all snapshots' seconds / 86,400."""
    secs = {int(r["ho"]): float(r["sum_snaps_diff_secs"]) for r in _extract(DMA19, "awrsnapdetails")}
    stats = _extract(DMA19, "dbahistsysstat")
    assert sorted(secs) == list(range(24))

    def mean_day(stat: str) -> float:
        total = {int(r["ho"]): float(r["sum_value"]) for r in stats if r["stat_name"] == stat}
        return sum(total[h] / secs[h] * 3600 for h in range(24)) / 1e12

    write, rd = mean_day("physical write total bytes"), mean_day("physical read total bytes")
    # hour 00 alone, from the file: 2,288,305,664 bytes written over 24,410 s of snapshots
    assert secs[0] == 24410 and [r["sum_value"] for r in stats if r["ho"] == "00"
                                 and r["stat_name"] == "physical write total bytes"] == ["2288305664"]
    doc = {"command": "history", "params": {"action": "import"}, "_run_dir": None, **imp("dma", DMA19)}
    req, source = requirement(doc, "95", 0.3)
    assert req["write_tb_per_day"] == pytest.approx(write, rel=1e-12)
    assert req["read_tb_per_day"] == pytest.approx(rd, rel=1e-12)
    assert req["write_days_percentile"] is None and req["write_days_counted"] == round(sum(secs.values()) / 86400) == 7
    assert source["days_method"].startswith("mean day from hour-of-day averages")
    assert req["instances"] == 1 and req["clustered"] is False
