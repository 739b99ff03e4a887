"""The verdict's backup sentences: which side limits the backups to each target, and the targets compared.

Pure: `bench backup` documents in, sentences out. A run's target is its `params.to`, named with what it is:
an emulated tier by its throttle (`emulated`), else its block device. The limiting side is each backup's
(workloads/backup.judge by model.dss.BACKUP_RULE: the null sink's ratio and the throttle first, busy time
only as support); a side is named only from runs that pass the verdict's evidence guard (at least 2 runs
that agree). The comparison is the backup studies' question: how fast a backup goes to one target
against another, method by method, with the ratio.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dbtier.report.verdict import rules as R
from dbtier.report.figures.core import backup_methods, device_of, fmt, get, isnum
from dbtier.report.verdict.plan import join_words

LIMITS = {"source": "the source (reading the database)", "target": "the target directory (writing)",
          "cpu": "the CPU (compression)",
          "undetermined": "nothing determined (no null sink and no device near its limit)"}
ENGINES = {"duckdb": "DuckDB", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
# Two targets differ when one's MB/s is at least this many times the other's (as a target differs from
# the null sink: model.dss.BACKUP_NULL_FACTOR); closer, they are called about the same.
DIFFER_FACTOR = 1.25


def _n(x: Any) -> str:
    return fmt(x, 0) if isnum(x) and abs(x) >= 10 else fmt(x, 1)


def _dir_mbps(m: dict[str, Any]) -> float | None:
    """A method's MB/s to the directory: the median of its runs (the run's own for one run)."""
    med = get(m, "dir_spread", "median")
    return med if isnum(med) else (m["dir_mbps"] if isnum(m["dir_mbps"]) else None)


def target_label(doc: dict[str, Any]) -> str:
    """'/mnt/b (vda)' or '/mnt/slow (emulated: 40 MiB/s of reads and of writes)'."""
    to = str(get(doc, "params", "to") or "the target")
    emu = doc.get("emulated") if isinstance(doc.get("emulated"), dict) else None
    if emu and "target" in (emu.get("roles") or ["target"]):
        from dbtier.measure.slowtier import Emulation, limits_text
        e = Emulation(str(emu.get("dir")), int(emu.get("read_iops") or 0), int(emu.get("write_iops") or 0),
                      int(emu.get("read_bps") or 0), int(emu.get("write_bps") or 0))
        return f"{to} (emulated: {limits_text(e)})"
    dev = device_of(doc, to)
    return f"{to} ({dev})" if dev else to


def _engine(doc: dict[str, Any]) -> str:
    return str(doc.get("engine") or get(doc, "params", "engine"))


def _shortfalls(d: dict[str, Any], m: dict[str, Any]) -> list[tuple[str, str]]:
    """Why a method's limiting side cannot be judged: its runs to the directory, to null, or to the null sink
    it was judged against (another method's, `null_method`), too few or too far apart; a rate at an emulated
    tier's throttle needs only its own runs."""
    ref = next((str(t["null_method"]) for t in d.get("targets") or [] if isinstance(t, dict)
                and t.get("method") == m["method"] and t.get("target") == "dir" and t.get("null_method")), None)
    null = (next((x for x in backup_methods(d) if x["method"] == ref), {}) if ref else m).get("null_spread")
    out = []
    sides = [(f"{m['method']} → directory", m["dir_spread"])]
    if not m.get("at_throttle"):     # at an emulated tier's throttle, the rate against the limit decides
        sides.append((f"{ref or m['method']} → null", null))
    for what, sp in sides:
        why = R.short_of(sp, None, 0.0, "MB/s") if sp else None
        if why:
            out.append((what, why))
    return out


def _limits(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per engine and target: the side that limits its backups, method by method; the methods whose runs
    are too few or too far apart are named with why, not judged."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for d in docs:
        if any(m["limit"] for m in backup_methods(d)):
            groups.setdefault((_engine(d), target_label(d)), []).append(d)
    out = []
    for (engine, where), ds in groups.items():
        name = ENGINES.get(engine, engine)
        checked = [(m, _shortfalls(d, m)) for d in ds for m in backup_methods(d) if m["limit"]]
        short = list(dict.fromkeys(w for _, ws in checked for w in ws))
        ms = [m for m, ws in checked if not ws]
        if not ms:
            whys = ("each backup ran once" if {w for _, w in short} == {R.ONCE} else "; ".join(R.by_reason(short)))
            needs = (f"run bench backup with --repeat {R.MIN_RUNS} or more to judge (lab --profile quick or full "
                     "does)" if all(R.WIDE not in w for _, w in short) else
                     "run with a larger --scale (longer backups) or more --repeat to judge")
            out.append({"text": f"Which side limits the backups ({name}) to {where} is not judged, too little "
                                f"evidence: {whys}; {needs}.", "engine": engine, "target": where, "judged": False,
                        "short_of": short})
            continue
        main = Counter(m["limit"] for m in ms).most_common(1)[0][0]
        others = sorted({(m["method"], m["limit"]) for m in ms if m["limit"] != main})
        firm = [m for m in ms if m["limit"] == main]
        # the evidence cited: a rate at an emulated tier's throttle first (the most direct), else the fastest
        best = max(firm, key=lambda m: (m.get("at_throttle") is True, _dir_mbps(m) or 0.0))
        every = not others and not short
        text = (f"Backups ({name}) to {where} are limited by {LIMITS.get(main, main)}"
                + (" in every method" if every else
                   f" in {join_words([m['method'] for m in firm])}" if len(firm) > 1 else ""))
        why = str(best.get("evidence") or "")
        if "null" in why or "throttle" in why:     # the evidence cites the figures it rests on
            text += f": {best['method']}: {why}"
        else:
            text += (f": {best['method']} wrote {_n(_dir_mbps(best))} MB/s"
                     + (f" against {_n(best['null_mbps'])} MB/s to a null sink" if isnum(best["null_mbps"]) else "")
                     + (f" ({why})" if why else ""))
        text += "".join(f"; {m} is limited by {LIMITS.get(lim, lim)}" for m, lim in others)
        if short:
            text += "; not judged, too little evidence: " + "; ".join(R.by_reason(short))
        out.append({"text": text + ".", "engine": engine, "target": where, "limit": main,
                    "short_of": short})
    return out


def _compare(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per engine with backups to two targets or more: each method's MB/s to each target, fastest first, and
    how many times faster the fastest is than the slowest."""
    by_engine: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for d in docs:
        where = target_label(d)
        for m in backup_methods(d):
            if _dir_mbps(m) is not None:
                by_engine.setdefault(_engine(d), {}).setdefault(m["method"], {})[where] = dict(m, mbps=_dir_mbps(m))
    out = []
    for engine, methods in by_engine.items():
        targets = list(dict.fromkeys(w for per in methods.values() for w in per))
        if len(targets) < 2:
            continue
        paths = [w.split(" (")[0] for w in targets]
        name = {w: (p if paths.count(p) == 1 else w) for w, p in zip(targets, paths)}   # labels said once, first
        parts, ratios, short = [], {}, []
        for method, per in methods.items():
            if len(per) < 2:
                continue
            ranked = sorted(per.items(), key=lambda kv: -kv[1]["mbps"])
            (fast, fm), sm = ranked[0], ranked[-1][1]
            ratio = fm["mbps"] / sm["mbps"] if sm["mbps"] > 0 else None
            whys = [(f"{method} to {name[w]}", why) for w, m in ranked
                    for why in [R.short_of(m["dir_spread"], None, 0.0, "MB/s")] if why]
            said = ", ".join(f"{_n(m['mbps'])} MB/s to {name[w]}" for w, m in ranked)
            if whys or ratio is None:
                parts.append(f"{method}: {said}")
                short += whys
            elif ratio >= DIFFER_FACTOR:
                parts.append(f"{method}: {said}, {ratio:.1f} times faster to {name[fast]}")
                ratios[method] = ratio
            else:
                parts.append(f"{method}: {said}, about the same (under {DIFFER_FACTOR:g} times apart)")
                ratios[method] = ratio
        if not parts:
            continue
        text = (f"Backup targets compared ({ENGINES.get(engine, engine)}: " + ", ".join(targets)
                + "; MB/s of source bytes, the medians of the runs): " + "; ".join(parts))
        if short:
            text += ("; not judged where a backup ran once (--repeat 2 or more to judge)"
                     if {w for _, w in short} == {R.ONCE} else "; not judged where " + "; ".join(R.by_reason(short)))
        out.append({"text": text + ".", "engine": engine, "targets": targets, "ratios": ratios,
                    "short_of": short})
    return out


def sentences(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bottleneck topic's backup sentences: the limiting side per target, then the targets compared."""
    return _limits(docs) + _compare(docs)
