"""Key figures of a result document: what `dbtier show`, `dbtier compare`, the Markdown report, the HTML
side-by-side tables, the verdict, the runs index and the exported metrics all read.

Documents in, plain values out; nothing here touches a file. A lab document's step runs are
read by `dbtier.report.inputs` and attached under `_children`; `children()` and `expand()`
give them back. Every figure has a stable `key` (what `compare` matches two runs on), a
label, a unit, how many digits to show, and whether higher or lower is better.

Here the shared readers (a sweep's view, a probe's knee, a power run's stats, a backup's methods ...) and
`figures(doc)`, which looks up the figures of the document's kind (dbtier.results.kinds: each kind's in its
own module beside this one); tables.py and method.py look up the rest of what `show` prints (a Terminal).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Sequence, TypeGuard

from dbtier.model.placement import ALL_MATRIX_MOVES
from dbtier.results import kinds, registry
from dbtier.results.probe import KNEE_FIELDS, READ_4K, knee, spreads
from dbtier.core.parts import dict_at

WORKLOAD_NAMES = {"tpcc": "TPC-C-like", "tpcb": "pgbench tpcb (TPC-B-like)",
                  "select-only": "pgbench select-only", "readmix": "80/20 read mix"}


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: float | str | None
    unit: str = ""
    digits: int = 0
    better: str | None = None      # "higher", "lower" or None (a text, or no order)
    group: str = ""                # a sub-heading: the probe target, the placement step, "per query"
    detail: bool = False           # one of many (per query): tables, not the headline list
    spread: dict[str, Any] | None = None   # a repeated figure: {median, min, max, n, spread_pct}

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Table:
    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    digits: Sequence[int] = ()     # per column, for numbers

    def as_dict(self) -> dict[str, Any]:
        return {"title": self.title, "columns": list(self.columns), "rows": [list(r) for r in self.rows]}


@dataclass(frozen=True)
class Terminal:
    """What `dbtier show` and the Markdown report print of a kind beyond its figures: its key tables and how
    its numbers were obtained, as (what, how) lines (a kind's `terminal` face, dbtier.results.kinds)."""
    tables: Callable[[dict[str, Any]], list[Table]]
    method: Callable[[dict[str, Any]], list[tuple[str, str]]]


def figures(doc: dict[str, Any]) -> list[Figure]:
    """The key figures of one document: its kind's (dbtier.results.kinds `figures`; a lab: every step's,
    prefixed by the step; a kind without its own: its top-level numbers)."""
    fn: Callable[[dict[str, Any]], list[Figure]] = registry.face_of(doc, "figures")
    return fn(doc)


def terminal(doc: dict[str, Any]) -> Terminal:
    """The tables and method lines of the document's kind (dbtier.results.kinds `terminal`)."""
    t: Terminal = registry.face_of(doc, "terminal")
    return t


# -- small helpers -----------------------------------------------------------------------------------

def isnum(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def get(d: Any, *keys: str) -> Any:
    """d[k1][k2]... or None when any step is missing or not a dict."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def dicts(x: Any) -> list[dict[str, Any]]:
    return [v for v in x if isinstance(v, dict)] if isinstance(x, list) else []


def fmt(x: Any, digits: int = 0) -> str:
    """A number with thousands separators; text as is; None as '—'."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isnum(x):
        return f"{x:,.{digits}f}"
    return str(x)


def fmt_auto(x: Any) -> str:
    """A measured figure for a sentence: whole numbers (grouped) from 100 up, three significant digits below."""
    if not isnum(x):
        return fmt(x)
    return fmt(x, 0) if abs(x) >= 100 else f"{x:.3g}"


def spread_of(x: Any) -> dict[str, Any] | None:
    """A stored {median, min, max, n, ...} when it is one (n a positive count), else None."""
    return x if isinstance(x, dict) and isnum(x.get("n")) and x["n"] >= 1 else None


def spread_text(sp: Any, digits: int = 0) -> str:
    """How a repeated figure varied: '100–140, n=2'; one sample: 'n=1' (no spread implied); '' unknown."""
    sp = spread_of(sp)
    if sp is None:
        return ""
    n = int(sp["n"])
    if n == 1 or not (isnum(sp.get("min")) and isnum(sp.get("max"))):
        return f"n={n}"
    return f"{fmt(sp['min'], digits)}–{fmt(sp['max'], digits)}, n={n}"


def point_spread(p: dict[str, Any] | None) -> dict[str, Any] | None:
    """An OLTP point's TPS spread; an older document (tps_runs without tps_spread) is recomputed
    with the one definition (dbtier.core.stats.spread)."""
    if not isinstance(p, dict):
        return None
    sp = spread_of(p.get("tps_spread"))
    if sp is None and isinstance(p.get("tps_runs"), list) and p["tps_runs"]:
        from dbtier.core.stats import spread
        sp = spread_of(spread(p["tps_runs"]))
    return sp


def run_name(doc: dict[str, Any], i: int | None = None) -> str:
    d = doc.get("_run_dir")
    if isinstance(d, str) and d:
        return os.path.basename(os.path.normpath(d))
    return f"run {i + 1}" if i is not None else "run"


def kind(doc: dict[str, Any]) -> str:
    """'probe', 'bench oltp', 'plan size', 'lab' ...: the label of the document's kind (dbtier.results.kinds)."""
    return kinds.label_of(doc)


MIN_DIFFERENCE_PCT = 5.0    # below this B and A are not called different, whatever the runs' spread


def judge_difference(row: dict[str, Any]) -> dict[str, Any]:
    """Whether B is better, worse or within noise of A (pure): {verdict, noise_pct}. The noise is the runs'
    combined spread -- A's and B's own (max - min) / median, added -- and at least MIN_DIFFERENCE_PCT; a
    difference within it is "within noise". A figure measured once has an unknown spread: only the 5% floor
    applies, and the verdict says so ("better, single runs"). No order (a text, or a durability clash
    decided by the caller): verdict None."""
    ratio, better = row.get("ratio"), row.get("better")
    if not isnum(ratio) or better not in ("higher", "lower"):
        return {"verdict": None, "noise_pct": None}
    sps = [spread_of(row.get(k)) for k in ("a_spread", "b_spread")]
    known = [sp for sp in sps if sp is not None and sp["n"] >= 2 and isnum(sp.get("spread_pct"))]
    noise = max(MIN_DIFFERENCE_PCT, sum(float(sp["spread_pct"]) for sp in known))
    change = abs(ratio - 1.0) * 100.0
    if change <= noise:
        return {"verdict": "within noise", "noise_pct": noise}
    good = (ratio > 1) == (better == "higher")
    verdict = "better" if good else "worse"
    if len(known) < 2:
        verdict += ", single runs"      # at least one side's spread is unknown
    return {"verdict": verdict, "noise_pct": noise}


# -- lab documents --------------------------------------------------------------------------------------

def children(doc: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None, str | None]]:
    """(step record, its run's document or None, why there is none) for each step of a lab, in order."""
    steps = dicts(doc.get("steps"))
    attached = {c.get("step"): c for c in dicts(doc.get("_children"))}
    out = []
    for s in steps:
        c = attached.get(s.get("name"), {})
        child = c.get("doc") if isinstance(c.get("doc"), dict) else None
        out.append((s, child, c.get("error") if isinstance(c.get("error"), str) else None))
    return out


def expand(docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents with each lab followed by its step runs' documents (step order)."""
    out: list[dict[str, Any]] = []
    for d in docs:
        if not isinstance(d, dict):
            continue
        out.append(d)
        if d.get("command") == "lab":
            out += [c for _, c, _ in children(d) if c is not None]
    return out


# -- probe ------------------------------------------------------------------------------------------------

def probe_targets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return dicts(doc.get("targets")) if doc.get("command") == "probe" else []


def probe_spread(t: dict[str, Any], key: str) -> dict[str, Any] | None:
    """How a probe target's headline figure varied over its point's measurements ({median, min, max, n,
    spread_pct, min_runtime_s}); an older document without `spread` is recomputed from its points."""
    sp = t.get("spread")
    if not isinstance(sp, dict):
        sp = spreads([p for p in dicts(t.get("points")) if isinstance(p.get("test"), str)])
    return spread_of(sp.get(key))


def machine_target(doc: dict[str, Any], path: Any) -> dict[str, Any] | None:
    """The machine's record of the directory holding `path` (the longest matching target path)."""
    if not isinstance(path, str):
        return None
    best, found = -1, None
    for t in dicts(get(doc, "machine", "targets")):
        p = t.get("path") if isinstance(t.get("path"), str) else t.get("device")
        if isinstance(p, str) and (path == p or path.startswith(p.rstrip("/") + "/")) and len(p) > best:
            best, found = len(p), t
    return found


def device_of(doc: dict[str, Any], path: Any) -> str | None:
    """The block device under a directory (from the machine metadata), e.g. 'vda'."""
    t = machine_target(doc, path)
    name = get(t, "block_device", "name") or get(t, "block_device", "disk")
    return name if isinstance(name, str) and name else None


def probe_knee(target: dict[str, Any], test: str = READ_4K) -> dict[str, Any] | None:
    """Where IOPS stop growing in one random test (results.probe.knee: the sweep's own stop rule):
    the knee the probe stored in the target, else (a document written before it stored one, or a
    test it does not store) the same rule over the target's points."""
    stored = target.get("knee")
    if isinstance(stored, dict) and test in stored:
        k = stored[test]
        if k is None or (isinstance(k, dict) and all(f in k for f in KNEE_FIELDS)):
            return k
    return knee(dicts(target.get("points")), test)


# -- fleet probe (probe --hosts): the rest in fleet.py ---------------------------------------------------

def is_fleet(doc: dict[str, Any]) -> bool:
    """A `probe --hosts` document: its one target is the aggregate of the hosts in `hosts`."""
    return doc.get("command") == "probe" and isinstance(doc.get("aggregate"), dict) and isinstance(
        doc.get("hosts"), list)


# -- bench oltp --------------------------------------------------------------------------------------------

def oltp_points(x: Any) -> list[dict[str, Any]]:
    """The points with a client count, in client order."""
    return sorted((p for p in dicts(x) if isnum(p.get("clients"))), key=lambda p: p["clients"])


def best_point(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    pts = [p for p in points if isnum(p.get("tps"))]
    return max(pts, key=lambda p: p["tps"]) if pts else None


def oltp_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return dicts(doc.get("steps")) if doc.get("command") == "bench" else []


def oltp_view(doc: dict[str, Any]) -> dict[str, Any]:
    """The sweep a bench oltp document stands for: its points, knee, knee point, best point and
    load (a placement matrix's top level repeats its last step; an older document may not)."""
    points, knee, load = oltp_points(doc.get("points")), doc.get("knee"), doc.get("load")
    steps = oltp_steps(doc)
    step = None
    if steps:
        last = steps[-1]
        step = last.get("name")
        points = points or oltp_points(last.get("points"))
        knee = knee if isinstance(knee, dict) else last.get("knee")
        load = load if isinstance(load, dict) else last.get("load")
    knee = knee if isinstance(knee, dict) else None
    kp = next((p for p in points if p.get("clients") == knee.get("clients")), None) if knee else None
    return {"points": points, "knee": knee, "knee_point": kp, "best": best_point(points),
            "load": load if isinstance(load, dict) else {}, "step": step}


def workload_name(doc: dict[str, Any]) -> str | None:
    w = get(doc, "params", "workload") or get(doc, "load", "workload")
    if not isinstance(w, str):
        return None
    name = WORKLOAD_NAMES.get(w, w)
    load = oltp_view(doc)["load"]
    if w == "tpcc":
        n = load.get("warehouses") if isnum(load.get("warehouses")) else get(doc, "params", "warehouses")
        return f"{name}, {fmt(n)} warehouse{'s' if n != 1 else ''}" if isnum(n) else name
    s = load.get("scale") if isnum(load.get("scale")) else get(doc, "params", "scale")
    return f"{name}, scale {fmt(s)}" if isnum(s) else name


# An OLTP engine's server and driver, by the document's `engine` (an older document has none: PostgreSQL's).
ENGINE_WORDS = {"postgres": ("PostgreSQL", "pgbench"), "mariadb": ("MariaDB", "sysbench")}
NOT_DURABLE = "not durable: not comparable with a durable one"


def engine_of(doc: dict[str, Any]) -> str:
    """An OLTP document's engine name: doc['engine'], else from params.engine's label or the points'
    counter block ('innodb': mariadb), else 'postgres' (every older document is PostgreSQL's)."""
    e = doc.get("engine")
    if isinstance(e, str) and e:
        return e
    label = get(doc, "params", "engine")
    if isinstance(label, str) and "mariadb" in label.lower():
        return "mariadb"
    pts = dicts(doc.get("points")) + [p for s in dicts(doc.get("steps")) for p in dicts(s.get("points"))]
    return "mariadb" if any(isinstance(p.get("innodb"), dict) for p in pts) else "postgres"


def engine_words(doc: dict[str, Any]) -> tuple[str, str]:
    """(server, driver) in words: ('PostgreSQL', 'pgbench'), ('MariaDB', 'sysbench'); from params.engine's
    'driver (server)' label when it has one, so an engine this module does not know is still named."""
    label = get(doc, "params", "engine")
    if isinstance(label, str) and label.endswith(")") and " (" in label:
        driver, server = label[:-1].split(" (", 1)
        return server, driver
    return ENGINE_WORDS.get(engine_of(doc), (engine_of(doc), "the driver"))


def durability(doc: dict[str, Any]) -> dict[str, Any] | None:
    """doc['durability'] as {'durable': bool, 'reason': str}; None when the document does not say (an older
    one: unknown, neither durable nor not)."""
    d = doc.get("durability")
    if isinstance(d, dict) and isinstance(d.get("durable"), bool):
        return {"durable": d["durable"], "reason": str(d.get("reason") or "")}
    return None


def durability_text(doc: dict[str, Any]) -> str:
    """'durable (reason)', 'not durable: not comparable with a durable one (reason)' or 'unknown (...)'."""
    d = durability(doc)
    if d is None:
        return "unknown (not recorded in this result)"
    head = "durable" if d["durable"] else NOT_DURABLE
    return head + (f" ({d['reason']})" if d["reason"] else "")


def durability_clash(docs: Iterable[dict[str, Any]]) -> str | None:
    """A sentence when the runs mix durable and non-durable ones (their figures are not comparable: the
    non-durable one skipped flushes the durable one paid for); None otherwise (unknown runs clash with none)."""
    docs = [d for d in docs if isinstance(d, dict)]
    durable = [d for d in docs if (durability(d) or {}).get("durable") is True]
    loose = [d for d in docs if (durability(d) or {}).get("durable") is False]
    if not (durable and loose):
        return None
    names = lambda ds: ", ".join(run_name(d) for d in ds)  # noqa: E731
    why = "; ".join(f"{run_name(d)}: {r}" for d in loose if (r := (durability(d) or {}).get("reason")))
    return (f"{names(loose)} {'is' if len(loose) == 1 else 'are'} {NOT_DURABLE} ({names(durable)}"
            + (f"; {why}" if why else "") + "): the difference between them is durability, not the storage or "
            "the engine, so neither is called better")


def busiest_device(p: dict[str, Any] | None) -> dict[str, Any] | None:
    devs = [d for d in dicts((p or {}).get("devices")) if isnum(d.get("busy_pct"))]
    return max(devs, key=lambda d: d["busy_pct"]) if devs else None


def matrix_dirs(doc: dict[str, Any]) -> dict[str, str]:
    """{'fast': FAST, 'slow': SLOW} from --placement-matrix FAST,SLOW; {} otherwise."""
    m = get(doc, "params", "placement_matrix")
    parts = [x.strip() for x in m.split(",")] if isinstance(m, str) else []
    return {"fast": parts[0], "slow": parts[1]} if len(parts) == 2 and all(parts) else {}


def matrix_bests(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each placement step's best point: {name, tps, clients}, in the order run."""
    out = []
    for k, s in enumerate(oltp_steps(doc)):
        b = best_point(oltp_points(s.get("points")))
        out.append({"name": str(s.get("name") or f"step {k + 1}"), "tps": b.get("tps") if b else None,
                    "clients": b.get("clients") if b else None, "spread": point_spread(b),
                    "duration_s": b.get("duration_s") if b else None})
    return out


def matrix_moves(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """What each move to the fast tier did to the best TPS: {step, role, before, after, gain, verdict,
    noise_pct} (gain = after / before - 1, against the step run just before it; verdict and noise_pct the
    noise rule's, judge_difference)."""
    bests = matrix_bests(doc)
    out = []
    for a, b in zip(bests, bests[1:]):
        role = ALL_MATRIX_MOVES.get(b["name"])
        if role and isnum(a["tps"]) and isnum(b["tps"]) and a["tps"] > 0:
            out.append({"step": b["name"], "role": role, "before": a["tps"], "after": b["tps"],
                        "gain": b["tps"] / a["tps"] - 1, "from_step": a["name"],
                        **judge_difference({"ratio": b["tps"] / a["tps"], "better": "higher",
                                            "a_spread": a["spread"], "b_spread": b["spread"]})})
    return out


def not_measured(doc: dict[str, Any], p: dict[str, Any] | None = None) -> list[str]:
    """What a run could not measure (--dsn: ['server_cpu', 'server_devices']), from the point, the
    document or its params; an older --dsn document without the key: inferred from params.mode."""
    for src in (p or {}, doc, dict_at(doc, "params")):
        v = src.get("not_measured")
        if isinstance(v, list) and v:
            return [str(x) for x in v]
    return ["server_cpu", "server_devices"] if get(doc, "params", "mode") == "dsn" else []


# -- bench dss -----------------------------------------------------------------------------------------------

def dss_queries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted((q for q in dicts(doc.get("queries")) if isnum(q.get("query"))), key=lambda q: q["query"])


def query_spread(q: dict[str, Any]) -> dict[str, Any] | None:
    """A query's warm runs {median, min, max, n}; an older document: from runs_seconds (the first is
    the cold run when cold_seconds is set)."""
    sp = spread_of(q.get("warm"))
    if sp is None and isinstance(q.get("runs_seconds"), list):
        from dbtier.core.stats import spread
        runs = [x for x in q["runs_seconds"] if isnum(x)]
        warm = runs[1:] if isnum(q.get("cold_seconds")) else runs
        sp = spread_of(spread(warm))
    return sp


def dss_stats(doc: dict[str, Any]) -> dict[str, Any]:
    """The power run at a glance: totals, spills (which queries, how much, their share of the time),
    the CPU weighted by each query's time, and the cold scan against the probe."""
    qs = dss_queries(doc)
    secs = [q["seconds"] for q in qs if isnum(q.get("seconds"))]
    total = doc.get("total_seconds") if isnum(doc.get("total_seconds")) else (sum(secs) if secs else None)
    spilled = [q for q in qs if isnum(q.get("temp_bytes")) and q["temp_bytes"] > 0]
    spill_s = sum(q["seconds"] for q in spilled if isnum(q.get("seconds")))
    timed = [q for q in qs if isnum(q.get("seconds")) and isnum(q.get("cpu_util"))]
    wsum = sum(q["seconds"] for q in timed)
    cpu = sum(q["seconds"] * q["cpu_util"] for q in timed) / wsum if wsum > 0 else None
    peak = max((q["temp_bytes"] for q in spilled), default=0 if qs else None)
    scan = dict_at(doc, "scan")
    return {"engine": doc.get("engine") or get(doc, "params", "engine"),
            "scale": doc.get("scale") if isnum(doc.get("scale")) else get(doc, "params", "scale"),
            "data": get(doc, "params", "data"), "temp": get(doc, "params", "temp"),
            "queries": len(qs), "total_s": total,
            "geomean_s": doc.get("geomean_seconds") if isnum(doc.get("geomean_seconds")) else None,
            "spilled": [(q["query"], q["temp_bytes"]) for q in spilled], "peak_temp_bytes": peak,
            "spill_share": spill_s / total if spilled and isnum(total) and total > 0 else 0.0 if qs else None,
            "cpu_pct": cpu, "answers_ok": doc.get("answers_ok"),
            "scan_mbps": scan.get("achieved_mbps") if isnum(scan.get("achieved_mbps")) else None,
            "scan_ratio": scan.get("ratio") if isnum(scan.get("ratio")) else None,
            "probe_mbps": scan.get("probe_read_mbps_seq") if isnum(scan.get("probe_read_mbps_seq")) else None,
            "warm_totals": spread_of(doc.get("warm_totals"))}


def answers_text(ok: Any) -> str:
    return "all correct" if ok is True else ("a wrong answer" if ok is False else "not checked")


# -- bench backup --------------------------------------------------------------------------------------------

def backup_methods(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per method, in the order run: {method, dir_mbps, null_mbps, limit, evidence, bytes, output_bytes,
    compressed, seconds, cpu_cores, dir_spread, null_spread, at_throttle}; the limiting side is the directory run's (else
    the null run's); a spread is its runs' MB/s (n=1 for one run)."""
    by: dict[str, dict[str, Any]] = {}
    for t in dicts(doc.get("targets")):
        m = str(t.get("method") or "?")
        rec = by.setdefault(m, {"method": m, "dir_mbps": None, "null_mbps": None, "limit": None, "evidence": None,
                                "bytes": None, "output_bytes": None, "compressed": t.get("compressed"),
                                "seconds": None, "cpu_cores": None, "dir_spread": None, "null_spread": None,
                                "at_throttle": False})
        side = t.get("target")
        if side in ("null", "dir"):    # a run measured once (or an older document): n=1
            from dbtier.core.stats import spread
            rec[f"{side}_spread"] = (spread_of(t.get("mbps_spread"))
                                     or spread_of(spread([t["mbps"]] if isnum(t.get("mbps")) else [])))
        if side == "null":
            rec["null_mbps"] = t.get("mbps") if isnum(t.get("mbps")) else None
            if rec["limit"] is None:
                rec["limit"], rec["evidence"] = t.get("bottleneck"), t.get("bottleneck_evidence")
        elif side == "dir":
            rec["dir_mbps"] = t.get("mbps") if isnum(t.get("mbps")) else None
            rec["limit"], rec["evidence"] = t.get("bottleneck"), t.get("bottleneck_evidence")
            rec["at_throttle"] = t.get("at_throttle") is True
            rec["output_bytes"] = t.get("output_bytes") if isnum(t.get("output_bytes")) else None
            rec["seconds"] = t.get("seconds") if isnum(t.get("seconds")) else None
            rec["cpu_cores"] = t.get("proc_cpu_cores") if isnum(t.get("proc_cpu_cores")) else None
        if isnum(t.get("bytes")):
            rec["bytes"] = t["bytes"]
    return list(by.values())


# -- plan ------------------------------------------------------------------------------------------------------

def config_name(a: Any) -> str | None:
    if not isinstance(a, dict):
        return None
    if isinstance(a.get("description"), str):
        return a["description"]
    if a.get("device") is None:
        return None
    return f"{fmt(a.get('count'))} x {a.get('device')}" + (f" {a['layout']}" if a.get("layout") else "")
