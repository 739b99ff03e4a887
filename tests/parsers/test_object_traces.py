"""Object-trace readers (sim/objects.py) on libCacheSim's real CloudPhysics trace in its two binary formats,
checked against each other and against the same trace's text (CSV) form, plus cut and damaged files."""

from __future__ import annotations

import csv
import io
import lzma
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim import objects

DATA = Path(__file__).parent.parent / "data" / "objects"
OG = DATA / "cloudPhysicsIO.oracleGeneral.bin"
OG_ZST = DATA / "cloudPhysicsIO.oracleGeneral.bin.zst"
VSCSI_ZST = DATA / "cloudPhysicsIO.vscsi.zst"
REQUESTS = 113_872


def _unzst(src: Path, dest: Path) -> Path:
    with pa.input_stream(str(src), compression="zstd") as f:
        dest.write_bytes(f.read())
    return dest


def _zst(data: bytes, dest: Path) -> Path:
    with pa.output_stream(str(dest), compression="zstd") as f:
        f.write(data)
    return dest


@pytest.fixture(scope="module")
def og():
    return objects.load_objects(OG)


@pytest.fixture(scope="module")
def csv_rows():
    with lzma.open(DATA.parent / "traces" / "cloudPhysicsIO.csv.xz", "rt") as f:
        rows = list(csv.reader(f))
    return rows[1:]        # version,time,op,size,lbn


def test_oracle_general_reads_the_whole_trace(og):
    assert len(og.obj_id) == REQUESTS and objects.detect(OG) == ("oracleGeneral", False)
    assert (int(og.time_s[0]), int(og.obj_id[0]), int(og.size[0]), int(og.next_access[0])) == (5633898, 42932745, 512, -1)
    assert len(np.unique(og.obj_id)) == 48_974
    assert int((og.next_access == -1).sum()) == 48_974       # each object's last request says "never again"


def test_next_access_is_the_one_based_index_of_the_objects_next_request(og):
    # an independent walk from the end: the next request of the same id
    seen: dict[int, int] = {}
    want = np.empty(REQUESTS, np.int64)
    for i in range(REQUESTS - 1, -1, -1):
        k = int(og.obj_id[i])
        want[i] = seen.get(k, -2) + 1 if k in seen else -1
        seen[k] = i
    assert np.array_equal(og.next_access, want)


def test_zstd_compressed_is_the_same_trace(og):
    z = objects.load_objects(OG_ZST)
    assert objects.detect(OG_ZST) == ("oracleGeneral", True)
    for a, b in ((og.time_s, z.time_s), (og.obj_id, z.obj_id), (og.size, z.size), (og.next_access, z.next_access)):
        assert np.array_equal(a, b)


def test_vscsi_plain_and_zstd_agree_with_the_csv_and_the_oracle_general_ids(og, csv_rows, tmp_path):
    plain = _unzst(VSCSI_ZST, tmp_path / "cloudPhysicsIO.vscsi")
    assert plain.stat().st_size == REQUESTS * 32                 # version 1: 32-byte records
    for path in (plain, VSCSI_ZST):
        v = objects.load_objects(path)
        assert len(v.obj_id) == REQUESTS and v.next_access is None
        assert np.array_equal(v.obj_id, og.obj_id)               # libCacheSim's two files: the same objects
        assert np.array_equal(v.time_s, og.time_s)
        assert [int(x) for x in v.obj_id[:2000]] == [int(r[4]) for r in csv_rows[:2000]]
        assert [int(x) for x in v.size[:2000]] == [int(r[3]) for r in csv_rows[:2000]]
        assert [int(x) for x in v.time_s[:2000]] == [int(r[1]) for r in csv_rows[:2000]]


def test_vscsi_version_2_records(og, tmp_path):
    v1 = np.frombuffer(_unzst(VSCSI_ZST, tmp_path / "v1.vscsi").read_bytes(), objects.VSCSI1)[:5000]
    v2 = np.zeros(len(v1), objects.VSCSI2)
    for name in ("cmd", "sn", "len", "nsg", "lbn", "ts"):
        v2[name] = v1[name]
    v2["ver"] = 2 << 8
    path = tmp_path / "v2.vscsi"
    path.write_bytes(v2.tobytes())
    got = objects.load_objects(path)
    assert np.array_equal(got.obj_id, og.obj_id[:5000]) and np.array_equal(got.size, v1["len"].astype(np.int64))


def test_chunks_cover_the_trace_in_order(og):
    parts = list(objects.read_objects(OG, chunk=10_000))
    assert [p.first for p in parts] == list(range(0, REQUESTS, 10_000))
    assert np.array_equal(np.concatenate([p.obj_id for p in parts]), og.obj_id)


def test_a_cut_record_is_named(tmp_path):
    data = OG.read_bytes()[:1000 * 24 + 10]
    for path in ((tmp_path / "cut.oracleGeneral.bin"), _zst(data, tmp_path / "cut.oracleGeneral.bin.zst")):
        if path.suffix == ".bin":
            path.write_bytes(data)
        with pytest.raises(DbtierError) as e:
            objects.load_objects(path)
        assert str(path) in e.value.message
        assert "record 1,001 is cut off (10 of its 24 bytes)" in e.value.message


def test_damaged_zstd_is_named(tmp_path):
    raw = OG_ZST.read_bytes()
    path = tmp_path / "bad.oracleGeneral.bin.zst"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DbtierError) as e:
        objects.load_objects(path)
    assert str(path) in e.value.message and ("damaged zstd" in e.value.message or "cut off" in e.value.message)


def test_not_vscsi_and_unknown_names(tmp_path):
    bad = tmp_path / "x.vscsi"
    bad.write_bytes(bytes(range(256)) * 2)
    with pytest.raises(DbtierError, match="not a vscsi trace"):
        objects.load_objects(bad)
    other = tmp_path / "x.dat"
    other.write_bytes(b"\x00" * 100)      # (0x01 bytes would pass libCacheSim's vscsi v1 test)
    with pytest.raises(DbtierError, match="not an object trace dbtier knows"):
        objects.load_objects(other)


def test_plain_text_ids(tmp_path):
    nums = tmp_path / "ids.txt"
    nums.write_text("7\n3\n7\n 12\n")
    t = objects.load_objects(nums)
    assert t.obj_id.tolist() == [7, 3, 7, 12] and t.size.tolist() == [1, 1, 1, 1]
    words = tmp_path / "keys.txt"
    words.write_text("user:a\nuser:b\nuser:a\nitem 9\n")
    assert objects.load_objects(words).obj_id.tolist() == [0, 1, 0, 2]
    z = _zst(io.BytesIO(b"5\n5\n6\n").getvalue(), tmp_path / "ids.txt.zst")
    assert objects.load_objects(z).obj_id.tolist() == [5, 5, 6]
