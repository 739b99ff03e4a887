"""Which source a file looks like, from its first lines: for "this is a SQL Server file, not AWR" messages."""

from __future__ import annotations

import re
from pathlib import Path

from dbtier.core.errors import DbtierError

from dbtier.history.sources import csvio
from dbtier.history.sources import psql

NAMES = {
    "awr": "awr (Oracle AWR CSV)",
    "dma": "dma (Google Database Migration Assessment collection)",
    "sqlserver": "sqlserver (sys.dm_io_virtual_file_stats)",
    "postgres": "postgres (pg_stat_* views: psql's output or the collector's CSV)",
    "diskstats": "diskstats (/proc/diskstats snapshots)",
    "iostat": "iostat (`iostat -x` output, text or -o JSON)",
    "sar": "sar (`sar -d` output)",
    "prometheus": "prometheus (a query_range answer, `promtool tsdb dump`, a VictoriaMetrics export or "
                  "node_exporter's text scrapes)",
    "cloudwatch": "cloudwatch (`aws cloudwatch get-metric-statistics` or `get-metric-data` output)",
    "azure": "azure (`az monitor metrics list` output)",
}

_DISKSTATS_LINE = re.compile(r"^\s*\d+\s+\d+\s+\S+(\s+\d+){10,}\s*$")
_SAR_HEAD = re.compile(r"^\S+(\s+[AP]M)?\s+DEV\s+tps\b")
_CLOUDWATCH = re.compile(r'"(?:MetricDataResults|Datapoints)"\s*:\s*\[', re.I)
_CLOUDWATCH_RESULT = re.compile(r'"Timestamps"\s*:\s*\[', re.I)


def guess(path: str | Path) -> str | None:
    """The source the file looks like, or None."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith((".zip", ".tgz", ".tar.gz", ".tar")) or name.startswith("opdb__"):
        return "dma"
    json_kind = _json_source(p)
    if json_kind:
        return json_kind
    try:
        lines = csvio.head_lines(p, 60)
    except OSError:
        return None
    text = "\n".join(lines)
    low = text.lower()
    if "pkey" in low and ("||" in low or "|ho|" in low):
        return "dma"
    if "# dbtier-diskstats" in text or sum(1 for l in lines if _DISKSTATS_LINE.match(l)) >= 2:
        return "diskstats"
    if any(_SAR_HEAD.match(l) for l in lines):
        return "sar"
    if any(l.startswith("Device") and ("r/s" in l or "tps" in l) for l in lines):
        return "iostat"
    first = next((l for l in lines if l.strip()), "")
    fields = {csvio.norm(f) for d in csvio.DELIMITERS for f in first.split(d)}
    if {"num_of_reads", "num_of_bytes_read"} <= fields:
        return "sqlserver"
    if "snap_id" in fields and (fields & {"stat_name", "filetype_name", "end_interval_time",
                                          "physical read total io requests"}):
        return "awr"
    if _postgres(fields) or _postgres(psql.names_in(lines)):      # the collector's CSV, or psql's output
        return "postgres"
    return None


def _postgres(fields: set[str]) -> bool:
    return bool(fields & {"blks_read", "wal_bytes", "heap_blks_read", "buffers_clean"}) or \
        {"backend_type", "object", "context"} <= fields


def _json_source(p: Path) -> str | None:
    """prometheus, cloudwatch or azure, from the first 8 KiB (JSON answers are often one long line)."""
    from dbtier.history.sources import promfiles
    if promfiles.sniff(p):
        return "prometheus"
    try:
        with open(p, "rb") as f:
            head = f.read(8192).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    except OSError:
        return None
    if re.match(r'\{\s*"sysstat"\s*:', head):      # sysstat's JSON: iostat -o JSON (the reader refuses sadf -j)
        return "iostat"
    if _CLOUDWATCH.search(head) and head.startswith(("{", "[")) or \
            head.startswith("[") and _CLOUDWATCH_RESULT.search(head) and re.search(r'"id"\s*:', head, re.I):
        return "cloudwatch"      # answers, concatenated or in a list, pages, or MetricDataResults alone
    if not head.startswith("{"):
        return None
    if '"timeseries"' in head or ('"value"' in head and ('"timespan"' in head or '"resourceregion"' in head)):
        return "azure"
    return None


def other_source(path: str | Path, current: str) -> str | None:
    """NAMES[...] of the source the file looks like, when that is not `current`."""
    g = guess(path)
    if g and g != current:
        return NAMES[g]
    return None


def refuse_other(path: str | Path, current: str, what: str) -> None:
    """One clear error when a file of another source is imported as `current`."""
    other = other_source(path, current)
    if other:
        raise DbtierError(f"{path}: this looks like a {other} file, not {what}",
                          f"import it with --source {other.split()[0]}")
