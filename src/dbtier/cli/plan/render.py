"""`dbtier plan`'s terminal output: one rich table (and its notes) per action.

Only formatting: every figure comes from the planner's results and the document
(`dbtier.model.plan.planner`, `dbtier.model.plan.plandoc`); nothing here is computed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from rich import box
from rich.console import Console, RenderableType
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from dbtier.cli.markup import esc, lit
from dbtier.core.units import life_cap_years, life_years_text, plain_number
from dbtier.model.plan.array import Evaluation
from dbtier.model.plan.planner import BudgetOption, Equivalence, Value
from dbtier.model.plan.requirement import LABELS, Requirement
from dbtier.model.plan.sizing import Sizing
from dbtier.model.plan.plandoc import mix_rule
from dbtier.model.plan.plandoc import number_text as _n
from dbtier.model.plan.plandoc import usd_text as _usd
from dbtier.model.plan.prices import grade_line


def _si(x: float) -> str:
    """Compact, never an exponent: 950, 12.5K, 2.94M, 1,230M."""
    if x == math.inf:
        return "∞"
    if abs(x) >= 1_000_000:
        return f"{plain_number(x / 1_000_000)}M"
    if abs(x) >= 10_000:
        return f"{plain_number(x / 1000)}K"
    return _n(x)


def _short(e: Evaluation, layouts: Sequence[str] = (), second_layouts: Sequence[str] = ()) -> str:
    """One design in a few words; `layouts` (`second_layouts`: a read cache's backing set) are the layouts
    folded into it, named together: 2×disk raid1 / mirror2."""
    c = e.config
    if c.layout == "preferred-read-mirror" and c.second is not None:
        return f"{c.count}×{c.device.id} ⇄ {c.second_count}×{c.second.id} (pref. read)"
    if c.layout == "read-cache" and c.second is not None:
        return (f"{c.count}×{c.device.id} cache {c.hit_ratio:.0%} → {c.second_count}×{c.second.id} "
                f"{' / '.join(second_layouts or (str(c.second_layout),))}")
    return f"{c.count}×{c.device.id} {' / '.join(layouts or (c.layout,))}"


def plain_table(title: str, cols: Sequence[str], left: int = 1) -> Table:
    # titles and headers carry device ids from catalog files: never markup
    t = Table(title=esc(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, c in enumerate(cols):
        t.add_column(esc(c), justify="left" if i < left else "right", no_wrap=True)
    return t


def _cell_width(cell: RenderableType) -> int:
    """Columns a cell takes on its widest line (markup removed)."""
    text = cell if isinstance(cell, Text) else Text.from_markup(str(cell))
    return max((cell_len(line) for line in text.plain.split("\n")), default=0)


def table_fits(con: Console, t: Table) -> bool:
    """Whether `t` fits the console without rich cropping a figure: a no-wrap column needs its widest
    cell, a folding one its min_width (or 4), and each gap between columns three (the padding either side
    and the blank rule of `plain_table`'s box)."""
    need = 0
    for col in t.columns:
        if col.no_wrap:
            need += max([_cell_width(col.header)] + [_cell_width(c) for c in col.cells])
        else:
            need += col.min_width or 4
    return need + 3 * (len(t.columns) - 1) <= con.width


def _figures_table(title: str, evs: Sequence[tuple[str, Evaluation]]) -> Table:
    """Rows of figures, one column per configuration; the limit of each figure in the last column of a row."""
    t = plain_table(title, ["", *(name for name, _ in evs)])
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


def price_notes(con: Console, prices: dict[str, Any] | None) -> None:
    """--prices: the quotes applied (one line), then each quote more than a year old (a line each)."""
    if not prices:
        return
    con.print(esc(f"prices: {len(prices['applied'])} quote(s) from {prices['file']} replace the catalog's: "
                  + ", ".join(f"{a['id']} {_usd(a['price_usd'])} of {a['date']}" for a in prices["applied"])),
              soft_wrap=False, style="dim")
    for note in prices.get("notes") or []:
        con.print(esc(f"stale price: {note}"), soft_wrap=False, style="yellow")


def _class(e: Evaluation) -> str:
    """The device class(es) of a design: 'nvme-ri-gen4', or 'nvme-ri-gen4 + hdd-nl' (mixed); '-' unstated."""
    c = e.config
    names = [c.device.device_class or "-"] + ([c.second.device_class or "-"] if c.second is not None else [])
    return " + ".join(dict.fromkeys(names))


def _tail(con: Console, pricing_text: str, run_dir: Path, prices: dict[str, Any] | None = None) -> None:
    price_notes(con, prices)
    con.print(f"[dim]pricing: {esc(pricing_text)}[/dim]", soft_wrap=False)
    con.print(f"[dim]Run: {esc(run_dir)}[/dim]")


def equivalent(con: Console, eq: Equivalence, pricing_text: str, run_dir: Path,
               prices: dict[str, Any] | None = None) -> None:
    ref = eq.reference
    t = plain_table(f"{eq.using.id} ({eq.layout}) to match one {ref.config.device.id} "
               f"({_usd(ref.price_usd)})", ["metric", "to match", "count", "price", "× reference", "TCO",
                                            "TCO ×"], left=2)
    t.columns[1].no_wrap = False
    for k, m in eq.by_metric.items():
        tco_ratio = m.tco_ratio
        t.add_row(k, m.reference_value, _n(m.count), _usd(m.price_usd), f"{m.price_ratio:.2f}×",
                  _tco_text(m.tco), "-" if tco_ratio is None else f"{tco_ratio:.2f}×")
    con.print(t)
    _tco_note(con, next(iter(eq.by_metric.values())).tco)
    con.print(esc(mix_rule(eq.read_fraction, ref.read_iops.value, ref.write_iops.value)["text"]) + ".",
              style="dim", soft_wrap=False)
    con.print()
    con.print(power_table(eq))
    con.print()
    evs = [(f"1 × {ref.config.device.id}", ref)] + [(f"{m.count} × ({k})", m.evaluation)
                                                      for k, m in eq.by_metric.items()]
    con.print(_figures_table("what each delivers", evs))
    over = eq.by_metric["iops"].evaluation.overheads
    if over:
        o = over[0]
        con.print(f"[dim]overhead: {esc(o['id'])}, ${o['unit_price_usd']:,.0f} per {o['per_devices']} devices, "
                  f"{o['max_mbps']:,.0f} MB/s each[/dim]")
    _tail(con, pricing_text, run_dir, prices)


def power_table(eq: Equivalence) -> Table:
    """Watts (active: the array at the load compared on) and rack units (controllers and enclosures; the
    drives sit in them) of the reference and of each metric's array, with their ratio to the reference's."""
    first = next(iter(eq.by_metric.values()))
    ref_w = (first.reference_tco or {}).get("watts")
    t = plain_table("power and rack space", ["", "count", "watts", "× reference", "rack U"])
    t.add_row(f"1 × {eq.reference.config.device.id}", "1", "-" if ref_w is None else _n(ref_w), "1×",
              _n((first.reference_tco or {}).get("rack_units"), 1))
    for k, m in eq.by_metric.items():
        w = (m.tco or {}).get("watts")
        t.add_row(f"{eq.using.id} ({k})", _n(m.count), "-" if w is None else _n(w),
                  f"{w / ref_w:,.0f}×" if w is not None and ref_w else "-", _n((m.tco or {}).get("rack_units"), 1))
    return t


def budget(con: Console, options: Sequence[BudgetOption], usd: float, layout: str, read_fraction: float,
           pricing_text: str, run_dir: Path, prices: dict[str, Any] | None = None) -> None:
    t = plain_table(f"what {_usd(usd)} buys ({layout}, overhead included; IOPS at {read_fraction:.0%} reads)",
               ["device", "n", "price", "TCO", "GB", "IOPS", "MB/s r/w", "µs r/w"])
    t.columns[0].no_wrap = False
    t.columns[0].overflow = "fold"
    t.columns[0].min_width = 12
    for o in options:
        e = o.evaluation
        if e is None:
            t.add_row(lit(o.device.id), "0", f"(smallest {_usd(o.smallest_price_usd)})", "-", "-", "-", "-", "-")
            continue
        t.add_row(lit(o.device.id), _n(o.count), _usd(e.price_usd), _tco_text(o.tco), _si(e.capacity_gb.value),
                  _si(e.iops.value), f"{_si(e.read_mbps.value)}/{_si(e.write_mbps.value)}",
                  f"{_si(e.read_latency_us.value)}/{_si(e.write_latency_us.value)}")
    con.print(t)
    _tco_note(con, next((o.tco for o in options if o.tco), None))
    for o in options:
        if o.evaluation is not None:
            con.print(f"[dim]{esc(o.device.id)}: MB/s limited by {esc(o.evaluation.read_mbps.limit)} "
                      f"({esc(o.evaluation.read_mbps.detail)})[/dim]")
    _tail(con, pricing_text, run_dir, prices)


def size(con: Console, req: Requirement, sz: Sizing, redundancy: str, pricing_text: str, run_dir: Path,
         prices: dict[str, Any] | None = None, grade: dict[str, Any] | None = None) -> None:
    parts = [f"{LABELS[k]} {_n(getattr(req, k))}" for k in req.given()]
    if req.max_read_latency_us is not None:
        parts.append(f"read latency ≤ {_n(req.max_read_latency_us)} µs")
    con.print(esc(f"requirement: {', '.join(parts)}; headroom {req.headroom:.0%}; from {req.source}"))
    # the figures the requirement is about (all of them go to --json)
    cats = req.categories()
    years = sz.terms.service_years
    cols = ["#", "configuration", "class", "price", f"TCO {years:g}y", "life\n(years)"]
    figs = ["GB"] if "capacity" in cats else []
    figs += ["IOPS r/w"] if "iops" in cats else []
    figs += ["MB/s r/w"] if "throughput" in cats else []
    figs += ["read µs"] if "latency" in cats else []
    rows: list[list[Text | str]] = []
    fig_rows: list[list[str]] = []
    for i, c in enumerate(sz.candidates, 1):
        e = c.evaluation
        life = c.life or {}
        rows.append([str(i), lit(_short(e, c.layouts, c.second_layouts)), lit(_class(e)), "$" + _si(e.price_usd),
                     "$" + _si(life["tco"]["total_usd"]) if life else "-", _life(life, years)])
        fig = [_si(e.capacity_gb.value)] if "capacity" in cats else []
        fig += [f"{_si(e.read_iops.value)}/{_si(e.write_iops.value)}"] if "iops" in cats else []
        fig += [f"{_si(e.read_mbps.value)}/{_si(e.write_mbps.value)}"] if "throughput" in cats else []
        # (each candidate's binding is in --json; the cheapest's is printed below)
        fig += [_si(e.read_latency_us.value)] if "latency" in cats else []
        fig_rows.append(fig)
    title = f"cheapest of {sz.found:,} designs that meet it ({sz.considered:,} tried, redundancy {redundancy})"
    t = _size_table(title, cols + figs, [[*r, *f] for r, f in zip(rows, fig_rows)])
    if figs and not table_fits(con, t):
        # a narrow terminal: the figures the requirement is about go to a second table, row for row
        con.print(_size_table(title, cols, rows))
        ft = plain_table("what each offers", ["#", *figs])
        for r, f in zip(rows, fig_rows):
            ft.add_row(r[0], *f)
        con.print(ft)
    else:
        con.print(t)
    con.print(f"binding: [bold]{esc(sz.binding)}[/bold] — {esc(sz.binding_detail)}", soft_wrap=False)
    _life_notes(con, sz)
    if sz.cloud_left_out:
        con.print(esc(f"cloud volumes left out ({', '.join(sz.cloud_left_out)}): on-prem designs only; "
                      "--cloud aws|azure|gcp sizes cloud storage (--devices ID sizes a named volume as a stripe)"),
                  soft_wrap=False, style="dim")
    if grade:
        con.print(esc(grade_line(grade)), soft_wrap=False, style="dim")
    price_notes(con, prices)
    con.print(f"[dim]pricing: {esc(pricing_text)}[/dim]", soft_wrap=False)
    con.print(f"[dim]`--json` gives each requirement's margin (offered / required - 1; met at "
              f"{req.headroom:.0%} or more). Run: {esc(run_dir)}[/dim]")


def _size_table(title: str, cols: Sequence[str], rows: Sequence[Sequence[Text | str]]) -> Table:
    t = plain_table(title, cols, left=3)
    for k, width in ((1, 16), (2, 8)):     # configuration and class fold; the figures never do
        t.columns[k].no_wrap = False
        t.columns[k].overflow = "fold"
        t.columns[k].min_width = width
    for r in rows:
        t.add_row(*r)
    return t


def _tco_text(tco: dict[str, Any] | None) -> str:
    return "-" if not tco else _usd(tco["total_usd"]) + ("*" if tco.get("unchecked") else "")


def _tco_note(con: Console, tco: dict[str, Any] | None) -> None:
    if tco:
        con.print(esc(f"TCO: {tco['service_years']:g} years of purchase, energy at ${tco['usd_per_kwh']:g}/kWh and "
                      f"cloud months; {tco['basis']}; * energy unpriced (watts missing)"), style="dim",
                  soft_wrap=False)


def _life(life: dict[str, Any], service_years: float | None) -> str:
    """The life column, in years: how long the limiting device lasts, '> 50' past ten service lives (at
    least 50 years: `life_cap_years`), ∞ with no wear, 'ok' within an HDD rating, '?' unchecked."""
    e = life.get("endurance")
    if not e:
        return "-"
    if not e.get("checked"):
        return "?"
    if e.get("lifetime_years") is not None:
        return life_years_text(e["lifetime_years"], service_years)
    return "∞" if e.get("used_fraction") in (0, None) else "ok"


def _life_notes(con: Console, sz: Sizing) -> None:
    """What the service-life terms did: the day's writes, durable writes, what was dropped and why."""
    life = sz.life
    if life is None:
        return
    t = sz.terms
    con.print(esc(f"service life {t.service_years:g} years, ranked by "
                  f"{'cost over it (TCO)' if t.cost == 'tco' else 'purchase price'}; life past "
                  f"{life_cap_years(t.service_years):g} years (ten service lives, at least 50) shows as "
                  f"'> {life_cap_years(t.service_years):g}'; writes: {life.host.detail}"),
              soft_wrap=False, style="dim")
    con.print(esc(f"durable writes {'required' if life.durable_required else 'not required'}: "
                  f"{life.durable_reason}"), soft_wrap=False, style="dim")
    if sz.dropped:
        kinds = sorted({d["reason"] for d in sz.dropped})
        con.print(esc(f"{len(sz.dropped)} device(s) left out ({', '.join(kinds)}): "
                      + "; ".join(d["detail"] for d in sz.dropped[:3])), soft_wrap=False, style="dim")
    best = sz.candidates[0]
    un = (best.life or {}).get("sized_on", {}).get("unchecked") or []
    if un:
        con.print(esc(f"the cheapest is unchecked for: {', '.join(un)}"), soft_wrap=False, style="yellow")
    cbp = sz.cheaper_by_purchase
    if cbp and cbp["detail"] != sz.binding_detail:
        con.print(esc(f"not the answer: {cbp['detail']}"), soft_wrap=False)


_VALUE_LABELS = [("tpm_per_usd", "TPM per $", 3), ("nopm_per_usd", "NOPM per $", 3), ("tps_per_usd", "TPS per $", 4),
                 ("iops_per_usd", "IOPS per $", 3),
                 ("mbps_per_usd", "MB/s per $", 4), ("usd_per_gb", "$ per GB", 2), ("usd_per_tpm", "$ per TPM", 2),
                 ("usd_per_nopm", "$ per NOPM", 2), ("usd_per_tps", "$ per TPS", 2), ("usd_per_iops", "$ per IOPS", 3)]


def value(con: Console, v: Value, result_dir: str, config_text: str, run_dir: Path,
          prices: dict[str, Any] | None = None) -> None:
    con.print(esc(f"price/performance of {result_dir} ({v.kind} run) as {config_text}"), soft_wrap=False)
    years = v.tco["service_years"] if v.tco else None
    t = Table(box=box.SIMPLE_HEAD)
    t.add_column("figure", style="bold")
    t.add_column("on the purchase price", justify="right")
    t.add_column(f"on the {years:g}-year TCO" if years else "on the TCO", justify="right")
    for key, label, digits in _VALUE_LABELS:
        x = v.figures.get(key)
        if x is not None:
            y = (v.figures_tco or {}).get(key)
            t.add_row(label, f"{x:,.{digits}f}", "-" if y is None else f"{y:,.{digits}f}")
    con.print(t)
    for line in v.figures_used:
        con.print(f"[dim]· {esc(line)}[/dim]", soft_wrap=False)
    price_notes(con, prices)
    con.print(f"[dim]Run: {esc(run_dir)}[/dim]")
