"""Flash endurance and HDD workload ratings over the service life.

Pure: catalog devices and numbers in, figures out.

The host's written bytes a day, W (TB, 10^12 bytes), are the requirement's *average* day:
`write_tb_per_day` (given, or from the database's history); without it, the peak write rate held
for 24 hours (`write_mbps`, else `write_iops` x 8 KiB pages), said as the pessimistic assumption.

A set of n devices in a layout writes W x f to its devices in all, where f is the layout's write
factor (every device write a host write causes):

    jbod, raid0            1
    raid1 (n-way)          n
    raid10, mirror2        2
    mirror3                3
    raid5                  2 (small random writes: data + parity)   n / (n - 1) (full-stripe)
    raid6                  3 (data + two parities)                  n / (n - 2) (full-stripe)

A database's writes are small random page writes, so parity layouts take the small-write factor
whenever the requirement has random writes; only a purely sequential requirement (write MB/s, no
write IOPS: a log or a load tier) gets the full-stripe factor. Each device then writes
W x f / n x WAF a day, WAF being the device's own write amplification beyond its rating (see
`DEFAULT_WAF`). Lifetime (years) = rated TBW / daily device writes / 365; used_fraction = service
years / lifetime (the share of the rated endurance the service life consumes).

HDDs do not wear out by writes: their maker rates a workload (TB transferred a year, reads and
writes). A device's yearly transfer = (its reads + its writes a day) x 365, reads from
`read_tb_per_day` or the peak read rate held 24 hours; a design within the rating passes.
Cloud volumes and shared arrays: the provider or the array manages wear; nothing to check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import Device

PAGE_BYTES = 8192             # a database page: the size of a random write when only IOPS are given
DAYS_PER_YEAR = 365
SECONDS_PER_DAY = 86_400
DEFAULT_SERVICE_YEARS = 5.0

# The write amplification a database's small random writes add beyond the rating, by class. See
# docs/commands/plan.md (endurance); `--waf` replaces it for every flash device.
DEFAULT_WAF = {
    "enterprise": (1.0, "enterprise ratings (JEDEC JESD218) are host writes under the JESD219 enterprise workload "
                        "(random writes over the full drive), so the drive's own amplification for a random-write "
                        "database is already in the rating"),
    "client": (3.0, "client ratings (JESD218) use JESD219A's client workload (client traces, mostly sequential, "
                    "a small hot footprint, its own WAF about 1.5-2.5); uniform random writes over a full drive with "
                    "7-10% spare amplify about 5.7-7.5x (Xiang and Kurkoski 2011; Agarwal and Marrow 2010): about "
                    "3x more than the rating assumed (class estimate, range 2.5-4)"),
}


def check_service_years(years: float, option: str = "--service-years") -> float:
    if isinstance(years, bool) or not isinstance(years, (int, float)) or not math.isfinite(years) or years <= 0:
        raise DbtierError(f"{option} must be a positive number of years, got {years}", f"e.g. {option} 5")
    if years > 50:
        raise DbtierError(f"{option} must be at most 50 years, got {years:g}", f"e.g. {option} 5")
    return float(years)


def check_waf(waf: float | None) -> float | None:
    if waf is None:
        return None
    if isinstance(waf, bool) or not isinstance(waf, (int, float)) or not math.isfinite(waf) or waf < 1:
        raise DbtierError(f"--waf must be a number of at least 1 (a device writes at least what it is sent), "
                          f"got {waf}", "e.g. --waf 1 for enterprise flash, --waf 2.5 for client flash")
    if waf > 100:
        raise DbtierError(f"--waf must be at most 100, got {waf:g}", "e.g. --waf 2.5")
    return float(waf)


def device_waf(d: Device, waf: float | None) -> tuple[float, str]:
    """The write amplification applied to a flash device, and where it comes from."""
    if waf is not None:
        return waf, "--waf"
    cls = "enterprise" if d.power_loss_protection else "client"
    w, why = DEFAULT_WAF[cls]
    return w, f"{cls} class default: {why}"


@dataclass(frozen=True)
class HostWrites:
    """The host's average day: TB written and read, and how each was obtained."""
    write_tb_per_day: float
    read_tb_per_day: float
    random: bool                  # the writes are small random ones (parity layouts take the small-write factor)
    basis: str                    # "given", "history", "peak held 24 h (pessimistic)", "none"
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"write_tb_per_day": self.write_tb_per_day, "read_tb_per_day": self.read_tb_per_day,
                "random_writes": self.random, "basis": self.basis, "detail": self.detail}


def _peak_tb_per_day(mbps: float | None, iops: float | None) -> tuple[float, str]:
    if mbps:
        return mbps * 1e6 * SECONDS_PER_DAY / 1e12, f"{mbps:,.0f} MB/s held 24 h"
    if iops:
        return iops * PAGE_BYTES * SECONDS_PER_DAY / 1e12, f"{iops:,.0f} IOPS x 8 KiB held 24 h"
    return 0.0, "none"


def host_writes(write_iops: float | None, write_mbps: float | None, read_iops: float | None,
                read_mbps: float | None, write_tb_per_day: float | None = None,
                read_tb_per_day: float | None = None, source: str = "given") -> HostWrites:
    """The average day's host writes (and reads) of a requirement (rates without headroom)."""
    random = bool(write_iops) or not write_mbps
    rd, rhow = (read_tb_per_day, f"{read_tb_per_day:,.3g} TB read a day ({source})") \
        if read_tb_per_day is not None else _peak_tb_per_day(read_mbps, read_iops)
    if write_tb_per_day is not None:
        return HostWrites(write_tb_per_day, rd, random, source,
                          f"{write_tb_per_day:,.3g} TB written a day ({source}); reads: {rhow}")
    tb, how = _peak_tb_per_day(write_mbps, write_iops)
    if not tb:
        return HostWrites(0.0, rd, random, "none", "the requirement has no writes")
    return HostWrites(tb, rd, random, "peak held 24 h (pessimistic)",
                      f"no average written bytes a day (--write-tb-per-day, or a history run): the peak, {how} = "
                      f"{tb:,.2f} TB a day, is the pessimistic assumption; reads: {rhow}")


def layout_write_factor(layout: str, n: int, random: bool) -> float:
    """Device writes per host write, summed over the set (the table in the module docstring)."""
    if layout in ("jbod", "raid0"):
        return 1.0
    if layout == "raid1":
        return float(n)
    if layout in ("raid10", "mirror2"):
        return 2.0
    if layout == "mirror3":
        return 3.0
    if layout == "raid5":
        return 2.0 if random else n / (n - 1)
    if layout == "raid6":
        return 3.0 if random else n / (n - 2)
    raise ValueError(f"not a single-set layout: {layout}")



@dataclass(frozen=True)
class SetLoad:
    """What one device set of a design is sent a day: host TB written and read (its share)."""
    role: str
    write_tb_per_day: float
    read_tb_per_day: float
    random: bool


def per_device_tb(d: Device, layout: str, n: int, load: SetLoad, waf: float | None) -> tuple[float, float, float]:
    """(device writes a day incl. WAF, device reads a day, the WAF applied) for one device of the set."""
    w = load.write_tb_per_day * layout_write_factor(layout, n, load.random) / n
    amp = device_waf(d, waf)[0] if d.flash else 1.0
    return w * amp, load.read_tb_per_day / n, amp


def lasts(d: Device, layout: str, n: int, load: SetLoad, waf: float | None, service_years: float) -> bool:
    """Does every device of the set last the service life (flash) or stay within its rating (HDD)?

    A device without the figure passes here (it is unchecked, and the result says so)."""
    w, r, _ = per_device_tb(d, layout, n, load, waf)
    if d.flash:
        tbw = d.rated_tbw
        return tbw is None or w <= 0 or tbw / (w * DAYS_PER_YEAR) >= service_years * (1 - 1e-9)
    if d.kind == "hdd":
        rating = d.workload_tb_per_year
        return rating is None or (w + r) * DAYS_PER_YEAR <= rating * (1 + 1e-9)
    return True


def set_endurance(d: Device, layout: str, n: int, load: SetLoad, waf: float | None,
                  service_years: float) -> dict[str, Any]:
    """The endurance figures of one set (the result document's `endurance`, per set)."""
    w, r, amp = per_device_tb(d, layout, n, load, waf)
    f = layout_write_factor(layout, n, load.random)
    base = {"role": load.role or None, "device": d.id, "count": n, "layout": layout,
            "host_write_tb_per_day": load.write_tb_per_day, "layout_write_factor": f, "waf": amp,
            "waf_source": device_waf(d, waf)[1] if d.flash else None,
            "device_writes_tb_per_day": w, "service_years": service_years}
    if d.kind == "cloud-volume":
        return {**base, "device_writes_tb_per_day": None, "lifetime_years": None, "used_fraction": None,
                "figure_source": None, "passes": True, "checked": True,
                "reason": "a cloud volume's wear is the provider's: nothing to check"}
    if d.kind == "shared-array":
        return {**base, "lifetime_years": None, "used_fraction": None, "figure_source": None, "passes": True,
                "checked": True, "reason": "the array manages its media's wear (and its support contract replaces "
                                           "worn drives)"}
    if d.flash:
        tbw = d.rated_tbw
        if tbw is None:
            return {**base, "lifetime_years": None, "used_fraction": None, "figure_source": "absent",
                    "passes": True, "checked": False,
                    "reason": f"{d.id} has no endurance figure (endurance_tbw or dwpd): unchecked for wear"}
        # a QLC drive with dwpd_4k is rated on it: a database writes small random pages (Device.rated_tbw)
        src = d.endurance_basis or "catalog endurance_tbw"
        life = math.inf if w <= 0 else tbw / (w * DAYS_PER_YEAR)
        used = service_years / life if life != math.inf else 0.0
        ok = life >= service_years * (1 - 1e-9)
        how = (f"{load.write_tb_per_day:,.3g} TB/day x {f:g} ({layout}) / {n} devices x WAF {amp:g} = "
               f"{w:,.3g} TB/day per device; {tbw:,.0f} TBW / ({w:,.3g} x 365) = "
               + ("no wear" if life == math.inf else f"{life:,.1f} years"))
        return {**base, "rated_tbw": tbw, "lifetime_years": None if life == math.inf else life, "used_fraction": used,
                "figure_source": src, "passes": ok, "checked": True,
                "reason": how + ("" if ok else f", short of the {service_years:g}-year service life")}
    # hdd
    rating = d.workload_tb_per_year
    yearly = (w + r) * DAYS_PER_YEAR
    if rating is None:
        return {**base, "lifetime_years": None, "used_fraction": None, "figure_source": "absent", "passes": True,
                "checked": False, "workload_tb_per_year": yearly,
                "reason": f"{d.id} has no workload rating (workload_tb_per_year): unchecked"}
    ok = yearly <= rating * (1 + 1e-9)
    return {**base, "lifetime_years": None, "used_fraction": yearly / rating, "figure_source":
            "catalog workload_tb_per_year", "passes": ok, "checked": True, "workload_tb_per_year": yearly,
            "reason": f"{w:,.3g} TB written + {r:,.3g} TB read a day per device = {yearly:,.0f} TB a year against "
                      f"a workload rating of {rating:,.0f} TB a year" + ("" if ok else ": over the rating")}


def replacements(lifetime_years: float | None, service_years: float) -> int:
    """Replacements each device needs over the service life (0 when it lasts, or has no figure)."""
    if lifetime_years is None or lifetime_years <= 0 or lifetime_years >= service_years * (1 - 1e-9):
        return 0
    return math.ceil(service_years / lifetime_years - 1e-9) - 1
