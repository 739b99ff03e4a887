"""`dbtier catalog` as library calls, one per action, each a request in and a typed, immutable result out:

    list_catalog(CatalogListRequest) -> CatalogList           the devices (of a kind, of a class) and the
                                                               overheads they need, with the server table
    show_device(CatalogShowRequest) -> CatalogShow            one device, the price a plan uses for it and
                                                               the overheads a plan adds for it
    device_template(CatalogTemplateRequest) -> CatalogTemplate  a commented [[device]] entry of a class

The catalog is the shipped one, then the request's files (later entries replace earlier ones by id), with
the request's quote file applied; a file that does not load, an unknown device id or class is refused with
the DbtierError the loaders give, before anything is written. A result holds the section the command adds to
its document (the keys in the command's order) and the typed entries it was made from; the command stores
the section and renders the entries as tables.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.model.plan import catalog_template
from dbtier.model.plan.catalog import KINDS, Catalog, Device, Overhead, load_catalog
from dbtier.model.plan.prices import load_prices, price_basis
from dbtier.results.result import Frozen, Result


def class_of(d: Device) -> str:
    """The class a device is listed under: its device_class; a cloud volume or shared array without one,
    its kind; any other entry without one, "no class"."""
    if d.device_class:
        return d.device_class
    return d.kind if d.kind in ("cloud-volume", "shared-array") else "no class"


@dataclass(frozen=True, kw_only=True)
class CatalogRequest:
    """The catalog read: the extra catalog files (`--catalog`, loaded after the shipped ones, later files
    win) and a quote file (`--prices`: its prices replace the catalog's of the devices it names), as given
    (the document's params and provenance name them so)."""
    catalog_files: tuple[str, ...] = ()
    prices_file: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "catalog_files", tuple(str(f) for f in self.catalog_files))
        if self.prices_file is not None:
            object.__setattr__(self, "prices_file", str(self.prices_file))

    def load(self) -> tuple[Catalog, dict[str, Any] | None]:
        """(the catalog with the quotes applied, the document's `prices` or None without a quote file)."""
        catalog = load_catalog(self.catalog_files)
        if self.prices_file:
            return load_prices(self.prices_file, catalog)
        return catalog, None

    @property
    def inputs(self) -> list[str]:
        """The files read (a run directory never replaces them)."""
        return [*self.catalog_files, *([self.prices_file] if self.prices_file else [])]

    def params(self, action: str, **extra: Any) -> dict[str, Any]:
        """The document's params: the action, the catalog files, the quote file when given, then `extra`."""
        prices = {"prices": self.prices_file} if self.prices_file else {}
        return {"action": action, "catalog_files": list(self.catalog_files), **prices, **extra}


@dataclass(frozen=True, kw_only=True)
class CatalogListRequest(CatalogRequest):
    """`catalog list`: every device, or those of `kind` (catalog.KINDS) and/or of `device_class` (as
    `class_of` names it; a class no device has lists none)."""
    kind: str | None = None
    device_class: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.kind is not None and self.kind not in KINDS:
            raise DbtierError(f"device kind '{self.kind}': not a kind of the catalog",
                              f"give one of {', '.join(KINDS)}")

    @property
    def narrowed(self) -> bool:
        return bool(self.kind or self.device_class)

    def list_params(self) -> dict[str, Any]:
        extra = {"device_class": self.device_class} if self.device_class else {}
        return self.params("list", kind=self.kind, **extra)


@dataclass(frozen=True, kw_only=True)
class CatalogShowRequest(CatalogRequest):
    """`catalog show ID`: the device `id`."""
    id: str

    def show_params(self) -> dict[str, Any]:
        return self.params("show", id=self.id)


@dataclass(frozen=True, kw_only=True)
class CatalogTemplateRequest:
    """`catalog template`: the [[device]] entry of `device_class` (catalog_template.classes()), its
    price_date `month` (YYYY-MM; this month by default, so that the entry loads as it is)."""
    device_class: str = catalog_template.DEFAULT_CLASS
    month: str = field(default_factory=lambda: dt.date.today().strftime("%Y-%m"))

    def __post_init__(self) -> None:
        if self.device_class not in catalog_template.classes():
            catalog_template.template(self.device_class)   # refuses it, in the template's own words

    def params(self) -> dict[str, Any]:
        return {"action": "template", "device_class": self.device_class}


@dataclass(frozen=True, kw_only=True)
class CatalogList(Result):
    """`catalog list`'s answer: the catalog read, the devices listed and the overheads listed (those the
    devices need when the request narrowed them, else every one), and the section made from them
    (`catalog`, `prices` with a quote file, `devices`, `overheads`, `server`)."""
    kind: str = "catalog.list"
    catalog: Catalog = field(compare=False)
    devices: tuple[Device, ...]
    overheads: tuple[Overhead, ...]

    @property
    def prices(self) -> Mapping[str, Any] | None:
        """What the quote file changed (the section's `prices`), None without one."""
        out: Mapping[str, Any] | None = self.section.get("prices")
        return out


def list_catalog(req: CatalogListRequest) -> CatalogList:
    catalog, prices = req.load()
    devices = catalog.of_kind(req.kind)
    if req.device_class:
        devices = [d for d in devices if class_of(d) == req.device_class]
    if req.narrowed:  # only the overheads those devices need
        overheads = list({o.id: o for d in devices for o in catalog.overheads_for(d)}.values())
    else:
        overheads = list(catalog.overheads.values())
    section: dict[str, Any] = {"catalog": catalog.provenance()}
    if prices:
        section["prices"] = prices
    section["devices"] = [d.to_dict() for d in devices]
    section["overheads"] = [o.to_dict() for o in overheads]
    section["server"] = catalog.server.to_dict() if catalog.server is not None else None
    return CatalogList(section=Frozen(section), catalog=catalog, devices=tuple(devices), overheads=tuple(overheads))


@dataclass(frozen=True, kw_only=True)
class CatalogShow(Result):
    """`catalog show`'s answer: the catalog read, the device, the overheads a plan adds for it, and the
    section made from them (`catalog`, `device`, `price`: the price a plan uses, `prices` with a quote file,
    `overheads`)."""
    kind: str = "catalog.show"
    catalog: Catalog = field(compare=False)
    device: Device
    overheads: tuple[Overhead, ...]

    @property
    def price(self) -> Mapping[str, Any]:
        """The price a plan uses for the device (prices.price_basis: {price_usd, from, date, source, stale,
        text})."""
        out: Mapping[str, Any] = self.section["price"]
        return out


def show_device(req: CatalogShowRequest) -> CatalogShow:
    catalog, prices = req.load()
    device = catalog.device(req.id)
    overheads = catalog.overheads_for(device)
    section: dict[str, Any] = {"catalog": catalog.provenance(), "device": device.to_dict(),
                               "price": price_basis(device, prices)}
    if prices:
        section["prices"] = prices
    section["overheads"] = [o.to_dict() for o in overheads]
    return CatalogShow(section=Frozen(section), catalog=catalog, device=device, overheads=tuple(overheads))


@dataclass(frozen=True, kw_only=True)
class CatalogTemplate(Result):
    """`catalog template`'s answer: the entry's TOML text and its class (the section: `template`,
    `device_class`)."""
    kind: str = "catalog.template"
    text: str
    device_class: str


def device_template(req: CatalogTemplateRequest) -> CatalogTemplate:
    text = catalog_template.template(req.device_class, req.month)
    return CatalogTemplate(section=Frozen({"template": text, "device_class": req.device_class}), text=text,
                           device_class=req.device_class)
