"""Property tests of the CloudWatch reader (Hypothesis): any input gives a DbtierError naming the file, or a
sane result; never another exception, never a hang.

1. **Valid answers give the hand-worked figures.** get-metric-statistics answers of a Count (Sum) or a
   /Second rate (Average), in any of the saved shapes (one answer, concatenated, a JSON list, get-metric-data
   results), with ISO or epoch times: IOPS = Sum / period, or the Average as it is, worked out here.
2. **Wrong types anywhere.** Each field of a valid answer replaced by any JSON value (nested lists and
   objects, strings, NaN, booleans, integers of hundreds of digits, null).
3. **Bytes and nesting.** Arbitrary bytes, arbitrary JSON, and JSON nested up to 100,000 deep.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import tempfile
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

SCALE = int(os.environ.get("DBTIER_HYPOTHESIS_SCALE", "1"))
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                derandomize=SCALE == 1)
VALID = settings(max_examples=20 * SCALE, **SETTINGS)
BAD = settings(max_examples=40 * SCALE, **SETTINGS)
T0 = 1793700000                       # 2026-11-03T00:00:00Z... a period boundary
STATS = ("Sum", "Average", "Maximum", "Minimum", "SampleCount")


def run(path: Path, **opts) -> dict:
    def call() -> dict:
        con = connect()
        try:
            return summarise_import(con, read(con, "cloudwatch", [str(path)], ReadOptions(**opts)))
        finally:
            con.close()
    return with_timeout(call, 60, f"cloudwatch reader on {path}")


def write(text: str | bytes) -> Path:
    d = Path(tempfile.mkdtemp(prefix="cwprop"))
    f = d / "answer.json"
    f.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return f


def error_or_sane(path: Path, **opts) -> None:
    """A DbtierError naming the file in one message, or finite, non-negative, plausible figures."""
    try:
        doc = run(path, **opts)
    except DbtierError as exc:
        assert path.name in str(exc) or str(path.parent) in str(exc), str(exc)
        assert "Traceback" not in str(exc)
        return
    for db in doc["databases"]:
        for m, stats in db["peaks"].items():
            for v in stats.values():
                if v is not None:
                    assert math.isfinite(v) and v >= 0, (m, v)
                    assert v <= (limits.MAX_IOPS if "iops" in m else limits.MAX_BYTES_PER_S / 1e6), (m, v)


def iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat()


# -- 1. valid answers, hand-worked --------------------------------------------------------------------------

@VALID
@given(n=st.integers(2, 8), period=st.sampled_from([60, 300, 3600]), rate=st.booleans(),
       shape=st.sampled_from(["one", "concat", "list", "data"]), epoch=st.booleans(),
       reads=st.lists(st.integers(0, 10**7), min_size=8, max_size=8),
       writes=st.lists(st.integers(0, 10**7), min_size=8, max_size=8))
def test_valid_answers_give_the_hand_worked_figures(n, period, rate, shape, epoch, reads, writes):
    names = ("ReadIOPS", "WriteIOPS") if rate else ("VolumeReadOps", "VolumeWriteOps")
    stat, unit = ("Average", "Count/Second") if rate else ("Sum", "Count")
    times = [T0 + k * period for k in range(n)]
    series = {names[0]: reads[:n], names[1]: writes[:n]}

    def t(x):
        return x if epoch else iso(x)
    if shape == "data":
        text = json.dumps({"MetricDataResults": [
            {"Id": f"m{k}", "Label": f"{name} {stat}", "Timestamps": [t(x) for x in reversed(times)],
             "Values": [float(v) for v in reversed(vals)], "StatusCode": "Complete"}
            for k, (name, vals) in enumerate(series.items())], "Messages": []}, indent=4)
    else:
        docs = [{"Label": name, "Datapoints": [{"Timestamp": t(x), stat: float(v), "Unit": unit}
                                               for x, v in zip(times, vals)]} for name, vals in series.items()]
        text = (json.dumps(docs[0]) if shape == "one" else "\n".join(json.dumps(d, indent=4) for d in docs)
                if shape == "concat" else json.dumps(docs))
        if shape == "one":
            series = {names[0]: reads[:n]}
    doc = run(write(text))
    db = doc["databases"][0]
    per_s = (lambda v: float(v)) if rate else (lambda v: v / period)
    assert db["intervals"] == n
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(per_s(v) for v in reads[:n]), rel=1e-9, abs=1e-12)
    if names[1] in series:
        tot = [per_s(a) + per_s(b) for a, b in zip(reads[:n], writes[:n])]
        assert db["total"]["iops"]["max"] == pytest.approx(max(tot), rel=1e-9, abs=1e-12)
    assert doc["provenance"]["period_s"] == period and doc["provenance"]["statistic"] == stat


# -- 2. wrong types anywhere --------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20) | st.sampled_from(["Sum", "Count", "2026-11-03T00:00:00Z", "ReadIOPS", "1793700000",
                                             "Count/Second", "vol-0123456789abcdef0"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12) | st.sampled_from(
        ["Label", "Datapoints", "Timestamp", "Sum", "Average", "Unit", "Id", "Values", "Timestamps", "StatusCode",
         "MetricDataResults", "Messages", "ExtendedStatistics"]), inner, max_size=4),
    max_leaves=12)


def _paths(doc, prefix=()):
    """Every place in a JSON document (a key of an object, an index of a list)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _replace(doc, path, value):
    if not path:
        return value
    out = json.loads(json.dumps(doc))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def _valid_docs():
    stats = {"Label": "VolumeReadOps", "Datapoints": [
        {"Timestamp": iso(T0 + 300 * k), "Sum": 3000.0 * (k + 1), "Unit": "Count"} for k in range(3)]}
    data = {"MetricDataResults": [{"Id": "r0", "Label": "vol-0123456789abcdef0 ReadIOPS", "Timestamps": [T0, T0 + 60],
                                   "Values": [5.0, 6.0], "StatusCode": "PartialData",
                                   "Messages": [{"Code": "c", "Value": "v"}]}], "NextToken": "t", "Messages": []}
    return [stats, data, [stats, stats], [data]]


@BAD
@given(which=st.integers(0, 3), data=st.data(), value=JSON, concat=st.booleans())
def test_any_field_of_any_type_gives_an_error_naming_the_file_or_a_sane_result(which, data, value, concat):
    doc = _valid_docs()[which]
    path = data.draw(st.sampled_from(list(_paths(doc))))
    bad = _replace(doc, path, value)
    try:
        text = json.dumps(bad, indent=4)
    except ValueError:              # an integer too long for json.dumps: Hypothesis' own limit
        return
    if concat:
        text = text + "\n" + text
    error_or_sane(write(text))


# -- 3. bytes, any JSON, deep nesting ----------------------------------------------------------------------

@BAD
@given(raw=st.binary(min_size=1, max_size=400))
def test_any_bytes(raw):
    error_or_sane(write(raw))


@BAD
@given(value=JSON, prefix=st.sampled_from(["", '{"Datapoints": ', '{"MetricDataResults": ', "[", '{"Label": "ReadIOPS", "Datapoints": ']))
def test_any_json(value, prefix):
    text = prefix + json.dumps(value) + ("" if not prefix else "]" if prefix == "[" else "}")
    error_or_sane(write(text))
    error_or_sane(write(text), interval_s=300)


@settings(max_examples=6 * SCALE, **SETTINGS)
@given(depth=st.sampled_from([900, 2000, 10_000, 100_000]), opener=st.sampled_from(["[", '{"a": ']),
       within=st.sampled_from(["", '{"MetricDataResults": ', '{"Label": "ReadIOPS", "Datapoints": ']))
def test_deep_nesting_is_refused_in_one_line(depth, opener, within):
    closer = "]" if opener == "[" else "}"
    inner = opener * depth + "1" + closer * depth
    text = within + inner + ("}" if within else "")
    f = write(text)
    error_or_sane(f)
    if depth >= 10_000:
        with pytest.raises(DbtierError, match="nested deeper than any AWS answer"):
            run(f)
