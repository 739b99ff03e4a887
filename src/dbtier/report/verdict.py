"""The verdict: a few plain sentences, each derived from numbers in the documents and citing them.

Pure: documents in (a lab document brings its step runs, see `dbtier.report.inputs`), a dict
out. Five topics, in this order: what the storage is good for, where it saturates, the
bottleneck, where data/indexes/WAL/temp belong, and the cheapest configuration for the measured
load; plus caveats (a suspect fsync, a virtual disk, two "tiers" on one device, a failed step, a run
whose reads came from memory: the cache guard, dbtier.model.guards; an OLTP run that was not durable,
and durable and non-durable runs side by side: not comparable, neither called better).
A topic whose inputs are missing has no sentence: nothing is guessed.

The rules of thumb are the constants below; each sentence names the figure it rests on.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from dbtier.model.guards import doc_guards, reads_from_memory
from dbtier.model.placement import ALL_READ_STEPS, engine_steps
from dbtier.report.figures import (NOT_DURABLE, backup_methods, busiest_device, device_of, dss_stats,
                                   durability, engine_of, engine_words, expand,
                                   fmt, fmt_auto, get, isnum, kind, machine_target, matrix_bests, matrix_dirs,
                                   matrix_moves, not_measured, oltp_view, point_spread, probe_knee, probe_spread,
                                   probe_targets,
                                   workload_name)
from dbtier.report.verdict_caveats import cap as _cap
from dbtier.report.verdict_caveats import caveats as _caveats
from dbtier.report.verdict_caveats import pair as _pair
from dbtier.report.verdict_caveats import same_device as _same_device
from dbtier.report.verdict_plan import cheapest as _cheapest
from dbtier.report.verdict_plan import join_words as _join
from dbtier.report.verdict_plan import value_sentence as _value
from dbtier.report.verdict_plan import whole as _n
from dbtier.results.probe import READ_4K, WRITE_4K

# A 4 KiB random read at queue depth 1 (p50) at or under this: flash-class, fit for latency-bound OLTP.
OLTP_READ_LAT_US = 500.0
# A commit (8 KiB write + fdatasync, p50) at or under this: commits are cheap; WAL can live here.
COMMIT_LAT_US = 1000.0
# Sequential read at or over this: scans and backups run well.
SEQ_MBPS = 500.0
# A placement move counts when it changes TPS (or a DSS run's time) by this much.
MIN_GAIN = 0.05
# A DSS run is CPU-bound when its queries kept the CPU this busy (time-weighted) ...
CPU_BOUND_PCT = 80.0
# ... and temp-heavy when the queries that spilled took this share of its time.
TEMP_HEAVY_SHARE = 0.25

# -- the evidence a verdict sentence needs; short of it the sentence says what would be needed instead ----------
# A figure judged by rests on at least this many runs of its point ...
MIN_RUNS = 2
# ... that differ by at most this share of their median, (max - min) / median (pyperf calls a benchmark
# unstable past a standard deviation of 10% of the mean: about a 14% range for two runs, 20% for three).
MAX_SPREAD_PCT = 20.0
# A probe point (one fio run) lasts at least this long: shorter ones are mostly fio's start and ramp.
MIN_PROBE_POINT_S = 1.0
# Each run of an OLTP point lasts at least this long (the knee and its bottleneck are judged on it).
MIN_OLTP_POINT_S = 5.0
# A TPC-H power run lasts at least this long before its CPU figure says CPU- or storage-bound, and
# before a temp placement is judged on its time: shorter, the queries are milliseconds, the CPU counters
# tick every 10 ms and per-query overheads (starting the sampler, polling temp) weigh as much as the work.
MIN_DSS_RUN_S = 5.0

TOPICS = ("good_for", "saturates", "bottleneck", "placement", "cheapest")
TOPIC_LABELS = {"good_for": "good for", "saturates": "saturates", "bottleneck": "bottleneck",
                "placement": "placement", "cheapest": "cheapest", "caveats": "caveats"}
_BOTTLENECKS = {"cpu": "the CPU, not the storage", "storage": "the storage (backends waiting on I/O)",
                "commit": "commits (WAL writes and their fsync)", "lock": "lock contention",
                "client": "the load generator ({driver}), not the server",
                "other": "waits outside storage, commits, locks and CPU (IPC, timeouts, buffer pins, extensions)"}
_BACKUP_LIMITS = {"source": "the source (reading the database)", "target": "the target directory (writing)",
                  "cpu": "the CPU (compression)"}
_ENGINES = {"duckdb": "DuckDB", "postgres": "PostgreSQL"}


def thresholds() -> list[tuple[str, str]]:
    """The rules of thumb and evidence guards, as the report's method notes list them: (what, rule)."""
    return [
        ("flash-class random reads", f"a 4 KiB random read at queue depth 1 takes at most {fmt_auto(OLTP_READ_LAT_US)} "
                                     "µs (p50): fit for latency-bound OLTP"),
        ("cheap commits", f"an 8 KiB write + fdatasync takes at most {fmt_auto(COMMIT_LAT_US)} µs (p50)"),
        ("good scans and backups", f"sequential read of at least {fmt_auto(SEQ_MBPS)} MB/s"),
        ("a placement gain", f"a move changes TPS (or a TPC-H run's time) by at least {MIN_GAIN:.0%} and by more "
                             "than the two runs' combined spread"),
        ("CPU-bound TPC-H", f"the queries kept the CPU at least {fmt_auto(CPU_BOUND_PCT)}% busy (time-weighted)"),
        ("temp-heavy TPC-H", f"queries that spilled took at least {TEMP_HEAVY_SHARE:.0%} of the run's time"),
        ("enough runs", f"a figure judged by rests on at least {MIN_RUNS} runs of its point"),
        ("small enough spread", f"those runs differ by at most {fmt_auto(MAX_SPREAD_PCT)}% of their median"),
        ("long enough probe points", f"each fio run lasts at least {fmt_auto(MIN_PROBE_POINT_S)} s"),
        ("long enough OLTP points", f"each run of an OLTP point lasts at least {fmt_auto(MIN_OLTP_POINT_S)} s"),
        ("long enough TPC-H runs", f"a power run lasts at least {fmt_auto(MIN_DSS_RUN_S)} s"),
    ]


# The words _short_of uses for each shortfall; what would be needed is read back from them.
ONCE, BRIEF, WIDE = "measured once", " s runs (at least", " runs differ by "


def _by_reason(pairs: Iterable[tuple[str, str]], every: str | None = None, total: int = 0) -> list[str]:
    """('commit latency', why) pairs -> ['A and B: why', ...], the things falling short the same way named
    together (each once); all `total` of them -> `every` instead of their names."""
    by: dict[str, list[str]] = {}
    for what, why in pairs:
        if what not in by.setdefault(why, []):
            by[why].append(what)
    return [f"{every if every and len(names) == total else _join(names)}: {why}" for why, names in by.items()]


def _short_of(spread: dict[str, Any] | None, seconds: Any, min_s: float, unit: str = "",
              digits: int = 0) -> str | None:
    """Why a figure is not enough to judge by: too few runs, runs too short, a spread too wide (None: it is
    enough). `spread` {median, min, max, n, spread_pct}; `seconds` the shortest run's length."""
    n = int(spread["n"]) if spread and isnum(spread.get("n")) else 1
    whys = []
    if n < MIN_RUNS:
        whys.append(ONCE if n == 1 else f"{n} runs")
    if isnum(seconds) and seconds < 0.95 * min_s:   # fio and the timers round a nominal length down a little
        whys.append(f"in {fmt_auto(seconds)}{BRIEF} {fmt_auto(min_s)} s needed)")
    pct = spread.get("spread_pct") if spread else None
    if n >= 2 and isnum(pct) and pct > MAX_SPREAD_PCT:
        whys.append(f"its {n}{WIDE}{fmt_auto(pct)}% ({fmt(spread['min'], digits)}–"
                    f"{fmt(spread['max'], digits)}" + (f" {unit}" if unit else "")
                    + f"; at most {fmt_auto(MAX_SPREAD_PCT)}% to judge)")
    return ", ".join(whys) or None





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
    return _short_of(sp, secs if isnum(secs) else get(doc, "params", "point_s"), MIN_PROBE_POINT_S, unit, digits)


def _probe_needs(doc: dict[str, Any], whys: Sequence[str]) -> str:
    """What would let a probe's figures be judged."""
    point_s = get(doc, "params", "point_s")
    if any(BRIEF in w for w in whys):
        return "probe with --profile full (10 s points, each headline point measured at least twice) to judge"
    if any(ONCE in w for w in whys):
        return "probe again: every headline point is then measured at least twice"
    if isnum(point_s) and point_s < 10:
        return "probe with --profile full (10 s points) to judge"
    return "the storage varied that much between runs: probe again when it is idle to judge"


def _judged(doc: dict[str, Any], t: dict[str, Any], keys: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """The summary figures of `keys` that clear the evidence guards ({key: value}) and, for the others,
    why not ('the commit latency: measured once'), figures that fall short the same way named together."""
    s = t.get("summary") if isinstance(t.get("summary"), dict) else {}
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
    return ok, _by_reason(short)


def _good_for(doc: dict[str, Any], t: dict[str, Any]) -> list[dict[str, Any]]:
    s = t.get("summary") if isinstance(t.get("summary"), dict) else {}
    ok, whys = _judged(doc, t, ("read_lat_us_qd1_p50", "commit_lat_us_p50", "read_mbps_seq", "read_iops_4k"))
    rl, cl, rm = ok.get("read_lat_us_qd1_p50"), ok.get("commit_lat_us_p50"), ok.get("read_mbps_seq")
    riops, cps, wm = s.get("read_iops_4k"), s.get("commits_per_s"), s.get("write_mbps_seq")
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
    if w:
        text += (f" 4 KiB random writes {'were still growing at' if w['still_rising'] else 'stop growing at'} "
                 f"{_n(w['outstanding'])} ({_n(w['iops'])} IOPS).")
    return {"text": text, "target": path, "read_knee": k, "write_knee": w}


def _clients(n: Any) -> str:
    return f"{_n(n)} client" + ("" if n == 1 else "s")


def _runs(p: dict[str, Any] | None) -> str:
    """' (the median of 3 runs, 100–140 TPS)' for a repeated point; '' for one run."""
    sp = point_spread(p)
    if not sp or sp["n"] < 2:
        return ""
    return f" (the median of {sp['n']} runs, {fmt_auto(sp['min'])}–{fmt_auto(sp['max'])} TPS)"


def _oltp_short(doc: dict[str, Any]) -> str | None:
    """Why an OLTP run's knee (and its bottleneck) cannot be judged (None: it can)."""
    kp = oltp_view(doc)["knee_point"]
    if not isinstance(kp, dict):
        return None
    why = _short_of(point_spread(kp), kp.get("duration_s"), MIN_OLTP_POINT_S, "TPS", 0)
    return f"its knee point ({_clients(kp.get('clients'))}): {why}" if why else None


def _oltp_needs(why: str) -> str:
    does = " (lab --profile quick or full does)"
    if BRIEF in why:
        return f"run with --duration {fmt_auto(MIN_OLTP_POINT_S)} or more and --repeat {MIN_RUNS} to judge{does}"
    if WIDE not in why:
        return f"run with --repeat {MIN_RUNS} or more to judge{does}"
    return "run longer (--duration) or with more repeats to judge"


def _oltp_saturation(doc: dict[str, Any]) -> dict[str, Any] | None:
    v = oltp_view(doc)
    knee, kp, best = v["knee"], v["knee_point"], v["best"]
    if not knee or not isnum(knee.get("clients")) or not isnum(knee.get("tps")):
        return None
    wl = workload_name(doc)
    on = f"placement step {v['step']}" if v["step"] else ""
    server = engine_words(doc)[0]
    wl = ("OLTP" + (f" on {server}" if engine_of(doc) != "postgres" else "")
          + (f" — {', '.join(x for x in (wl, on) if x)} —" if wl or on else ""))
    short = _oltp_short(doc)
    if short:
        measured = (f"; the best measured was {fmt_auto(best['tps'])} TPS at {_clients(best['clients'])}"
                    if best and isnum(best.get("tps")) else "")
        return {"text": f"Where {wl} saturates, and its bottleneck, are not judged, too little evidence: {short}"
                        f"{measured}; {_oltp_needs(short)}.{_durable_note(doc)}", "judged": False,
                "short_of": [short], "best_tps": (best or {}).get("tps"), "best_clients": (best or {}).get("clients")}
    last = v["points"][-1] if v["points"] else None
    if last is not None and last.get("clients") == knee["clients"] and "still rising" in str(knee.get("reason")):
        text = (f"{wl} was still scaling at {_clients(knee['clients'])}, the most measured: "
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
    return {"text": text, "knee_clients": knee["clients"], "knee_tps": knee["tps"],
            "best_tps": (best or {}).get("tps"), "best_clients": (best or {}).get("clients"),
            "durable": (durability(doc) or {}).get("durable")}


def _durable_note(doc: dict[str, Any]) -> str:
    """' Not durable: not comparable with a durable one (reason).' for a run that was not; '' otherwise
    (durable, or an older document that does not say: unknown)."""
    d = durability(doc)
    if d is None or d["durable"]:
        return ""
    return f" {_cap(NOT_DURABLE)}" + (f" ({d['reason']})" if d["reason"] else "") + "."


# -- the bottleneck -----------------------------------------------------------------------------------------

def _oltp_bottleneck(doc: dict[str, Any]) -> dict[str, Any] | None:
    kp = oltp_view(doc)["knee_point"]
    bn = (kp or {}).get("bottleneck")
    if not isinstance(bn, str) or not bn or _oltp_short(doc):   # not judged: _oltp_saturation says why
        return None
    nm = not_measured(doc, kp)
    cpu = None if "server_cpu" in nm else get(kp, "cpu_util", "busy_pct")
    dev = None if "server_devices" in nm else busiest_device(kp)
    facts = []
    if isnum(cpu):
        facts.append(f"CPU {_n(cpu)}% busy")
    if dev:
        aw = dev.get("await_ms")
        facts.append(f"{dev.get('device')} {_n(dev['busy_pct'])}% busy"
                     + (f" with {fmt_auto(aw)} ms await" if isnum(aw) else ""))
    at = f"At the OLTP knee ({_clients(kp.get('clients'))})"
    if bn == "unknown":
        why = str(kp.get("bottleneck_evidence") or "")
        why = why.split(";", 1)[0].removeprefix("unknown: ") if why else "no wait samples"
        text = f"{at} the bottleneck is unknown: {why}" + (f" ({_join(facts)})" if facts else "") + "."
    else:
        what = _BOTTLENECKS.get(bn, bn).format(driver=engine_words(doc)[1])
        text = f"{at} the bottleneck is {what}" + (f": {_join(facts)}" if facts else "") + "."
    if nm:
        text += (" The server's CPU and devices were not measured (--dsn): the verdict rests on the server's wait "
                 f"events and {engine_words(doc)[1]}'s own CPU.")
    memory = reads_from_memory(doc_guards(doc))
    if memory:
        text += (" Its reads came from memory (cache guard): this bottleneck is that of the write and commit path; "
                 "the data/index read path was not measured.")
    return {"text": text, "bottleneck": bn, "cpu_busy_pct": cpu, "device": (dev or {}).get("device"),
            "device_busy_pct": (dev or {}).get("busy_pct"), "not_measured": nm, "reads_measured": not memory}


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
    short = [s for s in ss if not (isnum(s["total_s"]) and s["total_s"] >= MIN_DSS_RUN_S)]
    if not short:
        return None
    runs = ", ".join(f"{fmt_auto(s['total_s'])} s" for s in short if isnum(s["total_s"])) or "no time"
    return (f"{'a' if len(short) == 1 else len(short)} power run{'s' if len(short) > 1 else ''} of {runs}; "
            f"at least {fmt_auto(MIN_DSS_RUN_S)} s needed")


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
                                f"{short}; {_DSS_NEEDS}.", "judged": False, "short_of": [short],
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


def _backup_bottleneck(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_engine: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        if any(m["limit"] for m in backup_methods(d)):
            by_engine.setdefault(str(d.get("engine") or get(d, "params", "engine")), []).append(d)
    out = []
    for engine, ds in by_engine.items():
        short = [(f"{m['method']} → {'directory' if side == 'dir' else 'null'}", why) for d in ds
                 for m in backup_methods(d) for side in ("dir", "null")
                 for why in [_short_of(m[f"{side}_spread"], None, 0.0, "MB/s") if m[f"{side}_spread"] else None]
                 if why]
        if short:
            whys = ("each backup ran once" if {w for _, w in short} == {ONCE} else "; ".join(_by_reason(short)))
            needs = (f"run bench backup with --repeat {MIN_RUNS} or more to judge (lab --profile quick or full does)"
                     if all(WIDE not in w for _, w in short) else
                     "run with a larger --scale (longer backups) or more --repeat to judge")
            out.append({"text": f"Which side limits the backups ({_ENGINES.get(engine, engine)}) is not judged, too "
                                f"little evidence: {whys}; {needs}.", "engine": engine, "judged": False,
                        "short_of": list(short)})
            continue
        limits = [m["limit"] for d in ds for m in backup_methods(d) if m["limit"]]
        main = Counter(limits).most_common(1)[0][0]
        parts = []
        for d in ds:
            ms = [m for m in backup_methods(d) if isnum(m["dir_mbps"])]
            if not ms:
                continue
            best = max(ms, key=lambda m: m["dir_mbps"])
            parts.append(f"to {get(d, 'params', 'to')}, {best['method']} wrote {_n(best['dir_mbps'])} MB/s"
                         + (f" against {_n(best['null_mbps'])} MB/s to a null sink" if isnum(best["null_mbps"])
                            else ""))
        others = sorted({(m["method"], m["limit"]) for d in ds for m in backup_methods(d)
                         if m["limit"] and m["limit"] != main})
        text = (f"Backups ({_ENGINES.get(engine, engine)}) are limited by {_BACKUP_LIMITS.get(main, main)}"
                + (" in every method" if not others else "") + (": " + "; ".join(parts) if parts else "")
                + "".join(f"; {m} is limited by {_BACKUP_LIMITS.get(lim, lim)}" for m, lim in others) + ".")
        out.append({"text": text, "engine": engine, "limit": main})
    return out


# -- placement ----------------------------------------------------------------------------------------------

def _matrix_placement(doc: dict[str, Any], explained: set) -> list[dict[str, Any]]:
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
        label = f"{emu['dir']} (emulated: {_n(emu.get('read_iops'))} read IOPS)"
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
                         f"{fmt_auto(top['after'])} TPS); run it with --repeat {MIN_RUNS} (and --duration "
                         f"{fmt_auto(MIN_OLTP_POINT_S)} or more) to tell a move from run-to-run variation.",
                 "source": "placement matrix", "judged": False, "short_of": [short]}]
    if reads_from_memory(doc_guards(doc)):
        return [_matrix_cached(doc, moves, fast, slow)]
    top = max(moves, key=lambda m: m["gain"])
    out = []
    if _counts(top):
        fast_roles = [m["role"] for m in moves if _counts(m)]
        slow_moves = [m for m in moves if not _counts(m)]
        text = (f"{_cap(top['role'])} on the fast tier gave the biggest gain in the placement matrix: "
                f"{top['gain'] * 100:+.0f}% ({fmt_auto(top['before'])} → {fmt_auto(top['after'])} TPS, the best "
                "point of each step).")
        text += f" Recommended: {_join(fast_roles)} on the fast tier ({fast})"
        if slow_moves:
            text += (f"; {_join([m['role'] for m in slow_moves])} can stay on the slow tier ({slow}): moving "
                     + ("it" if len(slow_moves) == 1 else "them") + " changed TPS by "
                     + _join([f"{m['gain'] * 100:+.0f}%" + (f" ({m['role']})" if len(slow_moves) > 1 else "")
                              for m in slow_moves]))
        text += "."
        rec = {"fast": fast_roles, "slow": [m["role"] for m in slow_moves]}
    else:
        text = (f"No move to the fast tier raised TPS by {MIN_GAIN:.0%} or more beyond its runs' spread in the "
                f"placement matrix (the best: "
                f"{top['role']}, {top['gain'] * 100:+.0f}%): for this load {_roles(doc)} can all stay "
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
             for why in [_short_of(b["spread"], b["duration_s"], MIN_OLTP_POINT_S, "TPS", 0)] if why]
    return "; ".join(_by_reason(short, "each step's best point", len(bests))) or None


def _counts(m: dict[str, Any]) -> bool:
    """A move counts when it raised TPS by MIN_GAIN and by more than the runs' combined spread."""
    return m["gain"] >= MIN_GAIN and m["gain"] * 100 > (m.get("noise_pct") or 0)


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
    fast_roles = [m["role"] for m in other if _counts(m)]
    slow_roles = [m["role"] for m in other if not _counts(m)]
    if fast_roles:
        text += f" Of the write path, {_join(fast_roles)} on the fast tier ({fast}) raised TPS by " + _join(
            [f"{m['gain'] * 100:+.0f}%" for m in other if _counts(m)]) + "."
    if slow_roles:
        text += f" {_cap(_join(slow_roles))} can stay on the slow tier ({slow}) for this load."
    return {"text": text, "source": "placement matrix", "reads_measured": False,
            "not_measured": [m["role"] for m in read_moves],
            "recommended": {"fast": fast_roles, "slow": slow_roles} if other else None}


def _dss_placement(docs: list[dict[str, Any]], explained: set) -> list[dict[str, Any]]:
    groups: dict[tuple, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for d in docs:
        s = dss_stats(d)
        if s["queries"] and isnum(s["total_s"]) and isinstance(s["temp"], str):
            groups.setdefault((s["engine"], s["scale"], s["data"], s["queries"]), []).append((d, s))
    out = []
    for (_, scale, _, _), runs in groups.items():
        if len({s["temp"] for _, s in runs}) < 2:
            continue
        runs = sorted(runs, key=lambda r: r[1]["total_s"])
        (fd, fs), (sd, ss) = runs[0], runs[-1]
        times = f"{fmt_auto(fs['total_s'])} s with temp on {fs['temp']}, {fmt_auto(ss['total_s'])} s on {ss['temp']}"
        dev_f, dev_s = device_of(fd, fs["temp"]), device_of(sd, ss["temp"])
        if dev_f and dev_f == dev_s:
            explained.add(_pair(fs["temp"], ss["temp"]))
            text = (f"The TPC-H runs cannot tell the temp tiers apart ({times}): {fs['temp']} and {ss['temp']} are "
                    f"both on {dev_f}.")
            out.append({"text": text, "source": "dss", "same_device": dev_f})
            continue
        gain = ss["total_s"] / fs["total_s"] - 1 if fs["total_s"] > 0 else 0.0
        short = _dss_short([s for _, s in runs])
        if not any(s["spilled"] for _, s in runs):   # a fact, whatever the runs' length
            text = f"Temp placement did not matter for TPC-H SF {fmt_auto(scale)}: no query spilled ({times})."
            rec = None
        elif short:
            out.append({"text": f"Where temp belongs for TPC-H SF {fmt_auto(scale)} is not judged ({times}), too little "
                                f"evidence: {short}; {_DSS_NEEDS}.", "source": "dss", "judged": False,
                        "short_of": [short]})
            continue
        elif gain >= MIN_GAIN:
            text = (f"Put temp on {fs['temp']}: the TPC-H SF {fmt_auto(scale)} power run took "
                    f"{fmt_auto(fs['total_s'])} s with temp there against {fmt_auto(ss['total_s'])} s on {ss['temp']} "
                    f"({gain * 100:.0f}% longer).")
            rec = fs["temp"]
        else:
            text = (f"Temp placement changed the TPC-H SF {fmt_auto(scale)} power run by under {MIN_GAIN:.0%} "
                    f"({times}).")
            rec = None
        out.append({"text": text, "source": "dss", "temp_on": rec, "gain": gain})
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
                 and not (honest_only and t["summary"].get("fsync_honesty") == "suspect")]
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


# -- the verdict ------------------------------------------------------------------------------------------------

def verdict(docs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """{good_for, saturates, bottleneck, placement, cheapest, caveats: [{text, ...figures}], sentences}"""
    docs = [d for d in docs if isinstance(d, dict)]
    flat = expand(docs)
    lab_children = {id(c) for d in flat if d.get("command") == "lab" for c in expand([d])[1:]}
    probes = [(d, t) for d in flat for t in probe_targets(d)]
    oltps = [d for d in flat if kind(d) == "bench oltp"]
    dsss = [d for d in flat if kind(d) == "bench dss"]
    backups = [d for d in flat if kind(d) == "bench backup"]
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in TOPICS}
    explained: set = set()

    for d, t in probes:
        out["good_for"] += _good_for(d, t)
        sat = _probe_saturation(d, t)
        if sat:
            out["saturates"].append(sat)
    for d in oltps:
        sat = _oltp_saturation(d)
        if sat:
            out["saturates"].append(sat)
        bn = _oltp_bottleneck(d)
        if bn:
            out["bottleneck"].append(bn)
    out["bottleneck"] += _dss_bottleneck(dsss)
    out["bottleneck"] += _backup_bottleneck(backups)

    matrix = [p for d in oltps if d.get("steps") for p in _matrix_placement(d, explained)]
    out["placement"] += matrix
    out["placement"] += _dss_placement(dsss, explained)
    if not any(p.get("recommended") for p in matrix):
        out["placement"] += _probe_placement(probes)

    for d in flat:
        k = kind(d)
        if k == "plan size":
            c = _cheapest(d, id(d) in lab_children)
            if c:
                out["cheapest"].append(c)
        elif k == "plan value":
            v = _value(d)
            if v:
                out["cheapest"].append(v)

    result: dict[str, Any] = dict(out)
    result["caveats"] = _caveats(flat, explained)
    result["sentences"] = [item["text"] for t in TOPICS for item in out[t]]
    return result
