"""Hostile options and names through the real `dbtier` entry point (issue 12): NaN, inf, overflow and
Unicode digits in numeric options refused before anything starts; time zones both engines know;
malformed and unreachable --dsn; names with rich markup shown literally; Markdown escaping."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

from conftest import DATA, assert_clean_error, call_main, load_doc

TRACE = DATA / "traces" / "policy-17.csv"
DISKSTATS = DATA / "history" / "real" / "diskstats-vm.txt"
IOSTAT = DATA / "history" / "real" / "iostat-x-t.txt"


def refused(tmp_path: Path, option: str, *argv: str) -> str:
    """Exit 2, one `dbtier: error: OPTION: ...` message, nothing written."""
    r = call_main(*argv, cwd=tmp_path)
    err = assert_clean_error(r)
    assert err.startswith(f"dbtier: error: {option}"), err
    assert r.returncode == 2
    assert not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()
    return err


@pytest.mark.parametrize("argv,option,needle", [
    (["plan", "size", "--read-iops", "nan"], "--read-iops", "'nan' is not a finite number"),
    (["plan", "size", "--read-iops", "1e308", "--headroom", "0.3"], "--read-iops", "must be at most"),
    (["plan", "budget", "--usd=-inf", "--devices", "sas-15k-73gb"], "--usd", "'-inf' is not a finite number"),
    (["plan", "equivalent", "--reference", "a", "--using", "b", "--read-fraction", "1e400"], "--read-fraction",
     "not a finite number"),
    (["plan", "size", "--read-iops", "100", "--max-devices", "99999999999999999999"], "--max-devices",
     "does not fit in 64 bits"),
    (["simulate", "run", str(TRACE), "--design", "single", "--device", "sas-15k-73gb", "--block-size", "infK"],
     "--block-size", "'infK' is not a finite size"),
    (["simulate", "run", str(TRACE), "--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing",
      "sas-15k-73gb", "--cache-gb", "nan"], "--cache-gb", "'nan' is not a finite number"),
    (["simulate", "run", str(TRACE), "--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing",
      "sas-15k-73gb", "--cache-gb", "1", "--restart-at", "1e400"], "--restart-at", "is not a duration"),
    (["simulate", "run", str(TRACE), "--design", "single", "--device", "sas-15k-73gb", "--region-size", "1e30T"],
     "--region-size", "is not a size"),
    (["history", "import", "-s", "diskstats", str(DISKSTATS), "--top", "٣"], "--top", "is not a whole number"),
    (["history", "consolidate", "x", "--step", "nanh"], "--step", "not a finite duration"),
    (["history", "requirement", "x", "--headroom", "inf"], "--headroom", "not a finite number"),
    (["probe", ".", "--size", "²"], "--size", "is not a size"),
    (["probe", ".", "--point-seconds", "NaN"], "--point-seconds", "not a finite duration"),
])
def test_non_finite_and_overflowing_options_are_refused(tmp_path, argv, option, needle):
    assert needle in refused(tmp_path, option, *argv)


@pytest.mark.parametrize("argv,option", [
    (["bench", "oltp", "--duration", "nan"], "--duration"),
    (["bench", "oltp", "--clients", "1,2,1e999"], "--clients"),
    (["bench", "oltp", "--warehouses", "9" * 25], "--warehouses"),
    (["bench", "oltp", "--rate", "inf"], "--rate"),
    (["bench", "oltp", "--shared-buffers", "1e3MB"], "--shared-buffers"),
    (["bench", "dss", "--scale", "1e400"], "--scale"),
    (["bench", "dss", "--memory-limit", "500MB'; SELECT 1; --"], "--memory-limit"),
    (["bench", "dss", "--threads", "0"], "--threads"),
    (["bench", "backup", "--to", ".", "--scale", "nan"], "--scale"),
    (["bench", "backup", "--to", ".", "--port", "70000"], "--port"),
])
def test_bench_with_a_bad_option_fails_before_any_engine(tmp_path, argv, option):
    refused(tmp_path, option, *argv)
    assert [p.name for p in tmp_path.iterdir()] == []       # no cluster directory, no database file


def test_top_at_its_bound_runs_and_past_it_is_refused(tmp_path):
    """--top 10000 is the largest: DuckDB's arg_max(..., n) fails from n = 10^6 (once a traceback)."""
    r = call_main("history", "import", "-s", "diskstats", str(DISKSTATS), "--top", "10000", "--json", "--out", "a",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("history", "consolidate", "a", "--top", "10000", "--step", "1m", "--json", "--out", "c",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    err = assert_clean_error(call_main("history", "import", "-s", "diskstats", str(DISKSTATS), "--top", "1000000",
                                        cwd=tmp_path))
    assert err.startswith("dbtier: error: --top must be at most 10000, got 1000000"), err


# -- time zones ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("flag,zone,needle", [
    ("--tz", "Garbage/Zone", "not a time zone Python's zoneinfo knows"),
    ("--profile-tz", "Garbage/Zone", "not a time zone Python's zoneinfo knows"),
    ("--profile-tz", "utc", "did you mean UTC?"),
])
def test_time_zone_options_name_the_option_given(tmp_path, flag, zone, needle):
    err = refused(tmp_path, flag, "history", "import", "-s", "iostat", str(IOSTAT), flag, zone, "--out", "out")
    assert needle in err and f"'{zone}'" in err


def test_zone_zoneinfo_knows_but_duckdb_does_not(tmp_path):
    import duckdb
    import zoneinfo
    for z in ("localtime", "posixrules"):
        try:
            zoneinfo.ZoneInfo(z)
        except Exception:
            continue
        try:
            duckdb.connect().execute("SELECT CAST(timezone(?, TIMESTAMP '2000-01-01') AS VARCHAR)", [z]).fetchone()
        except duckdb.Error:
            err = refused(tmp_path, "--tz", "history", "import", "-s", "iostat", str(IOSTAT), "--tz", z)
            assert "not a time zone DuckDB knows" in err
            return
    pytest.skip("no zone on this machine that zoneinfo takes and DuckDB refuses")


def test_a_zone_both_know_is_used(tmp_path):
    r = call_main("history", "import", "-s", "iostat", str(IOSTAT), "--tz", "Europe/Paris", "--profile-tz",
                   "America/New_York", "--json", "--out", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["params"]["tz"] == "Europe/Paris" and doc["params"]["profile_tz"] == "America/New_York"


# -- DSN ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dsn,needle", [
    ("foo", 'missing "=" after "foo"'),
    ("dbname='unterminated", "unterminated quoted string"),
    ("host=x nosuchoption=1", 'invalid connection option "nosuchoption"'),
    ("host=x password=my secret", "password=***"),
    ("", "an empty connection string"),
])
def test_malformed_dsn_is_refused_before_anything(tmp_path, dsn, needle):
    r = call_main("bench", "oltp", "--dsn", dsn, "--duration", "2", "--warmup", "0", cwd=tmp_path)
    err = assert_clean_error(r, "--dsn", "not a valid connection string", needle, "PGPASSWORD")
    assert "secret" not in err + r.stdout
    assert not (tmp_path / "runs").exists()


def test_unreachable_dsn_ends_the_run_failed_with_the_error(tmp_path):
    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dsn = f"host=127.0.0.1 port={port} user=alice password=s3cret-value dbname=x connect_timeout=5"
    r = call_main("bench", "oltp", "--dsn", dsn, "--workload", "tpcb", "--scale", "1", "--clients", "1",
                   "--duration", "2", "--warmup", "0", "--out", "run", cwd=tmp_path)
    err = assert_clean_error(r, "cannot connect to PostgreSQL at --dsn", f"port={port}", "Connection refused")
    doc = load_doc(tmp_path / "run")
    assert doc["status"] == "failed"
    assert "cannot connect to PostgreSQL" in doc["errors"][0]["message"]
    everything = err + r.stdout + (tmp_path / "run" / "result.json").read_text()
    assert "s3cret-value" not in everything and "password=***" in doc["params"]["dsn"]


# -- names with rich markup ------------------------------------------------------------------------------------

def test_database_name_with_markup_is_shown_literally(tmp_path):
    name = "[/x][red]db[bold"
    r = call_main("history", "import", "-s", "diskstats", str(DISKSTATS), "--database", name, "--out", "out",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert f"{name} " in r.stdout and f"{name}: " in r.stdout       # the table row and the period line
    req = call_main("history", "requirement", "out", "--database", name, "--out", "req", cwd=tmp_path)
    assert req.returncode == 0, req.stderr


def test_trace_and_run_names_with_markup_in_simulate_and_show(tmp_path):
    trace = tmp_path / "[red]trace[x].csv"
    shutil.copy(TRACE, trace)
    out = "runs/[bold]r[/x]"
    r = call_main("simulate", "run", trace.name, "--design", "single", "--device", "sas-15k-73gb", "--out", out,
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "[red]trace[x].csv" in r.stdout and f"Run: {out}" in r.stdout
    shown = call_main("show", out, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert shown.stdout.startswith("simulate · x] · ok")                # the run's name: its last path part
    r2 = call_main("simulate", "run", trace.name, "--design", "single", "--device", "sas-15k-73gb", "--out",
                    "runs/[red]named[x]", cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    shown = call_main("show", "runs/[red]named[x]", cwd=tmp_path)
    assert shown.stdout.startswith("simulate · [red]named[x] · ok"), shown.stdout


def test_catalog_names_with_markup_are_shown_literally(tmp_path):
    cat = tmp_path / "mine.toml"
    cat.write_text('[[device]]\nid = "lab-disk"\nname = "[/x] [red]disk"\nkind = "hdd"\ninterface = "sas-6g"\n'
                   'capacity_gb = 100\nprice_usd = 50\nread_iops = 200\nwrite_iops = 200\nread_mbps = 100\n'
                   'write_mbps = 100\nread_latency_us = 5000\nwrite_latency_us = 5000\n'
                   'source = "datasheet [link=http://x]y[/link]"\n')
    r = call_main("catalog", "show", "lab-disk", "--catalog", str(cat), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "lab-disk: [/x] [red]disk" in r.stdout and "datasheet [link=http://x]y[/link]" in r.stdout


def test_markdown_report_escapes_names(tmp_path):
    out = "runs/<img src=x onerror=alert(1)>|`r`"
    r = call_main("simulate", "run", str(TRACE), "--design", "single", "--device", "sas-15k-73gb", "--out", out,
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rep = call_main("report", out, "--format", "md", "--out", "rep", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## simulate · \\<img src=x onerror=alert(1)>\\|\\`r\\`" in md
    span = "`` runs/<img src=x onerror=alert(1)>|`r` ``"                 # a code span shows it as typed
    assert span in md
    assert "<img" not in md.replace("\\<img", "").replace(span, "")
    html = call_main("report", out, "--out", "rep-html", cwd=tmp_path)
    assert html.returncode == 0, html.stderr
    assert "<img src=x" not in (tmp_path / "rep-html" / "report.html").read_text()
