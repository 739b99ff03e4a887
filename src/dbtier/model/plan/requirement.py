"""What `plan size` sizes for: the requirement, where it comes from, and whether a configuration meets it.

Pure. Requirements (rates happen together; see `meets`):
  * random read and write IOPS happen together (an OLTP mix): a configuration
    meets them when every resource of the model has time for both,
    R'/read_iops + W'/write_iops <= 1 for a single device set. `meets` reports
    per requirement the rate offered while the other is also served
    (offered reads = the reads/s left beside W' writes/s), so both verdicts agree;
  * sequential read and write MB/s likewise happen together (history peaks are
    rates of the same interval);
  * capacity is usable GB;
  * headroom h applies to every rate and to capacity: a requirement x is met
    when the offered figure is at least x (1 + h); `margin` is offered / x - 1,
    so a requirement is met exactly when margin >= h;
  * `--max-read-latency-us` is a ceiling on the configuration's read latency
    (no headroom; margin = 1 - offered / ceiling). In this model latency does
    not depend on the count, so it selects devices and layouts.

Beside the rates, what the service life needs: `write_tb_per_day` (the average day's written
TB, from the database's history or the command line; endurance is sized on it, see
`dbtier.model.plan.endurance`), `read_tb_per_day` (HDD workload ratings) and `instances` (a clustered
database, e.g. Oracle RAC with 2 instances, needs storage every node reaches).

- `requirement_from_history`: a run directory's result.json `requirement`
object, {read_iops, write_iops, read_mbps, write_mbps, capacity_gb,
percentile, headroom}, written by `dbtier history`; a missing or null rate
is absent (listed in the result's `requirement.absent`), a 0 is a measured zero; neither is sized for; `headroom` is used unless the command line gives one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import EPS, Evaluation, offered

REQUIREMENT_KEYS = ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb")
CATEGORY = {"read_iops": "iops", "write_iops": "iops", "read_mbps": "throughput", "write_mbps": "throughput",
            "capacity_gb": "capacity", "read_latency_us": "latency"}
LABELS = {"read_iops": "read IOPS", "write_iops": "write IOPS", "read_mbps": "read MB/s",
          "write_mbps": "write MB/s", "capacity_gb": "capacity (GB)", "read_latency_us": "read latency (µs)"}


def positive(name: str, x: float) -> None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise DbtierError(f"{name} must be a positive number, got {x}", f"give {name} a value above 0")


@dataclass(frozen=True)
class Requirement:
    """Rates and capacity to meet, a read-latency ceiling, and the headroom on top.

    None is absent (nobody asked, or the source did not measure it: nothing to meet, and said so);
    0 is a measured zero (a read-only database's writes): also nothing to meet, but not missing."""
    read_iops: float | None = None
    write_iops: float | None = None
    read_mbps: float | None = None
    write_mbps: float | None = None
    capacity_gb: float | None = None
    max_read_latency_us: float | None = None
    headroom: float = 0.3
    percentile: float | None = None
    source: str = "command line"
    write_tb_per_day: float | None = None      # the average day's host writes (TB = 10^12 bytes)
    read_tb_per_day: float | None = None
    daily_source: str | None = None            # where the TB/day came from, in words
    instances: int | None = None               # database instances sharing the storage (RAC: 2 or more)

    def __post_init__(self) -> None:
        for k in ("write_tb_per_day", "read_tb_per_day"):
            v = getattr(self, k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                                  or v < 0):
                raise DbtierError(f"{k} must be a finite number of at least 0, got {v}", f"e.g. --{k.replace('_', '-')} 2")
        if self.instances is not None and (isinstance(self.instances, bool) or not isinstance(self.instances, int)
                                           or self.instances < 1):
            raise DbtierError(f"instances must be a whole number of at least 1, got {self.instances}",
                              "e.g. --instances 2 for a two-node cluster")
        for k in REQUIREMENT_KEYS:
            v = getattr(self, k)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not (v >= 0):
                raise DbtierError(f"requirement {k} must be a number of at least 0, got {v}",
                                  f"give {k} a value above 0")
        if self.max_read_latency_us is not None:
            positive("--max-read-latency-us", self.max_read_latency_us)
        h = self.headroom
        if isinstance(h, bool) or not isinstance(h, (int, float)) or not math.isfinite(h) or not (h >= 0):
            raise DbtierError(f"headroom must be 0 or more, got {h}", "e.g. --headroom 0.3 for 30% on top")
        if not self.given() and self.max_read_latency_us is None:
            raise DbtierError("no requirement given", "give at least one of --read-iops, --write-iops, "
                              "--read-mbps, --write-mbps, --capacity-gb, --max-read-latency-us, or --from-history")

    def given(self) -> list[str]:
        """The figures to meet: present and above 0."""
        return [k for k in REQUIREMENT_KEYS if (getattr(self, k) or 0) > 0]

    def absent(self) -> list[str]:
        """The figures nobody gave (None): not sized for, and the result says so."""
        return [k for k in REQUIREMENT_KEYS if getattr(self, k) is None]

    def keys(self) -> list[str]:
        return self.given() + (["read_latency_us"] if self.max_read_latency_us is not None else [])

    def categories(self) -> list[str]:
        return list(dict.fromkeys(CATEGORY[k] for k in self.keys()))

    def target(self, key: str) -> float:
        """The figure to reach, headroom included (0 for an absent one)."""
        return (getattr(self, key) or 0.0) * (1 + self.headroom)

    def only(self, category: str) -> "Requirement":
        """This requirement restricted to one category (the others dropped)."""
        keep: dict[str, Any] = {k: (getattr(self, k) if CATEGORY[k] == category else None) for k in REQUIREMENT_KEYS}
        lat = self.max_read_latency_us if category == "latency" else None
        return replace(self, **keep, max_read_latency_us=lat)

    def to_dict(self) -> dict[str, Any]:
        return {"read_iops": self.read_iops, "write_iops": self.write_iops,
                "read_mbps": self.read_mbps, "write_mbps": self.write_mbps,
                "capacity_gb": self.capacity_gb, "max_read_latency_us": self.max_read_latency_us,
                "headroom": self.headroom, "percentile": self.percentile, "source": self.source,
                "write_tb_per_day": self.write_tb_per_day, "read_tb_per_day": self.read_tb_per_day,
                "daily_source": self.daily_source, "instances": self.instances,
                "clustered": None if self.instances is None else self.instances > 1,
                "absent": self.absent()}

    @property
    def has_writes(self) -> bool:
        return bool(self.write_iops or self.write_mbps or self.write_tb_per_day)


def requirement_from_history(doc: dict[str, Any], source: str, overrides: dict[str, float | None] | None = None,
                             headroom: float | None = None, max_read_latency_us: float | None = None,
                             daily: dict[str, Any] | None = None) -> Requirement:
    """The `requirement` object of a history run's result.json; `overrides` (given on the command line) win."""
    req = doc.get("requirement")
    if not isinstance(req, dict):
        raise DbtierError(f"{source}: no 'requirement' object in its result.json (a {doc.get('command') or '?'} run)",
                          "pass a run directory written by `dbtier history`, or give the requirement as options")
    values: dict[str, Any] = {}     # Requirement's figures (float or None), by keyword
    for k in REQUIREMENT_KEYS:
        v = req.get(k)
        if v is None:           # the history run did not measure it: absent, not 0
            values[k] = None
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise DbtierError(f"{source}: requirement.{k} must be a number of at least 0, got {v!r}",
                              "re-run `dbtier history` to rewrite it, or give the figure as an option")
        values[k] = float(v)
    for k, v in (overrides or {}).items():
        if v is not None:
            values[k] = v
    h = headroom
    if h is None:
        hv = req.get("headroom")
        if hv is not None and (isinstance(hv, bool) or not isinstance(hv, (int, float)) or hv < 0):
            raise DbtierError(f"{source}: requirement.headroom must be a number of at least 0, got {hv!r}",
                              "give --headroom instead")
        h = 0.3 if hv is None else float(hv)
    pct = req.get("percentile")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    extra = _daily_from_history(req, source)
    for k, v in (daily or {}).items():     # --write-tb-per-day and the like, given on the command line, win
        if v is not None:
            extra[k] = v
            if k == "write_tb_per_day":
                extra["daily_source"] = "--write-tb-per-day"
    return Requirement(**values, max_read_latency_us=max_read_latency_us, headroom=h, percentile=pct,
                       source=f"history run {source}" + (f" (p{pct:g} of interval rates)" if pct is not None else ""),
                       **extra)


def _daily_from_history(req: dict[str, Any], source: str) -> dict[str, Any]:
    """write_tb_per_day, read_tb_per_day, instances and where the TB/day came from (absent keys: None)."""
    out: dict[str, Any] = {}
    for k in ("write_tb_per_day", "read_tb_per_day"):
        v = req.get(k)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise DbtierError(f"{source}: requirement.{k} must be a number of at least 0, got {v!r}",
                              f"re-run `dbtier history requirement`, or give --{k.replace('_', '-')}")
        out[k] = float(v)
    if "write_tb_per_day" in out:
        p, n = req.get("write_days_percentile"), req.get("write_days_counted")
        what = (f"p{p:g} of {n} days" if isinstance(p, (int, float)) and isinstance(n, int)
                else f"{n} days" if isinstance(n, int) else "its days")
        out["daily_source"] = f"history run {source}: {what}"
    inst = req.get("instances")
    if inst is not None:
        if isinstance(inst, bool) or not isinstance(inst, int) or inst < 1:
            raise DbtierError(f"{source}: requirement.instances must be a whole number of at least 1, got {inst!r}",
                              "re-run `dbtier history requirement`, or give --instances")
        out["instances"] = inst
    return out


def meets(e: Evaluation, req: Requirement) -> dict[str, dict[str, Any]]:
    """Per requirement: required, with_headroom, offered, met, margin (see the module docstring)."""
    out: dict[str, dict[str, Any]] = {}
    R, W = req.target("read_iops"), req.target("write_iops")
    Mr, Mw = req.target("read_mbps"), req.target("write_mbps")
    offers = {
        "read_iops": lambda: offered(e.iops_resources, writes=W, side="read"),
        "write_iops": lambda: offered(e.iops_resources, reads=R, side="write"),
        "read_mbps": lambda: offered(e.mbps_resources, writes=Mw, side="read"),
        "write_mbps": lambda: offered(e.mbps_resources, reads=Mr, side="write"),
        "capacity_gb": lambda: e.capacity_gb.value,
    }
    for k in req.given():
        need = getattr(req, k)
        got = offers[k]()
        out[k] = {"required": need, "with_headroom": req.target(k), "offered": got,
                  "met": got >= req.target(k) * (1 - EPS), "margin": got / need - 1}
    if req.max_read_latency_us is not None:
        lat = e.read_latency_us.value
        out["read_latency_us"] = {"required": req.max_read_latency_us, "with_headroom": req.max_read_latency_us,
                                  "offered": lat, "met": lat <= req.max_read_latency_us * (1 + EPS),
                                  "margin": 1 - lat / req.max_read_latency_us}
    return out


