"""`dbtier catalog list|show` through the real entry point (`python -m dbtier`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import call_main

DATA = Path(__file__).resolve().parent.parent / "data" / "catalog"


def dbtier(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """In-process (`main(argv)`, 120 columns: a wide table, as in most terminals); the real process is
    tested in test_cli_contract.py."""
    return call_main(*args, cwd=tmp_path)


def ok(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    r = dbtier(tmp_path, *args)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return r


def fails(tmp_path: Path, *args: str) -> str:
    r = dbtier(tmp_path, *args)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr + r.stdout
    assert r.stderr.startswith("dbtier: error: ")
    return r.stderr


def test_list_json_prints_only_the_document_and_writes_the_run(tmp_path):
    r = ok(tmp_path, "catalog", "list", "--json", "--out", "run")
    doc = json.loads(r.stdout)
    assert doc["command"] == "catalog" and doc["status"] == "ok"
    assert doc["params"] == {"action": "list", "catalog_files": [], "kind": None}
    ids = [d["id"] for d in doc["devices"]]
    assert "sas-15k-73gb" in ids and "fusionio-iodrive-duo-1.2tb" in ids and "nvme-mu-gen4-3.2tb" in ids
    assert {o["id"] for o in doc["overheads"]} >= {"sas2-hba-pcie2-x8"}
    stored = json.loads((tmp_path / "run" / "result.json").read_text())
    assert stored["devices"] == doc["devices"]
    assert not (tmp_path / "runs").exists()


def test_list_terminal_table(tmp_path):
    r = ok(tmp_path, "catalog", "list", "--out", "run")
    for text in ("sas-15k-73gb", "fusionio-iodrive-duo-1.2tb", "185K/278K", "study", "sas2-hba-pcie2-x8"):
        assert text in r.stdout
    assert (tmp_path / "run" / "result.json").exists()


def test_list_default_run_directory_goes_under_runs_dir(tmp_path):
    ok(tmp_path, "catalog", "list", "--runs-dir", "myruns")
    (run,) = (tmp_path / "myruns").iterdir()
    assert run.name.endswith("-catalog")


def test_list_by_kind(tmp_path):
    doc = json.loads(ok(tmp_path, "catalog", "list", "--kind", "hdd", "--json", "--out", "run").stdout)
    assert doc["devices"] and {d["kind"] for d in doc["devices"]} == {"hdd"}
    assert doc["params"]["kind"] == "hdd"
    # only the overheads those devices need
    # (the 10K SAS disks take the SAS-4 HBA, the SATA nearline disks the SAS-3 one)
    assert {o["id"] for o in doc["overheads"]} == {"sas2-hba-pcie2-x8", "sas3-hba-jbod-pcie4-x8",
                                                   "sas4-hba-jbod-pcie4-x8"}


def test_list_unknown_kind_is_refused_by_argparse(tmp_path):
    r = dbtier(tmp_path, "catalog", "list", "--kind", "tape")
    assert r.returncode == 2 and "invalid choice: 'tape'" in r.stderr and "Traceback" not in r.stderr


def test_show_json(tmp_path):
    doc = json.loads(ok(tmp_path, "catalog", "show", "sas-15k-73gb", "--json", "--out", "run").stdout)
    d = doc["device"]
    assert (d["read_iops"], d["read_mbps"], d["price_usd"], d["capacity_gb"]) == (250, 100, 300, 73)
    assert "2010" in d["source"]
    assert [o["id"] for o in doc["overheads"]] == ["sas2-hba-pcie2-x8"]
    assert doc["overheads"][0]["per_devices"] == 16 and doc["overheads"][0]["max_mbps"] == 3200
    assert doc["params"] == {"action": "show", "catalog_files": [], "id": "sas-15k-73gb"}


def test_show_terminal(tmp_path):
    r = ok(tmp_path, "catalog", "show", "fusionio-iodrive-duo-1.2tb", "--out", "run")
    assert "185,000 / 278,000" in r.stdout and "1,500 / 1,100" in r.stdout and "$20,000" in r.stdout
    assert "source" in r.stdout and "no controller/enclosure overhead" in r.stdout


def test_show_unknown_id_suggests_the_closest(tmp_path):
    err = fails(tmp_path, "catalog", "show", "sas-15k-72gb", "--out", "run")
    assert "unknown device id 'sas-15k-72gb'" in err and "'sas-15k-73gb'" in err
    assert "next: run `dbtier catalog list`" in err
    assert not (tmp_path / "run").exists()  # nothing written for a failed lookup


def test_override_file_replaces_a_shipped_entry_and_adds_one(tmp_path):
    override = str(DATA / "override.toml")
    doc = json.loads(ok(tmp_path, "catalog", "list", "--catalog", override, "--json", "--out", "run").stdout)
    by_id = {d["id"]: d for d in doc["devices"]}
    assert by_id["sas-15k-73gb"]["price_usd"] == 190 and by_id["sas-15k-73gb"]["origin"] == override
    assert by_id["lab-san-lun"]["origin"] == override
    assert by_id["fusionio-iodrive-duo-1.2tb"]["origin"] == "shipped:legacy.toml"
    assert doc["catalog"]["overridden"] == {"device:sas-15k-73gb": "shipped:legacy.toml"}
    assert doc["catalog"]["files"][-1] == override
    assert doc["params"]["catalog_files"] == [override]

    shown = json.loads(ok(tmp_path, "catalog", "show", "lab-san-lun", "--catalog", override,
                          "--json", "--out", "run2").stdout)
    assert shown["device"]["read_iops"] == 8300
    assert [o["id"] for o in shown["overheads"]] == ["fc-hba-8g"]

    table = " ".join(ok(tmp_path, "catalog", "list", "--catalog", override, "--out", "run3").stdout.split())
    assert f"from {override}: sas-15k-73gb (replaces an earlier entry), lab-san-lun, fc-hba-8g" in table


def test_relative_catalog_path_is_read_from_the_working_directory(tmp_path):
    (tmp_path / "mine.toml").write_text((DATA / "override.toml").read_text())
    doc = json.loads(ok(tmp_path, "catalog", "show", "lab-san-lun", "--catalog", "mine.toml", "--json",
                        "--out", "run").stdout)
    assert doc["device"]["origin"] == "mine.toml"


@pytest.mark.parametrize("fixture, expected", [
    ("missing-field.toml", "device #1 (id 'no-latency'): missing field 'write_latency_us'"),
    ("wrong-type.toml", "device #1 (id 'quoted-number'): field 'capacity_gb' must be a number, got a string"),
    ("not-positive.toml", "device #2 (id 'zero-iops'): field 'write_iops' must be positive, got 0"),
    ("unknown-kind.toml", "device #1 (id 'tape'): unknown kind 'tape' (allowed: hdd, sata-ssd, sas-ssd, nvme, "
                          "pcie-flash, cloud-volume, shared-array)"),
    ("syntax-error.toml", "not valid TOML: "),
])
@pytest.mark.parametrize("action", [["list"], ["show", "sas-15k-73gb"]])
def test_bad_catalog_files(tmp_path, fixture, expected, action):
    path = str(DATA / fixture)
    err = fails(tmp_path, "catalog", *action, "--catalog", path, "--out", "run")
    assert f"dbtier: error: {path}: " in err
    assert expected in err
    assert "\n  next: " in err
    assert not (tmp_path / "run").exists()


def test_syntax_error_names_the_line(tmp_path):
    err = fails(tmp_path, "catalog", "list", "--catalog", str(DATA / "syntax-error.toml"))
    assert "line 5" in err


def test_missing_catalog_file(tmp_path):
    err = fails(tmp_path, "catalog", "list", "--catalog", "nope.toml", "--out", "run")
    assert "dbtier: error: catalog file nope.toml not found" in err
    assert not (tmp_path / "run").exists()


def test_json_errors_keep_stdout_empty(tmp_path):
    r = dbtier(tmp_path, "catalog", "show", "nope", "--json")
    assert r.returncode == 2 and r.stdout == "" and "unknown device id 'nope'" in r.stderr


def test_help(tmp_path):
    for args in (["catalog", "--help"], ["catalog", "list", "--help"], ["catalog", "show", "--help"]):
        r = ok(tmp_path, *args)
        assert "usage: dbtier catalog" in r.stdout
    assert "--catalog FILE" in ok(tmp_path, "catalog", "show", "--help").stdout


def test_catalog_without_action_prints_help(tmp_path):
    r = dbtier(tmp_path, "catalog")
    assert r.returncode == 2 and "list" in r.stdout and "show" in r.stdout


# -- hostile catalog files through the real entry point (issue 12) ---------------------------------------------

@pytest.mark.parametrize("action", [["catalog", "list"], ["catalog", "show", "sas-15k-73gb"],
                                    ["plan", "budget", "--usd", "1000", "--devices", "sas-15k-73gb"]])
def test_fifo_and_dev_zero_are_refused_before_opening(tmp_path, action):
    fifo = tmp_path / "cat.toml"
    os.mkfifo(fifo)
    err = fails(tmp_path, *action, "--catalog", str(fifo), "--out", "run")   # would block if it were opened
    assert f"catalog file {fifo}: a FIFO (named pipe), not a regular file" in err
    err = fails(tmp_path, *action, "--catalog", "/dev/zero", "--out", "run")
    assert "catalog file /dev/zero: a character device, not a regular file" in err
    assert not (tmp_path / "run").exists()


def test_nan_and_absurd_prices_name_the_file_entry_and_field(tmp_path):
    good = (DATA / "override.toml").read_text()
    for literal, says in (("nan", "must be a finite number, got nan"),
                          ("1e308", "must be at most 1,000,000,000 (US dollars), got 1e+308")):
        bad = tmp_path / f"{literal}.toml"
        bad.write_text(good.replace("price_usd = 190", f"price_usd = {literal}"))
        err = fails(tmp_path, "catalog", "list", "--catalog", str(bad), "--out", "run")
        assert f"{bad}: device #1 (id 'sas-15k-73gb'): field 'price_usd' {says}" in err


def test_list_and_show_carry_the_servers_ports(tmp_path):
    doc = json.loads(ok(tmp_path, "catalog", "list", "--json", "--out", "run").stdout)
    assert doc["server"]["drive_ports"] == 8 and doc["catalog"]["server"]["drive_ports"] == 8
    # the HBA/enclosure overheads supply drive ports; an array's controller pair does not
    assert {o["id"] for o in doc["overheads"] if o["after_server_ports"]} == {
        "sas2-hba-pcie2-x8", "sas3-hba-jbod-pcie4-x8", "sas4-hba-jbod-pcie4-x8", "nvme-jbof-24-pcie4"}
    r = ok(tmp_path, "catalog", "show", "intel-x25e-32gb", "--out", "run2")
    assert "server: 8 drive ports of its own" in r.stdout and "past ports" in r.stdout


def test_markup_in_a_catalog_name_is_printed_literally(tmp_path):
    p = tmp_path / "m.toml"
    p.write_text((DATA / "override.toml").read_text().replace(
        'name = "73 GB 15K RPM 2.5\\" SAS disk (Percona 2009 price)"', 'name = "[/x] [red]disk[/red]"'))
    r = ok(tmp_path, "catalog", "show", "sas-15k-73gb", "--catalog", str(p), "--out", "run")
    assert "[/x] [red]disk[/red]" in r.stdout
