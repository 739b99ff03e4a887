"""The verdict: a few plain sentences, each derived from numbers in the documents and citing them.

Pure: documents in (a lab document brings its step runs, see `dbtier.report.inputs`), a dict
out. Seven topics, in this order: the tiers set against each other (runs on two tiers of one workload:
TPS per client count and the ratios), what the storage is good for, where it saturates, the
bottleneck, where data/indexes/WAL/temp belong, what a simulated design (a read cache, a mirror) gives
against its backing device alone, and the cheapest configuration for the measured load; plus caveats (a suspect fsync, a virtual disk, two "tiers" on one device, a failed step, a run
whose reads came from memory: the cache guard, dbtier.model.guards; an OLTP run that was not durable,
and durable and non-durable runs side by side: not comparable, neither called better).
A topic whose inputs are missing has no sentence: nothing is guessed.

The rules of thumb are the constants below; each sentence names the figure it rests on. The OLTP
sentences are in oltp.py, the plan ones in plan.py, the caveats in caveats.py.

One evidence rule for every comparison a sentence judges by (a placement move, temp on one tier or
another, one tier against another): each side rests on at least R.MIN_RUNS runs whose spread is at most
R.MAX_SPREAD_PCT and that lasted long enough, else "not judged" with what would be needed; then the
difference counts only when the noise rule `compare` applies (figures.judge_difference) calls it better:
at least R.MIN_GAIN and more than the two sides' spreads added; else "within noise" with the figures.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from dbtier.model.dss import dss_advice, dss_scale_advice
from dbtier.model.guards import doc_guards
from dbtier.model.lab import plan_engine
from dbtier.report.verdict import oltp as _oltp
from dbtier.report.verdict import rules as R
from dbtier.report.figures.core import (engine_of, device_of, dss_stats, expand, fmt, fmt_auto, get, isnum,
                                        judge_difference, machine_target, probe_knee, probe_spread, probe_targets,
                                        run_name, spread_of)
from dbtier.report.verdict.backup import sentences as _backup_sentences
from dbtier.report.verdict.caveats import caveats as _caveats
from dbtier.report.verdict.caveats import pair as _pair
from dbtier.report.verdict.plan import cheapest as _cheapest
from dbtier.report.verdict.plan import equivalent_sentence as _equivalent
from dbtier.report.verdict.plan import join_words as _join
from dbtier.report.verdict.plan import value_sentence as _value
from dbtier.report.verdict.plan import whole as _n
from dbtier.report.verdict.sim import sentences as _sim_sentences
from dbtier.results.cache_suspect import of_target as cache_of_target
from dbtier.results.kinds import kind_of
from dbtier.results.probe import READ_4K, WRITE_4K
from dbtier.core.parts import dict_at

# A 4 KiB random read at queue depth 1 (p50) at or under this: flash-class, fit for latency-bound OLTP.
OLTP_READ_LAT_US = 500.0
# A commit (8 KiB write + fdatasync, p50) at or under this: commits are cheap; WAL can live here.
COMMIT_LAT_US = 1000.0
# Sequential read at or over this: scans and backups run well.
SEQ_MBPS = 500.0
# A DSS run is CPU-bound when its queries kept the CPU this busy (time-weighted) ...
CPU_BOUND_PCT = 80.0
# ... and temp-heavy when the queries that spilled took this share of its time.
TEMP_HEAVY_SHARE = 0.25

TOPICS = ("tiers", "good_for", "saturates", "bottleneck", "placement", "designs", "cheapest")
TOPIC_LABELS = {"tiers": "tiers", "good_for": "good for", "saturates": "saturates", "bottleneck": "bottleneck",
                "placement": "placement", "designs": "simulated designs", "cheapest": "cheapest",
                "caveats": "caveats"}
_ENGINES: dict[Any, str] = {"duckdb": "DuckDB", "postgres": "PostgreSQL"}


def thresholds() -> list[tuple[str, str]]:
    """The rules of thumb and evidence guards, as the report's method notes list them: (what, rule)."""
    return [
        ("flash-class random reads", f"a 4 KiB random read at queue depth 1 takes at most {fmt_auto(OLTP_READ_LAT_US)} "
                                     "µs (p50): fit for latency-bound OLTP"),
        ("cheap commits", f"an 8 KiB write + fdatasync takes at most {fmt_auto(COMMIT_LAT_US)} µs (p50)"),
        ("good scans and backups", f"sequential read of at least {fmt_auto(SEQ_MBPS)} MB/s"),
        ("a placement gain", f"each side rests on runs that pass the guards below, and a move changes TPS (or "
                             f"a TPC-H run's time) by at least {R.MIN_GAIN:.0%} and by more than the two sides' "
                             "spreads added ((max - min) / median each; compare's rule): else within noise"),
        ("CPU-bound TPC-H", f"the queries kept the CPU at least {fmt_auto(CPU_BOUND_PCT)}% busy (time-weighted)"),
        ("temp-heavy TPC-H", f"queries that spilled took at least {TEMP_HEAVY_SHARE:.0%} of the run's time"),
        ("enough runs", f"a figure judged by rests on at least {R.MIN_RUNS} runs of its point"),
        ("small enough spread", f"those runs differ by at most {fmt_auto(R.MAX_SPREAD_PCT)}% of their median"),
        ("long enough probe points", f"each fio run lasts at least {fmt_auto(R.MIN_PROBE_POINT_S)} s"),
        ("long enough OLTP points", f"each run of an OLTP point lasts at least {fmt_auto(R.MIN_OLTP_POINT_S)} s"),
        ("long enough TPC-H runs", f"a power run lasts at least {fmt_auto(R.MIN_DSS_RUN_S)} s"),
    ]


def _where(doc: dict[str, Any], t: dict[str, Any]) -> str:
    """'/data (ext4 on nvme0n1)' for a probe target."""
    path = str(t.get("path") or "the target")
    mt = machine_target(doc, t.get("path")) or {}
    fs = t.get("filesystem") or mt.get("filesystem")
    dev = device_of(doc, t.get("path"))
    extra = " on ".join(str(x) for x in (fs, dev) if x)
    return f"{path} ({extra})" if extra else path


# -- what the storage is good for --------------------------------------------------------------------

_PROBE_FIGURES = {"read_lat_us_qd1_p50": ("the 4 KiB random read at queue depth 1", "µs", 1),
                  "commit_lat_us_p50": ("the commit latency", "µs", 1),
                  "read_mbps_seq": ("the sequential read", "MB/s", 0),
                  "read_iops_4k": ("the 4 KiB random read peak", "IOPS", 0),
                  "write_mbps_seq": ("the sequential write", "MB/s", 0)}


def _probe_short(doc: dict[str, Any], t: dict[str, Any], key: str) -> str | None:
    """Why a probe target's figure cannot be judged by (None: it can)."""
    sp = probe_spread(t, key)
    unit, digits = _PROBE_FIGURES.get(key, (key, "", 0))[1:]
    secs = sp.get("min_runtime_s") if sp else None
    return R.short_of(sp, secs if isnum(secs) else get(doc, "params", "point_s"), R.MIN_PROBE_POINT_S, unit, digits)


def _probe_needs(doc: dict[str, Any], whys: Sequence[str]) -> str:
    """What would let a probe's figures be judged."""
    point_s = get(doc, "params", "point_s")
    if any(R.BRIEF in w for w in whys):
        return "probe with --profile full (10 s points, each headline point measured at least twice) to judge"
    if any(R.ONCE in w for w in whys):
        return "probe again: every headline point is then measured at least twice"
    if isnum(point_s) and point_s < 10:
        return "probe with --profile full (10 s points) to judge"
    return "the storage varied that much between runs: probe again when it is idle to judge"


def _judged(doc: dict[str, Any], t: dict[str, Any], keys: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """The summary figures of `keys` that clear the evidence guards ({key: value}) and, for the others,
    why not ('the commit latency: measured once'), figures that fall short the same way named together."""
    s = dict_at(t, "summary")
    ok: dict[str, Any] = {}
    short = []
    for k in keys:
        if not isnum(s.get(k)):
            continue
        why = _probe_short(doc, t, k)
        if why:
            short.append((_PROBE_FIGURES.get(k, (k,))[0], why))
        else:
            ok[k] = s[k]
    return ok, R.by_reason(short)


def _cached(doc: dict[str, Any], t: dict[str, Any]) -> dict[str, Any] | None:
    """The target's figures a write-back cache gave (results.cache_suspect): as the probe stored them, else
    (a document that predates the check) the same rule over its summary, points and machine block device."""
    return cache_of_target(t, (machine_target(doc, t.get("path")) or {}).get("block_device"),
                           get(doc, "machine", "memory_bytes"))


def _cache_figures(doc: dict[str, Any], t: dict[str, Any]) -> set[str]:
    return set((_cached(doc, t) or {}).get("figures") or [])


def _cache_sentence(doc: dict[str, Any], t: dict[str, Any]) -> dict[str, Any] | None:
    """Why the write figures a cache gave are not judged, and the test that would measure the media."""
    c = _cached(doc, t)
    if not c:
        return None
    path = t.get("path")
    figs = c["figures"]
    head = (f"Not judged for backups on {path}" if "write_mbps_seq" in figs
            else f"The 4 KiB random write peak on {path} is not judged")
    what = "the write figures are a cache's" if len(figs) > 1 else "the write figure is a cache's"
    return {"text": f"{head}: {what} ({c.get('why')}); {c.get('test')}.", "target": path, "judged": False,
            "cache_suspect": figs}


def _good_for(doc: dict[str, Any], t: dict[str, Any]) -> list[dict[str, Any]]:
    s = dict_at(t, "summary")
    ok, whys = _judged(doc, t, ("read_lat_us_qd1_p50", "commit_lat_us_p50", "read_mbps_seq", "read_iops_4k"))
    rl, cl, rm = ok.get("read_lat_us_qd1_p50"), ok.get("commit_lat_us_p50"), ok.get("read_mbps_seq")
    riops, cps, wm = s.get("read_iops_4k"), s.get("commits_per_s"), s.get("write_mbps_seq")
    cached = _cache_figures(doc, t)
    if "write_mbps_seq" in cached:   # a cache's write figure: scans judged by the reads, backups not judged
        wm = None
    honesty = s.get("fsync_honesty")
    good: list[str] = []
    poor: list[str] = []
    uses: list[str] = []
    if isnum(rl):
        if rl <= OLTP_READ_LAT_US:
            uses.append("oltp")
            good.append(f"latency-bound OLTP (a 4 KiB random read takes {fmt_auto(rl)} µs at queue depth 1, p50"
                        + (f"; {_n(riops)} IOPS at the peak" if isnum(riops) else "") + ")")
        else:
            poor.append(f"latency-bound OLTP (a 4 KiB random read takes {fmt_auto(rl)} µs at queue depth 1, p50)")
    if isnum(cl) and honesty != "suspect":
        if cl <= COMMIT_LAT_US:
            uses.append("commits")
            good.append(f"commit-heavy work (an 8 KiB write + fdatasync takes {fmt_auto(cl)} µs, p50"
                        + (f"; {_n(cps)} commits/s at best" if isnum(cps) else "") + ")")
        else:
            poor.append(f"commit-heavy work (a commit takes {fmt_auto(cl)} µs, p50)")
    if isnum(rm):
        if rm >= SEQ_MBPS:
            uses.append("sequential")
            if "write_mbps_seq" in cached:
                good.append(f"sequential scans ({_n(rm)} MB/s read)")
            else:
                good.append(f"sequential scans and backups ({_n(rm)} MB/s read"
                            + (f", {_n(wm)} MB/s write" if isnum(wm) else "") + ")")
        else:
            poor.append(f"large scans ({_n(rm)} MB/s sequential read)")
    out = []
    where = _where(doc, t)
    if good or poor:
        text = f"{where} is good for {_join(good)}." if good else f"{where} is slow for {_join(poor)}."
        if good and poor:
            text += f" It is slow for {_join(poor)}."
        out.append({"text": text, "target": t.get("path"), "uses": uses, "read_lat_us_qd1_p50": rl,
                    "commit_lat_us_p50": cl, "read_mbps_seq": rm})
    if whys:
        out.append({"text": f"Not judged on {t.get('path')}, too little evidence: {'; '.join(whys)}; "
                            f"{_probe_needs(doc, whys)}.", "target": t.get("path"), "judged": False,
                    "short_of": whys})
    if honesty == "suspect":
        reason = s.get("fsync_honesty_reason")
        out.append({"text": f"fsync on {t.get('path')} is suspect" + (f" ({reason})" if reason else "")
                    + ": its commit figures, and any OLTP figures measured on it, are not comparable with storage "
                      "that flushes honestly.", "target": t.get("path"), "fsync_honesty": "suspect"})
    cache = _cache_sentence(doc, t)
    if cache:
        out.append(cache)
    return out


# -- where it saturates --------------------------------------------------------------------------------

def _probe_saturation(doc: dict[str, Any], t: dict[str, Any]) -> dict[str, Any] | None:
    k = probe_knee(t, READ_4K)
    if not k or _probe_short(doc, t, "read_iops_4k"):   # the peak not judged: _good_for says why
        return None
    path = t.get("path")
    p99 = f", p99 {fmt_auto(k['p99_us'])} µs" if isnum(k["p99_us"]) else ""
    per = " per host" if t.get("kind") == "fleet" else ""   # a fleet's aggregate: every host runs the same job
    if k["still_rising"]:
        text = (f"On {path}, 4 KiB random reads were still scaling at the largest load measured: {_n(k['iops'])} "
                f"IOPS at {_n(k['outstanding'])} outstanding I/Os{per}{p99}.")
    else:
        text = (f"On {path}, 4 KiB random reads saturate at {_n(k['outstanding'])} outstanding I/Os{per}: "
                f"{_n(k['iops'])} IOPS{p99}; more load adds no IOPS ({_n(k['last_iops'])} at "
                f"{_n(k['last_outstanding'])}).")
    w = probe_knee(t, WRITE_4K)
    if w and "write_iops_4k" in _cache_figures(doc, t):
        text += " 4 KiB random writes are not judged: their peak is a cache's."
        w = None
    elif w:
        text += (f" 4 KiB random writes {'were still growing at' if w['still_rising'] else 'stop growing at'} "
                 f"{_n(w['outstanding'])} ({_n(w['iops'])} IOPS).")
    return {"text": text, "target": path, "read_knee": k, "write_knee": w}



def _dss_class(s: dict[str, Any]) -> str:
    if s["spilled"] and isnum(s["spill_share"]) and s["spill_share"] >= TEMP_HEAVY_SHARE:
        return "temp"
    if isnum(s["cpu_pct"]) and s["cpu_pct"] >= CPU_BOUND_PCT:
        return "cpu"
    if isnum(s["cpu_pct"]):
        return "io"
    return "unknown"


def _engine(s: dict[str, Any]) -> str:
    e = s.get("engine")
    return _ENGINES.get(e, str(e or "?"))


def _spills(s: dict[str, Any]) -> str:
    q, b = max(s["spilled"], key=lambda x: x[1])
    return (f"{len(s['spilled'])} of {s['queries']} queries spilled to temp (peak {fmt_auto(b / 1e6)} MB in Q{q}, "
            f"{_n(100 * s['spill_share'])}% of the time)")


_DSS_NEEDS = "run a larger scale (--scale 1 or more; lab --profile full) to judge"


def _dss_short(ss: Sequence[dict[str, Any]]) -> str | None:
    """Why TPC-H power runs (dss_stats of each) are too short to judge by (None: they are long enough)."""
    short = [s for s in ss if not (isnum(s["total_s"]) and s["total_s"] >= R.MIN_DSS_RUN_S)]
    if not short:
        return None
    runs = ", ".join(f"{fmt_auto(s['total_s'])} s" for s in short if isnum(s["total_s"])) or "no time"
    return (f"{'a' if len(short) == 1 else len(short)} power run{'s' if len(short) > 1 else ''} of {runs}; "
            f"at least {fmt_auto(R.MIN_DSS_RUN_S)} s needed")


def _dss_bottleneck(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for d in docs:
        s = dss_stats(d)
        if not s["queries"]:
            continue
        cls = _dss_class(s)
        if cls != "unknown":
            groups.setdefault((cls, s["engine"], s["scale"]), []).append(s)
    out = []
    for (cls, _, scale), ss in groups.items():
        head = f"TPC-H SF {fmt_auto(scale)} on {_engine(ss[0])}"
        short = _dss_short(ss)
        if short:
            out.append({"text": f"Whether {head} is CPU-, storage- or temp-bound is not judged, too little evidence: "
                                f"{short}; {dss_advice(ss, R.MIN_DSS_RUN_S)}.", "judged": False, "short_of": [short],
                        "total_s": [s["total_s"] for s in ss]})
            continue
        if len(ss) == 1:
            runs = f" ({ss[0]['queries']} queries, {fmt_auto(ss[0]['total_s'])} s)"
        else:
            runs = (f" ({ss[0]['queries']} queries: "
                    + "; ".join(f"{fmt_auto(s['total_s'])} s with temp on {s['temp']}" for s in ss) + ")")
        cpus = [s["cpu_pct"] for s in ss if isnum(s["cpu_pct"])]
        if cls == "temp":
            for s in ss:
                text = (f"{head} (temp on {s['temp']}) is temp-heavy: {_spills(s)} of a "
                        f"{fmt_auto(s['total_s'])} s power run" + (f"; the CPU was {_n(s['cpu_pct'])}% busy"
                                                                  if isnum(s["cpu_pct"]) else "") + ".")
                out.append({"text": text, "class": "temp", "temp": s["temp"], "spill_share": s["spill_share"],
                            "peak_temp_bytes": s["peak_temp_bytes"]})
            continue
        spilled = [s for s in ss if s["spilled"]]
        if not spilled:
            spill = "no query spilled to temp"
        elif len(ss) == 1:
            spill = _spills(ss[0]) + ","
        else:
            counts = {len(s["spilled"]) for s in ss}
            peak = fmt_auto(max(s["peak_temp_bytes"] for s in spilled) / 1e6)
            spill = (f"{counts.pop()} of {ss[0]['queries']} queries spilled to temp in each run (peak {peak} MB),"
                     if len(counts) == 1 else
                     f"at most {max(counts)} of {ss[0]['queries']} queries spilled to temp (peak {peak} MB),")
        if cls == "cpu":
            cpu = f"{_n(min(cpus))}%" if len(cpus) == 1 else f"at least {_n(min(cpus))}%"
            text = f"{head} is CPU-bound: {spill} and the CPU was {cpu} busy{runs}."
        else:
            cpu = f"{_n(max(cpus))}%"
            scans = [s for s in ss if isnum(s["scan_mbps"])]
            text = f"{head} waits on storage: {spill} and the CPU was only {cpu} busy{runs}"
            if scans:
                s = scans[0]
                text += (f"; the cold scans read {_n(s['scan_mbps'])} MB/s"
                         + (f", {_n(100 * s['scan_ratio'])}% of the probe's sequential read" if isnum(s["scan_ratio"])
                            else ""))
            text += "."
        out.append({"text": text, "class": cls, "cpu_pct": min(cpus) if cpus else None,
                    "total_s": [s["total_s"] for s in ss]})
    return out


# -- placement (the OLTP matrix: oltp.py) ---------------------------------------------------------------------

def _dss_temp_label(doc: dict[str, Any], temp: str) -> str:
    """A temp directory for a sentence: labelled emulated when it is the run's emulated tier."""
    emu = doc.get("emulated") if isinstance(doc.get("emulated"), dict) else None
    return _oltp.tier_label(doc, temp) if emu and emu.get("dir") == temp else temp


def _dss_place_short(runs: Sequence[dict[str, Any]]) -> tuple[str | None, str]:
    """(why TPC-H runs on two temp tiers cannot be set against each other, what would let them) from each
    side's warm power runs (their totals' spread) and length; (None, '') when they can."""
    pairs = [(f"temp on {s['temp']}", why) for s in runs
             for why in [R.short_of(s["warm_totals"], s["total_s"], R.MIN_DSS_RUN_S, "s", 2)] if why]
    if not pairs:
        return None, ""
    whys = [w for _, w in pairs]
    needs = []
    if any(R.ONCE in w or w.endswith(" runs") or " runs, " in w for w in whys):
        needs.append(f"run bench dss with --repeat {R.MIN_RUNS + 1} or more (the first power run is cold: "
                     f"{R.MIN_RUNS} warm ones give the spread)")
    if any(R.BRIEF in w for w in whys):
        needs.append(dss_scale_advice(runs, R.MIN_DSS_RUN_S) or _DSS_NEEDS.removesuffix(" to judge"))
    if any(R.WIDE in w for w in whys):
        needs.append("run again on an idle machine, or with more --repeat")
    return "; ".join(R.by_reason(pairs)), " and ".join(needs) + " to judge"


def _dss_placement(docs: list[dict[str, Any]], explained: set) -> list[dict[str, Any]]:
    groups: dict[tuple, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for d in docs:
        s = dss_stats(d)
        if s["queries"] and isnum(s["total_s"]) and isinstance(s["temp"], str):
            groups.setdefault((s["engine"], s["scale"], s["data"], s["queries"]), []).append((d, s))
    out: list[dict[str, Any]] = []
    for (_, scale, _, _), runs in groups.items():
        if len({s["temp"] for _, s in runs}) < 2:
            continue
        runs = sorted(runs, key=lambda r: r[1]["total_s"])
        (fd, fs), (sd, ss) = runs[0], runs[-1]
        tf, ts = _dss_temp_label(fd, fs["temp"]), _dss_temp_label(sd, ss["temp"])
        times = f"{fmt_auto(fs['total_s'])} s with temp on {tf}, {fmt_auto(ss['total_s'])} s on {ts}"
        dev_f, dev_s = device_of(fd, fs["temp"]), device_of(sd, ss["temp"])
        if dev_f and dev_f == dev_s and tf == fs["temp"] and ts == ss["temp"]:
            explained.add(_pair(fs["temp"], ss["temp"]))
            text = (f"The TPC-H runs cannot tell the temp tiers apart ({times}): {fs['temp']} and {ss['temp']} are "
                    f"both on {dev_f}.")
            out.append({"text": text, "source": "dss", "same_device": dev_f})
            continue
        gain = ss["total_s"] / fs["total_s"] - 1 if fs["total_s"] > 0 else 0.0
        if not any(s["spilled"] for _, s in runs):   # a fact, whatever the runs' length
            out.append({"text": f"Temp placement did not matter for TPC-H SF {fmt_auto(scale)}: no query spilled "
                                f"({times}).", "source": "dss", "temp_on": None, "gain": gain})
            continue
        short, needs = _dss_place_short([s for _, s in runs])
        if short:
            out.append({"text": f"Where temp belongs for TPC-H SF {fmt_auto(scale)} is not judged ({times}), too little "
                                f"evidence: {short}; {needs}.", "source": "dss", "judged": False,
                        "short_of": [short]})
            continue
        j = judge_difference({"ratio": ss["total_s"] / fs["total_s"] if fs["total_s"] > 0 else None,
                              "better": "lower", "a_spread": fs["warm_totals"], "b_spread": ss["warm_totals"]})
        spreads = [f"{s['temp']} {fmt(s['warm_totals']['min'], 2)}–{fmt(s['warm_totals']['max'], 2)} s over "
                   f"{s['warm_totals']['n']} runs" for s in (fs, ss)
                   if spread_of(s["warm_totals"]) and s["warm_totals"]["n"] >= 2]
        noise = (f"the runs' noise of ±{fmt_auto(j['noise_pct'])}%" + (f" ({'; '.join(spreads)})" if spreads else "")
                 if isnum(j["noise_pct"]) else "the runs' noise")
        if j["verdict"] in (None, "within noise"):
            text = (f"Temp placement is within noise for the TPC-H SF {fmt_auto(scale)} power run ({times}: "
                    f"{gain * 100:.0f}% longer, inside {noise}): neither tier is recommended for temp.")
            rec = None
        else:
            text = (f"Put temp on {tf}: the TPC-H SF {fmt_auto(scale)} power run took "
                    f"{fmt_auto(fs['total_s'])} s with temp there against {fmt_auto(ss['total_s'])} s on {ts} "
                    f"({gain * 100:.0f}% longer, beyond {noise}).")
            rec = fs["temp"]
        out.append({"text": text, "source": "dss", "temp_on": rec, "gain": gain, "verdict": j["verdict"],
                    "noise_pct": j["noise_pct"]})
    return out


def _probe_placement(items: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """From probe targets alone: several on different devices -> each role where its pattern is fastest;
    one -> whether everything can live together on it."""
    items = [(d, t) for d, t in items if isinstance(t.get("summary"), dict)]
    devs = {device_of(d, t.get("path")) or t.get("path") for d, t in items}
    if len(items) >= 2 and len(devs) >= 2:
        return _probe_placement_tiers(items)
    if not items:
        return []
    d, t = items[0]
    s = t["summary"]
    ok = _judged(d, t, ("read_lat_us_qd1_p50", "commit_lat_us_p50"))[0]
    rl, cl, wm = ok.get("read_lat_us_qd1_p50"), ok.get("commit_lat_us_p50"), s.get("write_mbps_seq")
    if "write_mbps_seq" in _cache_figures(d, t):
        wm = None
    if not (isnum(rl) and isnum(cl)):
        return []
    path = t.get("path")
    commit = f"a commit takes {fmt_auto(cl)} µs and a 4 KiB random read {fmt_auto(rl)} µs (p50)"
    if s.get("fsync_honesty") == "suspect":
        text = (f"With one storage measured ({path}), its commit figure ({fmt_auto(cl)} µs) cannot be trusted while "
                "fsync is suspect: fix that before placing the WAL there; data and indexes "
                + ("suit it" if rl <= OLTP_READ_LAT_US else "wait on slow random reads there")
                + f" ({fmt_auto(rl)} µs per 4 KiB random read).")
        rec = {}
    elif rl <= OLTP_READ_LAT_US and cl <= COMMIT_LAT_US:
        text = (f"With one storage measured, data, indexes, WAL and temp can all live on {path}: {commit}, both "
                "fast enough that no part needs a separate tier.")
        rec = {"data": path, "indexes": path, "wal": path, "temp": path}
    elif rl <= OLTP_READ_LAT_US:
        text = (f"Data and indexes suit {path}, but the WAL wants storage that commits faster (a device with a "
                f"durable write cache): {commit}.")
        rec = {"data": path, "indexes": path, "wal": None}
    elif cl <= COMMIT_LAT_US:
        text = (f"The WAL suits {path}, but data and indexes wait on random reads there: {commit}; put them on "
                "flash or give them memory.")
        rec = {"wal": path, "data": None, "indexes": None}
    else:
        text = (f"Both random reads and commits are slow on {path} ({commit}): it suits temp, backups and "
                "sequential scans" + (f" ({_n(wm)} MB/s sequential write)" if isnum(wm) else "")
                + " rather than OLTP data or WAL.")
        rec = {"temp": path}
    return [{"text": text, "source": "probe", "recommended": rec}]


def _probe_placement_tiers(items: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    def pick(key: str, lowest: bool, honest_only: bool = False) -> tuple[dict, list[dict]] | None:
        cands = [t for d, t in items if key in _judged(d, t, (key,))[0]
                 and not (honest_only and t["summary"].get("fsync_honesty") == "suspect")
                 and key not in _cache_figures(d, t)]
        if len(cands) < 2:
            return None
        cands.sort(key=lambda t: t["summary"][key], reverse=not lowest)
        return cands[0], cands[1:]

    parts, rec = [], {}
    for role, key, lowest, what, unit in (
            ("WAL", "commit_lat_us_p50", True, "commit", "µs p50"),
            ("data and indexes", "read_lat_us_qd1_p50", True, "4 KiB random read", "µs at QD1"),
            ("temp", "write_mbps_seq", False, "sequential write", "MB/s")):
        got = pick(key, lowest, honest_only=key.startswith("commit"))
        if not got:
            continue
        best, rest = got
        other = rest[0]
        parts.append(f"{role} on {best.get('path')} ({what} {fmt_auto(best['summary'][key])} {unit} against "
                     f"{fmt_auto(other['summary'][key])} on {other.get('path')})")
        rec[role] = best.get("path")
    if not parts:
        return []
    return [{"text": "From the probe: " + "; ".join(parts) + ".", "source": "probe", "recommended": rec}]


# -- price/performance on the run it rests on ------------------------------------------------------------------

def _same_run(a: Any, b: Any) -> bool:
    """Two run directory names for one run: equal, or equal once normalised, or one's last part the other."""
    if not (isinstance(a, str) and isinstance(b, str) and a and b):
        return False
    na, nb = os.path.normpath(a), os.path.normpath(b)
    return na == nb or os.path.basename(na) == os.path.basename(nb)


def _priced_on_memory(doc: dict[str, Any], flat: list[dict[str, Any]], lab_children: set) -> dict[str, Any] | None:
    """A plan sentence that would rest on an OLTP run whose reads came from memory (cache guard): `plan value`
    of that run, or a lab's `plan size` for the load its OLTP step measured. Such a run measured the write
    and commit path, not the reads a study prices, so no price/performance or cheapest sentence is built on
    it: this says why instead. None when the run is not given or passed the guard."""
    if kind_of(doc) == "plan.value":
        src_dir = get(doc, "result", "run_dir")
        srcs = [d for d in flat if kind_of(d) == "bench.oltp" and _same_run(d.get("_run_dir"), src_dir)]
        if not srcs and isinstance(get(doc, "result", "guards"), list):   # the guard plan value recorded
            srcs = [{"_run_dir": src_dir, "guards": get(doc, "result", "guards")}]
        what = "Price/performance of " + (os.path.basename(os.path.normpath(src_dir)) if isinstance(src_dir, str)
                                          else "the run")
    elif id(doc) in lab_children:
        labs = [d for d in flat if d.get("command") == "lab" and any(c is doc for c in expand([d])[1:])]
        steps = [c for lab in labs for c in expand([lab])[1:] if kind_of(c) == "bench.oltp"]
        # the lab sizes for one engine's OLTP step (model.lab.plan_engine: PostgreSQL's when it ran)
        srcs = [c for c in steps if engine_of(c) == plan_engine([engine_of(x) for x in steps])] if steps else []
        what = "The cheapest configuration for the measured load"
    else:
        return None
    for src in srcs:
        g = next((g for g in doc_guards(src) if g.get("kind") == "reads-from-memory"), None)
        if g is not None:
            why = str(g.get("message") or "").split(": this run measured")[0]
            return {"text": f"{what} is not judged: {run_name(src)}'s reads came from memory (cache guard"
                            + (f": {why}" if why else "") + "), so its transactions are the write and commit "
                            "path's, not the study's reads; give the server less memory than its data (bench oltp "
                            "--memory, or a larger --scale/--warehouses) and measure again to judge.",
                    "judged": False, "reads_measured": False, "source_run": run_name(src)}
    return None


# -- the verdict ------------------------------------------------------------------------------------------------

def verdict(docs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """{tiers, good_for, saturates, bottleneck, placement, cheapest, caveats: [{text, ...figures}], sentences}"""
    docs = [d for d in docs if isinstance(d, dict)]
    flat = expand(docs)
    lab_children = {id(c) for d in flat if d.get("command") == "lab" for c in expand([d])[1:]}
    probes = [(d, t) for d in flat for t in probe_targets(d)]
    oltps = [d for d in flat if kind_of(d) == "bench.oltp"]
    dsss = [d for d in flat if kind_of(d) == "bench.dss"]
    backups = [d for d in flat if kind_of(d) == "bench.backup"]
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in TOPICS}
    explained: set = set()

    for d, t in probes:
        out["good_for"] += _good_for(d, t)
        sat = _probe_saturation(d, t)
        if sat:
            out["saturates"].append(sat)
    out["tiers"] += _oltp.two_tiers(oltps)
    out["designs"] += _sim_sentences(flat)      # simulated designs: a read cache, a mirror
    sweeps = [d for d in oltps if not d.get("steps")]
    for d in oltps:
        tier = _oltp.run_tier(d, len(sweeps) > 1)     # each sentence names the storage it is about
        sat = _oltp.saturation(d, tier)
        if sat:
            out["saturates"].append(sat)
        bn = _oltp.bottleneck(d, tier)
        if bn:
            out["bottleneck"].append(bn)
    out["bottleneck"] += _dss_bottleneck(dsss)
    out["bottleneck"] += _backup_sentences(backups)

    matrix = [p for d in oltps if d.get("steps") for p in _oltp.matrix_placement(d, explained)]
    out["placement"] += matrix
    out["placement"] += _dss_placement(dsss, explained)
    if not any(p.get("recommended") for p in matrix):
        out["placement"] += _probe_placement(probes)

    for d in flat:
        k = kind_of(d)
        if k == "plan.equivalent":
            out["cheapest"] += [e for e in [_equivalent(d)] if e]
        if k not in ("plan.size", "plan.value"):
            continue
        unjudged = _priced_on_memory(d, flat, lab_children)
        if unjudged:
            out["cheapest"].append(unjudged)
            continue
        c = _cheapest(d, id(d) in lab_children) if k == "plan.size" else _value(d)
        if c:
            out["cheapest"].append(c)

    result: dict[str, Any] = dict(out)
    result["caveats"] = _caveats(flat, explained)
    result["sentences"] = [item["text"] for t in TOPICS for item in out[t]]
    return result
