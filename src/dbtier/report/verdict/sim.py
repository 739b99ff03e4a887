"""The verdict's sentences for `simulate run`: what a read cache or a preferred-read mirror does.

Pure: documents in, sentences out (dicts with `text` and the figures it cites); documents of other commands
and simulate runs of one device (`--design single`: nothing to set it against) give none.

- A read cache: the read hit ratio it gains (blocks and whole requests; the device alone has none), its
  read latency at p50 and p99 against the backing device alone (the run's baseline, the same trace replayed
  on that device), and whether it helps: a percentile counts as changed when it moves by at least
  figures.MIN_DIFFERENCE_PCT (5%, the floor `compare` uses); faster at either and slower at neither: it
  helps; slower at either: it makes reads slower (or mixed, when the other is faster); else it does not
  change read latency. A simulation has no run-to-run noise; the floor keeps changes a reader would not
  notice from being called gains.
- A preferred-read mirror: read latency against the slow side alone the same way, and after a failure the
  resync's volume and duration and the time without redundancy (from the failure to the end of the resync;
  to the end of the trace when the side never returns), with the change tracking that sized the resync.
"""

from __future__ import annotations

import os
from typing import Any

from dbtier.core.units import human_bytes, human_us, size_text
from dbtier.report.figures.core import MIN_DIFFERENCE_PCT, fmt, get, isnum

DESIGNS = {"read-cache": "read cache", "preferred-read-mirror": "preferred-read mirror"}


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _secs(s: float) -> str:
    """Seconds: whole from 1,000 up (a failure's duration), one decimal below (a resync's)."""
    return f"{fmt(s, 0 if abs(s) >= 1000 else 1)} s"


def _change(d: float) -> str:
    """A change in percent: +74%, -14%, +1.6%, or 'the same' under 0.05%."""
    if abs(d) < 0.05:
        return "the same"
    return f"{d:+.0f}%" if abs(d) >= 10 else f"{d:+.1f}%"


def _name(doc: dict[str, Any]) -> str:
    """'read cache on cloudPhysicsIO.csv': the design and the trace it replayed."""
    path = get(doc, "simulation", "trace_info", "path") or get(doc, "params", "trace")
    trace = os.path.basename(str(path)) if path else "the trace"
    return f"{DESIGNS[doc['design']]} on {trace} (simulated)"


def _against(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Read p50 and p99 of the design against its baseline's, each with its change in percent, and the call:
    helps / slower / mixed / unchanged. None when either side has no read latencies."""
    lat = get(doc, "latency_us", "read") or {}
    base = get(doc, "simulation", "baseline", "latency_us", "read") or {}
    rows = []
    for k in ("p50", "p99"):
        a, b = lat.get(k), base.get(k)
        if not (isnum(a) and isnum(b)) or b <= 0:
            return None
        rows.append((k, a, b, (a - b) / b * 100))
    faster = [r for r in rows if r[3] <= -MIN_DIFFERENCE_PCT]
    slower = [r for r in rows if r[3] >= MIN_DIFFERENCE_PCT]
    call = "mixed" if faster and slower else "slower" if slower else "helps" if faster else "unchanged"
    return {"rows": rows, "faster": [r[0] for r in faster], "slower": [r[0] for r in slower], "call": call,
            "device": get(doc, "simulation", "baseline", "device") or "the device"}


def _latency_text(c: dict[str, Any], what: str) -> str:
    dev = c["device"]
    parts = [f"read {k} {human_us(a)} against {human_us(b)} for {dev} alone ({_change(d)})" for k, a, b, d in c["rows"]]
    floor = f"{MIN_DIFFERENCE_PCT:g}%"
    if c["call"] == "helps":
        tail = (f"the {what} helps: {' and '.join(c['faster'])} {floor} or more faster, "
                "no percentile slower")
    elif c["call"] == "slower":
        tail = f"the {what} makes reads slower: {' and '.join(c['slower'])} {floor} or more slower"
    elif c["call"] == "mixed":
        tail = (f"mixed: {' and '.join(c['faster'])} faster, {' and '.join(c['slower'])} slower, "
                f"each by {floor} or more")
    else:
        tail = f"the {what} does not change read latency (p50 and p99 within {floor} of {dev} alone)"
    return "; ".join(parts) + ": " + tail


def _cache(doc: dict[str, Any]) -> dict[str, Any] | None:
    c = get(doc, "simulation", "cache") or {}
    devs = get(doc, "simulation", "devices") or {}
    rh, qh = doc.get("read_hit_ratio"), doc.get("request_hit_ratio")
    if not isnum(rh):
        return None     # no reads to cache
    size = f"{size_text(c['cache_gb'] * 1e9)} " if isnum(c.get("cache_gb")) else ""
    backing = get(devs, 'backing', 'id') or 'the backing device'
    what = (f"{_name(doc)}: a {size}{doc.get('policy') or ''} cache on {get(devs, 'cache', 'id') or 'the cache'} "
            f"in front of {backing} gains a read hit ratio of {_pct(rh)} of blocks"
            + (f", {_pct(qh)} of requests whole" if isnum(qh) else "") + f" ({backing} alone: none)")
    item: dict[str, Any] = {"design": doc["design"], "read_hit_ratio": rh, "request_hit_ratio": qh}
    cmp = _against(doc)
    if cmp is None:
        item["text"] = what + "; no baseline latency in the result to judge it by."
        item["helps"] = None
        return item
    item["text"] = what + "; " + _latency_text(cmp, "cache") + "."
    item.update(_figures(cmp))
    return item


def _figures(cmp: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"helps": cmp["call"], "baseline_device": cmp["device"]}
    for k, a, b, d in cmp["rows"]:
        out[f"read_{k}_us"], out[f"baseline_read_{k}_us"], out[f"read_{k}_change_pct"] = a, b, d
    return out


def _mirror(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cmp = _against(doc)
    devs = get(doc, "simulation", "devices") or {}
    if cmp is not None:
        lead = (f"{_name(doc)}: reads from the fast side ({get(devs, 'fast', 'id') or 'fast'}), writes to both; ")
        out.append({"text": lead + _latency_text(cmp, "mirror") + ".", "design": doc["design"], **_figures(cmp)})
    rs = doc.get("resync")
    f = get(doc, "simulation", "mirror", "failure")
    if not (isinstance(rs, dict) and isinstance(f, dict) and isnum(rs.get("unprotected_seconds"))):
        return out
    tr = get(doc, "simulation", "mirror", "tracking") or {}
    unit = (f" of {human_bytes(tr['region_size'])} ({tr.get('model')} tracking)" if isnum(tr.get("region_size"))
            else "")
    fig: dict[str, Any] = {"design": doc["design"], "failed_side": f.get("side"), "fail_at_s": f.get("fail_at_s"),
                           "return_at_s": f.get("return_at_s"), "resync_regions": rs.get("regions"),
                           "resync_bytes": rs.get("bytes"), "resync_seconds": rs.get("seconds"),
                           "unprotected_seconds": rs["unprotected_seconds"], "tracking": tr.get("model"),
                           "region_size": tr.get("region_size")}
    if f.get("return_at_s") is None or not isnum(rs.get("seconds")):
        text = (f"{_name(doc)}: the {f.get('side')} side fails at {_secs(f['fail_at_s'])} and does not return "
                f"within the trace: no resync; without redundancy for {_secs(rs['unprotected_seconds'])}, to the "
                "trace's end.")
    else:
        down = f["return_at_s"] - f["fail_at_s"]
        text = (f"{_name(doc)}: with the {f['side']} side down from {_secs(f['fail_at_s'])} to "
                f"{_secs(f['return_at_s'])} ({_secs(down)}), the writes dirtied {fmt(rs['regions'])} regions{unit}: "
                f"the resync copies {size_text(rs['bytes'])} in {_secs(rs['seconds'])}; without redundancy for "
                f"{_secs(rs['unprotected_seconds'])} (the failure's {_secs(down)} plus the resync).")
    out.append({"text": text, **fig})
    return out


def sentences(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One or two sentences per simulate run of a read cache or a preferred-read mirror, in the order given."""
    out: list[dict[str, Any]] = []
    for d in docs:
        if not isinstance(d, dict) or d.get("command") != "simulate" or d.get("design") not in DESIGNS:
            continue
        if d["design"] == "read-cache":
            item = _cache(d)
            if item:
                out.append(item)
        else:
            out += _mirror(d)
    return out
