"""The verdict's OLTP sentences: where a sweep saturates, its bottleneck, what a placement matrix says
about where each part belongs, and the two-tier answer (runs on two tiers, or a matrix's all-fast and
all-slow steps, set against each other client count by client count).

The evidence guards (MIN_RUNS, MAX_SPREAD_PCT, MIN_OLTP_POINT_S) and the one evidence rule for a difference
(rules.judge, over figures.core.judge_difference's noise test) are read at call time, so that one setting
governs every sentence.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dbtier.core.units import pct_below
from dbtier.model.guards import doc_guards, reads_from_memory
from dbtier.model.placement import ALL_READ_STEPS, engine_steps
from dbtier.report.verdict import rules as R
from dbtier.report.figures.core import (NOT_DURABLE, busiest_device, durability, engine_of, engine_words, fmt_auto,
                                        get, isnum, machine_target, matrix_bests, matrix_dirs, matrix_moves,
                                        not_measured, oltp_points, oltp_steps, oltp_view, point_spread, run_name,
                                        workload_name)
from dbtier.report.verdict.caveats import cap as _cap
from dbtier.report.verdict.caveats import pair as _pair
from dbtier.report.verdict.caveats import same_device as _same_device
from dbtier.report.verdict.plan import join_words as _join
from dbtier.report.verdict.plan import whole as _n

_BOTTLENECKS = {"cpu": "the CPU, not the storage", "storage": "the storage (backends waiting on I/O)",
                "commit": "commits (WAL writes and their fsync)", "lock": "lock contention",
                "client": "the load generator ({driver}), not the server",
                "other": "waits outside storage, commits, locks and CPU (IPC, timeouts, buffer pins, extensions)"}


def _clients(n: Any) -> str:
    return f"{_n(n)} client" + ("" if n == 1 else "s")


def _runs(p: dict[str, Any] | None) -> str:
    """' (the median of 3 runs, 100–140 TPS)' for a repeated point; '' for one run."""
    sp = point_spread(p)
    if not sp or sp["n"] < 2:
        return ""
    return f" (the median of {sp['n']} runs, {fmt_auto(sp['min'])}–{fmt_auto(sp['max'])} TPS)"


# -- what a tier is -------------------------------------------------------------------------------------------

# A block device's "model" that is only a PCI vendor id (virtio's 0x1af4) names nothing.
_VENDOR_ID = re.compile(r"^0x[0-9a-f]+$", re.I)


def emulated_words(emu: dict[str, Any]) -> str:
    """'emulated: 1,000 read / 500 write IOPS' from a document's `emulated` block."""
    return f"emulated: {_n(emu.get('read_iops'))} read / {_n(emu.get('write_iops'))} write IOPS"


def data_dir(doc: dict[str, Any]) -> str | None:
    """The directory an OLTP sweep's data lived in: the --place/--dir one asked for, else the machine
    target holding the data directory, else the first target."""
    asked = get(doc, "params", "placement_requested", "data")
    if isinstance(asked, str) and asked:
        return asked
    data = get(doc, "placement", "data")
    mt = machine_target(doc, data) if isinstance(data, str) else None
    if mt is None:
        ts = get(doc, "machine", "targets")
        mt = ts[0] if isinstance(ts, list) and ts and isinstance(ts[0], dict) else None
    p = (mt or {}).get("path")
    return p if isinstance(p, str) and p else None


def run_tier(doc: dict[str, Any], several: bool) -> str | None:
    """The storage an OLTP run's sentences name: a sweep's when several sweeps are set against each other or
    it is emulated; a placement matrix's when its last step (the one its sentences describe) is all-fast or
    all-slow; None otherwise (one sweep on real storage: nothing to tell apart)."""
    steps = oltp_steps(doc)
    if steps:
        dirs = matrix_dirs(doc)
        which = {"all-fast": "fast", "all-slow": "slow"}.get(str(steps[-1].get("name")))
        return tier_label(doc, dirs[which]) if which and dirs else None
    return tier_label(doc) if several or isinstance(doc.get("emulated"), dict) else None


def tier_label(doc: dict[str, Any], path: str | None = None) -> str:
    """What a tier is, for a sentence: 'DIR (emulated: 1,000 read / 500 write IOPS)' when DIR is the run's
    emulated tier, else 'DIR (the device model)', 'DIR (vda)' when the model names nothing, 'DIR' alone;
    the run's directory name when even the directory is unknown."""
    path = path or data_dir(doc)
    emu = doc.get("emulated") if isinstance(doc.get("emulated"), dict) else None
    if emu and (path is None or emu.get("dir") == path
                or (isinstance(path, str) and path.startswith(str(emu.get("dir")).rstrip("/") + "/"))):
        return f"{emu.get('dir') or path} ({emulated_words(emu)})"
    if path is None:
        return run_name(doc)
    bd = get(machine_target(doc, path), "block_device") or {}
    model = bd.get("model") if isinstance(bd, dict) else None
    name = bd.get("name") if isinstance(bd, dict) else None
    what = model if isinstance(model, str) and model.strip() and not _VENDOR_ID.match(model.strip()) else name
    return f"{path} ({str(what).strip()})" if isinstance(what, str) and what.strip() else path


# -- where it saturates ---------------------------------------------------------------------------------------

def _oltp_short(doc: dict[str, Any]) -> str | None:
    """Why an OLTP run's knee (and its bottleneck) cannot be judged (None: it can)."""
    return _knee_short(oltp_view(doc)["knee_point"])


def _knee_short(kp: Any) -> str | None:
    if not isinstance(kp, dict):
        return None
    why = R.short_of(point_spread(kp), kp.get("duration_s"), R.MIN_OLTP_POINT_S, "TPS", 0)
    return f"its knee point ({_clients(kp.get('clients'))}): {why}" if why else None


def _oltp_needs(why: str, doc: dict[str, Any] | None = None, kp: dict[str, Any] | None = None) -> str:
    """What would let the knee be judged: a --duration that gives runs of MIN_OLTP_POINT_S (the nominal one
    scaled by how much shorter the measured runs came out: 5 s asked, 4.35 s measured -> 6 s), --repeat when
    too few runs were made, or more of both for a wide spread."""
    does = " (lab --profile quick or full does)"
    if R.BRIEF in why:
        asked, got = get(doc, "params", "duration_s"), (kp or {}).get("duration_s")
        secs = R.MIN_OLTP_POINT_S
        if isnum(asked) and isnum(got) and 0 < got < asked:
            secs = math.ceil(max(secs, R.MIN_OLTP_POINT_S * asked / got))
        sp = point_spread(kp)
        repeat = f" and --repeat {R.MIN_RUNS}" if (int(sp["n"]) if sp else 1) < R.MIN_RUNS else ""
        return f"run with --duration {fmt_auto(secs)} or more{repeat} to judge{does}"
    if R.WIDE not in why:
        return f"run with --repeat {R.MIN_RUNS} or more to judge{does}"
    return "run longer (--duration) or with more repeats to judge"


def still_rising(knee: dict[str, Any], points: list[dict[str, Any]]) -> bool:
    """The knee is the largest load measured and throughput was still growing there (model.oltp.knee's
    `still_rising`; an older document says so in its reason only)."""
    if isinstance(knee.get("still_rising"), bool):
        return knee["still_rising"]
    last = points[-1] if points else None
    return last is not None and last.get("clients") == knee.get("clients") and "still rising" in str(
        knee.get("reason"))


def saturation(doc: dict[str, Any], tier: str | None = None) -> dict[str, Any] | None:
    """Where one OLTP sweep saturates; `tier` names the storage it ran on when several tiers are reported."""
    v = oltp_view(doc)
    knee, kp, best = v["knee"], v["knee_point"], v["best"]
    if not knee or not isnum(knee.get("clients")) or not isnum(knee.get("tps")):
        return None
    wl = workload_name(doc)
    on = " ".join(x for x in (f"placement step {v['step']}" if v["step"] else "", f"on {tier}" if tier else "") if x)
    server = engine_words(doc)[0]
    wl = ("OLTP" + (f" on {server}" if engine_of(doc) != "postgres" else "")
          + (f" — {', '.join(x for x in (wl, on) if x)} —" if wl or on else ""))
    short = _oltp_short(doc)
    if short:
        measured = (f"; the best measured was {fmt_auto(best['tps'])} TPS at {_clients(best['clients'])}"
                    if best and isnum(best.get("tps")) else "")
        return {"text": f"Where {wl} saturates, and its bottleneck, are not judged, too little evidence: {short}"
                        f"{measured}; {_oltp_needs(short, doc, kp)}.{_durable_note(doc)}", "judged": False,
                "short_of": [short], "best_tps": (best or {}).get("tps"), "best_clients": (best or {}).get("clients"),
                "tier": tier}
    rising = still_rising(knee, v["points"])
    if rising:
        text = (f"{wl} is still rising at {_clients(knee['clients'])} (the largest measured): "
                f"{fmt_auto(knee['tps'])} TPS{_runs(kp)}.")
    else:
        p95 = get(kp, "lat_ms", "p95")
        text = (f"{wl} saturates at {_clients(knee['clients'])}: {fmt_auto(knee['tps'])} TPS{_runs(kp)}"
                + (f", p95 {fmt_auto(p95)} ms" if isnum(p95) else ""))
        if knee.get("confirmed") is False:
            text += " (only the last point fell short of it: a larger client count would confirm the knee)"
        if best and best is not kp and isnum(best.get("tps")):
            text += f"; the best was {fmt_auto(best['tps'])} TPS at {_clients(best['clients'])}"
        text += "."
    text += _durable_note(doc)
    return {"text": text, "knee_clients": knee["clients"], "knee_tps": knee["tps"], "still_rising": rising,
            "best_tps": (best or {}).get("tps"), "best_clients": (best or {}).get("clients"),
            "durable": (durability(doc) or {}).get("durable"), "tier": tier}


def _durable_note(doc: dict[str, Any]) -> str:
    """' Not durable: not comparable with a durable one (reason).' for a run that was not; '' otherwise
    (durable, or an older document that does not say: unknown)."""
    d = durability(doc)
    if d is None or d["durable"]:
        return ""
    return f" {_cap(NOT_DURABLE)}" + (f" ({d['reason']})" if d["reason"] else "") + "."


# -- the bottleneck -------------------------------------------------------------------------------------------

def bottleneck(doc: dict[str, Any], tier: str | None = None) -> dict[str, Any] | None:
    v = oltp_view(doc)
    kp = v["knee_point"]
    bn = (kp or {}).get("bottleneck")
    if not isinstance(bn, str) or not bn or _oltp_short(doc):   # not judged: saturation() says why
        return None
    nm = not_measured(doc, kp)
    cpu = None if "server_cpu" in nm else get(kp, "cpu_util", "busy_pct")
    dev = None if "server_devices" in nm else busiest_device(kp)
    facts = []
    if isnum(cpu):
        # to a tenth just under the bottleneck rule's 90% (workloads/parsers/oltp.py CPU_SATURATED): 89.6% is
        # not the saturated CPU that 90% would read as
        facts.append(f"CPU {pct_below(cpu, 90.0)}% busy")
    if dev:
        aw = dev.get("await_ms")
        facts.append(f"{dev.get('device')} {_n(dev['busy_pct'])}% busy"
                     + (f" with {fmt_auto(aw)} ms await" if isnum(aw) else ""))
    # a sweep still rising at its largest load has no knee: what held that load back is said as such, "so far"
    rising = isinstance(v["knee"], dict) and still_rising(v["knee"], v["points"])
    where = "the largest OLTP load measured" if rising else "the OLTP knee"
    at = (f"On {tier}, at" if tier else "At") + f" {where} ({_clients(kp.get('clients'))}"
    at += "; throughput still rising)" if rising else ")"
    so_far = " so far" if rising else ""
    if bn == "unknown":
        why = str(kp.get("bottleneck_evidence") or "")
        why = why.split(";", 1)[0].removeprefix("unknown: ") if why else "no wait samples"
        text = f"{at} the bottleneck{so_far} is unknown: {why}" + (f" ({_join(facts)})" if facts else "") + "."
    else:
        what = _BOTTLENECKS.get(bn, bn).format(driver=engine_words(doc)[1])
        lead = str(kp.get("bottleneck_evidence") or "").split(";", 1)[0]
        if bn == "storage" and "throttle (" in lead:   # an emulated tier at its limit: its rate, not busy %
            what, facts = "the storage, at the emulated tier's throttle", [lead.removeprefix("storage: ")] + facts[:1]
        text = f"{at} the bottleneck{so_far} is {what}" + (f": {_join(facts)}" if facts else "") + "."
    if nm:
        text += (" The server's CPU and devices were not measured (--dsn): the verdict rests on the server's wait "
                 f"events and {engine_words(doc)[1]}'s own CPU.")
    memory = reads_from_memory(doc_guards(doc))
    if memory:
        text += (" Its reads came from memory (cache guard): this bottleneck is that of the write and commit path; "
                 "the data/index read path was not measured.")
    return {"text": text, "bottleneck": bn, "cpu_busy_pct": cpu, "device": (dev or {}).get("device"),
            "device_busy_pct": (dev or {}).get("busy_pct"), "not_measured": nm, "reads_measured": not memory,
            "tier": tier}


# -- placement ------------------------------------------------------------------------------------------------

def _noise(m: dict[str, Any]) -> str:
    """'within noise of ±8%' for a move the noise rule does not count."""
    return f"within noise of ±{fmt_auto(m.get('noise_pct') or R.MIN_GAIN * 100)}%"


def matrix_placement(doc: dict[str, Any], explained: set) -> list[dict[str, Any]]:
    dirs = matrix_dirs(doc)
    moves = matrix_moves(doc)
    bests = [b for b in matrix_bests(doc) if isnum(b["tps"])]
    if not bests:
        return []
    fast, slow = dirs.get("fast", "the fast directory"), dirs.get("slow", "the slow directory")
    dev = _same_device(doc, dirs.get("fast"), dirs.get("slow")) if dirs else None
    emu = doc.get("emulated") if isinstance(doc.get("emulated"), dict) else None
    if emu and emu.get("dir") in (fast, slow):
        # the emulated tier is a throttled loop device, not the device its directory sits on
        dev = None
        label = tier_label(doc, emu["dir"])
        fast, slow = (label, slow) if emu["dir"] == fast else (fast, label)
    if dev:
        explained.add(_pair(fast, slow))
        tps = [b["tps"] for b in bests]
        return [{"text": f"The placement matrix cannot tell the tiers apart: {fast} and {slow} are both on {dev}, so "
                         f"the spread of its steps' best TPS ({fmt_auto(min(tps))} to {fmt_auto(max(tps))}) is "
                         "run-to-run variation, not placement.", "source": "placement matrix", "same_device": dev}]
    if not moves:
        return []
    short = _matrix_short(bests)
    if short:
        top = max(moves, key=lambda m: abs(m["gain"]))
        return [{"text": f"The placement matrix is not judged, too little evidence: {short}; its biggest change was "
                         f"{top['role']} on the fast tier, {top['gain'] * 100:+.0f}% ({fmt_auto(top['before'])} → "
                         f"{fmt_auto(top['after'])} TPS); run it with --repeat {R.MIN_RUNS} (and --duration "
                         f"{fmt_auto(R.MIN_OLTP_POINT_S)} or more) to tell a move from run-to-run variation.",
                 "source": "placement matrix", "judged": False, "short_of": [short]}]
    if reads_from_memory(doc_guards(doc)):
        return [_matrix_cached(doc, moves, fast, slow)]
    top = max(moves, key=lambda m: m["gain"])
    out = []
    if counts(top):
        fast_roles = [m["role"] for m in moves if counts(m)]
        slow_moves = [m for m in moves if not counts(m)]
        text = (f"{_cap(top['role'])} on the fast tier gave the biggest gain in the placement matrix: "
                f"{top['gain'] * 100:+.0f}% ({fmt_auto(top['before'])} → {fmt_auto(top['after'])} TPS, the best "
                "point of each step).")
        text += f" Recommended: {_join(fast_roles)} on the fast tier ({fast})"
        if slow_moves:
            text += (f"; {_join([m['role'] for m in slow_moves])} can stay on the slow tier ({slow}): moving "
                     + ("it" if len(slow_moves) == 1 else "them") + " changed TPS by "
                     + _join([f"{m['gain'] * 100:+.0f}%" + (f" ({m['role']})" if len(slow_moves) > 1 else "")
                              + (f", {_noise(m)}" if m["gain"] > 0 else "") for m in slow_moves]))
        text += "."
        rec = {"fast": fast_roles, "slow": [m["role"] for m in slow_moves]}
    else:
        text = (f"No move to the fast tier raised TPS beyond noise in the placement matrix (the best: {top['role']}, "
                f"{top['gain'] * 100:+.0f}%, {_noise(top)}): for this load {_roles(doc)} can all stay "
                f"on the slow tier ({slow}).")
        rec = {"fast": [], "slow": [s.moves for s in engine_steps(engine_of(doc)) if s.moves]}
    by = {b["name"]: b["tps"] for b in bests}
    if "all-fast" in by and "all-slow" in by and by["all-slow"] > 0:
        text += (f" Everything on the fast tier: {(by['all-fast'] / by['all-slow'] - 1) * 100:+.0f}% against "
                 "everything on the slow one.")
    out.append({"text": text, "source": "placement matrix", "biggest": top, "recommended": rec})
    return out


def _matrix_short(bests: list[dict[str, Any]]) -> str | None:
    """Why the matrix's steps (their best points) cannot be compared (None: they can)."""
    short = [(b["name"], why) for b in bests
             for why in [R.short_of(b["spread"], b["duration_s"], R.MIN_OLTP_POINT_S, "TPS", 0)] if why]
    return "; ".join(R.by_reason(short, "each step's best point", len(bests))) or None


def counts(m: dict[str, Any]) -> bool:
    """A move counts when the noise rule (figures.judge_difference, the one `compare` applies) calls the
    faster step better: TPS up by MIN_GAIN and by more than the two steps' combined spread."""
    return m["gain"] >= R.MIN_GAIN and str(m.get("verdict") or "").startswith("better")


def _roles(doc: dict[str, Any]) -> str:
    """The roles the engine's matrix places, in words: 'data, indexes, WAL and temp' (PostgreSQL),
    'tables (with their indexes), redo, undo and temp' (InnoDB)."""
    if engine_of(doc) == "mariadb":
        return "tables (with their indexes), redo, undo and temp"
    return "data, indexes, WAL and temp"


def _matrix_cached(doc: dict[str, Any], moves: list[dict[str, Any]], fast: str, slow: str) -> dict[str, Any]:
    """The matrix of a run whose reads came from memory: only the write and commit path was measured,
    so the moves of tables and indexes say nothing (their TPS differences are not the read path)."""
    read_moves = [m for m in moves if m["step"] in ALL_READ_STEPS]
    other = [m for m in moves if m["step"] not in ALL_READ_STEPS]
    text = ("The placement matrix measured the write and commit path only: its reads came from memory (cache "
            "guard), so the steps that move tables and indexes (" + _join([m["step"] for m in read_moves] or
                                                                        [s.name for s in engine_steps(engine_of(doc))
                                                                         if s.reads])
            + ") are marked reads not measured"
            + (" (their TPS changed by " + _join([f"{m['gain'] * 100:+.0f}% ({m['role']})" for m in read_moves])
               + ", which is not the read path)" if read_moves else "")
            + ": the matrix cannot say where data and indexes belong.")
    fast_roles = [m["role"] for m in other if counts(m)]
    slow_roles = [m["role"] for m in other if not counts(m)]
    if fast_roles:
        text += f" Of the write path, {_join(fast_roles)} on the fast tier ({fast}) raised TPS by " + _join(
            [f"{m['gain'] * 100:+.0f}%" for m in other if counts(m)]) + "."
    if slow_roles:
        text += f" {_cap(_join(slow_roles))} can stay on the slow tier ({slow}) for this load."
    return {"text": text, "source": "placement matrix", "reads_measured": False,
            "not_measured": [m["role"] for m in read_moves],
            "recommended": {"fast": fast_roles, "slow": slow_roles} if other else None}


# -- the two-tier answer --------------------------------------------------------------------------------------

def _curve(doc: dict[str, Any], name: str, label: str, points: list[dict[str, Any]], knee: Any) -> dict[str, Any]:
    pts = [p for p in points if isnum(p.get("tps"))]
    kp = next((p for p in pts if isinstance(knee, dict) and p.get("clients") == knee.get("clients")), None)
    return {"name": name, "label": label, "doc": doc, "points": pts, "knee": knee if isinstance(knee, dict) else None,
            "knee_point": kp, "peak": max(pts, key=lambda p: p["tps"]) if pts else None}


def _group(doc: dict[str, Any]) -> tuple:
    """Runs set against each other share these: engine, workload (with its scale), durability."""
    return engine_of(doc), workload_name(doc), (durability(doc) or {}).get("durable")


def tier_curves(oltps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each tier's TPS-vs-clients curve: a sweep's (named by its run directory, labelled by its storage), or
    a placement matrix's all-fast and all-slow steps when its tiers are two storages. Every curve carries
    `group` (what it can be set against)."""
    out = []
    for d in oltps:
        steps = oltp_steps(d)
        if not steps:
            out.append({**_curve(d, run_name(d), tier_label(d), oltp_points(d.get("points")), d.get("knee")),
                        "group": _group(d)})
            continue
        dirs = matrix_dirs(d)
        by = {s.get("name"): s for s in steps}
        if not (dirs and "all-fast" in by and "all-slow" in by):
            continue
        emu = d.get("emulated") if isinstance(d.get("emulated"), dict) else None
        if not (emu and emu.get("dir") in dirs.values()) and _same_device(d, dirs["fast"], dirs["slow"]):
            continue                                   # one device: matrix_placement says so
        for step, which in (("all-fast", "fast"), ("all-slow", "slow")):
            s = by[step]
            out.append({**_curve(d, step, tier_label(d, dirs[which]), oltp_points(s.get("points")), s.get("knee")),
                        "group": (_group(d), run_name(d))})
    return out


def _tps_list(c: dict[str, Any]) -> str:
    pts = c["points"]
    return (_join([fmt_auto(p["tps"]) for p in pts]) + " TPS at " + _join([_n(p["clients"]) for p in pts])
            + (" clients" if len(pts) > 1 or pts[0]["clients"] != 1 else " client"))


def _knee_words(c: dict[str, Any]) -> str:
    """', saturating at 2 clients' / ', still rising at 8 clients (the largest measured)' when the knee's
    evidence passes the guards; '' otherwise (the saturates sentence says why)."""
    k = c["knee"]
    if not k or not isnum(k.get("clients")) or _knee_short(c["knee_point"]):
        return ""
    if still_rising(k, c["points"]):
        return f", still rising at {_clients(k['clients'])} (the largest measured)"
    return f", saturating at {_clients(k['clients'])}"


def _ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """a's TPS over b's, with the one evidence rule's word on the difference (rules.judge, compare's)."""
    if not (a and b and isnum(a.get("tps")) and isnum(b.get("tps")) and b["tps"] > 0):
        return None
    r = a["tps"] / b["tps"]
    j = R.judge({"ratio": r, "better": "higher", "a_spread": point_spread(b), "b_spread": point_spread(a),
                 "unit": "TPS"})
    return {"ratio": r, "verdict": j["verdict"], "noise_pct": j["noise_pct"], "reason": j["reason"]}


def _x(r: float) -> str:
    """1.05x, 2.8x, 167x: two decimals near 1, where the difference is small, fewer further out."""
    return f"{r:.2f}x" if r < 2 else f"{r:.1f}x" if r < 10 else f"{r:.0f}x"


_COUNT = {2: "Two", 3: "Three", 4: "Four"}


def two_tiers(oltps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs on two tiers (or more) of one workload reported together: each tier's TPS per client count,
    and the fastest tier's ratio to each other at the tiers' peaks and at every client count both measured
    (a ratio the noise rule cannot tell from 1 is said to be within noise)."""
    curves = [c for c in tier_curves(oltps) if c["points"]]
    groups: dict[Any, list[dict[str, Any]]] = {}
    for c in curves:
        groups.setdefault(c["group"], []).append(c)
    out = []
    for cs in groups.values():
        if len(cs) < 2:
            continue
        names = [c["name"] for c in cs]
        if len(set(names)) < len(names):
            for k, c in enumerate(cs):
                c["name"] = f"{c['name']} #{k + 1}"
        cs = sorted(cs, key=lambda c: -c["peak"]["tps"])
        top = cs[0]
        wl = workload_name(top["doc"]) or "OLTP"
        head = (f"{_COUNT.get(len(cs), str(len(cs)))} tiers, {wl}" + (f" on {engine_words(top['doc'])[0]}"
                                            if engine_of(top["doc"]) != "postgres" else "") + ": ")
        parts = [f"{c['name']} — {c['label']} — {_tps_list(c)}{_knee_words(c)}" for c in cs]
        text = head + "; ".join(parts) + "."
        ratios = []
        for c in cs[1:]:
            pk = _ratio(top["peak"], c["peak"])
            if pk is None:
                continue
            peaks = (f"{fmt_auto(top['peak']['tps'])} TPS at {_clients(top['peak']['clients'])} vs "
                     f"{fmt_auto(c['peak']['tps'])} at {_clients(c['peak']['clients'])}")
            if pk["verdict"] == "within noise":
                s = (f" {top['name']} and {c['name']} are within noise of each other at the peaks ({peaks}; "
                     f"±{fmt_auto(pk['noise_pct'])}%)")
            elif pk["verdict"] == R.TOO_LITTLE:
                s = (f" {top['name']} against {c['name']} at the peaks ({peaks}, {_x(pk['ratio'])}) is not judged, "
                     f"too little evidence: {pk['reason']}")
            else:
                single = ", single runs" if "single runs" in str(pk["verdict"]) else ""
                s = f" {top['name']} is {_x(pk['ratio'])} {c['name']} at the peaks ({peaks}{single})"
            by = {p["clients"]: p for p in c["points"]}
            paired = [(p["clients"], _ratio(p, by[p["clients"]])) for p in top["points"] if p["clients"] in by]
            same = [(n, r) for n, r in paired if r]
            if same and not (len(same) == 1 and same[0][0] == top["peak"]["clients"] == c["peak"]["clients"]):
                s += "; " + _join([f"{_x(r['ratio'])}" + (" (within noise)" if r["verdict"] == "within noise" else
                                                            " (not judged)" if r["verdict"] == R.TOO_LITTLE else "")
                                   + f" at {_clients(n)}" for n, r in same])
            text += s + "."
            ratios.append({"tier": c["name"], "peak_ratio": pk["ratio"], "peak_verdict": pk["verdict"],
                           "by_clients": {str(n): r["ratio"] for n, r in same}})
        guarded = [c["name"] for c in cs if reads_from_memory(doc_guards(c["doc"]))]
        if guarded:
            text += (f" {_cap(_join(guarded))}: reads came from memory (cache guard), so "
                     + ("its" if len(guarded) == 1 else "their") + " TPS is the write and commit path's, not the "
                     "data/index read path's.")
        out.append({"text": text, "tiers": [{"name": c["name"], "label": c["label"],
                                             "points": [[p["clients"], p["tps"]] for p in c["points"]],
                                             "knee": {**{k: c["knee"].get(k) for k in ("clients", "tps")},
                                                      "still_rising": still_rising(c["knee"], c["points"]),
                                                      "judged": not _knee_short(c["knee_point"])}
                                             if c["knee"] else None} for c in cs],
                    "ratios": ratios})
    return out
