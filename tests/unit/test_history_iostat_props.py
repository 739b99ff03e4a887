"""Hypothesis over the iostat JSON reader: any document in sysstat's skeleton (or not), the real captures cut,
flipped or shuffled, with any --interval and --start, gives intervals or one DbtierError, never a traceback.
And on well-formed reports drawn here, the intervals are exactly the reports after the first, the rates as
drawn and the times INTERVAL apart."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, with_timeout
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

pytestmark = pytest.mark.slow  # property tests (Hypothesis): `make test` runs them, `make test-fast` does not

SCALE = int(os.environ.get("DBTIER_HYPOTHESIS_SCALE", "1"))
SETTINGS = settings(max_examples=60 * SCALE, deadline=None, derandomize=SCALE == 1,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
IO = DATA / "history" / "iostat"
CAPTURES = sorted(IO.glob("*.json"))

KEYS = ["r/s", "w/s", "rkB/s", "wkB/s", "rMB/s", "wMB/s", "rsec/s", "r_await", "w_await", "await", "tps", "util",
        "disk_device", "disk-device"]
NAMES = ["vda", "sda", "sda1", "nvme0n1", "nvme0n1p2", "dm-0", "vg0-data", "loop0", "zram0", "", " ", "é"]
TIMES = ["11/28/26 15:23:06", "2026-11-28T15:23:24+0000", "11/28/2026 03:23:06 PM", "99/99/99 99:99:99",
         "2026-02-30T10:00:00", "0001-01-01T00:00:00+1400", ""]
scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), st.text(max_size=10))
value = st.recursive(scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                     max_leaves=5)
disk = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5),
                       st.one_of(st.floats(0, 1e5), st.sampled_from(NAMES), value), max_size=9)
report = st.fixed_dictionaries({}, optional={"timestamp": st.sampled_from(TIMES) | value,
                                             "avg-cpu": value, "disk": st.lists(disk, max_size=4) | value})
host = st.fixed_dictionaries({}, optional={"nodename": st.sampled_from(["vm", ""]) | value,
                                           "date": st.sampled_from(["11/28/26", "2026-11-28", "31/31/31"]) | value,
                                           "statistics": st.lists(report, max_size=5) | value})
document = st.one_of(st.fixed_dictionaries({"sysstat": st.fixed_dictionaries(
    {}, optional={"hosts": st.lists(host, max_size=2) | value})}), value)
options = st.fixed_dictionaries({
    "interval_s": st.sampled_from([None, 1.0, 60.0, 0.5, 1e8, float("inf"), float("nan"), -1.0]),
    "start": st.sampled_from([None, "09:00", "9:00", "99:99", "2026-11-28T10:00", "2026-11-28T10:00+0100", "junk",
                              "0001-01-01T00:00", "9999-12-31T23:59:59"]),
    "tz": st.sampled_from(["UTC", "Pacific/Kiritimati"]),
    "devices": st.sampled_from([None, "vda", "sda,sda1", "nosuch"])})


def outcome(path, opts: dict) -> str:
    def call():
        con = connect()
        try:
            res = read(con, "iostat", [str(path)], ReadOptions(**opts))
            summarise_import(con, res)
            return "read"
        except DbtierError as exc:
            assert str(exc).strip() and exc.hint, "a refusal says what and the next step"
            return "refused"
        finally:
            con.close()
    return with_timeout(call, 60, f"iostat reader on {path}")


@SETTINGS
@given(doc=document, cut=st.none() | st.integers(0, 4000), opts=options)
def test_any_document_is_read_or_refused(tmp_path, doc, cut, opts):
    text = json.dumps(doc, indent=1)
    p = tmp_path / "doc.json"
    p.write_text(text if cut is None else text[:cut])
    outcome(p, opts)


@SETTINGS
@given(src=st.sampled_from(CAPTURES), op=st.sampled_from(["cut", "flip", "drop", "swap"]),
       at=st.floats(0, 1), other=st.floats(0, 1), byte=st.integers(0, 255), opts=options)
def test_real_captures_damaged_are_read_or_refused(tmp_path, src, op, at, other, byte, opts):
    data = bytearray(src.read_bytes())
    i = int(at * (len(data) - 1))
    if op == "cut":
        data = data[:i]
    elif op == "flip":
        data[i] = byte
    else:
        lines = bytes(data).splitlines(keepends=True)
        a, b = int(at * (len(lines) - 1)), int(other * (len(lines) - 1))
        if op == "drop":
            del lines[a]
        else:
            lines[a], lines[b] = lines[b], lines[a]
        data = bytearray(b"".join(lines))
    p = tmp_path / src.name
    p.write_bytes(bytes(data))
    outcome(p, opts)


rate = st.floats(0, 5e4, allow_nan=False).map(lambda x: round(x, 2))


@SETTINGS
@given(reports=st.lists(st.tuples(rate, rate, rate, rate), min_size=2, max_size=8),
       step=st.sampled_from([1, 5, 60, 600]))
def test_well_formed_reports_give_the_reports_after_the_first(tmp_path, reports, step):
    stats = [{"disk": [{"disk_device": "sdb", "r/s": r, "w/s": w, "rkB/s": rk, "wkB/s": wk}]}
             for r, w, rk, wk in reports]
    p = tmp_path / "drawn.json"
    p.write_text(json.dumps({"sysstat": {"hosts": [{"nodename": "db1", "date": "2026-11-28", "statistics": stats}]}}))
    con = connect()
    read(con, "iostat", [str(p)], ReadOptions(interval_s=step, start="2026-11-28T08:00:00"))
    got = con.execute("SELECT start, \"end\", read_iops, write_iops, read_mbps, write_mbps FROM io_intervals "
                      "ORDER BY start").fetchall()
    t0 = dt.datetime(2026, 11, 28, 8)
    want = [(t0 + dt.timedelta(seconds=step * (k - 1)), t0 + dt.timedelta(seconds=step * k), r, w,
             rk * 1024 / 1e6, wk * 1024 / 1e6) for k, (r, w, rk, wk) in enumerate(reports) if k >= 1]
    assert [g[:4] for g in got] == [x[:4] for x in want]
    assert [v for g in got for v in g[4:]] == pytest.approx([v for x in want for v in x[4:]])
