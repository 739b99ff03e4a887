"""Property tests of every `dbtier history` reader (Hypothesis).

For each source a small series is generated in the source's own layout, with known cumulative
counters (or printed rates) and intervals. Three properties:

1. **Valid input gives the right figures.** The expected per-interval rates and their max/p95 are
   worked out here in plain Python from the generated values (the README's rules: delta / seconds,
   an interval where a counter goes down is a restart and is dropped), never by the code under test.
2. **One digit changed changes the peak accordingly.** One digit of one counter is replaced; the
   expectation is worked out again from the mutated values and must match.
3. **Malformed input gives a DbtierError naming the file, or a sane result.** Mutations of valid
   files (cut short, bytes replaced, columns swapped, lines dropped or repeated, fields removed); an
   injected NaN / inf / 1e308 / 2^70 / negative / non-ASCII number in a counter must be refused.

Every reader call runs under a timeout (a thread): a hang fails the test.
"""

from __future__ import annotations

import datetime as dt
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import with_timeout
from dbtier.core.errors import DbtierError
from dbtier.history import limits, read
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

pytestmark = pytest.mark.slow  # property tests (Hypothesis): `make test` runs them, `make test-fast` does not

TIMEOUT_S = 60
# The suite runs a fixed set of cases (derandomized: the same every run, well under a minute and a
# half); DBTIER_HYPOTHESIS_SCALE=N runs N times as many, random ones, to hunt.
SCALE = int(os.environ.get("DBTIER_HYPOTHESIS_SCALE", "1"))
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                derandomize=SCALE == 1)
VALID = settings(max_examples=12 * SCALE, **SETTINGS)
DIGIT = settings(max_examples=12 * SCALE, **SETTINGS)
BAD = settings(max_examples=25 * SCALE, **SETTINGS)
BASE = dt.datetime(2024, 3, 4, 0, 0, 0)
MB = 1e6


# -- running a reader ---------------------------------------------------------------------------------

def run_reader(source: str, paths, **opts) -> dict:
    """read + summarise_import in a thread; a hang fails the test, any exception is re-raised."""
    def call() -> dict:
        con = connect()
        try:
            return summarise_import(con, read(con, source, [str(p) for p in paths], ReadOptions(**opts)))
        finally:
            con.close()
    return with_timeout(call, TIMEOUT_S, f"{source} reader on {paths}")


def quantile(vals: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (what the README says peaks are)."""
    v = sorted(vals)
    pos = (len(v) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def counter_intervals(samples: list[tuple[float, dict[str, int]]]) -> list[tuple[float, dict[str, float]]]:
    """(seconds, {counter: delta}) of consecutive samples in time order; an interval where any
    counter goes down is a restart: dropped."""
    out = []
    samples = sorted(samples, key=lambda s: s[0])
    for (t0, a), (t1, b) in zip(samples, samples[1:]):
        if any(b[c] < a[c] for c in a):
            continue
        out.append((t1 - t0, {c: b[c] - a[c] for c in a}))
    return out


def check_peaks(doc: dict, expected: dict[str, list[float]], db: str | None = None) -> None:
    """Every metric's max and p95 in `doc` against the lists of per-interval rates."""
    dbs = {d["name"]: d for d in doc["databases"]}
    d = dbs[db] if db else doc["databases"][0]
    for metric, vals in expected.items():
        got = d["peaks"][metric] if metric in d["peaks"] else d["total"][metric.removeprefix("total_")]
        assert got["max"] == pytest.approx(max(vals), rel=1e-9, abs=1e-12), (metric, vals, got)
        assert got["p95"] == pytest.approx(quantile(vals, 0.95), rel=1e-9, abs=1e-12), (metric, vals, got)


def assert_sane(doc: dict) -> None:
    """A result from odd input still holds only finite, non-negative, plausible rates."""
    for d in doc["databases"]:
        for m, stats in d["peaks"].items():
            for v in stats.values():
                if v is None:
                    continue
                assert math.isfinite(v) and v >= 0, (d["name"], m, v)
                assert v <= (limits.MAX_IOPS if "iops" in m else limits.MAX_BYTES_PER_S / MB), (d["name"], m, v)


def assert_names_file(exc: DbtierError, paths) -> None:
    text = str(exc)
    assert any(str(p) in text or Path(p).name in text for p in paths), f"the message names no file: {text}"


# -- generated series ------------------------------------------------------------------------------

@st.composite
def counter_series(draw, names: tuple[str, ...], n_min: int = 3, n_max: int = 7, max_dt: int = 7200,
                   big: int = 10**7, start_max: int = 10**8) -> dict:
    """Sample times (seconds from BASE, strictly increasing) and cumulative counters as digit strings."""
    n = draw(st.integers(n_min, n_max))
    dts = draw(st.lists(st.integers(1, max_dt), min_size=n - 1, max_size=n - 1))
    ts = [0]
    for d in dts:
        ts.append(ts[-1] + d)
    vals = {}
    for c in names:
        v = draw(st.integers(0, start_max))
        col = [v]
        for _ in range(n - 1):
            v += draw(st.integers(0, big))
            col.append(v)
        vals[c] = [str(x) for x in col]
    return {"t": ts, "v": vals}


def mutate_digit(draw, series: dict) -> None:
    """Replace one digit of one counter of one sample (in place). A digit, never the decimal point: turning
    "10000.01" into "10000001" makes a 10,000 s latency the reader rightly refuses as absurd."""
    c = draw(st.sampled_from(sorted(series["v"])))
    i = draw(st.integers(0, len(series["t"]) - 1))
    s = series["v"][c][i]
    pos = draw(st.sampled_from([k for k, ch in enumerate(s) if ch.isdigit()]))
    d = draw(st.sampled_from([x for x in "0123456789" if x != s[pos]]))
    series["v"][c][i] = s[:pos] + d + s[pos + 1:]


def samples_of(series: dict, conv: dict[str, tuple[str, float]]) -> list[tuple[float, dict[str, int]]]:
    """[(t, {tidy counter: value})]: conv maps a column to (tidy counter, factor)."""
    out = []
    for i, t in enumerate(series["t"]):
        out.append((t, {tidy: int(series["v"][col][i]) * f for col, (tidy, f) in conv.items()}))
    return out


def rates(intervals, key: str, scale: float = 1.0) -> list[float]:
    return [d[key] / secs / scale for secs, d in intervals if key in d]


def expect_counters(intervals) -> dict[str, list[float]]:
    exp = {}
    for metric, key, scale in (("read_iops", "read_ios", 1), ("write_iops", "write_ios", 1),
                               ("read_mbps", "read_bytes", MB), ("write_mbps", "write_bytes", MB)):
        vals = rates(intervals, key, scale)
        if vals:
            exp[metric] = vals
    return exp


# -- each source's layout ----------------------------------------------------------------------------

AWR_STATS = ("physical read total IO requests", "physical write total IO requests", "physical read total bytes",
             "physical write total bytes")
AWR_CONV = {AWR_STATS[0]: ("read_ios", 1), AWR_STATS[1]: ("write_ios", 1), AWR_STATS[2]: ("read_bytes", 1),
            AWR_STATS[3]: ("write_bytes", 1)}


def awr_text(s: dict) -> str:
    head = ['"DB_NAME"', '"SNAP_ID"', '"DBID"', '"INSTANCE_NUMBER"', '"STARTUP_TIME"', '"BEGIN_INTERVAL_TIME"',
            '"END_INTERVAL_TIME"'] + [f'"{x}"' for x in AWR_STATS]
    lines = ["", ",".join(head)]
    for i, t in enumerate(s["t"]):
        end = BASE + dt.timedelta(seconds=t)
        begin = end - dt.timedelta(seconds=3600)
        lines.append(",".join(['"PROD"', str(1000 + i), "3046181735", "1", '"2024-02-26 06:41:03.000"',
                               f'"{begin:%Y-%m-%d %H:%M:%S}"', f'"{end:%Y-%m-%d %H:%M:%S}"']
                              + [s["v"][x][i] for x in AWR_STATS]))
    return "\n".join(lines) + "\n"


MSS_COLS = ("num_of_reads", "num_of_bytes_read", "io_stall_read_ms", "num_of_writes", "num_of_bytes_written",
            "io_stall_write_ms")
MSS_CONV = {"num_of_reads": ("read_ios", 1), "num_of_bytes_read": ("read_bytes", 1), "io_stall_read_ms": ("rt", 1),
            "num_of_writes": ("write_ios", 1), "num_of_bytes_written": ("write_bytes", 1),
            "io_stall_write_ms": ("wt", 1)}


def mss_text(s: dict) -> str:
    lines = ["sample_time,server_name,sqlserver_start_time,database_name,database_id,file_id,type_desc,"
             + ",".join(MSS_COLS) + ",size_on_disk_bytes"]
    for i, t in enumerate(s["t"]):
        local = BASE + dt.timedelta(seconds=t, hours=1)      # printed at +01:00
        lines.append(f"{local:%Y-%m-%dT%H:%M:%S}.0000000+01:00,SQL01,2024-02-28T06:12:45.320,sales,5,1,ROWS,"
                     + ",".join(s["v"][c][i] for c in MSS_COLS) + ",53687091200")
    return "\r\n".join(lines) + "\r\n"


def pg_texts(data: dict, wal: dict) -> dict[str, str]:
    def when(t):
        return f"{BASE + dt.timedelta(seconds=t):%Y-%m-%d %H:%M:%S}+00"
    db = ["sample_time,cluster,block_size,datid,datname,blks_read,stats_reset"]
    for i, t in enumerate(data["t"]):
        db.append(f"{when(t)},pgcap,8192,5,app,{data['v']['blks_read'][i]},2024-03-01 00:00:00+00")
    w = ["sample_time,cluster,block_size,wal_bytes,wal_write,stats_reset"]
    for i, t in enumerate(wal["t"]):
        w.append(f"{when(t)},pgcap,8192,{wal['v']['wal_bytes'][i]},{wal['v']['wal_write'][i]},2024-03-01 00:00:00+00")
    return {"pg_stat_database.csv": "\n".join(db) + "\n", "pg_stat_wal.csv": "\n".join(w) + "\n"}


DS_COLS = ("reads", "sectors_read", "ms_reading", "writes", "sectors_written", "ms_writing")
DS_CONV = {"reads": ("read_ios", 1), "sectors_read": ("read_bytes", 512), "ms_reading": ("rt", 1),
           "writes": ("write_ios", 1), "sectors_written": ("write_bytes", 512), "ms_writing": ("wt", 1)}
EPOCH0 = 1795306355


def ds_text(s: dict) -> str:
    out = []
    for i, t in enumerate(s["t"]):
        v = {c: s["v"][c][i] for c in DS_COLS}
        out.append(f"# dbtier-diskstats time={EPOCH0 + t} btime=1795303153 host=db01")
        out.append("   7       0 loop0 5 0 10 1 0 0 0 0 0 1 1 0 0 0 0 0 0")
        out.append(f"   8       0 sda {v['reads']} 7 {v['sectors_read']} {v['ms_reading']} {v['writes']} 3 "
                   f"{v['sectors_written']} {v['ms_writing']} 0 100 200 0 0 0 0 4 5")
    return "\n".join(out) + "\n"


IO_COLS = ("r/s", "rkB/s", "w/s", "wkB/s", "r_await", "w_await")


@st.composite
def rate_reports(draw, n_min: int = 3, n_max: int = 7, cols=IO_COLS) -> dict:
    """Reports (seconds from BASE, increasing) of printed rates, as strings with two decimals."""
    n = draw(st.integers(n_min, n_max))
    dts = draw(st.lists(st.integers(1, 3600), min_size=n - 1, max_size=n - 1))
    ts = [0]
    for d in dts:
        ts.append(ts[-1] + d)
    vals = {c: [f"{draw(st.integers(0, 10**8)) / 100:.2f}" for _ in range(n)] for c in cols}
    return {"t": ts, "v": vals}


def iostat_text(s: dict) -> str:
    out = ["Linux 6.1.0 (db02) \t03/04/24 \t_x86_64_\t(2 CPU)", ""]
    for i, t in enumerate(s["t"]):
        out += [f"{BASE + dt.timedelta(seconds=t):%Y-%m-%dT%H:%M:%S}+0000",
                "avg-cpu:  %user   %nice %system %iowait  %steal   %idle",
                "           1.00    0.00    1.00    0.00    0.00   98.00", "",
                "Device            " + "  ".join(IO_COLS),
                "sda   " + "  ".join(s["v"][c][i] for c in IO_COLS), ""]
    return "\n".join(out) + "\n"


SAR_COLS = ("tps", "rkB/s", "wkB/s", "areq-sz", "aqu-sz", "await", "%util")


def sar_text(s: dict) -> str:
    out = ["Linux 6.1.0 (db03) \t03/04/24 \t_x86_64_\t(2 CPU)", "",
           "00:00:00          DEV  " + "  ".join(SAR_COLS)]
    for i, t in enumerate(s["t"]):
        out.append(f"{BASE + dt.timedelta(seconds=t + 5):%H:%M:%S}          sda  "
                   + "  ".join(s["v"][c][i] for c in SAR_COLS))
    return "\n".join(out) + "\n"


DMA_STATS = {"read_ios": "physical read total IO requests", "write_ios": "physical write total IO requests",
             "read_bytes": "physical read total bytes", "write_bytes": "physical write total bytes"}


@st.composite
def dma_hours(draw) -> dict:
    hours = draw(st.lists(st.integers(0, 23), min_size=1, max_size=4, unique=True))
    out = {}
    for h in hours:
        cnt = draw(st.integers(1, 12))
        secs = cnt * draw(st.integers(60, 3600))
        out[h] = {"cnt": str(cnt), "secs": str(secs),
                  "stats": {k: {p: str(draw(st.integers(0, 10**9))) for p in ("sum", "perc50", "perc95", "perc100")}
                            for k in DMA_STATS}}
    return out


def dma_files(hours: dict) -> dict[str, str]:
    snap = ["PKEY|DBID|INSTANCE_NUMBER|HOUR|MIN_SNAP_ID|MAX_SNAP_ID|MIN_BEGIN_INTERVAL_TIME|MAX_BEGIN_INTERVAL_TIME|"
            "CNT|SUM_SNAPS_DIFF_SECS|AVG_SNAPS_DIFF_SECS|MEDIAN_SNAPS_DIFF_SECS|MODE_SNAPS_DIFF_SECS|"
            "MIN_SNAPS_DIFF_SECS|MAX_SNAPS_DIFF_SECS"]
    stat = ["PKEY|DBID|INSTANCE_NUMBER|HOUR|STAT_NAME|CNT|AVG_VALUE|MODE_VALUE|MEDIAN_VALUE|MIN_VALUE|MAX_VALUE|"
            "SUM_VALUE|PERC50|PERC75|PERC90|PERC95|PERC100"]
    for h, x in sorted(hours.items()):
        snap.append(f"DB1|77|1|{h}|1|9|2024-03-04 {h:02d}:00:00|2024-03-05 {h:02d}:00:00|{x['cnt']}|{x['secs']}|0|0|0|0|0")
        for k, name in DMA_STATS.items():
            v = x["stats"][k]
            stat.append(f"DB1|77|1|{h}|{name}|{x['cnt']}|0|0|0|0|0|{v['sum']}|{v['perc50']}|{v['perc50']}|"
                        f"{v['perc95']}|{v['perc95']}|{v['perc100']}")
    return {"opdb__awrsnapdetails__x.csv": "\n".join(snap) + "\n", "opdb__dbahistsysstat__x.csv": "\n".join(stat) + "\n"}


def dma_expected(hours: dict) -> dict[str, dict[str, float]]:
    """The database's max and p95: the highest hour-of-day PERC100 and PERC95 over the hour's mean snapshot."""
    out: dict[str, dict[str, float]] = {}
    for metric, key, scale in (("read_iops", "read_ios", 1), ("write_iops", "write_ios", 1),
                               ("read_mbps", "read_bytes", MB), ("write_mbps", "write_bytes", MB)):
        per = [(int(x["stats"][key]["perc100"]), int(x["stats"][key]["perc95"]), int(x["secs"]) / int(x["cnt"]))
               for x in hours.values()]
        out[metric] = {"max": max(a / s / scale for a, _, s in per), "p95": max(b / s / scale for _, b, s in per)}
    return out


# -- the cases: how to write each source and what to expect -------------------------------------------

def write_files(tmp: Path, files: dict[str, str | bytes]) -> list[Path]:
    tmp.mkdir(parents=True, exist_ok=True)
    out = []
    for name, text in files.items():
        p = tmp / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        out.append(p)
    return out


class Case:
    """One source: draw a valid input, render it, say what the reader must give."""

    def __init__(self, source, draw_fn, render, expect, db=None, paths=None):
        self.source, self.draw, self.render, self.expect, self.db = source, draw_fn, render, expect, db
        self.paths = paths or (lambda files: files)


def _pg_draw(draw):
    n = draw(st.integers(3, 6))
    data = draw(counter_series(("blks_read",), n_min=n, n_max=n))
    wal = dict(draw(counter_series(("wal_bytes", "wal_write"), n_min=n, n_max=n)))
    wal["t"] = data["t"]          # one collector run writes every view at the same sample time
    return {"data": data, "wal": wal}


def _pg_expect(x):
    data = counter_intervals(samples_of(x["data"], {"blks_read": ("read_ios", 1)}))
    data = [(s, {**d, "read_bytes": d["read_ios"] * 8192}) for s, d in data]
    wal = counter_intervals(samples_of(x["wal"], {"wal_write": ("write_ios", 1), "wal_bytes": ("write_bytes", 1)}))
    return {**expect_counters(data), **expect_counters(wal)}


def _iostat_expect(s):
    exp = {"read_iops": [], "write_iops": [], "read_mbps": [], "write_mbps": []}
    for i in range(1, len(s["t"])):       # the first report is dropped (since boot)
        v = {c: float(s["v"][c][i]) for c in IO_COLS}
        exp["read_iops"].append(v["r/s"])
        exp["write_iops"].append(v["w/s"])
        exp["read_mbps"].append(v["rkB/s"] * 1024 / MB)
        exp["write_mbps"].append(v["wkB/s"] * 1024 / MB)
    return exp


def _sar_expect(s):
    exp = {"total_iops": [], "read_mbps": [], "write_mbps": [], "read_iops": []}
    for i in range(len(s["t"])):
        tps, rk, wk = (float(s["v"][c][i]) for c in ("tps", "rkB/s", "wkB/s"))
        exp["total_iops"].append(tps)
        exp["read_mbps"].append(rk * 1024 / MB)
        exp["write_mbps"].append(wk * 1024 / MB)
        exp["read_iops"].append(tps * rk / (rk + wk) if rk + wk > 0 else 0.0)
    return exp


CASES = {
    "awr": Case("awr", lambda draw: draw(counter_series(AWR_STATS)), lambda s: {"awr_sysstat.csv": awr_text(s)},
                lambda s: expect_counters(counter_intervals(samples_of(s, AWR_CONV))), db="PROD"),
    "sqlserver": Case("sqlserver", lambda draw: draw(counter_series(MSS_COLS)),
                      lambda s: {"file_stats.csv": mss_text(s)},
                      lambda s: expect_counters(counter_intervals(samples_of(s, MSS_CONV))), db="SQL01/sales"),
    "postgres": Case("postgres", _pg_draw, lambda x: pg_texts(x["data"], x["wal"]), _pg_expect, db="pgcap"),
    "diskstats": Case("diskstats", lambda draw: draw(counter_series(DS_COLS)), lambda s: {"diskstats-db01.txt": ds_text(s)},
                      lambda s: expect_counters(counter_intervals(samples_of(s, DS_CONV))), db="db01"),
    "iostat": Case("iostat", lambda draw: draw(rate_reports()), lambda s: {"iostat-db02.txt": iostat_text(s)},
                   _iostat_expect, db="db02"),
    "sar": Case("sar", lambda draw: draw(rate_reports(n_min=2, n_max=6, cols=SAR_COLS)),
                lambda s: {"sa-db03.txt": sar_text(s)}, _sar_expect, db="db03"),
}


def _counter_value_fields(case: str, x) -> list[tuple[str, int]]:
    """(column, sample) pairs of counters whose digits may be changed."""
    s = x["data"] if case == "postgres" else x
    return [(c, i) for c in s["v"] for i in range(len(s["t"]))]


# -- 1 and 2: valid input, and one digit changed -------------------------------------------------------

def _check_valid(case: Case, x, tmp: Path) -> None:
    files = write_files(tmp, case.render(x))
    exp = case.expect(x)
    if not exp or all(not v for v in exp.values()):
        with pytest.raises(DbtierError, match="fewer than two snapshots"):
            run_reader(case.source, files)
        return
    doc = run_reader(case.source, files)
    check_peaks(doc, {k: v for k, v in exp.items() if v}, case.db)


_counter = iter(range(10**9))


def _tmp(tmp_path: Path) -> Path:
    return tmp_path / f"c{next(_counter)}"


@pytest.mark.parametrize("name", list(CASES))
@VALID
@given(data=st.data())
def test_valid_series_give_the_hand_worked_peaks(name, data, tmp_path):
    """Generated series in each source's layout: max and p95 of read/write IOPS and MB/s equal the
    per-interval rates worked out here (delta / seconds; printed rates for iostat and sar)."""
    case = CASES[name]
    x = case.draw(data.draw)
    _check_valid(case, x, _tmp(tmp_path))


@pytest.mark.parametrize("name", ["awr", "sqlserver", "postgres", "diskstats", "iostat", "sar"])
@DIGIT
@given(data=st.data())
def test_one_digit_changed_changes_the_peak_accordingly(name, data, tmp_path):
    """One digit of one counter (or printed rate) changed: the figures follow the changed value,
    recomputed by hand (a counter that now goes down is a restart: that interval is dropped)."""
    case = CASES[name]
    x = case.draw(data.draw)
    target = x["data"] if name == "postgres" and data.draw(st.booleans()) else x["wal"] if name == "postgres" else x
    mutate_digit(data.draw, target)
    _check_valid(case, x, _tmp(tmp_path))      # against the rates worked out again from the changed values


@VALID
@given(hours=dma_hours())
def test_dma_valid_collection_gives_the_hand_worked_peaks(hours, tmp_path):
    """DMA: max = the highest hour's PERC100 / (SUM_SNAPS_DIFF_SECS / CNT); p95 the highest PERC95 so."""
    d = _tmp(tmp_path) / "collection"
    write_files(d, dma_files(hours))
    doc = run_reader("dma", [d])
    got = doc["databases"][0]["peaks"]
    for metric, e in dma_expected(hours).items():
        assert got[metric]["max"] == pytest.approx(e["max"], rel=1e-9, abs=1e-12)
        assert got[metric]["p95"] == pytest.approx(e["p95"], rel=1e-9, abs=1e-12)


@DIGIT
@given(hours=dma_hours(), data=st.data())
def test_dma_one_digit_changed_changes_the_peak(hours, data, tmp_path):
    h = data.draw(st.sampled_from(sorted(hours)))
    k = data.draw(st.sampled_from(sorted(DMA_STATS)))
    p = data.draw(st.sampled_from(["perc95", "perc100"]))
    s = hours[h]["stats"][k][p]
    pos = data.draw(st.integers(0, len(s) - 1))
    hours[h]["stats"][k][p] = s[:pos] + data.draw(st.sampled_from([c for c in "0123456789" if c != s[pos]])) + s[pos + 1:]
    d = _tmp(tmp_path) / "collection"
    write_files(d, dma_files(hours))
    doc = run_reader("dma", [d])
    for metric, e in dma_expected(hours).items():
        assert doc["databases"][0]["peaks"][metric]["max"] == pytest.approx(e["max"], rel=1e-9, abs=1e-12)


# -- 3: malformed input --------------------------------------------------------------------------------

BAD_NUMBERS = ["NaN", "nan", "inf", "-inf", "Infinity", "1e308", "1e400", "-5", "-0.5", str(2**70),
               "99999999999999999999999999", "١٢", "８1", "0x10", "1e19"]


def _inject(case: str, x, bad: str, data) -> None:
    """Put `bad` in place of one counter (or printed rate) value, in the drawn structure."""
    if case == "dma":
        h = data.draw(st.sampled_from(sorted(x)))
        k = data.draw(st.sampled_from(sorted(DMA_STATS)))
        x[h]["stats"][k][data.draw(st.sampled_from(["sum", "perc50", "perc95", "perc100"]))] = bad
        return
    s = x["data"] if case == "postgres" else x
    c = data.draw(st.sampled_from(sorted(s["v"])))
    i = data.draw(st.integers(0, len(s["t"]) - 1))
    s["v"][c][i] = bad


@pytest.mark.parametrize("name", ["awr", "sqlserver", "postgres", "diskstats", "iostat", "sar", "dma"])
@BAD
@given(data=st.data(), bad=st.sampled_from(BAD_NUMBERS))
def test_injected_bad_number_is_refused_naming_the_file(name, data, bad, tmp_path):
    """NaN, inf, 1e308, beyond 64 bits, negative, non-ASCII digits in a counter: a DbtierError that
    names the file, never a result (1e19 is beyond a signed 64-bit counter; for iostat and sar,
    whose values are rates, it is an absurd rate)."""
    if name == "dma":
        x = data.draw(dma_hours())
        _inject(name, x, bad, data)
        d = _tmp(tmp_path) / "collection"
        files = write_files(d, dma_files(x))
        paths = [d]
    else:
        case = CASES[name]
        x = case.draw(data.draw)
        _inject(name, x, bad, data)
        files = write_files(_tmp(tmp_path), case.render(x))
        paths = files
    with pytest.raises(DbtierError) as err:
        run_reader(name, paths)
    assert_names_file(err.value, files)


def _mutate_text(text: str, data) -> str | bytes:
    lines = text.splitlines(keepends=True)
    op = data.draw(st.sampled_from(["cut", "bytes", "swap_cols", "drop_line", "dup_line", "drop_field", "binary",
                                    "delimiter", "swap_lines", "empty", "header_only", "crlf", "bom", "latin1",
                                    "long_line", "blank_lines"]))
    i = data.draw(st.integers(0, max(0, len(lines) - 1)))
    if op == "cut":
        return text[:data.draw(st.integers(0, len(text)))]
    if op == "bytes":
        b = bytearray(text.encode())
        for _ in range(data.draw(st.integers(1, 4))):
            b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
        return bytes(b)
    if op == "swap_cols":
        sep = "|" if "|" in lines[i] else "," if "," in lines[i] else None
        f = lines[i].rstrip("\r\n").split(sep)
        if len(f) > 1:
            a, b = data.draw(st.integers(0, len(f) - 1)), data.draw(st.integers(0, len(f) - 1))
            f[a], f[b] = f[b], f[a]
        lines[i] = (sep or " ").join(f) + "\n"
    elif op == "drop_line":
        del lines[i]
    elif op == "dup_line":
        lines.insert(i, lines[i])
    elif op == "drop_field":
        sep = "|" if "|" in lines[i] else "," if "," in lines[i] else None
        f = lines[i].rstrip("\r\n").split(sep)
        if f:
            del f[data.draw(st.integers(0, len(f) - 1))]
            lines[i] = (sep or " ").join(f) + "\n"
    elif op == "binary":
        return text.encode()[:200] + bytes(range(256)) + text.encode()[200:]
    elif op == "delimiter":
        lines[i] = lines[i].replace(",", ";").replace("|", ",").replace(" ", "\t")
    elif op == "swap_lines":
        j = data.draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "empty":
        return ""
    elif op == "header_only":
        return "".join(lines[:2])
    elif op == "crlf":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    elif op == "bom":
        return "\ufeff" + text
    elif op == "latin1":
        lines[i] = lines[i].rstrip("\r\n") + "é\n"
        return "".join(lines).encode("latin-1", errors="replace")
    elif op == "long_line":
        lines.insert(i, "9" * 2_000_000 + "\n")
    elif op == "blank_lines":
        lines.insert(i, "\n\n  \n")
    return "".join(lines)


@pytest.mark.parametrize("name", ["awr", "sqlserver", "postgres", "diskstats", "iostat", "sar", "dma"])
@BAD
@given(data=st.data())
def test_malformed_input_gives_an_error_naming_the_file_or_a_sane_result(name, data, tmp_path):
    """Valid files mutated (cut, bytes replaced, columns swapped, lines dropped or repeated, a field
    removed, binary inserted, another delimiter, not UTF-8, a 2 MB line, ...): a DbtierError naming
    the file, or a result whose figures are finite, non-negative and plausible. Never another
    exception, never a hang."""
    if name == "dma":
        x = data.draw(dma_hours())
        files_text = dma_files(x)
    else:
        case = CASES[name]
        x = case.draw(data.draw)
        files_text = case.render(x)
    victim = data.draw(st.sampled_from(sorted(files_text)))
    files_text[victim] = _mutate_text(files_text[victim], data)
    base = _tmp(tmp_path)
    if name == "dma":
        files = write_files(base / "collection", files_text)
        paths = [base / "collection"]
    else:
        files = write_files(base, files_text)
        paths = files
    try:
        doc = run_reader(name if name != "dma" else "dma", paths)
    except DbtierError as exc:
        assert_names_file(exc, files + paths)
        return
    assert_sane(doc)
