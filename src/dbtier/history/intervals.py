"""A history's per-interval rates, in time order, for replaying them through burst credit buckets
(`dbtier plan size --cloud --from-history`): (seconds, IOPS, MB/s) per interval of an import's database or
of a consolidation's sum on its grid. A gap between intervals is left out (no credit is earned over it)."""

from __future__ import annotations

from typing import Any

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store


def rates(source: dict[str, Any]) -> list[tuple[float, float, float]]:
    """`source` is a requirement run's `from` ({run_dir, action, of}): the run whose series it was taken from."""
    run_dir, action = source.get("run_dir"), source.get("action")
    if not run_dir or action not in ("import", "consolidate"):
        raise DbtierError("the history run does not say which import or consolidation its requirement came from",
                          "re-run `dbtier history requirement` on an import or consolidation run")
    name = store.SUM_FILE if action == "consolidate" else store.TOTALS_FILE
    cols = ["start", "end", "iops", "mbps"] + ([] if action == "consolidate" else ["database"])
    where = "" if action == "consolidate" else f"WHERE database = {sql_str(str(source.get('of')))}"
    con = store.connect()
    try:
        store.check_parquet(con, run_dir, name, cols)
        rows = con.execute(f"""SELECT epoch("end") - epoch(start), coalesce(iops, 0), coalesce(mbps, 0)
                               FROM {store.parquet(run_dir, name)} {where} ORDER BY start""").fetchall()
    except duckdb.Error as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DbtierError(f"{run_dir}: its series cannot be read: {why[:200]}",
                          "re-run the `dbtier history` command that wrote it") from None
    finally:
        con.close()
    out = [(float(s), float(i), float(m)) for s, i, m in rows if s and s > 0]
    if not out:
        raise DbtierError(f"{run_dir}: no intervals with rates for {source.get('of') or 'the sum'}",
                          "the burst replay needs the history's per-interval IOPS")
    return out
