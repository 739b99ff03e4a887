"""Option parsing: sizes, durations, numbers, time zones, DSNs; rich and Markdown escaping of names.

Expected values are worked by hand (the comment beside each row); the property tests compare the
parsers with small reference parsers written differently (character scans and Decimal arithmetic).
"""

from __future__ import annotations

import argparse
import io
import re
import zoneinfo
from contextlib import redirect_stderr
from decimal import Decimal

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from dbtier.cli import options as opt
from dbtier.cli import settings_options as pgopt
from dbtier.cli.main import build_parser
from dbtier.cli.markup import esc, lit
from dbtier.core.units import UnitError, parse_duration, parse_float, parse_int, parse_size
from dbtier.report.markdown import _code, _md, render_markdown
from dbtier.workloads.dsn import check_dsn, dsn_problem, redact_dsn, shown_dsn

INT64_MAX = 9223372036854775807     # 2^63 - 1

# -- sizes -------------------------------------------------------------------------------------------

SIZES = [
    ("4k", 4096),                       # 4 x 1024
    ("8K", 8192),
    ("8KiB", 8192), ("8KB", 8192), ("8kb", 8192), ("8kib", 8192),   # KiB and KB alike (binary)
    ("1M", 1048576),                    # 1024^2
    ("64M", 67108864),                  # 64 x 1048576
    ("2G", 2147483648),                 # 2 x 1024^3
    ("1.5G", 1610612736),               # 1.5 x 1073741824
    ("1T", 1099511627776),              # 1024^4
    ("0.1k", 102),                      # 102.4 bytes, rounded down
    (".5k", 512),
    ("8.", 8),
    ("512", 512), ("512b", 512), ("512B", 512),
    (" 4 K ", 4096),                    # spaces around and between
    ("0", 0),
    ("8388607T", 9223370937343148032),  # 8388607 x 2^40, just under 2^63
    ("9223372036854775807", INT64_MAX),
]

BAD_SIZES = ["", " ", "infK", "nanM", "inf", "NaN", "1e400", "1e3", "-1G", "+1G", "²", "٣", "١٢K", "１２",
             "1_000", "1e30T", "8388608T", "9223372036854775808", "4kk", "4 x", "0x10", "1,5G", "4kbit", "k", ".",
             "1..5K", "4 k b", "9" * 31]


@pytest.mark.parametrize("text,expected", SIZES)
def test_parse_size_table(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", BAD_SIZES)
def test_parse_size_refuses(text):
    with pytest.raises(UnitError) as e:
        parse_size(text)
    assert repr(text) in str(e.value)


def test_parse_size_reasons():
    with pytest.raises(UnitError, match="not a finite size"):
        parse_size("infK")
    with pytest.raises(UnitError, match="cannot be negative"):
        parse_size("-1G")
    with pytest.raises(UnitError, match="too large"):
        parse_size("100000000T")          # 10^8 x 2^40 > 2^63


# -- durations and numbers -----------------------------------------------------------------------------

DURATIONS = [("90", 90.0), ("90s", 90.0), ("90sec", 90.0), ("10m", 600.0), ("15min", 900.0), ("1.5h", 5400.0),
             ("1hr", 3600.0), ("2d", 172800.0), ("1day", 86400.0), (".5m", 30.0), ("0", 0.0), ("3600", 3600.0),
             ("10 M", 600.0)]
BAD_DURATIONS = ["", "nan", "inf", "-1", "+1", "1e3", "٣s", "²", "1_0", "10 x", "1w", "s", "1.5.5h"]


@pytest.mark.parametrize("text,expected", DURATIONS)
def test_parse_duration_table(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", BAD_DURATIONS)
def test_parse_duration_refuses(text):
    with pytest.raises(UnitError):
        parse_duration(text)


FLOATS = [("12", 12.0), ("-0.5", -0.5), ("1e6", 1e6), (".5", 0.5), ("5.", 5.0), ("+3", 3.0), ("1e308", 1e308),
          ("1E-3", 0.001), (" 7 ", 7.0)]
BAD_FLOATS = ["nan", "NaN", "-inf", "Infinity", "1e400", "1_0", "٣", "0x1p3", "", "1e", "e5", "--1", "1.2.3"]


@pytest.mark.parametrize("text,expected", FLOATS)
def test_parse_float_table(text, expected):
    assert parse_float(text) == expected


@pytest.mark.parametrize("text", BAD_FLOATS)
def test_parse_float_refuses(text):
    with pytest.raises(UnitError):
        parse_float(text)


@pytest.mark.parametrize("text,expected", [("0", 0), ("-7", -7), ("+7", 7), ("9223372036854775807", INT64_MAX),
                                           ("-9223372036854775808", -INT64_MAX - 1)])
def test_parse_int_table(text, expected):
    assert parse_int(text) == expected


@pytest.mark.parametrize("text", ["9223372036854775808", "-9223372036854775809", "1" * 400, "1.0", "1e3", "٣",
                                  "²", "1_000", "", "nan"])
def test_parse_int_refuses(text):
    with pytest.raises(UnitError):
        parse_int(text)


# -- the argparse types ----------------------------------------------------------------------------------

def _conv(fn, text):
    try:
        return fn(text)
    except argparse.ArgumentTypeError as exc:
        return f"ERR {exc}"


@pytest.mark.parametrize("fn,text,expected", [
    (opt.positive_float(), "2.5", 2.5),
    (opt.positive_float(), "0", "ERR must be a positive number, got 0"),
    (opt.positive_float(), "1e13", "ERR must be at most 1e+12, got 1e13"),
    (opt.positive_float(), "nan", "ERR 'nan' is not a finite number"),
    (opt.nonneg_float(), "0", 0.0),
    (opt.nonneg_float(), "-0.1", "ERR must be 0 or more, got -0.1"),
    (opt.fraction(), "1", 1.0),
    (opt.fraction(), "1.01", "ERR must be between 0 and 1, got 1.01"),
    (opt.positive_int(10), "10", 10),
    (opt.positive_int(10), "11", "ERR must be at most 10, got 11"),
    (opt.positive_int(), "0", "ERR must be at least 1, got 0"),
    (opt.positive_int(), "99999999999999999999", "ERR '99999999999999999999' does not fit in 64 bits"),
    (opt.port(), "65535", 65535),
    (opt.port(), "65536", "ERR must be between 1 and 65535, got 65536"),
    (opt.int_list(1, 100), "1,2,,4", [1, 2, 4]),
    (opt.int_list(1, 100), "1,0", "ERR must be at least 1, got 0"),
    (opt.int_list(1, 100), ",", "ERR ',' holds no numbers (a comma-separated list, e.g. 1,2,4)"),
    (opt.float_list(keep=("auto",)), "auto", "auto"),
    (opt.float_list(keep=("auto",)), "1,2.5", (1.0, 2.5)),
    (opt.size(), "8K", 8192),
    (opt.size(), "0", "ERR must be at least 1, got 0"),
    (opt.size(1, 2**30), "2G", "ERR must be at most 1073741824, got 2G"),
    (opt.duration(0, 3600), "1h", 3600.0),
    (opt.duration(0, 3600), "0", "ERR must be positive, got 0"),
    (opt.duration(0, 3600, lo_open=False), "0", 0.0),
    (opt.side_time(("fast", "slow")), "fast@10m", ("fast", 600.0)),
    (opt.side_time(("fast", "slow")), "up@10m", "ERR 'up@10m': unknown side 'up' (fast or slow)"),
    (pgopt.pg_memory(128, 2**30, plain_kb=8), "128MB", "128MB"),
    (pgopt.pg_memory(128, 2**30, plain_kb=8), "16", "16"),          # 16 pages of 8 kB = 128 kB
    (pgopt.pg_memory(128, 2**30, plain_kb=8), "15", "ERR '15' must be between 128kB and 1TB"),
    (pgopt.pg_time(30, 86400), "5min", "5min"),
    (pgopt.pg_time(30, 86400), "2d", "ERR '2d' must be between 30 s and 86400 s"),
])
def test_option_types(fn, text, expected):
    got = _conv(fn, text)
    if isinstance(expected, str) and expected.startswith("ERR"):
        assert isinstance(got, str) and got.startswith(expected), got
    else:
        assert got == expected


@pytest.mark.parametrize("text", ["1G", "1gb", "128 mb", "1GB'; DROP TABLE x; --", "nanMB", "1e3MB", "", "MB"])
def test_pg_memory_refuses_what_postgresql_does_not_take(text):
    assert str(_conv(pgopt.pg_memory(64, 2**31), text)).startswith("ERR")


def _parse(argv):
    """The real dbtier parser: (namespace, None) or (None, stderr) after exit 2."""
    err = io.StringIO()
    with redirect_stderr(err):
        try:
            return build_parser().parse_args(argv), None
        except SystemExit as exc:
            assert exc.code == 2
            return None, err.getvalue()


@pytest.mark.parametrize("argv,option", [
    (["bench", "oltp", "--duration", "nan"], "--duration"),
    (["bench", "oltp", "--clients", "1,inf"], "--clients"),
    (["bench", "oltp", "--warehouses", "1" * 30], "--warehouses"),
    (["bench", "dss", "--scale", "1e400"], "--scale"),
    (["bench", "dss", "--memory-limit", "1GB'"], "--memory-limit"),
    (["bench", "backup", "--to", ".", "--port", "0"], "--port"),
    (["plan", "budget", "--usd", "inf", "--devices", "x"], "--usd"),
    (["plan", "size", "--headroom", "-1"], "--headroom"),
    (["plan", "size", "--max-devices", "٣"], "--max-devices"),
    (["history", "requirement", "r", "--capacity-gb", "1e308"], "--capacity-gb"),
    (["history", "import", "-s", "iostat", "f", "--top", "0"], "--top"),
    (["probe", ".", "--size", "infK"], "--size"),
    (["probe", ".", "--margin-pct", "nan"], "--margin-pct"),
    (["simulate", "run", "t", "--design", "single", "--block-size", "²"], "--block-size"),
    (["simulate", "run", "t", "--design", "single", "--sweep", "1,-2"], "--sweep"),
    (["simulate", "run", "t", "--design", "single", "--fail", "fast@inf"], "--fail"),
    (["simulate", "capture", "/dev/x", "--duration", "-1"], "--duration"),
    (["plan", "size", "--read-iops=--"], "--read-iops"),       # argparse would store [] (found by Hypothesis)
    (["simulate", "run", "t", "--design", "single", "--restart-at=--"], "--restart-at"),
])
def test_bad_options_name_the_option_in_dbtier_format(argv, option):
    ns, err = _parse(argv)
    assert ns is None
    assert err.startswith(f"dbtier: error: {option}: ") or err.startswith(f"dbtier: error: {option} must "), err
    assert "\n  next: see `dbtier " in err and "Traceback" not in err


def test_valid_options_parse_to_numbers():
    ns, _ = _parse(["bench", "oltp", "--clients", "4,1,2", "--duration", "1.5m", "--port", "5433"])
    assert ns.clients == [4, 1, 2] and ns.duration == 90.0 and ns.port == 5433
    ns, _ = _parse(["simulate", "run", "t", "--design", "single"])
    assert ns.block_size == 8192 and ns.region_size is None   # string defaults parsed too; the region follows --tracking


# -- time zones ------------------------------------------------------------------------------------------

def _zoneinfo_ok(name):
    try:
        zoneinfo.ZoneInfo(name)
        return True
    except Exception:
        return False


def _duckdb_ok(name):
    with duckdb.connect() as con:
        try:
            con.execute("SELECT CAST(timezone(?, TIMESTAMP '2000-01-01') AS VARCHAR)", [name]).fetchone()
            return True
        except duckdb.Error:
            return False


CANDIDATES = ["localtime", "posixrules", "Factory", "EST5EDT", "US/Pacific-New", "utc", "europe/paris", "right/UTC",
              "Canada/East-Saskatchewan", "PST"]


def test_a_zone_only_zoneinfo_knows_is_refused_naming_duckdb():
    only = [z for z in CANDIDATES if _zoneinfo_ok(z) and not _duckdb_ok(z)]
    if not only:
        pytest.skip("no zone here that zoneinfo accepts and DuckDB refuses")
    for z in only:
        assert opt.zone_problem(z) == "not a time zone DuckDB knows"


def test_a_zone_only_duckdb_knows_is_refused_naming_zoneinfo():
    only = [z for z in CANDIDATES if _duckdb_ok(z) and not _zoneinfo_ok(z)]
    if not only:
        pytest.skip("no zone here that DuckDB accepts and zoneinfo refuses")
    for z in only:
        assert opt.zone_problem(z) == "not a time zone Python's zoneinfo knows"


@pytest.mark.parametrize("name", ["UTC", "Europe/Paris", "America/New_York", "Etc/GMT+5"])
def test_zones_both_know_are_accepted(name):
    assert opt.zone()(name) == name


@pytest.mark.parametrize("name", ["", "Garbage/Zone", "../etc/passwd", "Europe", "UTC\x00", "x" * 200, "+05:00"])
def test_garbage_zones_are_refused(name):
    assert str(_conv(opt.zone(), name)).startswith("ERR")


def test_zone_option_named_is_the_one_given():
    _, err = _parse(["history", "import", "-s", "iostat", "f", "--profile-tz", "Garbage/Zone"])
    assert err.startswith("dbtier: error: --profile-tz: 'Garbage/Zone'"), err
    _, err = _parse(["history", "import", "-s", "iostat", "f", "--tz", "utc"])
    assert err.startswith("dbtier: error: --tz: 'utc'") and "did you mean UTC?" in err, err


# -- DSN -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dsn,problem", [
    ("foo", 'missing "=" after "foo" in connection info string'),
    ("dbname='unterminated", "unterminated quoted string in connection info string"),
    ("host=x badopt=1", 'invalid connection option "badopt"'),
    ("   ", "an empty connection string (leave --dsn out to use the managed cluster)"),
])
def test_malformed_dsn_problem(dsn, problem):
    assert dsn_problem(dsn) == problem


@pytest.mark.parametrize("dsn", ["host=127.0.0.1 port=5432 dbname=postgres", "postgresql://u@h/db", "host="])
def test_parsable_dsn_has_no_problem(dsn):
    assert dsn_problem(dsn) is None and check_dsn(dsn) == dsn


@pytest.mark.parametrize("dsn,shown", [
    ("host=x password=s3cret", "host=x password=***"),
    ("host=x password='s3 cret' user=u", "host=x password=*** user=u"),
    ("postgresql://u:s3cret@h/db", "postgresql://u:***@h/db"),
    ("postgresql://:s3cret@h/db", "postgresql://:***@h/db"),            # no user name before the colon
    ("postgresql://h/db?password=s3cret&sslmode=disable", "postgresql://h/db?password=***"),
    (r"host=x password=s3\ cret", "host=x password=*** ..."),           # an escaped space: cut, not half shown
    ("host=x user=u", "host=x user=u"),
])
def test_redact_dsn_never_shows_the_password(dsn, shown):
    assert redact_dsn(dsn) == shown


@pytest.mark.parametrize("dsn", ["host=x password=my secret", "password='s3cret", "postgresql://u:s3 cret@h",
                                 "host=x PASSWORD=s3cret junk"])
def test_malformed_dsn_message_never_shows_the_password(dsn):
    from dbtier.core.errors import DbtierError
    with pytest.raises(DbtierError) as e:
        check_dsn(dsn)
    text = str(e.value)
    assert "--dsn" in text and "cret" not in text, text
    assert "cret" not in shown_dsn(dsn)


# -- terminal markup ------------------------------------------------------------------------------------------

HOSTILE = ["[red]", "[/x]", "[bold", "[/]", "a\\", "[link=http://x]y", "db[1]", "\\[red]", "[@click]z"]


@pytest.mark.parametrize("name", HOSTILE)
def test_esc_and_lit_show_names_literally(name):
    con = Console(width=200, record=True, file=io.StringIO())
    con.print(f"[dim]{esc(name)}[/dim]|")
    t = Table("name")
    t.add_row(lit(name))
    con.print(t)
    text = con.export_text()
    assert text.splitlines()[0] == f"{name}|"
    assert name in "\n".join(text.splitlines()[1:])         # the table cell


# -- Markdown ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("pg_basebackup tar", "pg_basebackup tar"),                       # intraword _ stays
    ("<script>alert(1)</script>", "\\<script>alert(1)\\</script>"),
    ("a|b", "a\\|b"),
    ("`rm -rf`", "\\`rm -rf\\`"),
    ("*bold* _it_", "\\*bold\\* \\_it\\_"),
    ("[x](http://y)", "\\[x\\](http://y)"),
    ("&lt; R&D", "\\&lt; R&D"),                                         # entities only
    ("two\nlines", "two lines"),
])
def test_md_escape(text, expected):
    assert _md(text) == expected


def test_code_span_fence_is_longer_than_backticks_inside():
    assert _code("runs/a") == "`runs/a`"
    assert _code("a`b") == "``a`b``"
    assert _code("`x") == "`` `x ``"


def test_markdown_report_keeps_names_from_documents_as_text():
    doc = {"command": "probe", "status": "failed", "started_at": "2024-01-01T00:00:00Z",
           "_run_dir": "runs/ev`il", "params": {}, "targets": [],
           "errors": [{"message": "<script>alert(1)</script> | `x` *y*"}],
           "machine": {"hostname": "<img src=x onerror=alert(1)>", "os": "a|b", "targets": [{"path": "/d`b"}]}}
    md = render_markdown([doc])
    assert not re.search(r"(?<!\\)<(script|img)", md)             # every < from the document is escaped
    assert "> **Error:** \\<script>alert(1)\\</script> \\| \\`x\\` \\*y\\*" in md
    assert "``runs/ev`il``" in md and "``/d`b``" in md
    assert "- **\\<img src=x onerror=alert(1)>**: a\\|b" in md


# -- property tests ----------------------------------------------------------------------------------------------

# A reference for each parser, written as a scan plus Decimal arithmetic rather than a regular expression.
_SIZE_UNITS = {"": 1, "b": 1, **{u + s: 1024 ** (i + 1) for i, u in enumerate("kmgt") for s in ("", "b", "ib")}}
_DUR_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400, "day": 86400}


def _split_number(text):
    t = text.strip()
    i = 0
    while i < len(t) and t[i] in "0123456789.":
        i += 1
    num, rest = t[:i], t[i:].strip().lower()
    if num.count(".") > 1 or not any(c in "0123456789" for c in num) or len(num) > 30:
        return None
    return num, rest


def ref_size(text):
    sp = _split_number(text)
    if sp is None or sp[1] not in _SIZE_UNITS:
        return None
    n = int(Decimal(sp[0]) * _SIZE_UNITS[sp[1]])      # int() of a positive Decimal rounds down
    return n if n <= INT64_MAX else None


def ref_duration(text):
    sp = _split_number(text)
    if sp is None or sp[1] not in _DUR_UNITS:
        return None
    return float(Decimal(sp[0])) * _DUR_UNITS[sp[1]]


ALPHABET = st.sampled_from(list("0123456789.,-+eE kKmMgGtTbBiIsShHdD@_") + ["nan", "inf", "min", "sec", "day",
                           "²", "٣", "１", "\u2003", "\x00", "fast", "slow"])
TEXT = st.lists(ALPHABET, max_size=12).map("".join)


@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_parse_size_matches_reference(text):
    expected = ref_size(text)
    try:
        got = parse_size(text)
    except UnitError:
        assert expected is None, (text, expected)
        return
    assert got == expected, text


@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_parse_duration_matches_reference(text):
    expected = ref_duration(text)
    try:
        got = parse_duration(text)
    except UnitError:
        assert expected is None, (text, expected)
        return
    assert got == pytest.approx(expected, rel=1e-12), text


# Each option: (argv before the value, the option, a reference for what it must parse to or None).
def _ref_float(lo, hi, lo_open=False, hi_open=False):
    def ref(text):
        t = text.strip()
        if not t or any(c not in "0123456789.+-eE" for c in t) or re.search(r"[eE][+-]?\d{5}", t):
            return None
        try:
            v = float(t)
        except ValueError:
            return None
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        return v if ok else None
    return ref


def _ref_int(lo, hi):
    def ref(text):
        t = text.strip()
        body = t[1:] if t[:1] in "+-" else t
        if not body or any(c not in "0123456789" for c in body):
            return None
        v = int(t)
        return v if lo <= v <= hi else None
    return ref


def _ref_in(ref, lo, hi, lo_open=False):
    def f(text):
        v = ref(text)
        return None if v is None or not ((v > lo if lo_open else v >= lo) and v <= hi) else v
    return f


OPTIONS = [
    (["bench", "oltp"], "--duration", "duration", _ref_in(ref_duration, 0, 7 * 86400, lo_open=True)),
    (["bench", "oltp"], "--rate", "rate", _ref_float(0, 1e9, lo_open=True)),
    (["bench", "oltp"], "--warehouses", "warehouses", _ref_int(1, 100_000)),
    (["plan", "budget", "--devices", "x"], "--usd", "usd", _ref_float(0, 1e12, lo_open=True)),
    (["plan", "size"], "--hit-ratio", "hit_ratio", _ref_float(0, 1)),
    (["history", "requirement", "r"], "--headroom", "headroom", _ref_float(0, 10)),
    (["probe", "."], "--size", "size", _ref_in(ref_size, 1, INT64_MAX)),
    (["probe", "."], "--margin-pct", "margin_pct", _ref_float(0, 100, hi_open=True)),
    (["simulate", "run", "t", "--design", "single"], "--block-size", "block_size", _ref_in(ref_size, 1, 2**30)),
    (["simulate", "run", "t", "--design", "single"], "--restart-at", "restart_at",
     lambda t: None if (v := _ref_in(ref_duration, 0, 1e9)(t)) is None else [v]),
]


@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=400, deadline=None)
@given(st.sampled_from(OPTIONS), TEXT)
def test_every_option_parses_to_the_reference_or_names_itself(option, text):
    """Through the real parser: `--opt=VALUE` is either the reference value, or exit 2 with
    `dbtier: error: --opt: ...` on stderr; never another exception."""
    before, flag, dest, ref = option
    if "\x00" in text:
        text = text.replace("\x00", "")
    expected = ref(text)
    ns, err = _parse([*before, f"{flag}={text}"])
    if ns is None:
        assert expected is None, (text, expected, err)
        assert err.startswith((f"dbtier: error: {flag}: ", f"dbtier: error: {flag} must ")), err
    else:
        got = getattr(ns, dest)
        assert expected is not None, (text, got)
        assert got == pytest.approx(expected, rel=1e-12), text
