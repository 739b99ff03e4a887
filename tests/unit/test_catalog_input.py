"""Catalog TOML as hostile input: every malformed file gives one DbtierError naming the file, the entry and the
field; never a traceback, never a hang. A Hypothesis property test generates entries: valid ones load with the
exact values and price correctly (checked against a price worked out in the test), invalid ones are refused."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import with_timeout
from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import configure, evaluate
from dbtier.model.plan.catalog import load_catalog, parse_catalog_file

# The bounds the README documents for catalog figures (written out here, not imported: the test is the spec).
BOUNDS = {
    "capacity_gb": (1e-3, 1e9), "price_usd": (0, 1e9),
    "read_iops": (1e-3, 1e9), "write_iops": (1e-3, 1e9),
    "read_mbps": (1e-3, 1e7), "write_mbps": (1e-3, 1e7),
    "read_latency_us": (1e-3, 1e9), "write_latency_us": (1e-3, 1e9),
    "max_mbps": (1e-3, 1e7), "per_devices": (1, 1_000_000), "drive_ports": (0, 10_000),
}
DEVICE_NUMBERS = ("capacity_gb", "price_usd", "read_iops", "write_iops", "read_mbps", "write_mbps",
                  "read_latency_us", "write_latency_us")


def refused(path: Path | str) -> str:
    """The message of the DbtierError loading `path` gives (any other exception fails the test)."""
    with pytest.raises(DbtierError) as exc:
        with_timeout(lambda: load_catalog([path]))
    assert exc.value.hint
    return exc.value.message


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)                       # nan, inf, -inf, 1e+308 are TOML literals too
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def entry(table: str, fields: dict[str, Any], array: bool = True) -> str:
    head = f"[[{table}]]" if array else f"[{table}]"
    return head + "\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in fields.items()) + "\n"


GOOD = {"id": "my-ssd", "name": "An SSD", "kind": "sata-ssd", "interface": "sata-6g", "capacity_gb": 500,
        "price_usd": 50, "read_iops": 90000, "write_iops": 80000, "read_mbps": 550, "write_mbps": 500,
        "read_latency_us": 100, "write_latency_us": 40, "source": "test"}


def device_file(tmp_path: Path, **changes: Any) -> Path:
    fields = {**GOOD, **changes}
    fields = {k: v for k, v in fields.items() if v is not None}
    p = tmp_path / "cat.toml"
    p.write_text(entry("device", fields), encoding="utf-8")
    return p


# -- files that are not catalogs --------------------------------------------------------------------------------

def test_a_fifo_is_refused_before_opening(tmp_path):
    fifo = tmp_path / "cat.toml"
    os.mkfifo(fifo)
    assert refused(fifo) == f"catalog file {fifo}: a FIFO (named pipe), not a regular file"


def test_dev_zero_is_refused():
    assert refused("/dev/zero") == "catalog file /dev/zero: a character device, not a regular file"


def test_a_directory_and_a_missing_file(tmp_path):
    assert refused(tmp_path) == f"catalog file {tmp_path}: a directory, not a regular file"
    assert refused(tmp_path / "nope.toml") == f"catalog file {tmp_path / 'nope.toml'} not found"


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(64 * 1024 * 1024)           # sparse: 64 MiB of NULs
    assert refused(big) == f"catalog file {big} is larger than 16 MiB: not a catalog"


def test_binary_latin1_and_garbage(tmp_path):
    p = tmp_path / "cat.toml"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert refused(p).startswith(f"{p}: not UTF-8 text (byte 0)")
    p.write_bytes(entry("device", {**GOOD, "name": "Caf\u00e9"}).encode("latin-1"))
    assert "not UTF-8 text" in refused(p)
    p.write_text("id = \x00\n")
    assert "NUL character" in refused(p)
    p.write_text("this is not toml at all {\n")
    msg = refused(p)
    assert msg.startswith(f"{p}: not valid TOML:") and "line 1" in msg


def test_deep_nesting_and_giant_integers(tmp_path):
    p = tmp_path / "cat.toml"
    p.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert refused(p) == f"{p}: not valid TOML for a catalog: arrays or tables nested too deeply"
    p.write_text(entry("device", GOOD).replace("capacity_gb = 500", "capacity_gb = " + "9" * 5000))
    assert refused(p).startswith(f"{p}: not valid TOML for a catalog: Exceeds the limit")


# -- entries --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", DEVICE_NUMBERS)
@pytest.mark.parametrize("bad, says", [
    (math.nan, "must be a finite number, got nan"),
    (math.inf, "must be a finite number, got inf"),
    (-math.inf, "must be a finite number, got -inf"),
    (1e308, "must be at most 1,000,000,000"),
    (10**30, "must be at most 1,000,000,000"),
    (-3, None),
])
def test_non_finite_negative_and_absurd_numbers_name_file_entry_and_field(tmp_path, field, bad, says):
    p = device_file(tmp_path, **{field: bad})
    msg = refused(p)
    assert msg.startswith(f"{p}: device #1 (id 'my-ssd'): field '{field}' "), msg
    if says is None:   # negative
        says = "must not be negative" if field == "price_usd" else "must be positive"
    if field in ("read_mbps", "write_mbps") and says.startswith("must be at most"):
        says = "must be at most 10,000,000"
    assert says in msg


def test_tiny_values_that_would_overflow_a_division(tmp_path):
    msg = refused(device_file(tmp_path, read_iops=5e-324))
    assert msg == f"{tmp_path / 'cat.toml'}: device #1 (id 'my-ssd'): field 'read_iops' must be at least 0.001 " \
                  "(IOPS), got 4.94066e-324"


def test_the_largest_allowed_price_times_a_huge_count_stays_finite(tmp_path):
    """$1e9 x 10,000,000 devices = $1e16: finite, exact; 1e308 would be inf and is refused above."""
    cat = load_catalog([device_file(tmp_path, price_usd=1e9)])
    e = evaluate(configure(cat, "my-ssd", 10_000_000, "jbod", server_ports=10_000))
    assert e.device_price_usd == 1e16 and math.isfinite(e.price_usd)


@pytest.mark.parametrize("changes, says", [
    ({"read_iops": None}, "missing field 'read_iops' (number)"),
    ({"read_iops": "fast"}, "field 'read_iops' must be a number, got a string ('fast')"),
    ({"price_usd": True}, "field 'price_usd' must be a number, got a boolean (True)"),
    ({"price_usd": [1, 2]}, "field 'price_usd' must be a number, got a list ([1, 2])"),
    ({"name": 5}, "field 'name' must be a string, got an integer (5)"),
    ({"name": "  "}, "field 'name' is empty"),
    ({"name": "evil\x1b[2J"}, "field 'name' contains a control character (U+001B at position 4)"),
    ({"source": "a\x9bb"}, "field 'source' contains a control character (U+009B at position 1)"),
    ({"iops": 5}, "unknown field 'iops' (allowed: id, name, kind"),
    ({"kind": "tape"}, "unknown kind 'tape'"),
    ({"interface": "SATA 6G"}, "interface 'SATA 6G' is not a lowercase token"),
])
def test_missing_wrong_typed_and_unknown_fields(tmp_path, changes, says):
    p = device_file(tmp_path, **changes)
    msg = refused(p)
    assert msg.startswith(f"{p}: device #1 (id 'my-ssd'): ") and says in msg, msg


def test_a_wrong_typed_id_is_described_not_named(tmp_path):
    p = device_file(tmp_path, id=7)
    assert refused(p) == f"{p}: device #1 (no id): field 'id' must be a string, got an integer (7)"


def test_duplicate_ids_in_one_file_are_refused(tmp_path):
    p = tmp_path / "cat.toml"
    p.write_text(entry("device", GOOD) + entry("device", {**GOOD, "id": "other"}) + entry("device", GOOD))
    assert refused(p) == f"{p}: device #3 (id 'my-ssd'): duplicate id, already used by device #1"


def test_unknown_tables_are_refused(tmp_path):
    p = tmp_path / "cat.toml"
    p.write_text(entry("device", GOOD) + "[extra]\nx = 1\n")
    assert refused(p) == f"{p}: unknown top-level table 'extra' (allowed: [[device]], [[overhead]], [server])"


OVERHEAD = {"id": "hba", "name": "HBA", "price_usd": 500, "per_devices": 8, "max_mbps": 3000,
            "applies_to": ["my-ssd"], "source": "test"}


@pytest.mark.parametrize("changes, says", [
    ({"per_devices": 0}, "field 'per_devices' must be positive, got 0"),
    ({"per_devices": 2**40}, "field 'per_devices' must be at most 1,000,000 (devices), got 1099511627776"),
    ({"per_devices": 4.0}, "field 'per_devices' must be a whole number, got a number (4.0)"),
    ({"max_mbps": math.nan}, "field 'max_mbps' must be a finite number, got nan"),
    ({"after_server_ports": "yes"}, "field 'after_server_ports' must be true or false, got a string ('yes')"),
    ({"applies_to": ["my-ssd", ""]}, "field 'applies_to' must be a non-empty list of strings"),
])
def test_overhead_fields(tmp_path, changes, says):
    p = tmp_path / "cat.toml"
    p.write_text(entry("device", GOOD) + entry("overhead", {**OVERHEAD, **changes}))
    msg = refused(p)
    assert msg.startswith(f"{p}: overhead #1 (id 'hba'): ") and says in msg, msg


def test_server_table(tmp_path):
    p = tmp_path / "cat.toml"
    p.write_text(entry("server", {"drive_ports": 24, "source": "my server"}, array=False))
    cat = load_catalog([p])
    assert cat.server_ports == 24 and cat.server.origin == str(p)
    assert cat.overridden == {"server": "shipped:overhead.toml"}
    for fields, says in (({"drive_ports": -1, "source": "s"}, "field 'drive_ports' must be at least 0 (ports), got -1"),
                         ({"drive_ports": 8.5, "source": "s"}, "field 'drive_ports' must be a whole number"),
                         ({"drive_ports": 8}, "missing field 'source' (string)"),
                         ({"drive_ports": 8, "source": "s", "bays": 4}, "unknown field 'bays'")):
        p.write_text(entry("server", fields, array=False))
        msg = refused(p)
        assert msg.startswith(f"{p}: [server]: ") and says in msg, msg
    p.write_text(entry("server", {"drive_ports": 8, "source": "s"}))   # [[server]]: an array
    assert refused(p) == f"{p}: 'server' must be one table written [server]"


# -- the property test ----------------------------------------------------------------------------------------

def _valid_number(field: str) -> st.SearchStrategy:
    lo, hi = BOUNDS[field]
    lo = max(lo, 1e-3) if field != "price_usd" else 1.0   # price 0 needs notes; kept out of the valid set
    return st.one_of(st.integers(int(math.ceil(lo)), min(int(hi), 10**6)),
                     st.floats(lo, hi, allow_nan=False, allow_infinity=False))


INVALID_NUMBERS = st.sampled_from([math.nan, math.inf, -math.inf, -1.0, -7, 0, 1e308, 2e9, 10**20, 1e-9,
                                   "12", True, [1]])
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=12)


def _control(s: str) -> bool:
    return any((ord(c) < 32 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f for c in s)


@st.composite
def catalogs(draw) -> tuple[dict, dict, int | None, set[str]]:
    """A device, an overhead that applies to it, maybe a [server] table; and the set of invalid fields."""
    bad: set[str] = set()
    dev: dict[str, Any] = {"id": "gen-dev", "kind": "sata-ssd", "interface": "sata-6g"}
    for f in ("name", "source"):
        if draw(st.booleans()):
            dev[f] = "ok text"
        else:
            s = draw(TEXT)
            dev[f] = s
            if not s.strip() or _control(s):
                bad.add(f)
    for f in DEVICE_NUMBERS:
        choice = draw(st.integers(0, 9))
        if choice == 0:
            bad.add(f)                            # missing
            continue
        if choice == 1:
            dev[f] = draw(INVALID_NUMBERS)
            v = dev[f]
            lo, hi = BOUNDS[f]
            ok = (not isinstance(v, (bool, str, list)) and math.isfinite(v) and lo <= v <= hi
                  and (v > 0 or f == "price_usd") and not (f == "price_usd" and v == 0))
            if not ok:
                bad.add(f)
        else:
            dev[f] = draw(_valid_number(f))
    if draw(st.integers(0, 9)) == 0:
        dev["colour"] = "red"
        bad.add("colour")
    ov = {"id": "gen-hba", "name": "gen HBA", "price_usd": draw(st.integers(0, 5000) | st.floats(1, 5000)),
          "per_devices": draw(st.integers(1, 64)), "max_mbps": draw(st.floats(1, 20000)),
          "applies_to": ["gen-dev"], "source": "gen", "after_server_ports": draw(st.booleans())}
    if ov["price_usd"] == 0:
        ov["notes"] = "free"
    ports = draw(st.none() | st.integers(0, 40))
    return dev, ov, ports, bad


@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(catalogs(), st.integers(1, 200))
def test_generated_entries_load_exactly_or_are_refused_by_name(tmp_path, generated, n):
    dev, ov, ports, bad = generated
    p = tmp_path / "gen.toml"
    text = entry("device", dev) + entry("overhead", ov)
    if ports is not None:
        text += entry("server", {"drive_ports": ports, "source": "gen"}, array=False)
    p.write_text(text, encoding="utf-8")
    if bad:
        with pytest.raises(DbtierError) as exc:
            with_timeout(lambda: load_catalog([p]))
        msg = exc.value.message
        assert msg.startswith(f"{p}: device #1 (id 'gen-dev'): "), msg
        assert any(f"'{f}'" in msg for f in bad), (msg, bad)
        return
    cat = with_timeout(lambda: load_catalog([p]))
    d = cat.device("gen-dev")
    for f in DEVICE_NUMBERS + ("name", "source"):
        assert getattr(d, f) == dev[f] and type(getattr(d, f)) is type(dev[f])
    # the price of n devices, worked out here: n x price + ceil(beyond / per_devices) x overhead price, where
    # `beyond` is n less the server's own ports for a port overhead (the shipped 8 when the file has no [server])
    server_ports = 8 if ports is None else ports
    beyond = max(0, n - server_ports) if ov["after_server_ports"] else n
    units = -(-beyond // ov["per_devices"])
    want = n * dev["price_usd"] + units * ov["price_usd"]
    e = evaluate(configure(cat, "gen-dev", n, "jbod"))
    assert e.price_usd == pytest.approx(want, rel=1e-12)
    assert e.overheads[0]["units"] == units
    # and devices only: n x price
    assert evaluate(configure(cat, "gen-dev", n, "jbod", devices_only=True)).price_usd == \
        pytest.approx(n * dev["price_usd"], rel=1e-12)


@pytest.mark.slow  # a property test (Hypothesis): make test, not make test-fast
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_give_a_catalog_or_a_named_error(data):
    """Random bytes as a file's text: a DbtierError naming the origin, or (rarely) a valid catalog."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # decoding is the file reader's job, tested above
    try:
        with_timeout(lambda: parse_catalog_file(text, "fuzz.toml"))
    except DbtierError as exc:
        assert exc.message.startswith("fuzz.toml")
