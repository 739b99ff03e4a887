"""A cloud volume as a device of the queueing model: the provider's rate limits in front of a base latency.

The device ID (wherever `simulate run` takes one: --device, --cache, --backing, --fast, --slow):

    cloud:PROVIDER:TYPE:size=GIB[,iops=N][,mibps=X|mbps=X][,count=N][,instance=NAME][,latency_us=US]

    cloud:aws:gp3:size=1000,iops=6000,mibps=250
    cloud:aws:st1:size=2000,count=4,instance=r6i.4xlarge
    cloud:azure:premium-ssd:size=512,latency_us=3000

- PROVIDER:TYPE is a volume type of catalog/cloud_volumes.toml (`aws:gp3`, `azure:premium-ssd`, ...).
- size (GiB, 2^30 bytes) is required. A size-scaled type (gp2, st1, sc1, pd-balanced, pd-ssd) or a tiered
  one (Azure Premium SSD) takes its IOPS and throughput from the size (gp2's baseline: no burst credits);
  giving them is refused. A provisioned type (gp3, io1, io2, Premium SSD v2, Ultra, Hyperdisk) takes iops
  and a throughput within its rules, each defaulting to the type's free baseline (a type without one, e.g.
  io1, needs iops=); where throughput follows from the IOPS (io1, io2, Hyperdisk Extreme) it is not given.
- mibps (2^20 B/s) or mbps (10^6 B/s): either, converted to the type's own unit.
- count=N: a stripe of N such volumes: the IOPS and throughput limits are N times one volume's.
- instance=NAME (catalog/instances.toml, the volume's provider): the instance's sustained (baseline) caps
  apply on top, each the lower of the stripe's and the instance's; the device says which binds. The
  instance's IOPS cap is counted with the volume type's I/O size accounting (an assumption: AWS measures
  its instance IOPS figures with 16 KiB I/Os, and larger ones meet the MB/s cap first).
- latency_us: the base latency (default the type's typical `latency_us`, an approximate figure).

The model (latency.py, a rate-limited DeviceModel): reads and writes share one IOPS and one throughput
limit; an I/O of b bytes counts as max(1, ceil(b / io_size_kib KiB)) I/Os and holds the limiter for
max(counted / IOPS, b / bytes per second), and completes the base latency after it passes the limiter.
Burst credits (gp2, st1, instances) are not replayed here: `plan size --cloud --from-history` does that.

Pure: names and the shipped data files in, a DeviceModel out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dbtier.core.errors import DbtierError
from dbtier.model.cloud import volumes as cloud
from dbtier.sim.device.latency import MAX_UNITS, DeviceModel
from dbtier.sim.names import CLOUD_EXAMPLE as EXAMPLE
from dbtier.sim.names import CLOUD_GRAMMAR as GRAMMAR
from dbtier.sim.names import CLOUD_PREFIX as PREFIX

KEYS = ("size", "iops", "mibps", "mbps", "count", "instance", "latency_us")
MAX_COUNT = 128
MAX_LATENCY_US = 1e7            # 10 s


@dataclass(frozen=True)
class CloudLimits:
    """What a cloud device's limits are and where they come from (the device's `limits` in the result)."""
    volume_type: str              # provider:type
    size_gib: float               # each volume
    count: int
    volume_iops: float            # one volume's limit
    volume_throughput: float      # one volume's limit, in throughput_unit
    throughput_unit: str          # the type's: MiB/s (AWS, Google) or MB/s (Azure)
    io_size_kib: float            # an I/O up to this size counts as one
    latency_us: float
    latency_from: str
    instance: str | None
    instance_iops: float | None           # the instance's baseline (sustained) caps
    instance_throughput: float | None     # in throughput_unit
    iops: float                   # the limit that applies
    throughput: float             # the limit that applies, in throughput_unit
    iops_binds: str
    throughput_binds: str
    as_of: str


def is_cloud(value: str) -> bool:
    return value.startswith(PREFIX)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 1e-9 else f"{x:,.2f}".rstrip("0").rstrip(".")


def _plain(x: float) -> str:
    """A value as the user types it into an ID (no thousands commas: a comma separates keys)."""
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}".rstrip("0").rstrip(".")


def _params(value: str, rest: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in (p.strip() for p in rest.split(",")):
        if not part:
            continue
        k, sep, v = part.partition("=")
        k, v = k.strip(), v.strip()
        if not sep or not v:
            raise DbtierError(f"device ID '{value}': '{part}' is not KEY=VALUE", f"e.g. {EXAMPLE}")
        if k not in KEYS:
            raise DbtierError(f"device ID '{value}': unknown key '{k}' (known: {', '.join(KEYS)})",
                              f"the grammar: {GRAMMAR}")
        if k in out:
            raise DbtierError(f"device ID '{value}': '{k}' is given twice", "give it once")
        out[k] = v
    return out


def _number(value: str, key: str, text: str, whole: bool = False) -> float:
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and x > 0) or (whole and x != int(x)):
        kind = "a whole number of at least 1" if whole else "a positive number"
        raise DbtierError(f"device ID '{value}': {key}={text} is not {kind}", f"e.g. {EXAMPLE}")
    return x


def _refuse(value: str, what: str, hint: str) -> DbtierError:
    return DbtierError(f"device ID '{value}': {what}", hint)


def _volume(value: str, vt: cloud.VolumeType, p: dict[str, str]) -> tuple[float, float, float, str]:
    """(size, one volume's IOPS, its throughput in the type's unit, how they were chosen)."""
    if "size" not in p:
        raise _refuse(value, "a cloud volume needs size=GIB", f"e.g. {EXAMPLE}")
    size = _number(value, "size", p["size"])
    if not vt.size_min <= size <= vt.size_max:
        raise _refuse(value, f"{vt.key} volumes are {_fmt(vt.size_min)} to {_fmt(vt.size_max)} GiB, not {_fmt(size)}",
                      "give a size in that range, or stripe volumes with count=N")
    if "mibps" in p and "mbps" in p:
        raise _refuse(value, "give the throughput once, as mibps= (2^20 B/s) or mbps= (10^6 B/s)", "drop one")
    tp_given = None
    if "mibps" in p or "mbps" in p:
        key = "mibps" if "mibps" in p else "mbps"
        x = _number(value, key, p[key])
        in_mibps = x if key == "mibps" else x * cloud.MIB_PER_MB
        tp_given = in_mibps if vt.throughput_unit == "MiB/s" else in_mibps / cloud.MIB_PER_MB
    unit = vt.throughput_unit
    if vt.model in ("size-scaled", "tiered"):
        if vt.model == "tiered":
            tier = vt.tier(size)
            iops, tp, how = tier[1], tier[2], f"the {_fmt(tier[0])} GiB tier's figures"
        else:
            iops, tp = vt.max_iops(size), vt.throughput_at(size, 0)
            how = "the size's figures" + ("; the baseline, burst credits not modelled" if vt.burst != "none"
                                          else "")
        given = [k for k in ("iops", "mibps", "mbps") if k in p]
        if given:
            raise _refuse(value, f"{vt.key}'s IOPS and throughput follow from its size ({_fmt(iops)} IOPS and "
                          f"{_fmt(tp)} {unit} at {_fmt(size)} GiB): {given[0]}= cannot be chosen",
                          f"leave {given[0]}= out, or change size=")
        return size, iops, tp, how
    # provisioned: the IOPS, then the throughput, within the type's rules
    if "iops" in p:
        iops = _number(value, "iops", p["iops"])
    elif vt.iops_free > 0:
        iops = vt.iops_free
    else:
        raise _refuse(value, f"{vt.key} has no free IOPS baseline: give iops= ({_fmt(vt.iops_min)} to "
                      f"{_fmt(max(vt.max_iops(size), vt.iops_min))} at {_fmt(size)} GiB)", "add iops=N to the ID")
    lo = max(vt.iops_min, (vt.iops_min_per_size or 0.0) * size)
    hi = max(vt.max_iops(size), vt.iops_free)       # the free baseline holds at any size (gp3, Premium SSD v2)
    if iops < lo - 1e-9:
        rule = f"at least {_fmt(vt.iops_min)} IOPS" + (f" and {_fmt(vt.iops_min_per_size)} per GiB"
                                                        if vt.iops_min_per_size else "")
        raise _refuse(value, f"iops={_fmt(iops)} is below {vt.key}'s minimum at {_fmt(size)} GiB ({_fmt(lo)}: "
                      f"{rule})", f"give iops={_plain(lo)} or more")
    if iops > hi + 1e-9:
        rule = f"at most {_fmt(vt.iops_max)} IOPS" + (f" and {_fmt(vt.iops_per_size)} per GiB"
                                                       if vt.iops_per_size else "")
        raise _refuse(value, f"iops={_fmt(iops)} is above what {vt.key} allows at {_fmt(size)} GiB ({_fmt(hi)}: "
                      f"{rule})", "lower iops=, raise size=, or stripe volumes with count=N")
    tp_hi = vt.throughput_at(size, iops)
    how = "provisioned as given" if "iops" in p else "the type's free IOPS baseline"
    if not vt.throughput_provisioned:
        if tp_given is not None:
            raise _refuse(value, f"{vt.key}'s throughput follows from its IOPS ({_fmt(tp_hi)} {unit} at "
                          f"{_fmt(iops)} IOPS): it cannot be given", "leave mibps=/mbps= out")
        return size, iops, tp_hi, how + "; throughput from the IOPS"
    if tp_given is None:
        if vt.throughput_free <= 0:
            raise _refuse(value, f"{vt.key} has no free throughput baseline: give mibps= or mbps= (up to "
                          f"{_fmt(tp_hi)} {unit} at {_fmt(iops)} IOPS)", "add mibps=X or mbps=X to the ID")
        tp, how = vt.throughput_free, how + "; the type's free throughput"
    else:
        tp, how = tp_given, how + "; throughput as given"
    tp_lo = max(vt.throughput_min, 0.0)
    if tp < tp_lo - 1e-9:
        raise _refuse(value, f"the throughput {_fmt(tp)} {unit} is below {vt.key}'s minimum ({_fmt(tp_lo)} {unit})",
                      f"give at least {_plain(tp_lo)} {unit}")
    if tp > tp_hi + 1e-9:
        per = (f"{_fmt(vt.throughput_per_iops)} {unit} per IOPS, " if vt.throughput_per_iops else "")
        raise _refuse(value, f"the throughput {_fmt(tp)} {unit} is above what {vt.key} allows at {_fmt(iops)} IOPS "
                      f"({_fmt(tp_hi)} {unit}: {per}at most {_fmt(vt.throughput_max)})",
                      "lower the throughput or raise iops=")
    return size, iops, tp, how


def limits(value: str, types: dict[str, cloud.VolumeType] | None = None,
           instances: dict[str, cloud.Instance] | None = None) -> tuple[CloudLimits, str]:
    """The limits a cloud device ID names, and how its volume figures were chosen."""
    head, _, rest = value[len(PREFIX):].partition(":") if is_cloud(value) else ("", "", "")
    provider = head.strip()
    vname, _, params = rest.partition(":")
    vname = vname.strip()
    if not provider or not vname:
        raise DbtierError(f"device ID '{value}': expected {GRAMMAR}", f"e.g. {EXAMPLE}")
    if provider not in cloud.PROVIDERS:
        raise DbtierError(f"device ID '{value}': unknown cloud provider '{provider}' (known: "
                          f"{', '.join(cloud.PROVIDERS)})", f"e.g. {EXAMPLE}")
    types = cloud.load_volume_types() if types is None else types
    try:
        vt = cloud.volume_type(types, provider, vname)
    except DbtierError as e:
        raise DbtierError(f"device ID '{value}': {e.message}", e.hint) from None
    p = _params(value, params)
    size, v_iops, v_tp, how = _volume(value, vt, p)
    count = int(_number(value, "count", p.get("count", "1"), whole=True))
    if count > MAX_COUNT:
        raise _refuse(value, f"count={count}: at most {MAX_COUNT} volumes in a stripe", "lower count=")
    if "latency_us" in p:
        lat_us = _number(value, "latency_us", p["latency_us"])
        if lat_us > MAX_LATENCY_US:
            raise _refuse(value, f"latency_us={p['latency_us']} is above {_fmt(MAX_LATENCY_US)} µs (10 s)",
                          "give the latency in microseconds")
        lat_from = "given (latency_us=)"
    elif vt.latency_us:
        lat_us, lat_from = float(vt.latency_us), "the type's typical figure, approximate"
    else:
        raise _refuse(value, f"{vt.key} has no typical latency in the data", "give latency_us=")
    unit = vt.throughput_unit
    iops, tp = v_iops * count, v_tp * count
    stripe = "the volume" if count == 1 else f"the stripe of {count} volumes"
    iops_binds = tp_binds = stripe
    inst_name, i_iops, i_tp = None, None, None
    if "instance" in p:
        instances = cloud.load_instances() if instances is None else instances
        if not any(i.provider == provider for i in instances.values()):
            raise _refuse(value, f"no {provider} instances in the data (catalog/instances.toml)",
                          "leave instance= out")
        try:
            inst = cloud.instance(instances, provider, p["instance"])
        except DbtierError as e:          # its hint names a plan option: simulate has none
            raise DbtierError(f"device ID '{value}': {e.message}", "choose one of those") from None
        inst_name, i_iops, i_tp = inst.name, inst.baseline_iops, inst.throughput_in(unit)[0]
        here = f"instance {inst.name}'s baseline"
        if i_iops < iops - 1e-9:
            iops, iops_binds = i_iops, here
        elif abs(i_iops - iops) <= 1e-9:
            iops_binds = f"{stripe} and {here} (equal)"
        if i_tp < tp - 1e-9:
            tp, tp_binds = i_tp, here
        elif abs(i_tp - tp) <= 1e-9:
            tp_binds = f"{stripe} and {here} (equal)"
    lim = CloudLimits(vt.key, size, count, v_iops, v_tp, unit, vt.io_size_kib, lat_us, lat_from, inst_name, i_iops,
                      i_tp, iops, tp, iops_binds, tp_binds, vt.as_of)
    return lim, how


def device(value: str, types: dict[str, cloud.VolumeType] | None = None,
           instances: dict[str, cloud.Instance] | None = None) -> DeviceModel:
    """The rate-limited device model of a cloud device ID (see the module docstring)."""
    lim, how = limits(value, types, instances)
    mbps = lim.throughput / cloud.MIB_PER_MB if lim.throughput_unit == "MiB/s" else lim.throughput
    in_flight = lim.iops * lim.latency_us * 1e-6
    if in_flight > MAX_UNITS - 1:
        raise _refuse(value, f"{_fmt(lim.iops)} IOPS with a base latency of {_fmt(lim.latency_us)} µs keep "
                      f"{_fmt(math.ceil(in_flight))} I/Os in flight, more than the model's {MAX_UNITS - 1:,}",
                      "lower latency_us= or the limits")
    u = lim.throughput_unit
    source = (f"cloud volume {lim.volume_type} (catalog/cloud_volumes.toml, as of {lim.as_of}): "
              f"{lim.count} x {_fmt(lim.size_gib)} GiB, each {_fmt(lim.volume_iops)} IOPS and "
              f"{_fmt(lim.volume_throughput)} {u} ({how})"
              + (f"; instance {lim.instance} baseline {_fmt(lim.instance_iops or 0)} IOPS and "
                 f"{_fmt(lim.instance_throughput or 0)} {u}" if lim.instance else "")
              + f"; limits {_fmt(lim.iops)} IOPS ({lim.iops_binds}) and {_fmt(lim.throughput)} {u} "
              f"({lim.throughput_binds}), reads and writes together, an I/O counted per "
              f"{_fmt(lim.io_size_kib)} KiB; base latency {_fmt(lim.latency_us)} µs ({lim.latency_from})")
    return DeviceModel(value, source, lim.iops, lim.iops, mbps, mbps, lim.latency_us, lim.latency_us,
                       io_size_bytes=lim.io_size_kib * 1024.0, limits=lim)
