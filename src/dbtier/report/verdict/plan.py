"""The verdict's plan sentences: the cheapest configuration for the requirement (with what it was checked
for over the service life: wear and durable writes) and the measured price/performance of a run."""

from __future__ import annotations

from typing import Any, Sequence

from dbtier.report.figures.core import dicts, fmt, fmt_auto, get, isnum
from dbtier.core.parts import dict_at

_REQ = (("read_iops", "read IOPS"), ("write_iops", "write IOPS"), ("read_mbps", "read MB/s"),
        ("write_mbps", "write MB/s"), ("capacity_gb", "GB"))


def join_words(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def whole(x: Any) -> str:
    return fmt(x, 0)


def _checks(c: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(what the cheapest passed, what it could not be checked for) over the service life."""
    passed, unchecked = [], []
    e = c.get("endurance")
    if isinstance(e, dict):
        if not e.get("checked"):
            unchecked.append("endurance (its catalog entry has no rating)")
        elif isnum(e.get("lifetime_years")):
            host = dict_at(e, "host")
            basis = " (the peak writes held all day)" if str(host.get("basis", "")).startswith("peak") else ""
            passed.append(f"lasts {fmt(e['lifetime_years'], 1)} years at the load's writes{basis}")
        elif e.get("passes"):
            passed.append("stays within its workload rating")
    elif c.get("endurance_reason"):
        passed.append(str(c["endurance_reason"]).split(":")[0])
    dw = c.get("durable_writes")
    if isinstance(dw, dict):
        if not dw.get("required"):
            passed.append("durable writes were not required")
        elif dw.get("protected") is True:
            passed.append("its writes survive a power loss")
        elif dw.get("protected") is False:
            passed.append("its writes wait for cache flushes (sized on the flush-bound rate)")
        else:
            unchecked.append("durable writes (its catalog entry does not say)")
    for k in (get(c, "sized_on", "unchecked") or []):
        unchecked.append(f"{str(k).replace('_', ' ')}")
    return passed, unchecked


def cheapest(doc: dict[str, Any], from_lab: bool) -> dict[str, Any] | None:
    cands = dicts(doc.get("candidates"))
    if not cands:
        return None
    c = cands[0]
    req = dict_at(doc, "requirement")
    parts = [f"{fmt_auto(req[k])} {label}" for k, label in _REQ if isnum(req.get(k)) and req[k] > 0]
    absent = [label for k, label in _REQ if k in (req.get("absent") or [])]
    h = req.get("headroom")
    what = "the measured load" if from_lab else "the requirement"
    if parts:
        what += f" ({join_words(parts)}" + (f", +{h * 100:.0f}% headroom" if isnum(h) else "") + ")"
    if absent:   # figures nobody gave (not measured, or measured 0) are said, not sized for as 0
        what += f" (none given for {join_words(absent)}: not sized for)"
    name = c.get("description") or f"{whole(c.get('count'))} x {c.get('device')} {c.get('layout') or ''}".strip()
    if isinstance(c.get("cloud"), dict):
        return _cloud_sentence(doc, c, what, name)
    figs = []
    if isnum(c.get("capacity_gb")):
        figs.append(f"{whole(c['capacity_gb'])} GB usable")
    if isnum(c.get("read_iops")) and isnum(c.get("write_iops")):
        figs.append(f"{whole(c['read_iops'])} read / {whole(c['write_iops'])} write IOPS")
    tco = dict_at(c, "tco")
    years = tco.get("service_years")
    cost = (f" at ${whole(c['price_usd'])}" if isnum(c.get("price_usd")) else "")
    month = get(c, "cloud", "monthly_usd", "total")
    if isnum(month):                      # a cloud stripe is priced a month, not bought
        cost = f" at ${fmt(month, 2)} a month"
    elif isnum(tco.get("total_usd")) and isnum(years):
        cost += f" (${whole(tco['total_usd'])} over {fmt(years, 0)} years)"
    text = f"The cheapest configuration for {what} is {name}{cost}" + (f" ({', '.join(figs)})" if figs else "")
    passed, unchecked = _checks(c)
    if passed:
        text += "; it " + join_words(passed)
    if unchecked:
        text += "; not checked for " + join_words(unchecked)
    binding = doc.get("binding")
    text += (f"; the binding requirement is {binding}" if isinstance(binding, str) else "")
    other = doc.get("cheaper_by_purchase")
    if isinstance(other, dict) and other.get("reason") in ("durability", "endurance", "sustained"):
        text += f" ({other.get('detail')})"
    return {"text": text + ".", "configuration": name, "price_usd": c.get("price_usd"), "binding": binding,
            "tco_usd": tco.get("total_usd"), "checked": passed, "unchecked": unchecked}


def _cloud_sentence(doc: dict[str, Any], c: dict[str, Any], what: str, name: str) -> dict[str, Any]:
    """A cloud design is rented: its price a month and over the service life, and what binds it."""
    cl = c["cloud"]
    month, life = get(cl, "monthly_usd", "total"), cl.get("service_life_usd")
    text = (f"On {cl.get('provider')}, the cheapest volumes for {what} are {name}"
            + (f" at ${fmt(month, 2)} a month" if isnum(month) else "")
            + (f" (${whole(life)} over the service life)" if isnum(life) else ""))
    if isinstance(cl.get("binding"), str):
        text += f"; sized by {cl['binding']}"
    caps = dict_at(cl, "caps")
    if caps.get("sustained") is True:
        text += f", within {cl.get('instance')}'s sustained caps"
    return {"text": text + ".", "configuration": name, "price_usd": c.get("price_usd"), "binding": cl.get("binding"),
            "tco_usd": life, "checked": [], "unchecked": []}


def value_sentence(doc: dict[str, Any]) -> dict[str, Any] | None:
    v = dict_at(doc, "value")
    cfg = dict_at(doc, "config")
    # a tpcc run is priced in TPC-C's metric: NOPM (new orders a minute, tpmC) per $; TPM counts every transaction
    tpm = "TPM per $ (every transaction)" if isnum(v.get("nopm_per_usd")) else "TPM per $"
    parts = [f"{fmt(v[k], d)} {label}" for k, label, d in (("nopm_per_usd", "NOPM per $ (new orders a minute: "
                                                                            "TPC-C's tpmC)", 1),
                                                           ("tpm_per_usd", tpm, 1),
                                                           ("iops_per_usd", "IOPS per $", 1),
                                                           ("mbps_per_usd", "MB/s per $", 3)) if isnum(v.get(k))]
    if not parts:
        return None
    name = cfg.get("description") or "the configuration"
    price = f" (${whole(cfg['price_usd'])})" if isnum(cfg.get("price_usd")) else ""
    run = get(doc, "result", "run_dir")
    return {"text": "Measured price/performance" + (f" of {run}" if run else "") + f" on {name}{price}: "
                    + join_words(parts) + ".", "value": v}


def equivalent_sentence(doc: dict[str, Any]) -> dict[str, Any] | None:
    """`plan equivalent`: how many of the other device match the reference on each metric, at what price, and
    at what power and rack space (watts at the load compared on; rack units of controllers and enclosures)."""
    by = dict_at(doc, "by_metric")
    ref = dict_at(doc, "reference")
    using = get(doc, "using", "device")
    parts, power, ref_w = [], {}, None
    for metric in ("iops", "throughput", "capacity"):
        m = by.get(metric)
        if not isinstance(m, dict) or not isnum(m.get("count")):
            continue
        w, ru = get(m, "tco", "watts"), get(m, "tco", "rack_units")
        ref_w = get(m, "reference_tco", "watts") if isnum(get(m, "reference_tco", "watts")) else ref_w
        text = f"on {'IOPS' if metric == 'iops' else metric} {whole(m['count'])} of them"
        if isnum(m.get("price_usd")):
            text += f" at ${whole(m['price_usd'])}" + (f" ({fmt(m['price_ratio'], 1)} times the price)"
                                                       if isnum(m.get("price_ratio")) else "")
        if isnum(w):
            text += f", {whole(w)} W" + (f" ({fmt(w / ref_w, 0)} times the power)" if isnum(ref_w) and ref_w else "")
        if isnum(ru) and ru > 0:
            text += f" and {fmt(ru, 1)} rack units of enclosures"
        parts.append(text)
        power[metric] = {"watts": w, "reference_watts": ref_w, "rack_units": ru}
    if not parts or not using:
        return None
    mix = dict_at(doc, "mix_rule")
    rf = doc.get("read_fraction")
    rule = (f" (IOPS at {fmt(100 * rf, 0)}% reads time-weighted, the harmonic mean: {whole(mix['harmonic_iops'])}; "
            f"the average of read and write IOPS would be {whole(mix['arithmetic_mean_iops'])})"
            if isnum(mix.get("harmonic_iops")) and isnum(mix.get("arithmetic_mean_iops")) and isnum(rf) else "")
    figs = [f"${whole(ref['price_usd'])}" if isnum(ref.get("price_usd")) else "",
            f"{whole(ref_w)} W" if isnum(ref_w) else ""]
    text = (f"Matching one {ref.get('device')}" + (f" ({', '.join(f for f in figs if f)})" if any(figs) else "")
            + f" takes {using} ({get(doc, 'using', 'layout') or 'jbod'}): " + "; ".join(parts) + rule + ".")
    return {"text": text, "reference": ref.get("device"), "using": using, "power": power}
