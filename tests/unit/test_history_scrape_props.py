"""Property tests of node_exporter's text scrapes (Hypothesis), in two parts:

1. **Any text gives scrapes or one DbtierError.** Lines drawn from the exposition's own pieces (names,
   labels with escapes, values in Go's notations, timestamps, `# TIME` lines with unix, ISO and junk
   times, HELP/TYPE comments, broken lines), and the real capture's lines shuffled, cut and doubled, go
   through the parser and the whole prometheus reader: a result or a DbtierError, never another
   exception (no traceback reaches a user).
2. **Valid scrapes give the hand-worked rate.** Increasing counters at increasing times, printed the way
   node_exporter prints them (`%g`-like `1.726093e+06` or whole numbers), with `# TIME` lines or
   millisecond timestamps: the peak read IOPS is the largest delta / seconds worked out here.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, with_timeout
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.sources import promtext
from dbtier.history.sources.prometheus import wanted
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

pytestmark = pytest.mark.slow  # property tests (Hypothesis): `make test` runs them, `make test-fast` does not

SCALE = int(os.environ.get("DBTIER_HYPOTHESIS_SCALE", "1"))
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                derandomize=SCALE == 1)
REAL = (DATA / "history" / "node_exporter" / "scrapes.prom").read_text().splitlines()

NAMES = ["node_disk_reads_completed_total", "node_disk_written_bytes_total", "node_disk_io_time_seconds_total",
         "node_boot_time_seconds", "node_load1", "instance:node_disk_reads_completed:rate1m", "go_goroutines",
         "node_disk_reads_completed", "x", "_", "node_"]
LABELS = ['', '{device="vda"}', '{device="sda1"}', '{device="dm-0",instance="db01:9100"}', '{device="v\\"d\\\\a\\n"}',
          '{device="vda",}', '{}', '{device=vda}', '{device="vda"', '{ device = "nvme0n1" }', '{a="}"}']
VALUES = ["0", "1", "1.726093e+06", "2.8105408e+07", "-1", "NaN", "+Inf", "-Inf", "1e309", "3e19", "0x10", "1_0",
          "", "12,5", "٣", ".5", "5.", "1e", "inf"]
STAMPS = ["", " 1795879396032", " 1795879396.5", " 100", " -5", " 99999999999999999999", " x", " 1795879396032 7"]
TIMES = ["1795879396", "1795879456.25", "1795879396000", "2026-11-28T15:23:16Z", "2026-11-28 15:24:16",
         "2026-11-28T15:25:16+01:00", "0", "yesterday", "", "1e10", "2026-02-30T00:00:00Z", "9" * 30]


def sample_line() -> st.SearchStrategy[str]:
    return st.builds(lambda n, lab, v, ts, sp: f"{n}{lab}{sp}{v}{ts}", st.sampled_from(NAMES), st.sampled_from(LABELS),
                     st.sampled_from(VALUES), st.sampled_from(STAMPS), st.sampled_from([" ", "\t", "  ", ""]))


def any_line() -> st.SearchStrategy[str]:
    return st.one_of(
        sample_line(),
        st.sampled_from(TIMES).map(lambda t: f"# TIME {t}"),
        st.sampled_from(["# HELP node_disk_reads_completed_total Reads.", "# TYPE node_disk_reads_completed_total counter",
                         "# EOF", "#", "", "   ", "# TIME", "# TIMEX 5"]),
        st.sampled_from(REAL),
        st.text(max_size=40),
    )


def run(paths, **opts):
    def call():
        con = connect()
        try:
            return summarise_import(con, read(con, "prometheus", [str(p) for p in paths], ReadOptions(**opts)))
        finally:
            con.close()
    return with_timeout(call, 60, f"prometheus reader on {paths}")


@settings(max_examples=60 * SCALE, **SETTINGS)
@given(lines=st.lists(any_line(), min_size=1, max_size=30), tz=st.sampled_from(["UTC", "Europe/Paris"]))
def test_any_text_gives_scrapes_or_one_error(tmp_path, lines, tz):
    f = tmp_path / "scrapes.prom"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        promtext.read_all([f], wanted, ReadOptions(tz=tz))
    except DbtierError as exc:
        assert str(f) in exc.message or "one scrape" in exc.message
    try:
        run([f], tz=tz)
    except DbtierError:
        pass


@settings(max_examples=25 * SCALE, **SETTINGS)
@given(data=st.data())
def test_real_lines_cut_shuffled_and_doubled(tmp_path, data):
    lines = list(REAL)
    op = data.draw(st.sampled_from(["cut", "shuffle", "double", "drop"]))
    if op == "cut":
        lines = lines[: data.draw(st.integers(1, len(lines)))]
        lines[-1] = lines[-1][: data.draw(st.integers(0, len(lines[-1])))]
    elif op == "shuffle":
        lines = data.draw(st.permutations(lines[:80])) + lines[80:]
    elif op == "double":
        i = data.draw(st.integers(0, len(lines) - 1))
        lines.insert(i, lines[i])
    else:
        del lines[data.draw(st.integers(0, len(lines) - 1))]
    f = tmp_path / "real.prom"
    f.write_text("\n".join(lines) + "\n")
    try:
        run([f])
    except DbtierError:
        pass


def _fmt(v: int, style: str) -> str:
    return f"{float(v):.6e}" if style == "e" else str(v)


@settings(max_examples=30 * SCALE, **SETTINGS)
@given(steps=st.lists(st.tuples(st.integers(1, 600), st.integers(0, 10**6)), min_size=1, max_size=8),
       start=st.integers(1_700_000_000, 1_900_000_000), base=st.integers(0, 10**12),
       style=st.sampled_from(["int", "e"]), shape=st.sampled_from(["time", "stamp"]))
def test_valid_scrapes_give_the_hand_worked_peak(tmp_path, steps, start, base, style, shape):
    """Counters printed with 7 significant digits (`e`) lose precision as node_exporter's do not; so the
    expectation is worked from the printed values, parsed back here."""
    t, v = float(start), base
    pts = [(t, v)]
    for dt_s, dv in steps:
        t, v = t + dt_s, v + dv
        pts.append((t, v))
    lines = []
    printed = []
    for t, v in pts:
        text = _fmt(v, style)
        printed.append((t, float(text)))
        if shape == "time":
            lines += [f"# TIME {t:.0f}", "# TYPE node_disk_reads_completed_total counter",
                      f'node_disk_reads_completed_total{{device="sda"}} {text}', "node_load1 0.5"]
        else:
            lines += [f'node_disk_reads_completed_total{{device="sda",instance="db01:9100"}} {text} {int(t * 1000)}']
    f = tmp_path / "gen.prom"
    f.write_text("\n".join(lines) + "\n")
    rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(printed, printed[1:]) if b[1] >= a[1]]
    db = run([f])["databases"][0]
    assert db["name"] == ("gen" if shape == "time" else "db01:9100")
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(rates), rel=1e-9, abs=1e-9)
