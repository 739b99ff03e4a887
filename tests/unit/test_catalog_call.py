"""`dbtier catalog list|show|template` as library calls (dbtier.model.plan.catalog_calls): the requests'
refusals, each in the command's words, and each call's section against the document the command stores for
the same input (the same keys, in the same order, with the same values)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import DATA, assert_clean_error, call_main, refused_with, stored_doc
from dbtier.model.plan import catalog_template
from dbtier.model.plan.catalog_calls import (CatalogList, CatalogListRequest, CatalogShow, CatalogShowRequest,
                                             CatalogTemplate, CatalogTemplateRequest, device_template,
                                             list_catalog, show_device)
from dbtier.model.plan.catalog import Device
from dbtier.results.result import Result

GRADES = str(DATA / "catalog" / "grades.toml")
QUOTES = str(DATA / "prices" / "quotes.csv")
STALE = str(DATA / "prices" / "stale.csv")


stored = stored_doc


def same_as_stored(res: Result, doc: dict[str, Any]) -> None:
    section = res.to_json()
    assert [k for k in doc if k in section] == list(section)          # the command's key order
    assert {k: doc[k] for k in section} == section
    assert doc["result_kind"] == res.kind


_refused = refused_with


def test_each_refusal_in_the_commands_words(tmp_path):
    e = _refused("--class bogus: not a device class", lambda: CatalogTemplateRequest(device_class="bogus"))
    assert e.hint == f"give one of {', '.join(catalog_template.classes())}"
    r = call_main("catalog", "template", "--class", "bogus", cwd=tmp_path)
    assert_clean_error(r, e.message)
    e = _refused("unknown device id 'nope'", lambda: show_device(CatalogShowRequest(id="nope")))
    assert_clean_error(call_main("catalog", "show", "nope", cwd=tmp_path), e.message)
    bad = str(DATA / "catalog" / "syntax-error.toml")
    e = _refused("not valid TOML", lambda: list_catalog(CatalogListRequest(catalog_files=(bad,))))
    assert_clean_error(call_main("catalog", "list", "--catalog", bad, cwd=tmp_path), e.message)
    _refused("unknown device id 't-dc-nvme-1tb'", lambda: list_catalog(CatalogListRequest(prices_file=QUOTES)))
    # argparse refuses an unknown --kind; a library caller is refused by the request
    e = _refused("device kind 'tape': not a kind of the catalog", lambda: CatalogListRequest(kind="tape"))
    assert e.hint and "hdd" in e.hint
    assert not (tmp_path / "runs").exists()                            # a refusal leaves no run behind


@pytest.mark.parametrize("args, req", [
    ((), CatalogListRequest()),
    (("--kind", "hdd"), CatalogListRequest(kind="hdd")),
    (("--catalog", GRADES, "--prices", QUOTES, "--class", "nvme-client"),
     CatalogListRequest(catalog_files=(GRADES,), prices_file=QUOTES, device_class="nvme-client")),
    (("--catalog", GRADES, "--prices", STALE), CatalogListRequest(catalog_files=(GRADES,), prices_file=STALE)),
])
def test_list_is_the_commands_document(tmp_path, args, req):
    res = list_catalog(req)
    assert isinstance(res, CatalogList) and res.kind == "catalog.list"
    doc = stored(tmp_path, "catalog", "list", *args)
    same_as_stored(res, doc)
    assert doc["params"] == req.list_params()
    assert [d.id for d in res.devices] == [d["id"] for d in doc["devices"]]
    assert all(isinstance(d, Device) for d in res.devices)
    assert (res.prices is None) == ("prices" not in doc)


def test_show_is_the_commands_document(tmp_path):
    req = CatalogShowRequest(catalog_files=(GRADES,), prices_file=QUOTES, id="t-dc-nvme-1tb")
    res = show_device(req)
    assert isinstance(res, CatalogShow) and res.device.id == "t-dc-nvme-1tb"
    doc = stored(tmp_path, "catalog", "show", "t-dc-nvme-1tb", "--catalog", GRADES, "--prices", QUOTES)
    same_as_stored(res, doc)
    assert doc["params"] == req.show_params()
    assert res.price["from"] == "quote" and [o.id for o in res.overheads] == [o["id"] for o in doc["overheads"]]
    plain = show_device(CatalogShowRequest(id="sas-15k-73gb"))
    same_as_stored(plain, stored(tmp_path / "plain", "catalog", "show", "sas-15k-73gb"))


def test_template_is_the_commands_document_and_loads(tmp_path):
    req = CatalogTemplateRequest(device_class="hdd-nl")
    res = device_template(req)
    assert isinstance(res, CatalogTemplate) and res.device_class == "hdd-nl" and res.text == res["template"]
    doc = stored(tmp_path, "catalog", "template", "--class", "hdd-nl")
    same_as_stored(res, doc)
    assert doc["params"] == req.params()
    fixed = device_template(CatalogTemplateRequest(month="2026-01"))
    assert fixed.device_class == catalog_template.DEFAULT_CLASS and 'price_date = "2026-01"' in fixed.text
    mine = tmp_path / "mine.toml"
    mine.write_text(fixed.text)
    shown = show_device(CatalogShowRequest(catalog_files=(str(mine),), id=f"my-{fixed.device_class}"))
    assert shown.device.price_date == "2026-01"


def test_a_result_cannot_be_changed():
    res = list_catalog(CatalogListRequest(kind="hdd"))
    with pytest.raises(TypeError):
        res.section["devices"] = []  # type: ignore[index]
    with pytest.raises(AttributeError):
        res.devices = ()  # type: ignore[misc]
    assert isinstance(res["devices"], tuple) and isinstance(res.to_json()["devices"], list)
    assert res.to_json() == list_catalog(CatalogListRequest(kind="hdd")).to_json()
