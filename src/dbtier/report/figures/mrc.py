"""The numbers of a `dbtier simulate mrc` document: the trace, each policy's miss ratio by cache size, and
its headroom to Belady's.

Pure: a document in, plain values out: the `simulate.mrc` kind's figures and terminal faces
(dbtier.results.kinds; a run that stopped before its curves has a simulate run's figures); the HTML section
(report/sections/mrc.py) draws from the same rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeGuard

from dbtier.core.parts import dict_at
from dbtier.report.figures import simulate
from dbtier.report.figures.core import Figure, Table, Terminal
from dbtier.results import kinds

BOUND = "belady"
POLICY_NAMES = {"lru": "LRU", "fifo": "FIFO", "clock": "CLOCK", "s3fifo": "S3-FIFO", "s3fifo-2023": "S3-FIFO (2023)",
                "sieve": "SIEVE", "twoq": "2Q", "slru": "SLRU", "lfu": "LFU", "arc": "ARC", "lirs": "LIRS",
                "wtinylfu": "W-TinyLFU", "belady": "Belady"}
BOUND_NOTE = ("MIN (evict the object requested again furthest in the future): the optimal bound when every "
              "object has one size; with objects of varied sizes it is the classic MIN heuristic, not a "
              "bound, and a real policy can occasionally miss less (a negative headroom, shown as it is)")
HEADROOM_NOTE = ("a policy's miss ratio minus Belady's at the same cache size, in percentage points; "
                 "the byte miss ratio has no bound here (Belady minimises misses, not missed bytes)")
_UNITS = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1))


def _num(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def is_mrc(doc: dict[str, Any]) -> bool:
    """A `simulate mrc` document that holds its curves (one that failed before them has none to draw)."""
    return kinds.kind_of(doc) == "simulate.mrc" and isinstance(doc.get("mrc"), dict)


def policy_name(p: Any) -> str:
    return POLICY_NAMES.get(p, str(p).upper())


def size_unit(n_bytes: float) -> tuple[str, int]:
    """The largest binary unit not above `n_bytes` (bytes below 1 KiB)."""
    return next((u, s) for u, s in _UNITS if n_bytes >= s or s == 1)


def size_text(n_bytes: Any) -> str:
    """'128 MiB', '1 GiB', '96.79 MiB': binary units, as --sizes takes them."""
    if not _num(n_bytes):
        return "—"
    unit, s = size_unit(n_bytes)
    return f"{n_bytes / s:.4g} {unit}"


def pct(ratio: Any) -> float | None:
    return ratio * 100 if _num(ratio) else None


@dataclass(frozen=True)
class Row:
    cache_bytes: int
    policy: str
    miss_ratio: float | None
    gap_pp: float | None          # miss ratio minus Belady's, percentage points (None: Belady itself, or not run)
    misses: int | None
    byte_miss_ratio: float | None


def curves(m: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in m.get("curves") or [] if isinstance(c, dict)]


def _points(c: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {p.get("cache_bytes"): p for p in c.get("points") or [] if isinstance(p, dict)}


def sizes(m: dict[str, Any]) -> list[int]:
    """The cache sizes, in the curves' order (every curve has the same)."""
    pts: list[Any] = next((c["points"] for c in curves(m) if isinstance(c.get("points"), list)), [])
    return [p["cache_bytes"] for p in pts if isinstance(p, dict) and _num(p.get("cache_bytes"))]


def bound_ran(m: dict[str, Any]) -> bool:
    return any(c.get("policy") == BOUND for c in curves(m))


def sample_rate(m: dict[str, Any]) -> float | None:
    """The SHARDS rate when the figures are estimates (None: not sampled, or the rate is not stated)."""
    rates = [c.get("sample_rate") for c in curves(m) if _num(c.get("sample_rate"))]
    return rates[0] if m.get("estimates") and rates else None


def sample_words(m: dict[str, Any]) -> str:
    """' at 0.01' (the rate, when stated), for 'SHARDS estimates at 0.01'."""
    rate = sample_rate(m)
    return f" at {rate:g}" if rate is not None else ""


def rerun_hint(m: dict[str, Any]) -> str:
    """The --policy that adds Belady to this run's policies."""
    return "--policy " + ",".join([str(c.get("policy")) for c in curves(m)] + [BOUND])


def rows(m: dict[str, Any]) -> list[Row]:
    """Per cache size (in order), per policy (in the run's order)."""
    by = [(c.get("policy"), _points(c)) for c in curves(m)]
    bound = next((pts for p, pts in by if p == BOUND), None)
    out = []
    for size in sizes(m):
        b = (bound or {}).get(size, {}).get("miss_ratio")
        for policy, pts in by:
            p = pts.get(size, {})
            mr = p.get("miss_ratio")
            gap = (mr - b) * 100 if policy != BOUND and _num(mr) and _num(b) else None
            out.append(Row(size, str(policy), mr if _num(mr) else None, gap,
                           p.get("misses") if _num(p.get("misses")) else None,
                           p.get("byte_miss_ratio") if _num(p.get("byte_miss_ratio")) else None))
    return out


@dataclass(frozen=True)
class Best:
    cache_bytes: int
    policies: list[str]           # the real policies with the lowest miss ratio (ties: all of them)
    miss_ratio: float | None
    bound: float | None           # Belady's miss ratio (None: not run)
    gap_pp: float | None


def best_names(b: Best) -> str:
    return " and ".join(map(policy_name, b.policies))


def best(m: dict[str, Any]) -> list[Best]:
    """At each size, the real policy (not Belady) that misses least, and its headroom."""
    rs = rows(m)
    out = []
    for size in sizes(m):
        here = [r for r in rs if r.cache_bytes == size]
        real = [r for r in here if r.policy != BOUND and r.miss_ratio is not None]
        if not real:
            continue
        low = min(r.miss_ratio for r in real)          # type: ignore[type-var]
        bound = next((r.miss_ratio for r in here if r.policy == BOUND), None)
        top = [r for r in real if r.miss_ratio == low]
        out.append(Best(size, [r.policy for r in top], low, bound, top[0].gap_pp))
    return out


def not_computed(m: dict[str, Any]) -> str:
    return f"Belady's bound was not computed: run again with {rerun_hint(m)} to see each policy's headroom"


# -- the kind's faces -------------------------------------------------------------------------------------------

def figures(doc: dict[str, Any]) -> list[Figure]:
    """The trace, the best real policy at the largest cache, and each policy's miss ratios as detail."""
    if not is_mrc(doc):
        return simulate.figures(doc)
    m = doc["mrc"]
    tr = dict_at(m, "trace")
    fp = tr.get("footprint_bytes")
    out = [Figure(key="trace_format", label="trace format", value=tr.get("format")),
           Figure(key="requests", label="requests", value=tr.get("requests"), digits=0),
           Figure(key="objects", label="objects", value=tr.get("objects"), digits=0),
           Figure(key="footprint_gib", label="footprint", value=fp / 1024**3 if _num(fp) else None, unit="GiB",
                digits=2)]
    if m.get("estimates"):
        rate = sample_rate(m)
        out.append(Figure(key="sample_rate", label="SHARDS sample rate (the figures are estimates)",
                        value=f"{rate:g}" if rate is not None else "not stated"))
    bs = best(m)
    if bs:      # the largest cache: the headline
        b = max(bs, key=lambda x: x.cache_bytes)
        at = f"at {size_text(b.cache_bytes)}"
        out += [Figure(key="best_policy", label="best real policy", value=best_names(b),
                     group=at),
                Figure(key="best_miss_ratio_pct", label="its miss ratio", value=pct(b.miss_ratio), unit="%",
                     digits=2, better="lower", group=at),
                Figure(key="best_above_belady_pp", label="its headroom to Belady", value=b.gap_pp, unit="pp",
                     digits=2, better="lower", group=at)]
    for r in rows(m):
        at = size_text(r.cache_bytes)
        key = f"{r.policy}@{r.cache_bytes}"
        out += [Figure(key=f"{key}.miss_ratio_pct", label=f"{policy_name(r.policy)}: miss ratio",
                     value=pct(r.miss_ratio), unit="%", digits=2, better="lower", group=at, detail=True),
                Figure(key=f"{key}.byte_miss_ratio_pct", label=f"{policy_name(r.policy)}: byte miss ratio",
                     value=pct(r.byte_miss_ratio), unit="%", digits=2, better="lower", group=at, detail=True)]
    return out


def tables(doc: dict[str, Any]) -> list[Table]:
    if not is_mrc(doc):
        return []
    m = doc["mrc"]
    ran = bound_ran(m)
    est = f" (SHARDS estimates{sample_words(m)})" if m.get("estimates") else ""
    hr = [[size_text(r.cache_bytes), policy_name(r.policy), pct(r.miss_ratio),
           r.gap_pp if r.policy != BOUND else "the bound", r.misses, pct(r.byte_miss_ratio)] for r in rows(m)]
    bs = [[size_text(b.cache_bytes), best_names(b), pct(b.miss_ratio),
           pct(b.bound) if ran else "not computed", b.gap_pp] for b in best(m)]
    out: list[Table] = []
    if hr:
        out.append(Table(title=f"Miss ratio and headroom to Belady, per cache size and policy{est}",
                        columns=["cache", "policy", "miss ratio %", "above Belady (pp)", "misses",
                                 "byte miss ratio %"], rows=hr, digits=(0, 0, 2, 2, 0, 2)))
    if bs:
        out.append(Table(title=f"Best real policy at each cache size{est}",
                        columns=["cache", "best real policy", "miss ratio %", "Belady %", "above Belady (pp)"],
                        rows=bs, digits=(0, 0, 2, 2, 2)))
    return out


def _params_text(params: Any) -> str:
    if not isinstance(params, dict) or not params:
        return ""
    return "; parameters " + ", ".join(f"{k}={v}" for k, v in params.items())


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    if not is_mrc(doc):
        return []
    m = doc["mrc"]
    out = [("replay", "whole objects at their byte sizes: a miss admits the object, whole objects are evicted "
                      "until it fits, an object larger than the cache is never admitted; miss ratio = misses / "
                      "requests, byte miss ratio = bytes missed / bytes requested")]
    for c in curves(m):          # what each policy follows, and its parameters (where the document says)
        if c.get("policy") != BOUND and isinstance(c.get("follows"), str):
            out.append((policy_name(c.get("policy")), c["follows"] + _params_text(c.get("params"))))
    out.append(("Belady", BOUND_NOTE if bound_ran(m) else not_computed(m)))
    if bound_ran(m):
        out.append(("headroom", HEADROOM_NOTE))
    if m.get("estimates"):
        note = m.get("note")
        out.append(("estimates", str(note) if note else f"a SHARDS sample{sample_words(m)}: every figure is an "
                                                        "estimate"))
    return out


TERMINAL = Terminal(tables, method)
