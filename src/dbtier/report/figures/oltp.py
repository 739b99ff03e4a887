"""A bench oltp run's headline figures (its sweep's best point and knee, a placement matrix's steps), its
tables (the matrix, the sweep) and how its numbers were obtained: the `bench.oltp` kind's figures and terminal
faces (dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.model.guards import doc_guards, reads_from_memory
from dbtier.model.placement import ALL_READ_STEPS
from dbtier.report.figures.core import (Figure, Table, Terminal, busiest_device, durability_text, engine_words, fmt,
                                        fmt_auto, get, isnum, matrix_bests, not_measured, oltp_points, oltp_steps,
                                        oltp_view, point_spread, spread_text, workload_name)
from dbtier.report.figures.method import duration_words, repeats_text


def _scaled(sp: dict[str, Any] | None, k: float) -> dict[str, Any] | None:
    if sp is None:
        return None
    return {**sp, **{key: sp[key] * k for key in ("median", "min", "max") if isnum(sp.get(key))}}


def figures(doc: dict[str, Any]) -> list[Figure]:
    v = oltp_view(doc)
    best, knee, kp = v["best"] or {}, v["knee"] or {}, v["knee_point"] or {}
    nopm = [p for p in v["points"] if isnum(p.get("nopm"))]
    dev = busiest_device(kp)
    bs, ks = point_spread(best), point_spread(kp)
    remote = not_measured(doc, kp)
    out = [Figure("workload", "workload", workload_name(doc)),
           Figure("engine", "engine", get(doc, "params", "engine") or "{1} ({0})".format(*engine_words(doc))),
           Figure("durability", "durability", durability_text(doc)),
           Figure("best_tps", "best TPS", best.get("tps"), "TPS", 1, "higher", spread=bs),
           Figure("best_clients", "clients at the best TPS", best.get("clients"), "clients", 0),
           Figure("best_tpm", "TPM at the best TPS", best.get("tpm"), "TPM", 0, "higher",
                  spread=_scaled(bs, 60.0))]
    if nopm:
        out.append(Figure("best_nopm", "best NOPM", max(p["nopm"] for p in nopm), "NOPM", 0, "higher"))
    out += [Figure("knee_clients", "knee: clients", knee.get("clients"), "clients", 0),
            Figure("knee_tps", "knee: TPS", knee.get("tps"), "TPS", 1, "higher", spread=ks),
            Figure("knee_p95_ms", "p95 latency at the knee", get(kp, "lat_ms", "p95"), "ms", 2, "lower"),
            Figure("knee_bottleneck", "bottleneck at the knee", kp.get("bottleneck")),
            Figure("knee_cpu_busy_pct", "CPU busy at the knee", None if "server_cpu" in remote
                   else get(kp, "cpu_util", "busy_pct"), "%", 0),
            Figure("knee_device_busy_pct", "busiest device at the knee", None if "server_devices" in remote
                   else (dev or {}).get("busy_pct"), "%", 0)]
    if remote:
        out.append(Figure("not_measured", "not measured", ", ".join(x.replace("_", " ") for x in remote)))
    g = next((x for x in doc_guards(doc) if x.get("kind") != "remote"), None)
    if g is not None:
        out.append(Figure("cache_guard", "cache guard", str(g.get("kind"))))
    if g is not None and isnum(g.get("device_fraction")):
        out.append(Figure("device_read_fraction", "device read I/Os per page read", g["device_fraction"], "", 3))
    for b in matrix_bests(doc):
        out.append(Figure(f"step.{b['name']}.best_tps", f"{b['name']}: best TPS", b["tps"], "TPS", 1, "higher",
                          "placement matrix"))
    return out


def tables(doc: dict[str, Any]) -> list[Table]:
    """The placement matrix (each step's best point) and the sweep."""
    out: list[Table] = []
    bests = matrix_bests(doc)
    if bests:
        steps = oltp_steps(doc)
        memory = reads_from_memory(doc_guards(doc))
        rows = []
        for s, b in zip(steps, bests):
            kn = dict_at(s, "knee")
            unmeasured = s.get("reads_measured") is False or (memory and b["name"] in ALL_READ_STEPS)
            rows.append([b["name"], b["tps"], b["clients"], kn.get("clients"), kn.get("tps"),
                         "reads not measured" if unmeasured else None])
        out.append(Table("Placement matrix (best point of each step)",
                         ["step", "best TPS", "at clients", "knee clients", "knee TPS", "reads"], rows,
                         (0, 1, 0, 0, 1, 0)))
    v = oltp_view(doc)
    remote = not_measured(doc)
    rows = []
    for p in v["points"]:
        dev = busiest_device(p)
        rows.append([p.get("clients"), p.get("tps"), spread_text(point_spread(p), 1) or None, p.get("tpm"),
                     get(p, "lat_ms", "p50"), get(p, "lat_ms", "p95"), get(p, "lat_ms", "p99"),
                     None if "server_cpu" in remote else get(p, "cpu_util", "busy_pct"),
                     None if "server_devices" in remote else (dev or {}).get("busy_pct"), p.get("bottleneck")])
    if rows:
        out.append(Table("Sweep" + (f" (step {v['step']})" if v["step"] else ""),
                         ["clients", "TPS (median)", "TPS runs", "TPM", "p50 ms", "p95 ms", "p99 ms", "CPU %",
                          "device busy %", "bottleneck"], rows, (0, 1, 0, 0, 2, 2, 2, 0, 0, 0)))
    return out


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    p = dict_at(doc, "params")
    out: list[tuple[str, str]] = []
    if isnum(p.get("duration_s")):
        out.append(("each point", f"{duration_words(p['duration_s'])} after {fmt_auto(p.get('warmup_s'))} s "
                                  "of warm-up (excluded)"))
    driver = engine_words(doc)[1]
    out.append(("rates", f"TPS, TPM and NOPM divide by the time {driver} measured (its own window, without the "
                         "initial connection time), not by the duration asked for"))
    pts = oltp_view(doc)["points"] + [q for s in oltp_steps(doc)[:-1] for q in oltp_points(s.get("points"))]
    out.append(("repeats", repeats_text(p.get("repeat"), pts)))
    out.append(("load", f"open loop at {fmt(p['rate'])} transactions/s" if isnum(p.get("rate"))
                else "closed loop (each client sends its next transaction when the last returns)"))
    if p.get("latency"):
        out.append(("latency", str(p["latency"])))
    if p.get("knee_rule"):
        out.append(("knee", str(p["knee_rule"])))
    nm = not_measured(doc)
    if nm:
        out.append(("not measured", ", ".join(x.replace("_", " ") for x in nm) + " (--dsn: CPU figures are "
                    f"this machine's, where {driver} runs; no bottleneck is judged from them)"))
    return out


TERMINAL = Terminal(tables, method)
