"""The device catalog: shipped data, validation messages, overrides, overhead matching."""

from __future__ import annotations

import ast
import re
from importlib import resources
from pathlib import Path

import pytest

import dbtier.model.plan.catalog as catalog_module
from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import KINDS, Catalog, Device, Overhead, load_catalog, parse_catalog_text

DATA = Path(__file__).resolve().parent.parent / "data" / "catalog"

DEVICE = """
[[device]]
id = "{id}"
name = "A device"
kind = "{kind}"
interface = "sata-6g"
capacity_gb = 500
price_usd = {price}
read_iops = 90000
write_iops = 80000
read_mbps = 550
write_mbps = 500
read_latency_us = 100
write_latency_us = 40
source = "test"
"""


def device_text(id: str = "x", kind: str = "sata-ssd", price: str = "50", extra: str = "") -> str:
    return DEVICE.format(id=id, kind=kind, price=price) + extra


def error_of(text: str, origin: str = "user.toml") -> str:
    with pytest.raises(DbtierError) as exc:
        parse_catalog_text(text, origin)
    return exc.value.message


@pytest.fixture(scope="module")
def shipped() -> Catalog:
    return load_catalog()


# --- shipped data -----------------------------------------------------------

def test_provenance_names_the_files_overrides_and_server(shipped):
    doc = shipped.provenance()
    assert doc["files"] == list(shipped.files) and doc["overridden"] == {}
    assert doc["server"] == (shipped.server.to_dict() if shipped.server is not None else None)
    assert Catalog({}, {}).provenance() == {"files": [], "overridden": {}, "server": None}


def test_shipped_catalog_loads_from_package_data(shipped):
    assert shipped.files == ("shipped:legacy.toml", "shipped:current.toml", "shipped:overhead.toml")
    assert len(shipped.devices) >= 45
    assert shipped.overridden == {}


def test_every_shipped_entry_is_sourced_and_well_formed(shipped):
    for d in shipped.devices.values():
        assert re.fullmatch(r"[a-z0-9]+(?:[-.][a-z0-9]+)*", d.id), d.id
        assert d.kind in KINDS
        assert len(d.source) > 20, d.id
        assert re.search(r"(19|20)\d\d", d.source), f"{d.id}: source names no year"
        assert d.origin.startswith("shipped:")
        for f in ("capacity_gb", "read_iops", "write_iops", "read_mbps", "write_mbps",
                  "read_latency_us", "write_latency_us", "price_usd"):
            assert getattr(d, f) > 0, (d.id, f)
    for o in shipped.overheads.values():
        assert re.search(r"(19|20)\d\d", o.source), o.id
        assert o.per_devices > 0 and o.max_mbps > 0 and o.applies_to


def test_the_studies_devices_carry_the_design_figures(shipped):
    sas = shipped.device("sas-15k-73gb")
    assert (sas.kind, sas.capacity_gb, sas.price_usd) == ("hdd", 73, 300)
    assert (sas.read_iops, sas.write_iops, sas.read_mbps, sas.write_mbps) == (250, 250, 100, 100)

    duo = shipped.device("fusionio-iodrive-duo-1.2tb")
    assert (duo.kind, duo.capacity_gb, duo.price_usd) == ("pcie-flash", 1200, 20000)
    assert (duo.read_mbps, duo.write_mbps) == (1500, 1100)
    assert (duo.read_iops, duo.write_iops) == (185000, 278000)

    hba = shipped.overhead("sas2-hba-pcie2-x8")
    assert (hba.price_usd, hba.per_devices, hba.max_mbps) == (1000, 16, 3200)

    for id in ("intel-x25e-32gb", "ocz-vertex3-120gb", "crucial-m4-128gb", "ocz-revodrive-120gb",
               "fusionio-iodrive-320gb", "fusionio-iodrive2-400gb-slc", "fusionio-iodrive2-365gb-mlc"):
        shipped.device(id)


def test_todays_classes_are_present(shipped):
    kinds = {d.kind for d in shipped.devices.values() if d.origin == "shipped:current.toml"}
    assert {"nvme", "sata-ssd", "sas-ssd", "hdd"} <= kinds
    # cloud volumes are sized by `plan size --cloud`, not from the device catalog
    assert "cloud-volume" not in {d.kind for d in shipped.devices.values()}
    assert "ignored" not in shipped.provenance()


def test_a_user_catalogs_cloud_volumes_are_left_out_with_a_note():
    cat = load_catalog([DATA / "cloud-volume.toml"])
    assert "t-local-ssd-1tb" in cat.devices and "t-cloud-gp3-1tb" not in cat.devices
    assert cat.provenance()["ignored"] == [{"id": "t-cloud-gp3-1tb", "interface": "t-ebs",
                                             "origin": str(DATA / "cloud-volume.toml"),
                                             "why": "cloud volumes are sized by plan size --cloud PROVIDER"}]
    # the overhead naming its interface and id loads, and applies to no device left
    assert cat.overhead("t-ebs-bandwidth").applies_to == ("t-ebs", "t-cloud-gp3-1tb")
    assert "t-ebs-bandwidth" not in [o.id for o in cat.overheads_for(cat.device("t-local-ssd-1tb"))]
    with pytest.raises(DbtierError) as exc:
        cat.device("t-cloud-gp3-1tb")
    assert "t-cloud-gp3-1tb" in exc.value.message and "plan size --cloud PROVIDER" in exc.value.message
    assert "--cloud aws|azure|gcp" in exc.value.hint


def test_shipped_files_do_not_share_ids():
    seen: dict[str, str] = {}
    for name in catalog_module.SHIPPED_FILES:
        text = resources.files("dbtier.catalog").joinpath(name).read_text(encoding="utf-8")
        devices, overheads = parse_catalog_text(text, name)
        for e in devices:
            assert e.id not in seen, (e.id, seen.get(e.id), name)
            seen[e.id] = name


def test_model_module_is_pure():
    tree = ast.parse(Path(catalog_module.__file__).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not imported & {"subprocess", "socket", "urllib", "http", "requests"}


# --- lookups ------------------------------------------------------------------

def test_unknown_id_names_it_and_suggests_close_ids(shipped):
    with pytest.raises(DbtierError) as exc:
        shipped.device("sas-15k-72gb")
    assert "unknown device id 'sas-15k-72gb'" in exc.value.message
    assert "'sas-15k-73gb'" in exc.value.message
    assert "dbtier catalog list" in exc.value.hint


def test_unknown_id_suggests_ids_containing_it(shipped):
    with pytest.raises(DbtierError) as exc:
        shipped.device("iodrive-duo")
    assert "'fusionio-iodrive-duo-1.2tb'" in exc.value.message


def test_unknown_id_without_anything_close(shipped):
    with pytest.raises(DbtierError) as exc:
        shipped.device("zzzzzzzz")
    assert exc.value.message == "unknown device id 'zzzzzzzz'"


def test_overheads_pin_the_studies_ssds_to_their_hba(shipped):
    ids = lambda dev: [o.id for o in shipped.overheads_for(shipped.device(dev))]  # noqa: E731
    assert ids("sas-15k-73gb") == ["sas2-hba-pcie2-x8"]          # by interface sas-6g
    assert ids("ocz-vertex3-120gb") == ["sas2-hba-pcie2-x8"]     # by id, over sata-6g
    assert ids("sata-ssd-enterprise-3.84tb") == ["sas3-hba-jbod-pcie4-x8"]  # by interface
    assert ids("hdd-7200-20tb") == ["sas3-hba-jbod-pcie4-x8"]
    assert ids("fusionio-iodrive-duo-1.2tb") == []               # a PCIe card: a slot, no HBA
    assert ids("nvme-enterprise-3.84tb") == ["nvme-jbof-24-pcie4"]  # NVMe past the server's bays: a JBOF
    assert ids("hdd-10k-2.4tb") == ["sas4-hba-jbod-pcie4-x8"]


def _dev(**kw) -> Device:
    base = dict(id="d", name="d", kind="hdd", interface="sas-6g", capacity_gb=1, price_usd=1, read_iops=1,
                write_iops=1, read_mbps=1, write_mbps=1, read_latency_us=1, write_latency_us=1, source="s")
    base.update(kw)
    return Device(**base)


def _ov(id: str, applies_to: tuple[str, ...]) -> Overhead:
    return Overhead(id=id, name=id, price_usd=1, per_devices=1, max_mbps=1, applies_to=applies_to, source="s")


def test_overheads_for_most_specific_match_wins_and_same_level_adds_up():
    d = _dev()
    cat = Catalog({"d": d}, {o.id: o for o in (_ov("by-kind", ("hdd",)), _ov("hba", ("sas-6g",)),
                                                _ov("enclosure", ("sas-6g",)))})
    assert [o.id for o in cat.overheads_for(d)] == ["hba", "enclosure"]
    cat.overheads["pinned"] = _ov("pinned", ("d",))
    assert [o.id for o in cat.overheads_for(d)] == ["pinned"]
    only_kind = Catalog({"d": d}, {"by-kind": _ov("by-kind", ("hdd",))})
    assert [o.id for o in only_kind.overheads_for(d)] == ["by-kind"]


def test_of_kind(shipped):
    assert {d.kind for d in shipped.of_kind("nvme")} == {"nvme"}
    assert len(shipped.of_kind(None)) == len(shipped.devices)


# --- overrides ----------------------------------------------------------------

def test_override_file_replaces_a_shipped_entry_and_adds_new_ones(shipped):
    path = DATA / "override.toml"
    cat = load_catalog([path])
    sas = cat.device("sas-15k-73gb")
    assert sas.price_usd == 190 and sas.origin == str(path)
    assert cat.overridden == {"device:sas-15k-73gb": "shipped:legacy.toml"}
    # keeps its place in the order
    assert list(cat.devices).index("sas-15k-73gb") == list(shipped.devices).index("sas-15k-73gb")
    lun = cat.device("lab-san-lun")
    assert lun.origin == str(path) and lun.price_usd == 0 and lun.notes
    assert [o.id for o in cat.overheads_for(lun)] == ["fc-hba-8g"]
    assert cat.files[-1] == str(path)
    assert len(cat.devices) == len(shipped.devices) + 1
    # the shipped catalog object is unchanged
    assert shipped.device("sas-15k-73gb").price_usd == 300


def test_later_files_win(tmp_path):
    a = tmp_path / "a.toml"
    b = tmp_path / "b.toml"
    a.write_text(device_text("mine", price="10"))
    b.write_text(device_text("mine", price="20"))
    cat = load_catalog([a, b])
    assert cat.device("mine").price_usd == 20 and cat.device("mine").origin == str(b)
    assert cat.overridden == {"device:mine": str(a)}


# --- validation messages ----------------------------------------------------------

def test_missing_file():
    with pytest.raises(DbtierError) as exc:
        load_catalog(["nowhere/missing.toml"])
    assert exc.value.message == "catalog file nowhere/missing.toml not found"
    assert "--catalog" in exc.value.hint


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(DbtierError) as exc:
        load_catalog([tmp_path])
    assert exc.value.message == f"catalog file {tmp_path}: a directory, not a regular file"


def test_missing_field():
    with pytest.raises(DbtierError) as exc:
        load_catalog([DATA / "missing-field.toml"])
    msg = exc.value.message
    assert msg.startswith(str(DATA / "missing-field.toml"))
    assert "device #1 (id 'no-latency')" in msg and "missing field 'write_latency_us'" in msg


def test_wrong_type():
    msg = error_of((DATA / "wrong-type.toml").read_text())
    assert msg == ("user.toml: device #1 (id 'quoted-number'): field 'capacity_gb' must be a number, "
                   "got a string ('1000')")


def test_not_positive_names_the_second_entry():
    msg = error_of((DATA / "not-positive.toml").read_text())
    assert msg == "user.toml: device #2 (id 'zero-iops'): field 'write_iops' must be positive, got 0"


def test_unknown_kind_lists_the_allowed_kinds():
    msg = error_of((DATA / "unknown-kind.toml").read_text())
    assert "device #1 (id 'tape'): unknown kind 'tape'" in msg
    for k in KINDS:
        assert k in msg


def test_toml_syntax_error_gives_the_line():
    msg = error_of((DATA / "syntax-error.toml").read_text())
    assert msg.startswith("user.toml: not valid TOML:")
    assert "line 5" in msg


def test_duplicate_id_within_a_file():
    msg = error_of(device_text("twice") + device_text("other") + device_text("twice"))
    assert msg == ("user.toml: device #3 (id 'twice'): duplicate id, already used by device #1")


def test_unknown_top_level_table():
    msg = error_of(device_text() + '\n[[devices]]\nid = "y"\n')
    assert msg == "user.toml: unknown top-level table 'devices' (allowed: [[device]], [[overhead]], [server])"


def test_single_table_instead_of_array():
    msg = error_of('[device]\nid = "x"\n')
    assert "'device' must be an array of tables written [[device]]" in msg


def test_empty_file():
    assert "no [[device]] or [[overhead]] tables" in error_of("# nothing\n")


def test_unknown_field():
    msg = error_of(device_text(extra='iops = 5\n'))
    assert "device #1 (id 'x'): unknown field 'iops'" in msg


def test_missing_id_is_described():
    text = device_text().replace('id = "x"\n', "")
    assert "device #1 (no id): missing field 'id'" in error_of(text)


def test_boolean_is_not_a_number():
    msg = error_of(device_text(price="true"))
    assert "field 'price_usd' must be a number, got a boolean (True)" in msg


def test_negative_price():
    assert "field 'price_usd' must not be negative, got -5" in error_of(device_text(price="-5"))


def test_zero_price_needs_notes():
    assert "field 'price_usd' is 0 but no notes say why" in error_of(device_text(price="0"))
    devices, _ = parse_catalog_text(device_text(price="0", extra='notes = "already owned"\n'), "user.toml")
    assert devices[0].price_usd == 0


def test_bad_id_and_interface():
    assert "id 'Big Disk' is not lowercase-kebab" in error_of(device_text("Big Disk"))
    text = device_text().replace('interface = "sata-6g"', 'interface = "SATA 6Gb/s"')
    assert "interface 'SATA 6Gb/s' is not a lowercase token" in error_of(text)


OVERHEAD = """
[[overhead]]
id = "hba"
name = "An HBA"
price_usd = 500
per_devices = {per}
max_mbps = 3000
applies_to = {applies}
source = "test"
"""


def test_overhead_per_devices_must_be_a_whole_number():
    msg = error_of(OVERHEAD.format(per="8.5", applies='["hdd"]'))
    assert msg == "user.toml: overhead #1 (id 'hba'): field 'per_devices' must be a whole number, got a number (8.5)"
    assert "field 'per_devices' must be positive, got 0" in error_of(OVERHEAD.format(per="0", applies='["hdd"]'))


def test_overhead_applies_to_must_be_a_list_of_strings():
    assert "field 'applies_to' must be a non-empty list of strings" in error_of(
        OVERHEAD.format(per="8", applies='"hdd"'))
    assert "field 'applies_to' must be a non-empty list of strings" in error_of(OVERHEAD.format(per="8", applies="[]"))


def test_overhead_applies_to_must_match_something(tmp_path):
    f = tmp_path / "o.toml"
    f.write_text(OVERHEAD.format(per="8", applies='["hdd", "sata-12g"]'))
    with pytest.raises(DbtierError) as exc:
        load_catalog([f])
    assert exc.value.message == (f"{f}: overhead #1 (id 'hba'): field 'applies_to': 'sata-12g' "
                                 "matches no kind, interface or device id")


def test_overhead_may_target_kind_interface_or_id(tmp_path):
    f = tmp_path / "o.toml"
    f.write_text(OVERHEAD.format(per="8", applies='["nvme", "pcie4-x4", "hdd-7200-20tb"]'))
    cat = load_catalog([f])
    assert cat.overhead("hba").applies_to == ("nvme", "pcie4-x4", "hdd-7200-20tb")
    assert [o.id for o in cat.overheads_for(cat.device("hdd-7200-20tb"))] == ["hba"]


def test_to_dict_is_json_ready(shipped):
    d = shipped.device("sas-15k-73gb").to_dict()
    assert d["id"] == "sas-15k-73gb" and d["origin"] == "shipped:legacy.toml"
    o = shipped.overhead("sas2-hba-pcie2-x8").to_dict()
    assert isinstance(o["applies_to"], list)
