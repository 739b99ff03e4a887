"""What an import's numbers are: its provenance, recorded in the document and said by the requirement.

- `source`: the reader (awr, prometheus, cloudwatch, ...).
- `semantics`: `counter` (cumulative counters: dbtier takes the differences and divides by the time
  between samples, so an interval's rate is exact), `delta` (the source's sum per period, divided by the
  period: CloudWatch), or `rate` (the source's own averages: Azure Monitor, a Prometheus rate(), iostat,
  sar; dbtier cannot see inside them).
- `native_step_s`: the source's step (a Prometheus query's step, CloudWatch's period, Azure's grain) when
  the reader knows it, else the median interval of the series; `averaging_s`: a rate's window, when known.
- `resets`: new segments (a counter that went back without wrapping, a reboot or restart, a stats reset),
  added over the databases; `wraps`: counters that wrapped and were taken as deltas.
- `gaps`: places where a database's series is not continuous at its step: an interval that starts after
  the previous one ended (a missing sample, a dropped interval over a reset), or one at least 1.5 steps
  long (counters sampled across a missed scrape: the rate there is the average over the longer interval).

- what the reader says of its numbers, when the source tells it (`ReadResult.extra["provenance"]`, SAID):
  `statistic` (CloudWatch's Sum, Average or Maximum), `unit` (Count, Bytes/Second, ...), `period_s`, and
  `basis` in words when the semantics alone would not say it (a Maximum is a peak minute, not a mean);
  `times_from`: where the sample times came from when the samples carry none of their own (node_exporter
  scrapes: the `# TIME` lines, the samples' timestamps, the file names or their modification times).

The requirement says which statistic of what it is: "p99 of 60-s averages (the source's)", "max of 1-s
intervals between counter samples". Pure: SQL over the import's `totals`, and the documents' dicts.
"""

from __future__ import annotations

from typing import Any, Sequence

import duckdb

from dbtier.core.units import duration_text
from dbtier.history.tables import ReadResult

SEMANTICS = {"awr": "counter", "sqlserver": "counter", "postgres": "counter", "diskstats": "counter",
             "iostat": "rate", "sar": "rate", "dma": "rate"}
# What a reader may say of its numbers (ReadResult.extra["provenance"]), and what a batched import keeps of a
# batch's provenance (fleet.py): the reader's part, never the resets and gaps it adds up again.
SAID = ("statistic", "unit", "period_s", "basis", "times_from")
KEYS = ("source", "semantics", "native_step_s", "averaging_s") + SAID


def gaps(con: duckdb.DuckDBPyConnection, totals: str, step: float | None) -> dict[str, int]:
    """Per database: the places its series is not continuous (see the module docstring)."""
    st = f"{float(step)!r}" if step else "m.med"
    rows = con.execute(f"""
        WITH o AS (SELECT database, start, "end", seconds,
                          lag("end") OVER (PARTITION BY database ORDER BY start) AS pe FROM {totals}),
             m AS (SELECT database, median(seconds) AS med FROM {totals} GROUP BY database)
        SELECT o.database, count(*) FILTER (WHERE (pe IS NOT NULL AND (epoch_us(start) - epoch_us(pe)) / 1e6 >= 0.5 * {st})
                                           OR seconds >= 1.5 * {st})
        FROM o JOIN m ON o.database = m.database GROUP BY o.database""").fetchall()
    return {db: int(n) for db, n in rows}


def base(res: ReadResult) -> dict[str, Any]:
    """The reader's part of the provenance (older readers do not say their semantics: SEMANTICS does), with
    what it said of its numbers (SAID)."""
    said = res.extra.get("provenance") or {}
    return {"source": res.source, "semantics": SEMANTICS.get(res.source, res.semantics),
            "native_step_s": res.native_step_s, "averaging_s": res.averaging_s,
            **{k: said[k] for k in SAID if said.get(k) is not None}}


def run_level(prov: dict[str, Any], databases: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run's provenance: `prov` (base()) with the databases' resets, wraps and gaps added up, and the
    native step (the median of the databases' median intervals when the reader did not say)."""
    out = dict(prov)
    out["resets"] = sum(int(d.get("restarts") or 0) for d in databases)
    out["wraps"] = sum(int(d.get("wraps") or 0) for d in databases)
    out["gaps"] = sum(int(d.get("gaps") or 0) for d in databases)
    if out.get("native_step_s") is None:
        meds = sorted(float(m) for d in databases
                      if (m := (d.get("series_shape") or {}).get("median_interval_s")) is not None)
        out["native_step_s"] = meds[len(meds) // 2] if meds else None
        out["step_from"] = "the median interval"
    else:
        out["step_from"] = "the source"
    out["basis"] = out.get("basis") or basis(out)      # the reader's words, when it said them
    return out


def duration(s: float | None) -> str:
    """60 -> '1-minute', 300 -> '5-minute', 15 -> '15-s', 3610 -> '1-hour', 5400 -> '1.5-hour', 86400 -> '1-day':
    the unit the length calls for, never an exponent."""
    if s is None:
        return "?"
    return duration_text(s, adjective=True)


def basis(prov: dict[str, Any]) -> str:
    """What one interval of the series is, in words."""
    sem, step = prov.get("semantics"), prov.get("native_step_s")
    if sem == "rate":
        avg = prov.get("averaging_s") or step
        return f"{duration(avg)} averages (the source's own; dbtier cannot see inside them)"
    if sem == "delta":
        return f"{duration(step)} sums divided by the period (the source's)"
    when = f"; sample times from {prov['times_from']}" if prov.get("times_from") else ""
    return f"{duration(step)} intervals between counter samples (dbtier's differences{when})"


def statistic(prov: dict[str, Any] | None, key: str) -> str | None:
    """'p99 of 1-minute averages (the source's own; ...)', or None for a run without provenance."""
    if not prov:
        return None
    return f"{key} of {basis(prov)}"
