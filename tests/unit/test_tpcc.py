"""TPC-C-like data generation (workloads/tpcc.py) against values worked by hand from the spec."""

from __future__ import annotations

import random
import zlib
from collections import Counter
from datetime import datetime

import pytest

from dbtier.workloads import tpcc


class FixedDraws:
    """A stand-in for random.Random whose randint returns the given values in turn."""

    def __init__(self, *values: int):
        self.values = list(values)
        self.asked: list[tuple[int, int]] = []

    def randint(self, lo: int, hi: int) -> int:
        self.asked.append((lo, hi))
        return self.values.pop(0)

    def randbytes(self, n: int) -> bytes:
        return bytes(n)


@pytest.mark.parametrize("n,name", [
    (371, "PRICALLYOUGHT"),   # 3 PRI, 7 CALLY, 1 OUGHT (the spec's own example, clause 4.3.2.3)
    (0, "BARBARBAR"),
    (999, "EINGEINGEING"),
    (40, "BARPRESBAR"),        # 0 BAR, 4 PRES, 0 BAR
    (528, "ESEABLEATION"),     # 5 ESE, 2 ABLE, 8 ATION
])
def test_lastname_syllables(n, name):
    """Clause 4.3.2.3: BAR OUGHT ABLE PRI PRES ESE ANTI CALLY ATION EING for digits 0..9."""
    assert tpcc.lastname(n) == name


def test_lastname_out_of_range():
    for n in (-1, 1000):
        with pytest.raises(ValueError):
            tpcc.lastname(n)


def test_nurand_worked_by_hand():
    """NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x, clause 2.1.6.

    C_LAST, C = 123: 200 | 555 = 0b0011001000 | 0b1000101011 = 0b1011101011 = 747; (747 + 123) % 1000 = 870.
    C_LAST, C = 300: (747 + 300) % 1000 = 47 (wraps).
    C_ID, C = 0: 1023 | 2000 = 2047; 2047 % 3000 + 1 = 2048.
    OL_I_ID, C = 5: 8191 | 100000 = 0b11000011010100000 | 0b1111111111111 = 106495; (106495 + 5) % 100000 + 1 = 6501.
    """
    r = FixedDraws(200, 555)
    assert tpcc.nurand(r, 255, 0, 999, 123) == 870
    assert r.asked == [(0, 255), (0, 999)]
    assert tpcc.nurand(FixedDraws(200, 555), 255, 0, 999, 300) == 47
    r = FixedDraws(1023, 2000)
    assert tpcc.nurand(r, 1023, 1, 3000, 0) == 2048
    assert r.asked == [(0, 1023), (1, 3000)]
    assert tpcc.nurand(FixedDraws(8191, 100000), 8191, 1, 100000, 5) == 6501


def test_nurand_matches_its_exact_distribution():
    """NURand(255, 0, 999, C=0)'s exact law, by enumerating the 256 x 1000 equally likely draws,
    against 200,000 samples: the most frequent name is 4-5x more frequent than the rarest, and
    the sample shares agree with the exact ones."""
    exact = Counter(((a | b) % 1000) for a in range(256) for b in range(1000))
    rng = random.Random(7)
    got = Counter(tpcc.nurand(rng, 255, 0, 999, 0) for _ in range(200_000))
    # numbers with all of 0..255's bits set are the hot ones: 255 | b == 255 for b <= 255
    assert max(exact.values()) / min(exact.values()) > 4
    for v in (255, 0, 511, 767, 1):
        assert got[v] / 200_000 == pytest.approx(exact[v] / 256_000, rel=0.15)


def test_c_last_constants_obey_the_delta_rule():
    """Clause 2.1.6.1: C_delta = |C_run - C_load| in 65..119, not 96 nor 112; both in 0..255."""
    seen = set()
    for seed in range(2000):
        c_load, c_run = tpcc.c_last_constants(random.Random(seed))
        delta = abs(c_run - c_load)
        assert 0 <= c_load <= 255 and 0 <= c_run <= 255
        assert 65 <= delta <= 119 and delta not in (96, 112)
        seen.add(delta)
    assert 96 not in seen and 112 not in seen and len(seen) == 55 - 2


def test_chars_maps_bytes_and_drops_the_biased_top():
    """Alphabet of 62: byte 0 -> '0', 61 -> 'z', 62 -> '0', 247 -> 247 - 3*62 = 61 -> 'z';
    bytes 248..255 would make 0..7 more likely, so they are dropped."""
    chunks = [bytes([0, 248, 61, 255, 62, 247]), bytes([10, 36])]
    ch = tpcc.Chars(tpcc.ALNUM, lambda n: chunks.pop(0), chunk=1)
    assert ch.take(4) == b"0z0z"
    assert ch.take(2) == b"Aa"  # 10 -> 'A', 36 -> 'a'


def test_astr_lengths_alphabet_and_uniformity():
    """a-string [300..500] (C_DATA): every length in range, mean ~400, only 0-9A-Za-z, each ~1/62."""
    g = tpcc.Gen(random.Random(1))
    strings = [g.astr(300, 500) for _ in range(5000)]
    lengths = [len(s) for s in strings]
    assert min(lengths) >= 300 and max(lengths) <= 500
    assert sum(lengths) / len(lengths) == pytest.approx(400, abs=3)
    counts = Counter(b"".join(strings))
    assert set(counts) == set(tpcc.ALNUM)
    total = sum(counts.values())
    assert all(abs(c / total - 1 / 62) < 0.1 / 62 for c in counts.values())


def test_random_text_does_not_compress():
    """Random alphanumerics carry log2(62) = 5.954 bits a character: zlib (level 6) keeps at least
    5.954 / 8 = 0.744 of the size; the old loader's repeated md5 text (32 hex characters repeated
    to 300) compressed to 0.074 of its size."""
    g = tpcc.Gen(random.Random(2))
    raw = b"\n".join(g.astr(300, 500) for _ in range(3000))
    assert len(zlib.compress(raw, 6)) / len(raw) > 0.744
    import hashlib
    md5_text = b"\n".join((hashlib.md5(b"%d" % i).hexdigest().encode() * 10)[:300] for i in range(3000))
    assert len(zlib.compress(md5_text, 6)) / len(md5_text) < 0.15


def test_data_holds_original_in_ten_percent():
    """I_DATA / S_DATA: a-string [26..50], 'ORIGINAL' at a random position in 10% of rows (4.3.3.1)."""
    g = tpcc.Gen(random.Random(3))
    rows = [g.data(26, 50) for _ in range(20_000)]
    assert all(26 <= len(r) <= 50 for r in rows)
    with_original = [r for r in rows if b"ORIGINAL" in r]
    assert 0.09 < len(with_original) / len(rows) < 0.11
    positions = {r.index(b"ORIGINAL") for r in with_original}
    assert 0 in positions and max(positions) >= 40  # anywhere, up to len - 8


def test_fixed_decimals():
    g = tpcc.Gen(FixedDraws(0, 2000, 100, 10000, 1, 999999))
    assert [g.fixed(4, 0, 2000), g.fixed(4, 0, 2000)] == [b"0.0000", b"0.2000"]
    assert [g.fixed(2, 100, 10000), g.fixed(2, 100, 10000)] == [b"1.00", b"100.00"]
    assert [g.fixed(2, 1, 999999), g.fixed(2, 1, 999999)] == [b"0.01", b"9999.99"]


@pytest.fixture(scope="module")
def warehouse_rows():
    """Warehouse 2's eight tables as COPY text, split into rows of fields (about 3 s)."""
    copies = tpcc.warehouse_copies(2, tpcc.Gen(random.Random(4)), 17, datetime(2026, 1, 2, 3, 4, 5))
    return {stmt.split()[1]: [r.split(b"\t") for r in b"".join(chunks).splitlines()] for stmt, chunks in copies}


@pytest.mark.slow
def test_warehouse_cardinalities(warehouse_rows):
    """Clause 4.3.3.1 for one warehouse: 1 warehouse, 10 districts, 100,000 stock, 30,000 customers and
    history rows, 30,000 orders, 9,000 new orders (orders 2101..3000), 5..15 lines an order."""
    t = warehouse_rows
    assert [len(t[k]) for k in ("warehouse", "district", "stock", "customer", "history", "orders", "new_order")] == \
        [1, 10, 100_000, 30_000, 30_000, 30_000, 9_000]
    assert len(t["order_line"]) == sum(int(o[6]) for o in t["orders"])
    columns = {"warehouse": 9, "district": 11, "stock": 17, "customer": 21, "history": 8, "orders": 8,
               "new_order": 3, "order_line": 10}
    for table, n in columns.items():
        assert {len(r) for r in t[table]} == {n}, table


def test_customers_last_names_and_text(warehouse_rows):
    """The first 1000 customers of a district are named from 0..999 in order, the rest by
    NURand(255, 0, 999) (C_load); text columns are a-strings of the spec's lengths."""
    rows = warehouse_rows["customer"]
    names = [tpcc.lastname(n).encode() for n in range(1000)]
    for d in range(10):
        district = rows[d * 3000:(d + 1) * 3000]
        assert [r[5] for r in district[:1000]] == names
        assert set(r[5] for r in district[1000:]) <= set(names)
    for r in rows:
        assert 8 <= len(r[3]) <= 16 and r[4] == b"OE"
        assert all(10 <= len(x) <= 20 for x in r[6:9]) and len(r[9]) == 2 and r[10].endswith(b"11111")
        assert len(r[11]) == 16 and r[11].isdigit()
        assert 300 <= len(r[20]) <= 500 and r[20].isalnum()
    bc = sum(r[13] == b"BC" for r in rows) / len(rows)
    assert 0.09 < bc < 0.11


def test_orders_and_lines(warehouse_rows):
    """O_C_ID is a permutation of 1..3000 per district; orders < 2101 are delivered (carrier set,
    OL_DELIVERY_D set, OL_AMOUNT 0), later ones are not; OL_DIST_INFO is 24 random characters."""
    orders = warehouse_rows["orders"]
    for d in range(10):
        assert sorted(int(o[3]) for o in orders[d * 3000:(d + 1) * 3000]) == list(range(1, 3001))
    for o in orders:
        assert (o[5] != b"\\N") == (int(o[0]) < 2101)
    for ol in warehouse_rows["order_line"]:
        old = int(ol[0]) < 2101
        assert (ol[6] != b"\\N") == old and (ol[8] == b"0.00") == old
        assert len(ol[9]) == 24 and ol[9].isalnum()
    stock = warehouse_rows["stock"]
    assert all(len(x) == 24 for x in stock[0][3:13])
    assert 0.09 < sum(b"ORIGINAL" in s[16] for s in stock) / len(stock) < 0.11


@pytest.mark.slow
def test_item_rows():
    _, chunks = tpcc.item_copy(tpcc.Gen(random.Random(5)))
    rows = [r.split(b"\t") for r in b"".join(chunks).splitlines()]
    assert [int(r[0]) for r in rows] == list(range(1, 100_001))
    assert all(14 <= len(r[2]) <= 24 and 1 <= int(r[1]) <= 10000 for r in rows)
    assert all(1.0 <= float(r[3]) <= 100.0 for r in rows)


def test_deviations_name_what_is_not_tpcc():
    text = " ".join(tpcc.DEVIATIONS)
    for needle in ("think time", "home warehouse", "SKIP LOCKED", "roll back", "tpmC"):
        assert needle in text
