"""The caveats of a verdict: what every other sentence of the report means (reads from memory, a run that
was not durable, emulated or virtual storage, two tiers on one device, parts a run keeps apart on one device,
steps that did not finish)."""

from __future__ import annotations

import os
from typing import Any

from dbtier.model.guards import doc_guards
from dbtier.report.figures.core import (NOT_DURABLE, device_of, dicts, durability, durability_clash, get, kind,
                                        machine_target, oltp_steps, probe_targets, run_name)
from dbtier.report.figures.placed import sharing_sentences, where
from dbtier.results.kinds import kind_of
from dbtier.core.parts import dict_at


def cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s and not s[:3].isupper() else s


def same_device(doc: dict[str, Any], a: Any, b: Any) -> str | None:
    da, db = device_of(doc, a), device_of(doc, b)
    return da if da and da == db else None


def pair(a: Any, b: Any) -> tuple[str, str]:
    x, y = (os.path.normpath(str(a)), os.path.normpath(str(b)))
    return (x, y) if x <= y else (y, x)


def caveats(flat: list[dict[str, Any]], explained: set) -> list[dict[str, Any]]:
    out = []
    seen = set()
    for d in flat:   # the cache guard first: it says what every other figure of the run means
        for g in doc_guards(d):
            if g.get("kind") == "reads-from-memory":
                out.append({"text": f"{run_name(d)} ({kind(d)}): {cap(str(g.get('message')))}",
                            "kind": "reads-from-memory", "guard": g})
    for d in flat:   # a non-durable OLTP run: its figures skipped flushes a durable one pays for
        dur = durability(d) if kind_of(d) == "bench.oltp" else None
        if dur is not None and dur["durable"] is False:
            out.append({"text": f"{run_name(d)} ({kind(d)}) is {NOT_DURABLE}"
                                + (f" ({dur['reason']})" if dur["reason"] else "") + ".",
                        "kind": "not-durable", "reason": dur["reason"]})
    clash = durability_clash([d for d in flat if kind_of(d) == "bench.oltp"])
    if clash:
        out.append({"text": cap(clash) + ".", "kind": "not-comparable"})
    for d in flat:
        emu = d.get("emulated")
        if isinstance(emu, dict) and emu.get("note"):
            out.append({"text": f"{run_name(d)} ({kind(d)}): {cap(str(emu['note']))}.", "kind": "emulated"})
    for d in flat:
        for t in probe_targets(d):
            bd = get(machine_target(d, t.get("path")), "block_device")
            if isinstance(bd, dict) and bd.get("virtual") is True:
                dev = bd.get("name") or t.get("path")
                if dev in seen:
                    continue
                seen.add(dev)
                out.append({"text": f"{t.get('path')} is on a virtual disk ({bd.get('driver') or dev}): its figures "
                                    "are what the hypervisor gives this machine, not the physical media's.",
                            "kind": "virtual"})
    for d in flat:
        if d.get("command") == "lab":
            p = dict_at(d, "params")
            a, b = p.get("fast_dir"), p.get("slow_dir")
            # an emulated tier is a throttled loop device of its own, whatever device its directory sits on
            emulated = str(p.get("emulate") or "").rpartition("=")[0]
            if emulated and emulated in (a, b):
                pass
            elif isinstance(a, str) and isinstance(b, str) and a != b and pair(a, b) not in explained:
                dev = same_device(d, a, b)
                if dev:
                    explained.add(pair(a, b))
                    out.append({"text": f"{a} and {b} are on the same device ({dev}): the differences between them "
                                        "in this report are run-to-run variation, not the storage.",
                                "kind": "same_device"})
            for s in dicts(d.get("steps")):
                if s.get("status") in ("failed", "interrupted", "abandoned"):
                    out.append({"text": f"Lab step {s.get('name')} {s.get('status')}"
                                        + (f": {s.get('error')}" if s.get("error") else "")
                                        + "; the verdict uses only the steps that finished.", "kind": "step"})
        elif d.get("status") in ("failed", "interrupted", "abandoned"):
            out.append({"text": f"{run_name(d)} ({kind(d)}) is {d.get('status')}: only what it finished counts "
                                "here.", "kind": "status"})
    for d in flat:   # a run that keeps parts apart on one device cannot show what separating them does
        if kind_of(d) in ("bench.oltp", "bench.dss") and not oltp_steps(d):
            w = where(d)
            if not _told(w, explained):
                for text in sharing_sentences(w):
                    out.append({"text": f"{run_name(d)} ({kind(d)}): {cap(text)}", "kind": "same_device",
                                "placement": w})
    return out


def _told(w: dict[str, dict[str, Any]], explained: set) -> bool:
    """Whether another sentence already said that the run's directories share a device (a lab's tiers, the
    TPC-H temp tiers): an explained pair of directories holds two of its parts."""
    dirs = [str(p.get("dir")) for p in w.values() if isinstance(p.get("dir"), str)]

    def under(d: str, top: str) -> bool:
        return d == top or d.startswith(top.rstrip("/") + "/")
    return any(any(under(d, x) for d in dirs) and any(under(d, y) for d in dirs) for x, y in explained
               if isinstance(x, str) and isinstance(y, str))
