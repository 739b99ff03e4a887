"""Property tests of the postgres reader on psql's output (Hypothesis): any input gives a DbtierError naming
the file, or a sane result; never another exception, never a hang.

1. **Valid output gives the hand-worked figures.** pg_stat_database snapshots of a few databases printed in
   one of psql's formats (aligned, -A with several -F, --csv, \\x aligned and unaligned), timed by \\watch
   headers, a now() column or --interval: the peak read IOPS is the largest sum of blks_read deltas / 60 s.
2. **The real captures damaged.** A line deleted, repeated or cut, a character replaced, the file cut
   anywhere.
3. **Any text**, and any text as a time (parse_time raises ValueError only).
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, with_timeout
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.sources import psql
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

pytestmark = pytest.mark.slow  # property tests (Hypothesis): `make test` runs them, `make test-fast` does not

SCALE = int(os.environ.get("DBTIER_HYPOTHESIS_SCALE", "1"))
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                derandomize=SCALE == 1)
VALID = settings(max_examples=25 * SCALE, **SETTINGS)
BAD = settings(max_examples=60 * SCALE, **SETTINGS)
P = DATA / "history" / "psql"
CAPTURES = sorted(p for p in P.iterdir() if p.suffix in (".txt", ".csv"))
T0 = dt.datetime(2026, 11, 28, 15, 0, 0)


def run(text: str | bytes, **opts) -> dict | None:
    """The reader on `text` saved to a file: its summary, or None after a DbtierError (never anything else)."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "out.txt"
        f.write_bytes(text if isinstance(text, bytes) else text.encode())

        def call() -> dict | None:
            con = connect()
            try:
                return summarise_import(con, read(con, "postgres", [str(f)], ReadOptions(**opts)))
            except DbtierError as exc:
                assert str(f) in str(exc) or "--" in str(exc) or "no intervals" in str(exc) or "no files" in str(exc), exc
                return None
            finally:
                con.close()
        return with_timeout(call, 60, "postgres reader on psql output")


# -- 1. valid output ---------------------------------------------------------------------------------------

def _aligned(cols: list[str], rows: list[list[str]]) -> str:
    w = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    head = "|".join(f" {c.center(w[i])} " for i, c in enumerate(cols))
    rule = "+".join("-" * (w[i] + 2) for i in range(len(cols)))
    body = ["|".join(f" {v.rjust(w[i]) if v[:1].isdigit() else v.ljust(w[i])} " for i, v in enumerate(r))
            for r in rows]
    n = len(rows)
    return "\n".join([head, rule, *body, f"({n} row{'s' if n != 1 else ''})", ""]) + "\n"


def _expanded(cols: list[str], rows: list[list[str]], sep: str | None) -> str:
    out = []
    w = max(len(c) for c in cols)
    for k, r in enumerate(rows, 1):
        if sep is None:
            out.append(f"-[ RECORD {k} ]" + "-" * max(1, w - 10) + "+------")
            out += [f"{c.ljust(w)} | {v}" for c, v in zip(cols, r)]
        else:
            out += [f"{c}{sep}{v}" for c, v in zip(cols, r)] + ([""] if sep != "," else [])
    return "\n".join(out) + "\n"


def render(form: str, cols: list[str], rows: list[list[str]], sep: str) -> str:
    if form == "aligned":
        return _aligned(cols, rows)
    if form == "x":
        return _expanded(cols, rows, None) + "\n"
    if form == "x-unaligned":
        return _expanded(cols, rows, "|")
    if form == "csv":
        return "\n".join([",".join(cols), *(",".join(r) for r in rows)]) + "\n"
    n = len(rows)
    return "\n".join([sep.join(cols), *(sep.join(r) for r in rows), f"({n} row{'s' if n != 1 else ''})"]) + "\n"


@st.composite
def histories(draw):
    dbs = draw(st.lists(st.sampled_from(["postgres", "app", "bench", "db_2", "template1"]), min_size=1, max_size=4,
                        unique=True))
    n = draw(st.integers(2, 5))
    steps = [[draw(st.integers(0, 10**6)) for _ in dbs] for _ in range(n - 1)]
    first = [draw(st.integers(0, 10**9)) for _ in dbs]
    form = draw(st.sampled_from(["aligned", "unaligned", "csv", "x", "x-unaligned"]))
    sep = draw(st.sampled_from(["|", ";", "\t", "#"]))
    timing = draw(st.sampled_from(["watch", "now", "interval"] if form != "csv" else ["now", "interval"]))
    return dbs, first, steps, form, sep, timing


@VALID
@given(histories())
def test_valid_output_gives_the_hand_worked_peak(h):
    dbs, first, steps, form, sep, timing = h
    counts = [first]
    for s in steps:
        counts.append([a + b for a, b in zip(counts[-1], s)])
    text = ""
    for k, snap in enumerate(counts):
        t = T0 + dt.timedelta(seconds=60 * k)
        cols = ["datid", "datname", "blks_read", "blk_read_time"]
        rows = [[str(i + 1), d, str(v), "0"] for i, (d, v) in enumerate(zip(dbs, snap))]
        if timing == "now":
            cols = ["now"] + cols
            rows = [[t.isoformat(sep=" ") + "+00"] + r for r in rows]
        if timing == "watch":
            text += t.strftime("%a %b %e %H:%M:%S %Y") + " (every 60s)\n\n"
        text += render(form, cols, rows, sep)
    opts = {"interval_s": 60, "start": T0.isoformat()} if timing == "interval" else {}
    doc = run(text, **opts)
    assert doc is not None
    peak = max(sum(s) for s in steps) / 60
    assert doc["databases"][0]["peaks"]["read_iops"]["max"] == pytest.approx(peak, rel=1e-9, abs=1e-9)
    assert doc["databases"][0]["intervals"] == len(steps)


# -- 2. the captures damaged --------------------------------------------------------------------------------

@BAD
@given(st.sampled_from(CAPTURES), st.data())
def test_damaged_captures_give_a_dbtier_error_or_a_result(path, data):
    lines = path.read_text().splitlines(keepends=True)
    how = data.draw(st.sampled_from(["delete", "repeat", "cut line", "replace", "truncate"]))
    i = data.draw(st.integers(0, len(lines) - 1))
    if how == "delete":
        del lines[i]
    elif how == "repeat":
        lines.insert(i, lines[i])
    elif how == "cut line":
        lines[i] = lines[i][:data.draw(st.integers(0, len(lines[i])))] + "\n"
    elif how == "replace" and lines[i]:
        j = data.draw(st.integers(0, len(lines[i]) - 1))
        lines[i] = lines[i][:j] + data.draw(st.characters()) + lines[i][j + 1:]
    text = "".join(lines)
    if how == "truncate":
        text = text[:data.draw(st.integers(0, len(text)))]
    opts = data.draw(st.sampled_from([{}, {"interval_s": 60, "start": "2026-11-28 15:00:00"},
                                      {"tz": "Europe/Paris"}]))
    run(text, **opts)


# -- 3. any text --------------------------------------------------------------------------------------------

PSQLISH = st.sampled_from(["|", " | ", "-", "+", "(5 rows)", "\n", " ", "datname", "blks_read", "backend_type",
                           "object", "context", "-[ RECORD 1 ]-+--", "(every 10s)", "Sat Nov 28 15:27:23 2026",
                           "now", "2026-11-28 15:27:23+00", ",", ";", "\t", "0", "12", "1e5", "-1", "nan", "\u202f"])


@BAD
@given(st.one_of(st.text(max_size=400), st.lists(PSQLISH, max_size=120).map("".join), st.binary(max_size=300)))
def test_any_text_gives_a_dbtier_error_or_a_result(text):
    run(text)
    run(text, interval_s=10, start="2026-11-28 15:00:00")


@BAD
@given(st.one_of(st.text(max_size=80), st.lists(PSQLISH, max_size=12).map("".join)), st.sampled_from([None, "DMY",
                                                                                                        "MDY"]))
def test_parse_time_raises_value_error_only(text, order):
    try:
        s = psql.parse_time(text, order)
    except ValueError:
        return
    assert isinstance(s.local, dt.datetime)
