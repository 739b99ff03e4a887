"""A commented `[[device]]` entry for a device the catalog lacks (`dbtier catalog template`).

Pure: a class name in, TOML text out. Every field a device entry may have is in it, required and
optional, each with its unit and what it means; the figures are placeholders of the class's order of
magnitude (replace them from the datasheet), chosen so the text loads as it is with `--catalog FILE`.
Fields that exclude another (endurance_tbw or dwpd; dwpd_4k for a QLC drive), and those of another
kind of device (an HDD's workload rating, a cloud volume's monthly price) are written commented out.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import DEVICE_CLASSES, FIELD_RANGES, Device

DEFAULT_CLASS = "nvme-ri-gen4"

# class -> kind, interface, grade, and placeholder figures of that class's order of magnitude
_FLASH_DC = {"power_loss_protection": True, "warranty_years": 5}
_PRESETS: dict[str, dict[str, Any]] = {
    "nvme-ri-gen4": dict(kind="nvme", interface="pcie4-x4", grade="datacenter", capacity_gb=3840, price_usd=450,
                         read_iops=1_000_000, write_iops=180_000, read_mbps=6800, write_mbps=4000,
                         read_latency_us=80, write_latency_us=20, dwpd=1, **_FLASH_DC, active_watts=13, idle_watts=4),
    "nvme-ri-gen5": dict(kind="nvme", interface="pcie5-x4", grade="datacenter", capacity_gb=7680, price_usd=1100,
                         read_iops=2_500_000, write_iops=300_000, read_mbps=14_000, write_mbps=7000,
                         read_latency_us=60, write_latency_us=15, dwpd=1, **_FLASH_DC, active_watts=24, idle_watts=6),
    "nvme-mu-gen4": dict(kind="nvme", interface="pcie4-x4", grade="datacenter", capacity_gb=3200, price_usd=600,
                         read_iops=1_000_000, write_iops=380_000, read_mbps=6800, write_mbps=5300,
                         read_latency_us=80, write_latency_us=20, dwpd=3, **_FLASH_DC, active_watts=14, idle_watts=5),
    "nvme-mu-gen5": dict(kind="nvme", interface="pcie5-x4", grade="datacenter", capacity_gb=6400, price_usd=1400,
                         read_iops=2_500_000, write_iops=600_000, read_mbps=14_000, write_mbps=8000,
                         read_latency_us=60, write_latency_us=15, dwpd=3, **_FLASH_DC, active_watts=25, idle_watts=6),
    "nvme-wi": dict(kind="nvme", interface="pcie4-x4", grade="datacenter", capacity_gb=1600, price_usd=900,
                    read_iops=1_000_000, write_iops=500_000, read_mbps=6800, write_mbps=5000,
                    read_latency_us=30, write_latency_us=10, dwpd=10, **_FLASH_DC, active_watts=15, idle_watts=5),
    "nvme-qlc": dict(kind="nvme", interface="pcie4-x4", grade="datacenter", capacity_gb=30_720, price_usd=2500,
                     read_iops=900_000, write_iops=30_000, read_mbps=7000, write_mbps=3000,
                     read_latency_us=100, write_latency_us=30, dwpd=0.6, dwpd_4k=0.1, endurance_write_kib=64,
                     **_FLASH_DC, active_watts=20, idle_watts=5),
    "sas-ssd-ri": dict(kind="sas-ssd", interface="sas-12g", grade="datacenter", capacity_gb=3840, price_usd=900,
                       read_iops=400_000, write_iops=70_000, read_mbps=2100, write_mbps=2000,
                       read_latency_us=100, write_latency_us=30, dwpd=1, **_FLASH_DC, active_watts=11, idle_watts=4),
    "sas-ssd-mu": dict(kind="sas-ssd", interface="sas-12g", grade="datacenter", capacity_gb=3200, price_usd=1100,
                       read_iops=400_000, write_iops=150_000, read_mbps=2100, write_mbps=2000,
                       read_latency_us=100, write_latency_us=30, dwpd=3, **_FLASH_DC, active_watts=11, idle_watts=4),
    "sata-ent-ri": dict(kind="sata-ssd", interface="sata-6g", grade="datacenter", capacity_gb=3840, price_usd=400,
                        read_iops=98_000, write_iops=30_000, read_mbps=560, write_mbps=530,
                        read_latency_us=120, write_latency_us=40, dwpd=1, **_FLASH_DC, active_watts=3,
                        idle_watts=1.3),
    "sata-ent-mu": dict(kind="sata-ssd", interface="sata-6g", grade="datacenter", capacity_gb=1920, price_usd=450,
                        read_iops=98_000, write_iops=60_000, read_mbps=560, write_mbps=530,
                        read_latency_us=120, write_latency_us=40, dwpd=3, **_FLASH_DC, active_watts=3,
                        idle_watts=1.3),
    "hdd-nl": dict(kind="hdd", interface="sata-6g", grade="datacenter", capacity_gb=20_000, price_usd=350,
                   read_iops=170, write_iops=550, read_mbps=270, write_mbps=270, read_latency_us=8000,
                   write_latency_us=4000, workload_tb_per_year=550, warranty_years=5, power_loss_protection=True,
                   active_watts=9.4, idle_watts=5.4),
    "hdd-10k": dict(kind="hdd", interface="sas-12g", grade="datacenter", capacity_gb=2400, price_usd=300,
                    read_iops=300, write_iops=400, read_mbps=260, write_mbps=260, read_latency_us=5000,
                    write_latency_us=3000, workload_tb_per_year=550, warranty_years=5, power_loss_protection=True,
                    active_watts=7, idle_watts=5),
    "nvme-client": dict(kind="nvme", interface="pcie4-x4", grade="client", capacity_gb=2000, price_usd=170,
                        read_iops=1_000_000, write_iops=1_000_000, read_mbps=7000, write_mbps=6900,
                        read_latency_us=50, write_latency_us=20, endurance_tbw=1200, warranty_years=5,
                        power_loss_protection=False, flush_write_iops=1500, sustained_write_iops=50_000,
                        sustained_write_mbps=1500, write_cache_gb=200, active_watts=6, idle_watts=0.05),
    "sata-client": dict(kind="sata-ssd", interface="sata-6g", grade="client", capacity_gb=2000, price_usd=150,
                        read_iops=98_000, write_iops=88_000, read_mbps=560, write_mbps=530,
                        read_latency_us=100, write_latency_us=40, endurance_tbw=1200, warranty_years=5,
                        power_loss_protection=False, flush_write_iops=800, sustained_write_iops=20_000,
                        sustained_write_mbps=500, write_cache_gb=70, active_watts=3, idle_watts=0.03),
    "study": dict(kind="hdd", interface="sas-6g", grade=None, capacity_gb=146, price_usd=250,
                  read_iops=250, write_iops=250, read_mbps=120, write_mbps=120, read_latency_us=5500,
                  write_latency_us=5500, workload_tb_per_year=550, warranty_years=5, power_loss_protection=True,
                  active_watts=9, idle_watts=6),
    "cloud-volume": dict(kind="cloud-volume", interface="aws-ebs", grade=None, capacity_gb=1074, price_usd=2880,
                         read_iops=3000, write_iops=3000, read_mbps=131, write_mbps=131, read_latency_us=800,
                         write_latency_us=800, usd_per_month=80, durability_pct=99.8),
    "shared-array": dict(kind="shared-array", interface="fc-32g", grade=None, capacity_gb=1000, price_usd=800,
                         read_iops=20_000, write_iops=10_000, read_mbps=400, write_mbps=300, read_latency_us=300,
                         write_latency_us=200, power_loss_protection=True, shared_access=True, active_watts=1,
                         idle_watts=0.6),
}

# field -> what it is (units come from catalog.FIELD_RANGES where it has them)
_MEANING: dict[str, str] = {
    "id": "lowercase-kebab, unique; reuse a shipped id to replace that entry",
    "name": "what it is, with a model or two of the class",
    "kind": "hdd, sata-ssd, sas-ssd, nvme, pcie-flash, cloud-volume or shared-array",
    "interface": "a lowercase token: sata-6g, sas-12g, pcie4-x4 ... (overheads match on it)",
    "capacity_gb": "usable capacity of one device",
    "price_usd": "price of one device (--prices FILE replaces it with a quote)",
    "read_iops": "4 KiB random reads, the datasheet's", "write_iops": "4 KiB random writes (burst)",
    "read_mbps": "sequential reads", "write_mbps": "sequential writes (burst)",
    "read_latency_us": "one read, nothing queued", "write_latency_us": "one write, nothing queued",
    "source": "where every figure comes from (datasheet, review, quote)",
    "notes": "anything a reader should know; required when price_usd = 0",
    "endurance_tbw": "rated TB written over the warranty (give this or dwpd, not both)",
    "dwpd": "rated drive writes a day over the warranty (needs warranty_years)",
    "warranty_years": "the warranty the endurance is rated over",
    "power_loss_protection": "true: an acknowledged write survives a power loss without a flush",
    "flush_write_iops": "random writes a second when each waits for a cache flush (no power-loss protection)",
    "sustained_write_iops": "random writes after the SLC cache, on a full drive (at most write_iops)",
    "sustained_write_mbps": "sequential writes after the SLC cache (at most write_mbps)",
    "write_cache_gb": "what a burst at the burst rate fills before it slows",
    "workload_tb_per_year": "an HDD's workload rating (reads and writes)",
    "active_watts": "power at load", "idle_watts": "power idle (at most active_watts)",
    "usd_per_month": "a cloud volume's list price a month",
    "durability_pct": "a cloud volume's stated annual durability",
    "shared_access": "true: every node of a cluster reaches it (an array, a multi-attach volume)",
    "device_class": "the class: " + ", ".join(DEVICE_CLASSES),
    "grade": "datacenter or client (leave out for a study device); --grade production offers datacenter only",
    "price_date": "when price_usd held: YYYY-MM or YYYY-MM-DD",
    "price_source": "the channel the price comes from (reseller listing, quote, class estimate)",
    "dwpd_4k": "drive writes a day at 4 KiB random writes, when dwpd is rated at larger writes (QLC)",
    "endurance_write_kib": "the write size dwpd is rated at (default 4, JESD219's enterprise mix)",
}
_UNITS = {"capacity_gb": "GB = 10^9 bytes", "price_usd": "US dollars", "read_latency_us": "µs",
          "write_latency_us": "µs", "endurance_tbw": "TB = 10^12 bytes", "read_mbps": "MB/s = 10^6 bytes/s",
          "write_mbps": "MB/s = 10^6 bytes/s", "sustained_write_mbps": "MB/s", "usd_per_month": "US dollars",
          "durability_pct": "%"}
# commented out unless the class's preset gives them (they exclude another field or belong to another kind)
_ALTERNATIVES = ("endurance_tbw", "dwpd", "dwpd_4k", "endurance_write_kib", "workload_tb_per_year", "usd_per_month",
                 "durability_pct", "flush_write_iops", "sustained_write_iops", "sustained_write_mbps",
                 "write_cache_gb", "notes", "grade")
_EXAMPLES = {"endurance_tbw": 7000, "dwpd": 1, "dwpd_4k": 0.1, "endurance_write_kib": 64, "workload_tb_per_year": 550,
             "usd_per_month": 80, "durability_pct": 99.8, "flush_write_iops": 1500, "sustained_write_iops": 50_000,
             "sustained_write_mbps": 1500, "write_cache_gb": 200, "notes": "...", "grade": "datacenter",
             "warranty_years": 5, "power_loss_protection": True, "active_watts": 10, "idle_watts": 3,
             "shared_access": False}


def device_fields() -> list[dataclasses.Field[Any]]:
    """Every field of a [[device]] entry, in the Device's order (origin is set by the loader, not written)."""
    return [f for f in dataclasses.fields(Device) if f.name != "origin"]


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, int):
        return f"{v:_}" if abs(v) >= 10_000 else str(v)
    return f"{v:g}"


def template(device_class: str | None = None, today: str = "YYYY-MM") -> str:
    """The commented [[device]] entry for `device_class` (default DEFAULT_CLASS); `today`: the price_date
    written (YYYY-MM; the placeholder text when not given would not load, so the CLI passes the month)."""
    cls = device_class or DEFAULT_CLASS
    if cls not in _PRESETS:
        raise DbtierError(f"--class {cls}: not a device class", f"give one of {', '.join(_PRESETS)}")
    p = _PRESETS[cls]
    values: dict[str, Any] = {
        "id": f"my-{cls}", "name": f"My {cls} device (replace: maker, model, capacity)",
        "source": "replace: the datasheet (and review, quote) each figure comes from",
        "device_class": cls, "price_date": today,
        "price_source": "replace: where the price was seen (reseller listing, quote)",
        **{k: v for k, v in p.items() if v is not None}}
    lines = [f"# A [[device]] entry of class {cls} for `dbtier ... --catalog FILE` (a quote alone: --prices).",
             "# Figures are placeholders of the class's order of magnitude: replace each from the datasheet.",
             "# Required fields first; optional ones after (commented: they exclude another field or belong",
             "# to another kind of device). Units: MB = 10^6 bytes, GB = 10^9 bytes, latency in µs, US dollars.",
             "", "[[device]]"]
    required = [f for f in device_fields() if f.default is dataclasses.MISSING]
    optional = [f for f in device_fields() if f.default is not dataclasses.MISSING]
    for group, fs in (("required", required), ("optional", optional)):
        lines.append(f"# -- {group}")
        for f in fs:
            unit = _UNITS.get(f.name) or (FIELD_RANGES[f.name][2] if f.name in FIELD_RANGES else "")
            note = f"  # {_MEANING.get(f.name, '')}" + (f" [{unit}]" if unit else "")
            if f.name in values:
                lines.append(f"{f.name} = {_toml(values[f.name])}{note}")
            else:
                example = _EXAMPLES.get(f.name, 1)
                lines.append(f"# {f.name} = {_toml(example)}{note}")
    return "\n".join(lines) + "\n"


def classes() -> tuple[str, ...]:
    return tuple(_PRESETS)
