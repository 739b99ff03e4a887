"""A probe's headline figures (each target's summary and read knee; a fleet's host count), its knee table
(with a fleet's per-host and scaling tables) and how its numbers were obtained: the `probe` and
`probe.fleet` kinds' figures and terminal faces (dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.report.figures.core import (Figure, Table, Terminal, fmt, fmt_auto, is_fleet, isnum, probe_knee,
                                        probe_spread, probe_targets)
from dbtier.report.figures.fleet import fleet_method, fleet_tables
from dbtier.report.figures.labels import SUMMARY_LABELS
from dbtier.results.probe import HIGHER_BETTER, KNEE_TESTS, SUMMARY_KEYS


def figures(doc: dict[str, Any]) -> list[Figure]:
    targets = probe_targets(doc)
    fleet = is_fleet(doc)
    out: list[Figure] = []
    for j, t in enumerate(targets):
        s = dict_at(t, "summary")
        prefix = f"t{j + 1}." if len(targets) > 1 else ""
        group = str(t.get("path") or f"target {j + 1}")
        for key in SUMMARY_KEYS:
            if key == "fsync_honesty_reason":
                continue
            if key == "fsync_honesty":
                out.append(Figure(prefix + key, "fsync honesty", s.get(key) if isinstance(s.get(key), str) else None,
                                  group=group))
                continue
            label, unit, digits = SUMMARY_LABELS.get(key, (key.replace("_", " "), "", 1))
            v = s.get(key)
            out.append(Figure(prefix + key, label, v if isnum(v) else None, unit, digits,
                              "higher" if key in HIGHER_BETTER else "lower", group, spread=probe_spread(t, key)))
        k = probe_knee(t)
        if k:
            out.append(Figure(prefix + "read_knee_outstanding", "4 KiB random read knee", k["outstanding"],
                              "outstanding I/O" + (" per host" if fleet else ""), 0, None, group))
    if fleet:   # the aggregate's host count (how many hosts answered: the rows of the per-host table)
        out.append(Figure("hosts", "hosts at once", doc["aggregate"].get("hosts"), "hosts", 0, None,
                          str(doc["aggregate"].get("path") or "aggregate")))
    return out


def tables(doc: dict[str, Any]) -> list[Table]:
    """Where IOPS stop growing, per target and random test; a fleet's per-host and scaling tables."""
    out: list[Table] = []
    for t in probe_targets(doc):
        rows = []
        for test in KNEE_TESTS:
            kn = probe_knee(t, test)
            if kn:
                rows.append([test, kn["outstanding"], kn["iops"], kn["p99_us"],
                             "still rising" if kn["still_rising"] else f"{fmt(kn['last_iops'])} at "
                             f"{fmt(kn['last_outstanding'])}"])
        if rows:
            out.append(Table(f"Where IOPS stop growing: {t.get('path')}",
                             ["test", "knee (outstanding I/O" + (" per host)" if is_fleet(doc) else ")"),
                              "IOPS", "p99 µs", "largest load"], rows, (0, 0, 0, 1, 0)))
    if is_fleet(doc):
        out += fleet_tables(doc)
    return out


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    p = dict_at(doc, "params")
    out: list[tuple[str, str]] = []
    out.append(("I/O", "direct I/O (O_DIRECT), the page cache bypassed" if p.get("direct_io") is not False
                else "buffered, through the page cache"))
    if isnum(p.get("point_s")):
        out.append(("each point", f"{fmt_auto(p['point_s'])} s measured after {fmt_auto(p.get('ramp_s'))} s of "
                                  "warm-up (excluded)"))
    if p.get("profile"):
        out.append(("profile", str(p["profile"])))
    if p.get("latency"):
        out.append(("latency", str(p["latency"])))
    out.append(("repeats", "one fio run per point; the sweep stops once IOPS stop growing (+3%) or p99 passes "
                           f"{fmt(p.get('max_lat_ms'))} ms"))
    if is_fleet(doc):
        out += fleet_method(doc)
    return out


TERMINAL = Terminal(tables, method)
