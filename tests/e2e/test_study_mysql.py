"""The MySQL study as a check (Percona 2009: MySQL/InnoDB TPC-C-like on RAID 10 vs an SSD vs PCIe flash,
priced as TPM per dollar), tiny: the same tpcc workload on a managed MariaDB on two placements (tables and
redo together; redo on a directory of its own), then `plan value` of each run against two catalog
configurations, and the TPM/$ side by side checked by hand from the runs' TPM and the catalog's prices
(read here from the TOML files, not from the model). NOPM/TPM agrees with the mix: new-order is 45% of
transactions, 1% of them rolled back."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest

from conftest import have, run_dbtier

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"),
                                 reason="MariaDB or sysbench is not installed")]

ROOT = Path(__file__).resolve().parent.parent.parent
STUDY_PRICES = ROOT / "tests" / "data" / "catalog" / "mysql-study-2009.toml"
SHIPPED = ROOT / "src" / "dbtier" / "catalog" / "legacy.toml"
# The study's configurations: 8 x 15K SAS in RAID 10 (at its $190 a disk), one Intel X25-E.
CONFIGS = {"sas-15k-73gb:8:raid10": ("sas-15k-73gb", 8), "intel-x25e-32gb:1:jbod": ("intel-x25e-32gb", 1)}


def price_by_hand(device: str, count: int) -> float:
    """count x the device's price; --catalog's entry overrides the shipped one (devices only)."""
    for f in (STUDY_PRICES, SHIPPED):
        for d in tomllib.loads(f.read_text())["device"]:
            if d["id"] == device:
                return count * d["price_usd"]
    raise AssertionError(f"{device} is in neither catalog file")


def tpcc(d: Path, out: str, place: str) -> dict:
    r = run_dbtier("bench", "oltp", "--engine", "mariadb", "--workload", "tpcc", "--warehouses", "1",
                   "--clients", "1,2", "--duration", "2", "--warmup", "0", "--place", place, "--dir", str(d),
                   "--json", "--out", out, cwd=d)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def value(d: Path, run: str, config: str) -> dict:
    r = run_dbtier("plan", "value", "--result", run, "--config", config, "--catalog", str(STUDY_PRICES),
                   "--devices-only", "--json", "--out", f"value-{run}-{config.split(':')[0]}", cwd=d)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def check_mix(p: dict) -> None:
    """New-order ~45% of transactions (within 4 binomial sigmas), rollbacks ~1% of them, and NOPM / TPM
    the committed new-order share of what ran."""
    mix = p["mix"]
    total = sum(mix.values())
    new = mix["new_order"]
    assert total > 20, mix
    assert abs(new - 0.45 * total) <= 4 * math.sqrt(total * 0.45 * 0.55) + 1, mix
    # 1% of new orders roll back: at most a handful here, never a large share
    assert p["new_order_rollbacks"] <= 0.01 * new + 4 * math.sqrt(new * 0.01 * 0.99) + 1
    share = (new - p["new_order_rollbacks"]) / total
    assert p["nopm"] / p["tpm"] == pytest.approx(share, abs=0.05)
    assert 0.35 < p["nopm"] / p["tpm"] < 0.50


def test_tpcc_on_two_placements_priced_as_tpm_per_dollar(pg_dir):
    d = pg_dir
    a, b = d / "fast-a", d / "fast-b"
    a.mkdir()
    b.mkdir()
    runs = {"together": tpcc(d, "together", f"data={a}"),
            "redo-apart": tpcc(d, "redo-apart", f"data={a},redo={b}")}
    # where InnoDB's parts really were
    pl1, pl2 = runs["together"]["placement"], runs["redo-apart"]["placement"]
    assert str(a) in json.dumps(pl1) and str(b) not in json.dumps(pl1)
    assert str(b) in json.dumps(pl2)
    best_tpm, best_nopm = {}, {}
    for name, doc in runs.items():
        assert doc["status"] == "ok", doc.get("error")
        for p in doc["points"]:
            check_mix(p)
        best = max(doc["points"], key=lambda p: p["tps"])
        best_tpm[name], best_nopm[name] = best["tpm"], best["nopm"]
    # the side-by-side table: run x configuration, TPM/$ = the run's best TPM / the configuration's price
    table = {}
    for name in runs:
        for config, (device, count) in CONFIGS.items():
            v = value(d, name, config)
            price = price_by_hand(device, count)
            assert v["config"]["price_usd"] == pytest.approx(price)
            assert v["result"]["kind"] == "bench" and v["measured"]["tpm"] == pytest.approx(best_tpm[name])
            assert v["value"]["tpm_per_usd"] == pytest.approx(best_tpm[name] / price)
            assert v["value"]["usd_per_tpm"] == pytest.approx(price / best_tpm[name])
            # the study's "TPM" is tpcc-mysql's TpmC, new orders a minute: NOPM/$ from the same point
            assert v["value"]["nopm_per_usd"] == pytest.approx(best_nopm[name] / price)
            # the priced run's cache guard travels with the price: the verdict prices no reads from memory
            assert v["result"]["guards"] == runs[name]["guards"]
            table[name, config] = v["value"]["tpm_per_usd"]
    assert price_by_hand("sas-15k-73gb", 8) == 1520 and price_by_hand("intel-x25e-32gb", 1) == 390
    # the same run is worth 1520 / 390 times more per dollar on the one SSD than on the eight disks
    for name in runs:
        assert table[name, "intel-x25e-32gb:1:jbod"] / table[name, "sas-15k-73gb:8:raid10"] == \
            pytest.approx(1520 / 390)
