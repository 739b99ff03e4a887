"""The device catalog: devices and the controller/enclosure/bus overhead they bring.

Pure: reads TOML (the shipped files in `dbtier.catalog`, then any user files),
validates every entry, and returns immutable objects. No subprocess, no network.

Units (DESIGN: units in names): MB = 10**6 bytes, GB = 10**9 bytes, latency in
microseconds, prices in US dollars. Every entry says where its figures come from
(`source`).

Invariants of a loaded Catalog:
- every device and overhead passed validation (numbers > 0; a price of 0 only
  with `notes` saying why);
- ids are unique per table; a later file's entry with an existing id replaced
  the earlier one (an override) and `origin` names the file it came from;
- every `applies_to` token names a known kind, an interface in use, or a device id;
- no device is a cloud volume: a user file's cloud-volume entries are left out and
  listed in `ignored` (`plan size --cloud PROVIDER` sizes cloud volumes).

Overheads are separate components (an HBA, an enclosure, a bus) and add up: a
plan of n devices needs ceil(n / per_devices) units of each overhead returned by
`Catalog.overheads_for`, each unit costing `price_usd` and passing at most
`max_mbps`. An overhead with `after_server_ports = true` supplies drive ports
(an HBA and enclosure for SAS/SATA drives): the server's own drive ports
(`[server] drive_ports`, or `--server-ports`) are used first, and units are
bought only for the devices beyond them (see `dbtier.model.plan.array`).

Input hardening (a catalog file is user input): only a regular file of at most
MAX_FILE_BYTES is read (FIFOs and devices are refused before opening); it must
be UTF-8 TOML; every number must be finite and within FIELD_RANGES (TOML allows
`nan` and `inf`, and a price of 1e308 would overflow once multiplied by a
count); unknown tables and fields are refused, not ignored. Every failure is
one DbtierError naming the file, the entry (table, position and id) and the
field.
"""

from __future__ import annotations

import calendar
import difflib
import math
import re
import tomllib
from dataclasses import asdict, dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

from dbtier.core.errors import DbtierError
from dbtier.core.files import read_small_text

KINDS = ("hdd", "sata-ssd", "sas-ssd", "nvme", "pcie-flash", "cloud-volume", "shared-array")
FLASH_KINDS = ("nvme", "pcie-flash", "sata-ssd", "sas-ssd")

# The shipped files, in load order; a shipped id may appear in only one of them.
SHIPPED_FILES = ("legacy.toml", "current.toml", "overhead.toml")

# A catalog file is a few hundred lines; anything far larger is not one.
MAX_FILE_BYTES = 16 * 1024 * 1024

# Plausible bounds for each figure (inclusive). They refuse NaN/inf and the absurd (1e308 dollars, which
# overflows to inf once multiplied by a device count) while leaving room far beyond any real device:
# a billion dollars, an exabyte, a billion IOPS, 10 TB/s, 1,000 seconds of latency.
FIELD_RANGES: dict[str, tuple[float, float, str]] = {
    "capacity_gb": (1e-3, 1e9, "GB"),
    "price_usd": (0.0, 1e9, "US dollars"),
    "read_iops": (1e-3, 1e9, "IOPS"), "write_iops": (1e-3, 1e9, "IOPS"),
    "read_mbps": (1e-3, 1e7, "MB/s"), "write_mbps": (1e-3, 1e7, "MB/s"),
    "read_latency_us": (1e-3, 1e9, "µs"), "write_latency_us": (1e-3, 1e9, "µs"),
    "max_mbps": (1e-3, 1e7, "MB/s"),
    "per_devices": (1, 1_000_000, "devices"),
    "drive_ports": (0, 10_000, "ports"),
    # endurance, durability, power and cost over time (all optional: an entry without them still loads)
    "endurance_tbw": (1e-3, 1e7, "TB written"), "dwpd": (1e-4, 1e3, "drive writes per day"),
    "warranty_years": (0.1, 50, "years"), "flush_write_iops": (1e-3, 1e9, "IOPS"),
    "sustained_write_iops": (1e-3, 1e9, "IOPS"), "sustained_write_mbps": (1e-3, 1e7, "MB/s"),
    "write_cache_gb": (1e-3, 1e6, "GB"), "workload_tb_per_year": (1e-3, 1e7, "TB a year"),
    "active_watts": (1e-3, 1e6, "W"), "idle_watts": (1e-3, 1e6, "W"),
    "usd_per_month": (0.0, 1e8, "US dollars a month"), "durability_pct": (50, 100, "%"),
    "watts": (1e-3, 1e6, "W"), "rack_units": (1e-3, 1e3, "U"), "max_iops": (1e-3, 1e10, "IOPS"),
    "dwpd_4k": (1e-4, 1e3, "drive writes per day at 4 KiB"), "endurance_write_kib": (0.5, 1024, "KiB"),
}

# A device's class (what it is: interface, endurance class, generation) and grade (datacenter or client).
DEVICE_CLASSES = ("nvme-ri-gen4", "nvme-ri-gen5", "nvme-mu-gen4", "nvme-mu-gen5", "nvme-wi", "nvme-qlc",
                  "sas-ssd-ri", "sas-ssd-mu", "sata-ent-ri", "sata-ent-mu", "hdd-nl", "hdd-10k",
                  "nvme-client", "sata-client", "study", "cloud-volume", "shared-array")
GRADES = ("datacenter", "client")
_PRICE_DATE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")

# Cloud volumes are not devices of the catalog: `plan size --cloud PROVIDER` sizes them from the provider
# model (cloud_volumes.toml). A user file's cloud-volume entries still parse, and are left out with this note.
CLOUD_WHY = "cloud volumes are sized by plan size --cloud PROVIDER"
CLOUD_HINT = "run `dbtier plan size --cloud aws|azure|gcp ...` for cloud volumes; `dbtier catalog list` shows the devices"

_ID_RE = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")
_HINT_LIST = "run `dbtier catalog list` to see every device id"


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    kind: str
    interface: str
    capacity_gb: float
    price_usd: float
    read_iops: float
    write_iops: float
    read_mbps: float
    write_mbps: float
    read_latency_us: float
    write_latency_us: float
    source: str
    notes: str | None = None
    # endurance, durable writes, sustained writes, power, cloud terms: None when the entry does not say
    endurance_tbw: float | None = None        # rated TB written over the warranty (TB = 10^12 bytes)
    dwpd: float | None = None                 # or drive writes per day over the warranty
    warranty_years: float | None = None
    power_loss_protection: bool | None = None  # acknowledged writes survive power loss without a flush
    flush_write_iops: float | None = None     # random writes/s when each waits for a cache flush
    sustained_write_iops: float | None = None  # after the SLC cache / on a full drive (write_iops is the burst)
    sustained_write_mbps: float | None = None
    write_cache_gb: float | None = None       # what a burst at the burst rate fills before it slows
    workload_tb_per_year: float | None = None  # an HDD's workload rating (reads + writes)
    active_watts: float | None = None
    idle_watts: float | None = None
    usd_per_month: float | None = None        # a cloud volume's list price a month
    durability_pct: float | None = None       # a cloud volume's stated annual durability (low end)
    shared_access: bool = False               # every node of a cluster reaches it (an array, multi-attach)
    # what the entry is and how old its price is (None when the entry does not say: older user catalogs)
    device_class: str | None = None           # e.g. "nvme-mu-gen4", "hdd-nl", "study" (DEVICE_CLASSES)
    grade: str | None = None                  # "datacenter" or "client" (GRADES); None for study devices
    price_date: str | None = None             # when price_usd held: "YYYY-MM" or "YYYY-MM-DD"
    price_source: str | None = None           # the channel, e.g. "reseller listing (R), 2026-11", "class estimate"
    dwpd_4k: float | None = None              # drive writes a day at 4 KiB random writes (QLC: dwpd is rated larger)
    endurance_write_kib: float | None = None  # the write size dwpd is rated at (None: 4, JESD219's enterprise mix)
    origin: str = ""

    @property
    def flash(self) -> bool:
        return self.kind in FLASH_KINDS

    @property
    def rated_tbw(self) -> float | None:
        """Rated endurance in TB written, for a database's small random writes.

        When `dwpd_4k` is given (a QLC drive whose `dwpd` is rated at 16-64 KiB writes), it is the
        rating: DWPD_4k x capacity x 365 x warranty years, because a database writes small random
        pages and the 4 KiB figure is the one that applies. Otherwise the stated TBW, or
        DWPD x capacity x 365 x warranty years."""
        if self.dwpd_4k is not None and self.warranty_years is not None:
            return self.dwpd_4k * self.capacity_gb / 1000 * 365 * self.warranty_years
        if self.endurance_tbw is not None:
            return self.endurance_tbw
        if self.dwpd is not None and self.warranty_years is not None:
            return self.dwpd * self.capacity_gb / 1000 * 365 * self.warranty_years
        return None

    @property
    def endurance_basis(self) -> str | None:
        """Where `rated_tbw` comes from, in words (None when the entry has no endurance figure)."""
        if self.dwpd_4k is not None and self.warranty_years is not None:
            rated_at = f" (dwpd {self.dwpd:g} is rated at {self.endurance_write_kib:g} KiB writes)" \
                if self.dwpd is not None and self.endurance_write_kib is not None else ""
            return (f"catalog dwpd_4k {self.dwpd_4k:g} x {self.capacity_gb:,.0f} GB x 365 x "
                    f"{self.warranty_years:g} years: the 4 KiB random-write rating{rated_at}")
        if self.endurance_tbw is not None:
            return "catalog endurance_tbw"
        if self.dwpd is not None and self.warranty_years is not None:
            return f"catalog dwpd {self.dwpd:g} x {self.capacity_gb:,.0f} GB x 365 x {self.warranty_years:g} years"
        return None

    @property
    def rated_dwpd(self) -> float | None:
        tbw = self.rated_tbw
        if tbw is None or self.warranty_years is None:
            return self.dwpd
        return tbw / (self.capacity_gb / 1000) / 365 / self.warranty_years

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Overhead:
    id: str
    name: str
    price_usd: float
    per_devices: int
    max_mbps: float
    applies_to: tuple[str, ...]
    source: str
    notes: str | None = None
    after_server_ports: bool = False    # supplies drive ports: charged only past the server's own ports
    watts: float | None = None          # per unit
    rack_units: float | None = None     # per unit (an enclosure's share of the rack)
    max_iops: float | None = None       # per unit: an array controller's IOPS ceiling
    origin: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["applies_to"] = list(self.applies_to)
        return d


@dataclass(frozen=True)
class Server:
    """What the server already has: `drive_ports` SAS/SATA ports (with bays) on its own controller."""
    drive_ports: int
    source: str
    notes: str | None = None
    origin: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# field name -> (type check, description for messages); order is the schema's.
_NUM = "number"
_STR = "string"
_INT = "integer"
_LIST = "list of strings"
_BOOL = "boolean"

_DEVICE_FIELDS: dict[str, str] = {
    "id": _STR, "name": _STR, "kind": _STR, "interface": _STR,
    "capacity_gb": _NUM, "price_usd": _NUM,
    "read_iops": _NUM, "write_iops": _NUM, "read_mbps": _NUM, "write_mbps": _NUM,
    "read_latency_us": _NUM, "write_latency_us": _NUM,
    "source": _STR, "notes": _STR,
    "endurance_tbw": _NUM, "dwpd": _NUM, "warranty_years": _NUM, "power_loss_protection": _BOOL,
    "flush_write_iops": _NUM, "sustained_write_iops": _NUM, "sustained_write_mbps": _NUM, "write_cache_gb": _NUM,
    "workload_tb_per_year": _NUM, "active_watts": _NUM, "idle_watts": _NUM, "usd_per_month": _NUM,
    "durability_pct": _NUM, "shared_access": _BOOL,
    "device_class": _STR, "grade": _STR, "price_date": _STR, "price_source": _STR,
    "dwpd_4k": _NUM, "endurance_write_kib": _NUM,
}
_DEVICE_OPTIONAL = {"notes", "endurance_tbw", "dwpd", "warranty_years", "power_loss_protection", "flush_write_iops",
                    "sustained_write_iops", "sustained_write_mbps", "write_cache_gb", "workload_tb_per_year",
                    "active_watts", "idle_watts", "usd_per_month", "durability_pct", "shared_access",
                    "device_class", "grade", "price_date", "price_source", "dwpd_4k", "endurance_write_kib"}

_OVERHEAD_FIELDS: dict[str, str] = {
    "id": _STR, "name": _STR, "price_usd": _NUM, "per_devices": _INT,
    "max_mbps": _NUM, "applies_to": _LIST, "source": _STR, "notes": _STR, "after_server_ports": _BOOL,
    "watts": _NUM, "rack_units": _NUM, "max_iops": _NUM,
}
_OVERHEAD_OPTIONAL = {"notes", "after_server_ports", "watts", "rack_units", "max_iops"}

_SERVER_FIELDS: dict[str, str] = {"drive_ports": _INT, "source": _STR, "notes": _STR}
_SERVER_OPTIONAL = {"notes"}

_TABLES = {"device": (_DEVICE_FIELDS, _DEVICE_OPTIONAL), "overhead": (_OVERHEAD_FIELDS, _OVERHEAD_OPTIONAL),
           "server": (_SERVER_FIELDS, _SERVER_OPTIONAL)}
_ALLOWED_TABLES = "[[device]], [[overhead]], [server]"


class Catalog:
    """Devices and overheads by id, in load order (an override keeps the original position)."""

    def __init__(self, devices: Mapping[str, Device], overheads: Mapping[str, Overhead],
                 files: Sequence[str] = (), overridden: Mapping[str, str] | None = None,
                 server: Server | None = None, ignored: Sequence[Mapping[str, str]] = ()):
        self.devices: dict[str, Device] = dict(devices)
        self.overheads: dict[str, Overhead] = dict(overheads)
        self.files: tuple[str, ...] = tuple(files)
        # "device:<id>" / "overhead:<id>" / "server" -> origin of the entry that was replaced
        self.overridden: dict[str, str] = dict(overridden or {})
        # None: no [server] table, so the server is taken to have no drive ports of its own
        self.server: Server | None = server
        # entries a file gave that the catalog leaves out: [{id, origin, why}] (cloud volumes)
        self.ignored: list[dict[str, str]] = [dict(e) for e in ignored]

    def provenance(self) -> dict[str, Any]:
        """Where this catalog came from, for a result document: its files, the entries they
        overrode, the server table, and the entries left out (`ignored`, only when there are some)."""
        doc: dict[str, Any] = {"files": list(self.files), "overridden": dict(self.overridden),
                               "server": self.server.to_dict() if self.server is not None else None}
        if self.ignored:
            doc["ignored"] = [dict(e) for e in self.ignored]
        return doc

    @property
    def server_ports(self) -> int:
        """The drive ports the server has of its own (the default of `--server-ports`)."""
        return self.server.drive_ports if self.server is not None else 0

    def device(self, id: str) -> Device:
        try:
            return self.devices[id]
        except KeyError:
            left_out = next((e for e in self.ignored if e["id"] == id), None)
            if left_out is not None:
                raise DbtierError(f"device '{id}' from {left_out['origin']} is left out of the catalog: "
                                  f"{left_out['why']}", CLOUD_HINT) from None
            raise DbtierError(_unknown("device", id, list(self.devices)), _HINT_LIST) from None

    def overhead(self, id: str) -> Overhead:
        try:
            return self.overheads[id]
        except KeyError:
            raise DbtierError(_unknown("overhead", id, list(self.overheads)),
                              "run `dbtier catalog list` to see every overhead id") from None

    def overheads_for(self, device: Device) -> list[Overhead]:
        """The overheads a device needs, most specific match first wins.

        An overhead applies when its `applies_to` names the device's id, its
        interface or its kind. If any overhead names the device id, only those
        apply; otherwise those naming the interface; otherwise those naming the
        kind. (So a 2011 SATA SSD can be pinned to the SAS-2 HBA of its study
        while today's SATA SSDs get today's HBA through their interface.)
        """
        for key in (device.id, device.interface, device.kind):
            hits = [o for o in self.overheads.values() if key in o.applies_to]
            if hits:
                return hits
        return []

    def of_kind(self, kind: str | None) -> list[Device]:
        return [d for d in self.devices.values() if kind is None or d.kind == kind]


def _without_cloud_volumes(devs: list[Device], origin: str, ignored: list[dict[str, str]]) -> list[Device]:
    """The file's devices less its cloud volumes, each noted in `ignored`: the provider model sizes those."""
    for d in devs:
        if d.kind == "cloud-volume":
            ignored.append({"id": d.id, "interface": d.interface, "origin": origin, "why": CLOUD_WHY})
    return [d for d in devs if d.kind != "cloud-volume"]


def _unknown(what: str, id: str, known: list[str]) -> str:
    near = [k for k in known if id and id.lower() in k]
    for k in difflib.get_close_matches(id.lower(), known, n=5, cutoff=0.6):
        if k not in near:
            near.append(k)
    msg = f"unknown {what} id '{id}'"
    if near:
        msg += "; did you mean " + ", ".join(f"'{k}'" for k in near[:5]) + "?"
    return msg


def load_catalog(extra: Sequence[str | Path] = ()) -> Catalog:
    """The shipped catalog, then each extra file in order (later entries override by id)."""
    devices: dict[str, Device] = {}
    overheads: dict[str, Overhead] = {}
    overridden: dict[str, str] = {}
    server: Server | None = None
    files: list[str] = []
    ignored: list[dict[str, str]] = []
    positions: dict[tuple[str, str], int] = {}  # (origin, overhead id) -> index in its file, for messages

    pkg = resources.files("dbtier.catalog")
    for name in SHIPPED_FILES:
        origin = f"shipped:{name}"
        text = (pkg / name).read_text(encoding="utf-8")
        devs, ovs, srv = parse_catalog_file(text, origin)
        if srv is not None:
            if server is not None:
                raise DbtierError(f"{origin}: [server] is also in {server.origin}",
                                  "the shipped catalog has one [server] table; this is a dbtier bug")
            server = srv
        for d in devs:
            if d.id in devices:
                raise DbtierError(f"{origin}: device id '{d.id}' is also in {devices[d.id].origin}",
                                  "shipped catalog ids must be unique; this is a dbtier bug")
            devices[d.id] = d
        for i, o in enumerate(ovs, 1):
            positions[(origin, o.id)] = i
            if o.id in overheads:
                raise DbtierError(f"{origin}: overhead id '{o.id}' is also in {overheads[o.id].origin}",
                                  "shipped catalog ids must be unique; this is a dbtier bug")
            overheads[o.id] = o
        files.append(origin)

    for path in extra:
        origin = str(path)
        devs, ovs, srv = parse_catalog_file(_read_user_file(Path(path)), origin)
        devs = _without_cloud_volumes(devs, origin, ignored)
        if srv is not None:
            if server is not None:
                overridden["server"] = server.origin
            server = srv
        for d in devs:
            if d.id in devices:
                overridden[f"device:{d.id}"] = devices[d.id].origin
            devices[d.id] = d
        for i, o in enumerate(ovs, 1):
            positions[(origin, o.id)] = i
            if o.id in overheads:
                overridden[f"overhead:{o.id}"] = overheads[o.id].origin
            overheads[o.id] = o
        files.append(origin)

    catalog = Catalog(devices, overheads, files, overridden, server, ignored)
    _check_applies_to(catalog, positions)
    return catalog


def _read_user_file(path: Path) -> str:
    hint = "pass a .toml file to --catalog (relative paths start at the current directory)"
    if not path.exists() and not path.is_symlink():
        raise DbtierError(f"catalog file {path} not found",
                          "check the path given to --catalog (relative paths start at the current directory)")
    # FIFOs, /dev/zero, directories, sockets: refused by name before opening (opening a FIFO blocks)
    return read_small_text(path, "catalog file", hint, MAX_FILE_BYTES, "not a catalog")


def parse_catalog_text(text: str, origin: str) -> tuple[list[Device], list[Overhead]]:
    """Validate one file's text; `origin` names it in messages and in each entry."""
    devices, overheads, _ = parse_catalog_file(text, origin)
    return devices, overheads


def parse_catalog_file(text: str, origin: str) -> tuple[list[Device], list[Overhead], Server | None]:
    """Validate one file's text: its devices, overheads and [server] table (None when it has none)."""
    if "\x00" in text:
        raise DbtierError(f"{origin}: not valid TOML: it contains a NUL character (a binary file?)",
                          "pass a TOML text file (see the catalog files shipped in dbtier/catalog/)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line N, column M)"
        raise DbtierError(f"{origin}: not valid TOML: {exc}",
                          "fix the syntax at that line (see the catalog files shipped in dbtier/catalog/)") from exc
    except RecursionError:
        raise DbtierError(f"{origin}: not valid TOML for a catalog: arrays or tables nested too deeply",
                          "a catalog entry is a flat table of strings and numbers") from None
    except ValueError as exc:
        # e.g. an integer of thousands of digits (Python's int conversion limit)
        raise DbtierError(f"{origin}: not valid TOML for a catalog: {exc}",
                          "write each figure as an ordinary number") from None

    unknown = [k for k in data if k not in _TABLES]
    if unknown:
        raise DbtierError(
            f"{origin}: unknown top-level table '{unknown[0]}' (allowed: {_ALLOWED_TABLES})",
            "each entry is a [[device]] or an [[overhead]] table; [server] holds the server's own drive ports")
    if not data:
        raise DbtierError(f"{origin}: no [[device]] or [[overhead]] tables",
                          "add at least one entry, or drop the file from --catalog")

    devices = [_device(e, i, origin) for i, e in enumerate(_entries(data, "device", origin), 1)]
    overheads = [_overhead(e, i, origin) for i, e in enumerate(_entries(data, "overhead", origin), 1)]
    tables: tuple[tuple[str, Sequence[Device | Overhead]], ...] = (("device", devices), ("overhead", overheads))
    for table, entries in tables:
        seen: dict[str, int] = {}
        for i, e in enumerate(entries, 1):
            if e.id in seen:
                raise DbtierError(
                    f"{origin}: {table} #{i} (id '{e.id}'): duplicate id, already used by {table} #{seen[e.id]}",
                    "ids must be unique within a file; to replace a shipped entry, reuse its id once")
            seen[e.id] = i
    return devices, overheads, _server(data, origin)


def _server(data: dict[str, Any], origin: str) -> Server | None:
    if "server" not in data:
        return None
    value = data["server"]
    if not isinstance(value, dict):
        raise DbtierError(f"{origin}: 'server' must be one table written [server]",
                          "write [server] once, with drive_ports = N and source = \"...\"")
    v = _validate("server", value, 1, origin)
    return Server(**_fields_of(Server, v), origin=origin)


def _fields_of(cls: type[Any], v: dict[str, Any]) -> dict[str, Any]:
    """The validated entry `v` as the keyword arguments of the dataclass `cls` (its origin is set apart)."""
    return {f.name: v.get(f.name) for f in fields(cls) if f.name != "origin"}


def _entries(data: dict[str, Any], table: str, origin: str) -> list[dict[str, Any]]:
    value = data.get(table, [])
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise DbtierError(f"{origin}: '{table}' must be an array of tables written [[{table}]]",
                          f"write each entry under its own [[{table}]] header")
    return value


def _where(table: str, index: int, entry: dict[str, Any], origin: str) -> str:
    if table == "server":
        return f"{origin}: [server]"
    id_ = entry.get("id")
    label = f"id '{id_}'" if isinstance(id_, str) else "no id"
    return f"{origin}: {table} #{index} ({label})"


def _validate(table: str, entry: dict[str, Any], index: int, origin: str) -> dict[str, Any]:
    schema, optional = _TABLES[table]
    where = _where(table, index, entry, origin)
    for key in entry:
        if key not in schema:
            raise DbtierError(f"{where}: unknown field '{key}' (allowed: {', '.join(schema)})",
                              "fix the field name")
    out: dict[str, Any] = {}
    for key, typ in schema.items():
        if key not in entry:
            if key in optional:
                continue
            raise DbtierError(f"{where}: missing field '{key}' ({typ})", f"add {key} = ... to that entry")
        value = entry[key]
        if typ == _STR:
            if not isinstance(value, str):
                raise DbtierError(f"{where}: field '{key}' must be a string, got {_describe(value)}",
                                  f'quote it: {key} = "..."')
            if not value.strip():
                raise DbtierError(f"{where}: field '{key}' is empty", f"give {key} a value")
            bad = _CONTROL_RE.search(value)
            if bad:
                raise DbtierError(f"{where}: field '{key}' contains a control character "
                                  f"(U+{ord(bad.group()):04X} at position {bad.start()})",
                                  "remove it: catalog text is printed on terminals and in reports")
        elif typ == _NUM:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DbtierError(f"{where}: field '{key}' must be a number, got {_describe(value)}",
                                  f"write it as a bare number, e.g. {key} = 250")
            if isinstance(value, float) and not math.isfinite(value):
                raise DbtierError(f"{where}: field '{key}' must be a finite number, got {value}",
                                  "give the figure from the source")
        elif typ == _INT:
            if isinstance(value, bool) or not isinstance(value, int):
                raise DbtierError(f"{where}: field '{key}' must be a whole number, got {_describe(value)}",
                                  f"e.g. {key} = 16")
        elif typ == _BOOL:
            if not isinstance(value, bool):
                raise DbtierError(f"{where}: field '{key}' must be true or false, got {_describe(value)}",
                                  f"e.g. {key} = true")
        elif typ == _LIST:
            if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
                raise DbtierError(f"{where}: field '{key}' must be a non-empty list of strings, got {_describe(value)}",
                                  f'e.g. {key} = ["sata-ssd", "sas-12g"]')
        out[key] = value

    if "id" in schema and not _ID_RE.match(out["id"]):
        raise DbtierError(f"{where}: id '{out['id']}' is not lowercase-kebab (letters, digits, '-' and '.')",
                          "e.g. id = \"sas-15k-73gb\"")
    for key, typ in schema.items():
        if typ in (_NUM, _INT) and key in out:
            v = out[key]
            if key == "price_usd":
                if v < 0:
                    raise DbtierError(f"{where}: field 'price_usd' must not be negative, got {_num_text(v)}",
                                      "give the list or street price in US dollars")
                if v == 0 and not (out.get("notes") or "").strip():
                    raise DbtierError(f"{where}: field 'price_usd' is 0 but no notes say why",
                                      "give a price, or add notes explaining the zero (e.g. already owned)")
            elif not (v > 0) and FIELD_RANGES.get(key, (1,))[0] > 0:
                raise DbtierError(f"{where}: field '{key}' must be positive, got {_num_text(v)}",
                                  "every figure is a positive quantity; give the figure from the source")
            lo, hi, unit = FIELD_RANGES.get(key, (-math.inf, math.inf, ""))
            if not (lo <= v <= hi):
                bound = f"at least {lo:g}" if not (v >= lo) else f"at most {hi:,.0f}"
                raise DbtierError(f"{where}: field '{key}' must be {bound} ({unit}), got {_num_text(v)}",
                                  "give the figure from the source; a value that far out is a typo or a unit "
                                  "mistake (capacities are in GB, latencies in µs, MB = 10^6 bytes)")
    if table == "device":
        _check_device_terms(out, where)
    return out


def _check_device_terms(out: dict[str, Any], where: str) -> None:
    """The class, grade and price-date fields: a token, one of GRADES, a real calendar date."""
    cls = out.get("device_class")
    if cls is not None and not _ID_RE.match(cls):
        raise DbtierError(f"{where}: field 'device_class' must be a lowercase-kebab token, got '{cls}'",
                          "e.g. device_class = \"nvme-mu-gen4\" (shipped classes: " + ", ".join(DEVICE_CLASSES) + ")")
    grade = out.get("grade")
    if grade is not None and grade not in GRADES:
        raise DbtierError(f"{where}: field 'grade' must be one of {', '.join(GRADES)}, got '{grade}'",
                          "datacenter: power-loss protection and a datacenter warranty; client: a PC drive")
    date = out.get("price_date")
    if date is not None:
        m = _PRICE_DATE_RE.match(date)
        ok = m is not None and 1990 <= int(m.group(1)) <= 2100 and 1 <= int(m.group(2)) <= 12
        if ok and m is not None and m.group(3) is not None:
            ok = 1 <= int(m.group(3)) <= calendar.monthrange(int(m.group(1)), int(m.group(2)))[1]
        if not ok:
            raise DbtierError(f"{where}: field 'price_date' must be a date written YYYY-MM or YYYY-MM-DD, got '{date}'",
                              "e.g. price_date = \"2025-06\": the month the price was seen")


# C0/C1 control characters other than tab and newline (an escape sequence in a name would drive the terminal)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _num_text(v: float) -> str:
    """A number for a message: short, and safe for integers too large for a float."""
    if isinstance(v, int) and abs(v) >= 10**15:
        try:
            digits = str(abs(v))
        except ValueError:  # beyond Python's digit limit; TOML parsing refuses those first
            return "an integer too long to print"
        sign = "-" if v < 0 else ""
        return f"{sign}{digits[0]}.{digits[1:4]}e+{len(digits) - 1} (an integer of {len(digits)} digits)"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _describe(value: Any) -> str:
    kind = {bool: "a boolean", str: "a string", int: "an integer", float: "a number",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} ({text if len(text) <= 40 else text[:37] + '...'})"


def _device(entry: dict[str, Any], index: int, origin: str) -> Device:
    v = _validate("device", entry, index, origin)
    if v["kind"] not in KINDS:
        raise DbtierError(f"{_where('device', index, entry, origin)}: unknown kind '{v['kind']}' "
                          f"(allowed: {', '.join(KINDS)})", "use one of the allowed kinds")
    if not _ID_RE.match(v["interface"]):
        raise DbtierError(f"{_where('device', index, entry, origin)}: interface '{v['interface']}' "
                          "is not a lowercase token (letters, digits, '-' and '.')",
                          'e.g. interface = "sata-6g", "sas-12g", "pcie4-x4", "aws-ebs"')
    _check_device_figures(v, _where('device', index, entry, origin))
    v.setdefault("shared_access", False)
    return Device(**_fields_of(Device, v), origin=origin)


def _check_device_figures(v: dict[str, Any], where: str) -> None:
    """Figures that must agree with each other: one endurance figure, a sustained figure within its burst."""
    if "endurance_tbw" in v and "dwpd" in v:
        raise DbtierError(f"{where}: both 'endurance_tbw' and 'dwpd' are given",
                          "give one (the other is derived: TBW = DWPD x capacity x 365 x warranty_years)")
    if "dwpd" in v and "warranty_years" not in v:
        raise DbtierError(f"{where}: 'dwpd' needs 'warranty_years' (drive writes per day over how many years?)",
                          "add warranty_years = N, or give endurance_tbw instead")
    for sustained, burst in (("sustained_write_iops", "write_iops"), ("sustained_write_mbps", "write_mbps")):
        if sustained in v and v[sustained] > v[burst] * (1 + 1e-9):
            raise DbtierError(f"{where}: field '{sustained}' ({_num_text(v[sustained])}) is above its burst figure "
                              f"'{burst}' ({_num_text(v[burst])})",
                              f"a sustained figure is at most the burst one; {burst} is the datasheet (burst) figure")
    if "idle_watts" in v and "active_watts" in v and v["idle_watts"] > v["active_watts"] * (1 + 1e-9):
        raise DbtierError(f"{where}: field 'idle_watts' ({_num_text(v['idle_watts'])}) is above 'active_watts' "
                          f"({_num_text(v['active_watts'])})", "give the idle and active power from the datasheet")


def _overhead(entry: dict[str, Any], index: int, origin: str) -> Overhead:
    v = _validate("overhead", entry, index, origin)
    v["applies_to"] = tuple(v["applies_to"])
    v.setdefault("after_server_ports", False)
    return Overhead(**_fields_of(Overhead, v), origin=origin)


def _check_applies_to(catalog: Catalog, positions: Mapping[tuple[str, str], int]) -> None:
    # a left-out cloud volume's id and interface still count: an overhead naming them loads, and applies to nothing
    known = (set(KINDS) | {d.interface for d in catalog.devices.values()} | set(catalog.devices)
             | {e["id"] for e in catalog.ignored} | {e["interface"] for e in catalog.ignored})
    for o in catalog.overheads.values():
        for token in o.applies_to:
            if token not in known:
                where = f"{o.origin}: overhead #{positions.get((o.origin, o.id), '?')} (id '{o.id}')"
                raise DbtierError(
                    f"{where}: field 'applies_to': '{token}' matches no kind, interface or device id",
                    f"kinds are {', '.join(KINDS)}; `dbtier catalog list` shows interfaces and ids")
