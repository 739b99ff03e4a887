"""Object-trace readers (sim/trace/objects.py) on libCacheSim's real CloudPhysics trace in its two binary formats,
checked against each other and against the same trace's text (CSV) form, plus cut and damaged files."""

from __future__ import annotations

import csv
import json
import io
import lzma
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.trace import objects

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


# -- object CSVs through --columns, and content detection ---------------------------------------------


@pytest.fixture(scope="module")
def og_csv(og, tmp_path_factory):
    """The binary trace written as a CSV with a header (`ts,key,bytes`) and as one without."""
    import pyarrow.csv as pacsv
    d = tmp_path_factory.mktemp("csv")
    table = pa.table({"ts": og.time_s, "key": og.obj_id, "bytes": og.size})
    pacsv.write_csv(table, d / "requests.csv")
    pacsv.write_csv(table, d / "bare.csv", pacsv.WriteOptions(include_header=False))
    return d / "requests.csv", d / "bare.csv"


def _same_requests(got, og):
    assert len(got.obj_id) == REQUESTS and got.next_access is None
    assert np.array_equal(got.obj_id, og.obj_id) and np.array_equal(got.size, og.size)


def test_csv_by_header_name_and_by_number_is_the_binary_trace(og, og_csv, tmp_path):
    named, bare = og_csv
    got = objects.load_objects(named, columns="id=key,size=bytes,time=ts")
    _same_requests(got, og)
    assert np.array_equal(got.time_s, og.time_s)
    _same_requests(objects.load_objects(bare, columns="id=2,size=3"), og)
    _same_requests(objects.load_objects(named, columns="size=3,id=2"), og)       # numbers past a header
    assert objects.resolve(named, columns="id=key")[0] == "csv"
    import gzip
    gz = tmp_path / "requests.csv.gz"
    gz.write_bytes(gzip.compress(named.read_bytes(), 1))
    _same_requests(objects.load_objects(gz, columns="id=key,size=bytes"), og)
    zst = _zst(named.read_bytes(), tmp_path / "requests.csv.zst")
    _same_requests(objects.load_objects(zst, "csv", columns="id=key,size=bytes"), og)


def test_csv_without_size_is_unit_sizes_and_times_take_their_unit(og, og_csv, tmp_path):
    got = objects.load_objects(og_csv[0], columns="id=key")
    assert np.array_equal(got.obj_id, og.obj_id) and (got.size == 1).all() and (got.time_s == 0).all()
    p = tmp_path / "ms.tsv"
    p.write_text("1500\t7\n2999.5\t8\n")
    got = objects.load_objects(p, columns="time=1,id=2,time_unit=ms,delimiter=tab")
    assert got.time_s.tolist() == [1, 2] and got.obj_id.tolist() == [7, 8]


def test_csv_string_ids_and_ops(tmp_path):
    p = tmp_path / "kv.csv"
    p.write_text('key,op,size\nuser:a,get,10\n"user,b",set,20\nuser:a, get ,10\n17,delete,1\n\n')
    parts = list(objects.read_objects(p, columns="id=key,size=size,op=op"))
    assert np.concatenate([c.obj_id for c in parts]).tolist() == [0, 1, 0, 2]    # in order of first appearance
    assert np.concatenate([c.size for c in parts]).tolist() == [10, 20, 10, 1]
    assert parts[0].ops == {"get": 2, "set": 1, "delete": 1}                     # counted, not filtered


def test_integer_ids_then_a_text_one_is_refused_naming_the_line(tmp_path, monkeypatch):
    monkeypatch.setattr(objects, "TEXT_BLOCK_BYTES", 64)                       # several blocks
    p = tmp_path / "ids.csv"
    p.write_text("id,size\n" + "".join(f"{i},100\n" for i in range(40)) + "oops,100\n")
    with pytest.raises(DbtierError) as e:
        objects.load_objects(p, columns="id=id,size=size")
    assert f"{p}: line 42: id 'oops' is not an integer" in e.value.message


@pytest.mark.parametrize("text, spec, needles", [
    ("ts,key,bytes\n1,7,512\n", "id=key,size=size", ["--columns size=size: no such column",
                                                     "the header has: ts, key, bytes"]),
    ("1,7,512\n", "id=2,size=5", ["--columns size=5: line 1 has 3 fields"]),
    ("key,bytes\n7,512\n8,lots\n", "id=key,size=bytes", ["line 3: size 'lots' is not a whole number"]),
    ("key,bytes\n7,512\n8,-4\n", "id=key,size=bytes", ["line 3: size -4 bytes is negative"]),
    ("key,bytes\n7,512\n8,1.5\n", "id=key,size=bytes", ["line 3: size '1.5' is not a whole number"]),
    ("key,ts\n7,1\n8,soon\n", "id=key,time=ts", ["line 3: time 'soon' is not a finite number"]),
    ("", "id=1", ["empty file (no lines)"]),
    ("\n  \n", "id=1", ["empty file (no lines)"]),
    ("key,bytes\n", "id=key", ["no requests (only a header line)"]),
    ("key,bytes\n7,512\n8\n", "id=key,size=bytes", ["not the CSV --columns maps, at line 2 or after",
                                                 "Expected 2 columns"]),
    ("key\n7\n", "id=key,offset=2", ["offset maps a block trace"]),
    ("key\n7\n", "size=2", ["missing id (which column holds it?)"]),
])
def test_bad_csv_gets_one_message(tmp_path, text, spec, needles):
    p = tmp_path / "r.csv"
    p.write_text(text)
    with pytest.raises(DbtierError) as e:
        objects.load_objects(p, columns=spec)
    assert all(n in e.value.message for n in needles), e.value.message
    assert e.value.hint


def test_columns_with_a_binary_trace_or_csv_without_columns_is_refused(og_csv):
    for fmt in ("auto", "oracleGeneral", "csv"):
        with pytest.raises(DbtierError, match="--columns maps a CSV, but"):
            objects.load_objects(OG, fmt, columns="id=1")
    with pytest.raises(DbtierError, match="--format csv needs --columns"):
        objects.load_objects(og_csv[0], "csv")
    with pytest.raises(DbtierError, match="an object CSV is read through --columns"):
        objects.load_objects(og_csv[0])


def test_oracle_general_without_a_telling_name_is_detected_by_content(og, tmp_path):
    dat = tmp_path / "trace.dat"
    dat.write_bytes(OG.read_bytes())
    assert objects.detect(dat) == ("oracleGeneral", False)
    assert np.array_equal(objects.load_objects(dat).next_access, og.next_access)
    x = tmp_path / "x.zst"
    x.write_bytes(OG_ZST.read_bytes())
    assert objects.detect(x) == ("oracleGeneral", True)
    assert np.array_equal(objects.load_objects(x).obj_id, og.obj_id)
    cut = tmp_path / "cut.dat"
    cut.write_bytes(OG.read_bytes()[:24 * 100 + 5])              # not whole records: not judged oracleGeneral
    with pytest.raises(DbtierError, match="not an object trace dbtier knows by its name or its first records"):
        objects.detect(cut)
    with pytest.raises(DbtierError, match="record 101 is cut off"):
        objects.load_objects(cut, "oracleGeneral")                # --format still reads a name that tells nothing


def test_random_bytes_and_text_without_a_telling_name_are_refused(og_csv, tmp_path):
    rnd = tmp_path / "noise.dat"
    rnd.write_bytes(np.random.default_rng(7).integers(0, 256, 24 * 4096, dtype=np.uint8).tobytes())
    with pytest.raises(DbtierError, match="not an object trace dbtier knows by its name or its first records"):
        objects.load_objects(rnd)
    text = tmp_path / "requests.log"
    text.write_bytes(og_csv[0].read_bytes())
    with pytest.raises(DbtierError, match="text with commas .* an object CSV is read through --columns"):
        objects.load_objects(text)
    _same_requests(objects.load_objects(text, columns="id=key,size=bytes"), objects.load_objects(OG))
    ids = tmp_path / "ids.dat"
    ids.write_text("7\n8\n")
    with pytest.raises(DbtierError) as e:
        objects.load_objects(ids)
    assert "--format txt" in e.value.hint


def test_cli_mrc_of_a_csv_is_libcachesims_lru(og_csv, tmp_path):
    from conftest import call_main
    r = call_main("simulate", "mrc", str(og_csv[0]), "--columns", "id=key,size=bytes", "--policy", "lru",
                  "--sizes", "128MiB,256MiB", "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["mrc"]
    assert m["trace"]["format"] == "csv" and m["trace"]["requests"] == REQUESTS
    assert [p["misses"] for p in m["curves"][0]["points"]] == [93374, 89783]
    bad = call_main("simulate", "mrc", str(OG), "--columns", "id=1", cwd=tmp_path)
    assert bad.returncode != 0 and "--columns maps a CSV" in bad.stderr and "Traceback" not in bad.stderr
