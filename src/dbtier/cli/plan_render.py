"""`dbtier plan`'s terminal output: one rich table (and its notes) per action.

Only formatting: every figure comes from the planner's results and the document
(`dbtier.model.planner`, `dbtier.model.plandoc`); nothing here is computed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from dbtier.cli.markup import esc, lit
from dbtier.model.array import Evaluation
from dbtier.model.planner import LABELS, BudgetOption, Equivalence, Requirement, Sizing, Value
from dbtier.model.plandoc import number_text as _n
from dbtier.model.plandoc import usd_text as _usd


def _si(x: float) -> str:
    """Compact: 950, 12.5K, 2.94M."""
    if x == math.inf:
        return "∞"
    if abs(x) >= 1_000_000:
        return f"{x / 1_000_000:.3g}M"
    if abs(x) >= 10_000:
        return f"{x / 1000:.3g}K"
    return _n(x)


def _short(e: Evaluation) -> str:
    c = e.config
    if c.layout == "preferred-read-mirror" and c.second is not None:
        return f"{c.count}×{c.device.id} ⇄ {c.second_count}×{c.second.id} (pref. read)"
    if c.layout == "read-cache" and c.second is not None:
        return (f"{c.count}×{c.device.id} cache {c.hit_ratio:.0%} → {c.second_count}×{c.second.id} "
                f"{c.second_layout}")
    return f"{c.count}×{c.device.id} {c.layout}"


def _table(title: str, cols: Sequence[str], left: int = 1) -> Table:
    # titles and headers carry device ids from catalog files: never markup
    t = Table(title=esc(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, c in enumerate(cols):
        t.add_column(esc(c), justify="left" if i < left else "right", no_wrap=True)
    return t


def _figures_table(title: str, evs: Sequence[tuple[str, Evaluation]]) -> Table:
    """Rows of figures, one column per configuration; the limit of each figure in the last column of a row."""
    t = _table(title, ["", *(name for name, _ in evs)])
    rows = [("price", lambda e: _usd(e.price_usd)),
            ("usable capacity GB", lambda e: _n(e.capacity_gb.value)),
            ("read / write IOPS", lambda e: f"{_n(e.read_iops.value)} / {_n(e.write_iops.value)}"),
            (f"IOPS at {evs[0][1].read_fraction:.0%} reads", lambda e: _n(e.iops.value)),
            ("read / write MB/s", lambda e: f"{_n(e.read_mbps.value)} / {_n(e.write_mbps.value)}"),
            ("read / write latency µs", lambda e: f"{_n(e.read_latency_us.value)} / {_n(e.write_latency_us.value)}"),
            ("$/GB", lambda e: _usd(e.usd_per_gb)),
            ("$/IOPS", lambda e: _usd(e.usd_per_iops)),
            ("$ per MB/s", lambda e: _usd(e.usd_per_mbps))]
    for name, fn in rows:
        t.add_row(name, *(fn(e) for _, e in evs))
    return t


def _tail(con: Console, pricing_text: str, run_dir: Path) -> None:
    con.print(f"[dim]pricing: {esc(pricing_text)}[/dim]", soft_wrap=True)
    con.print(f"[dim]Run: {esc(run_dir)}[/dim]")


def equivalent(con: Console, eq: Equivalence, pricing_text: str, run_dir: Path) -> None:
    ref = eq.reference
    t = _table(f"{eq.using.id} ({eq.layout}) to match one {ref.config.device.id} "
               f"({_usd(ref.price_usd)})", ["metric", "to match", "count", "price", "× reference"], left=2)
    for k, m in eq.by_metric.items():
        t.add_row(k, m.reference_value, _n(m.count), _usd(m.price_usd), f"{m.price_ratio:.2f}×")
    con.print(t)
    con.print()
    evs = [(f"1 × {ref.config.device.id}", ref)] + [(f"{m.count} × ({k})", m.evaluation)
                                                      for k, m in eq.by_metric.items()]
    con.print(_figures_table("what each delivers", evs))
    over = eq.by_metric["iops"].evaluation.overheads
    if over:
        o = over[0]
        con.print(f"[dim]overhead: {esc(o['id'])}, ${o['unit_price_usd']:,.0f} per {o['per_devices']} devices, "
                  f"{o['max_mbps']:,.0f} MB/s each[/dim]")
    _tail(con, pricing_text, run_dir)


def budget(con: Console, options: Sequence[BudgetOption], usd: float, layout: str, read_fraction: float,
           pricing_text: str, run_dir: Path) -> None:
    t = _table(f"what {_usd(usd)} buys ({layout}, overhead included)",
               ["device", "count", "price", "GB", f"IOPS@{read_fraction:.0%}r", "MB/s r/w", "latency µs r/w"])
    for o in options:
        e = o.evaluation
        if e is None:
            t.add_row(lit(o.device.id), "0", f"(smallest {_usd(o.smallest_price_usd)})", "-", "-", "-", "-")
            continue
        t.add_row(lit(o.device.id), _n(o.count), _usd(e.price_usd), _n(e.capacity_gb.value), _n(e.iops.value),
                  f"{_n(e.read_mbps.value)}/{_n(e.write_mbps.value)}",
                  f"{_n(e.read_latency_us.value)}/{_n(e.write_latency_us.value)}")
    con.print(t)
    for o in options:
        if o.evaluation is not None:
            con.print(f"[dim]{esc(o.device.id)}: MB/s limited by {esc(o.evaluation.read_mbps.limit)} "
                      f"({esc(o.evaluation.read_mbps.detail)})[/dim]")
    _tail(con, pricing_text, run_dir)


def size(con: Console, req: Requirement, sz: Sizing, redundancy: str, pricing_text: str, run_dir: Path) -> None:
    parts = [f"{LABELS[k]} {_n(getattr(req, k))}" for k in req.given()]
    if req.max_read_latency_us is not None:
        parts.append(f"read latency ≤ {_n(req.max_read_latency_us)} µs")
    con.print(esc(f"requirement: {', '.join(parts)}; headroom {req.headroom:.0%}; from {req.source}"))
    # the figures the requirement is about (all of them go to --json)
    cats = req.categories()
    cols = ["#", "configuration", "price", "GB"]
    cols += ["IOPS r/w"] if "iops" in cats else []
    cols += ["MB/s r/w"] if "throughput" in cats else []
    cols += ["read µs"] if "latency" in cats else []
    t = _table(f"cheapest of {sz.found:,} designs that meet it ({sz.considered:,} tried, redundancy "
               f"{redundancy})", cols + ["binding"], left=2)
    t.columns[1].no_wrap = False
    t.columns[1].overflow = "fold"
    for i, c in enumerate(sz.candidates, 1):
        e = c.evaluation
        row = [str(i), lit(_short(e)), _usd(e.price_usd), _si(e.capacity_gb.value)]
        row += [f"{_si(e.read_iops.value)}/{_si(e.write_iops.value)}"] if "iops" in cats else []
        row += [f"{_si(e.read_mbps.value)}/{_si(e.write_mbps.value)}"] if "throughput" in cats else []
        row += [_si(e.read_latency_us.value)] if "latency" in cats else []
        t.add_row(*row, lit(c.binding))
    con.print(t)
    con.print(f"binding: [bold]{esc(sz.binding)}[/bold] — {esc(sz.binding_detail)}", soft_wrap=True)
    con.print(f"[dim]pricing: {esc(pricing_text)}[/dim]", soft_wrap=True)
    con.print(f"[dim]`--json` gives each requirement's margin (offered / required - 1; met at "
              f"{req.headroom:.0%} or more). Run: {esc(run_dir)}[/dim]")


_VALUE_LABELS = [("tpm_per_usd", "TPM per $", 3), ("nopm_per_usd", "NOPM per $", 3), ("tps_per_usd", "TPS per $", 4),
                 ("iops_per_usd", "IOPS per $", 3),
                 ("mbps_per_usd", "MB/s per $", 4), ("usd_per_gb", "$ per GB", 2), ("usd_per_tpm", "$ per TPM", 2),
                 ("usd_per_nopm", "$ per NOPM", 2), ("usd_per_tps", "$ per TPS", 2), ("usd_per_iops", "$ per IOPS", 3)]


def value(con: Console, v: Value, result_dir: str, config_text: str, run_dir: Path) -> None:
    con.print(esc(f"price/performance of {result_dir} ({v.kind} run) as {config_text}"), soft_wrap=True)
    t = Table(show_header=False, box=box.SIMPLE_HEAD)
    t.add_column("figure", style="bold")
    t.add_column("value", justify="right")
    for key, label, digits in _VALUE_LABELS:
        x = v.figures.get(key)
        if x is not None:
            t.add_row(label, f"{x:,.{digits}f}")
    con.print(t)
    for line in v.figures_used:
        con.print(f"[dim]· {esc(line)}[/dim]", soft_wrap=True)
    con.print(f"[dim]Run: {esc(run_dir)}[/dim]")
