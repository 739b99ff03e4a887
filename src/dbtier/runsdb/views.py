"""The runs in DuckDB: documented views over the indexes, in a connection that only reads.

Views (the columns are documented here, `dbtier runs sql --help` lists them):

- `runs`: one row per run: RUN_COLUMNS. `name`: the run's name (--name, or what a plan, advise or history
  step was named after); `continues`: the run(s) it continues, as its params name them (a history
  requirement's import run, a plan's --from-history ...); `runs_dir`: the runs directory it is under, NULL
  for a run listed from the run registry (made elsewhere with --out: its run_id is its absolute path).
- `figures`: one row per figure of a run, as report/figures/core.py names it: the run's path, kind, action,
  started_at, host and status, then item (a probe target, backup method, query, plan device, history
  database; '' for the run itself), key, figure_key (the key `compare` matches), label, value (a number)
  or text, unit, digits, better ('higher', 'lower' or NULL), detail (one of many, e.g. per query),
  median/min/max/n/spread_pct (a repeated figure's runs) and, for a probe target, device and model.
- one view per kind of the index (VIEWS; dbtier.results.kinds says which runs each holds): every `runs` column and the kind's figures as columns named as in the
  result documents; a kind whose figures are per item (probe targets, backup methods, history
  databases) has a row per item. A run without figures (failed, damaged) still has its row.

The connection holds the indexes in memory; once the views exist, file access and configuration
changes are switched off (`enable_external_access=false`, `lock_configuration=true`), and only a single
SELECT statement is run (checked with DuckDB's own parser): COPY, ATTACH, INSTALL, SET, CREATE ... are
refused before they run.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from dbtier.core.errors import DbtierError
from dbtier.results import kinds

RUN_COLUMNS = ("run_id", "path", "runs_dir", "command", "name", "kind", "action", "status", "reason",
               "started_at", "finished_at", "seconds", "host", "dbtier_version", "target", "device", "model",
               "filesystem", "lab", "continues", "summary")
FIGURE_COLUMNS = ("path", "run_id", "kind", "action", "started_at", "host", "status", "item", "key", "figure_key",
                  "label", "value", "text", "unit", "digits", "better", "detail", "median", "min", "max", "n",
                  "spread_pct", "device", "model")

# The index's table (dbtier.runsdb.index writes it): one row per run, its figures nested.
FIGURE = pa.struct([
    ("item", pa.string()), ("key", pa.string()), ("figure_key", pa.string()), ("label", pa.string()),
    ("value", pa.float64()), ("text", pa.string()), ("unit", pa.string()), ("digits", pa.int32()),
    ("better", pa.string()), ("detail", pa.bool_()), ("median", pa.float64()), ("min", pa.float64()),
    ("max", pa.float64()), ("n", pa.int64()), ("spread_pct", pa.float64()), ("device", pa.string()),
    ("model", pa.string()),
])
SCHEMA = pa.schema([
    ("run_id", pa.string()), ("mtime_ns", pa.int64()), ("size", pa.int64()), ("command", pa.string()),
    ("name", pa.string()), ("continues", pa.string()), ("kind", pa.string()), ("action", pa.string()), ("status", pa.string()), ("reason", pa.string()),
    ("started_at", pa.timestamp("us")), ("finished_at", pa.timestamp("us")), ("seconds", pa.float64()),
    ("host", pa.string()), ("dbtier_version", pa.string()), ("target", pa.string()), ("device", pa.string()),
    ("model", pa.string()), ("filesystem", pa.string()), ("lab", pa.string()), ("summary", pa.string()),
    ("figures", pa.list_(FIGURE)),
])

N, T = "num", "text"


def _cols(spec: str) -> tuple[tuple[str, str], ...]:
    """'a b:t c' -> (('a', num), ('b', text), ('c', num))."""
    return tuple((w.split(":")[0], T if w.endswith(":t") else N) for w in spec.split())


@dataclass(frozen=True)
class View:
    """A kind's view (its `view` face, dbtier.results.kinds): the runs of one index kind (`name`) with their
    figures as columns, and what the runs index and `dbtier runs` take from it."""
    name: str
    about: str
    item: str | None = None                 # the column a figure's item goes in (None: run figures only)
    item_keys: tuple[tuple[str, str], ...] = ()
    run_keys: tuple[tuple[str, str], ...] = ()
    summary: tuple[str, ...] = ()           # the figures the listing's `summary` names first (the first item's)
    targets: bool = False                   # its items are probe targets: the figure's group, with device, model
    peaks: bool = False                     # its databases' peaks are figures too, named as in the document

    def columns(self) -> list[str]:
        own = [k for k, _ in self.item_keys] + [k for k, _ in self.run_keys if k not in dict(self.item_keys)]
        extra = ([self.item] if self.item else []) + (["device", "model"] if self.targets else [])
        shadow = set(own) | set(extra)
        return [c for c in RUN_COLUMNS if c not in shadow] + extra + own


def _actions(view: str) -> str:
    """The actions of the runs a view holds, as the index names them (dbtier.results.kinds)."""
    return ", ".join(k.index[1] for k in kinds.KINDS if k.index[0] == view and k.index[1])


_HIST = " ".join(f"{m}_{s}" for m in ("read_iops", "write_iops", "read_mbps", "write_mbps", "iops", "mbps")
                 for s in ("p50", "p95", "p99", "max"))
PROBE = View("probe", "one row per probe target (target, its device and model)", "target", _cols(
    "read_iops_4k write_iops_4k mixed_iops_8k read_lat_us_qd1_p50 write_lat_us_qd1_p50 read_lat_us_p99_at_max "
    "read_mbps_seq write_mbps_seq commit_lat_us_p50 commit_lat_us_p99 commits_per_s fsync_honesty:t "
    "read_knee_outstanding hosts"), summary=("read_iops_4k", "read_mbps_seq", "commit_lat_us_p50"), targets=True)
OLTP = View("oltp", "one row per bench oltp run (its sweep; a placement matrix: its last step)", run_keys=_cols(
    "workload:t engine:t durability:t best_tps best_clients best_tpm best_nopm knee_clients knee_tps "
    "knee_p95_ms knee_bottleneck:t knee_cpu_busy_pct knee_device_busy_pct cache_guard:t device_read_fraction"),
    summary=("best_tps", "knee_tps", "knee_p95_ms"))
DSS = View("dss", "one row per bench dss run (per query: the figures view, item q1 ... q22)", run_keys=_cols(
    "engine:t scale temp:t total_seconds geomean_seconds queries answers:t peak_temp_mb spilled_queries cpu_pct "
    "scan_mbps scan_pct_of_probe"), summary=("total_seconds", "geomean_seconds"))
BACKUP = View("backup", "one row per backup method (target: the backup directory)", "method",
              _cols("dir_mbps null_mbps limit:t"), _cols("engine:t target:t source_mb"),
              summary=("dir_mbps", "null_mbps"))
HISTORY = View("history", "one row per database of an import or consolidation; a requirement's own row", "database",
               _cols(f"intervals start:t end:t {_HIST} capacity_gb instances peak_iops peak_mbps"),
               _cols("read_iops write_iops read_mbps write_mbps capacity_gb percentile headroom read_tb_per_day "
                     "write_tb_per_day instances gain gain_mbps peak_of_sum_iops peak_of_sum_mbps sum_of_peaks_iops "
                     "sum_of_peaks_mbps"),
               summary=("iops_p99", "mbps_p99", "peak_of_sum_iops", "gain", "read_iops", "write_iops"), peaks=True)
PLAN = View("plan", f"one row per plan run ({_actions('plan')}: see action)", run_keys=_cols(
    "cheapest:t total_usd purchase_usd monthly_usd price_usd capacity_gb read_iops write_iops binding:t "
    "designs_meeting config:t tpm_per_usd "
    "tps_per_usd iops_per_usd mbps_per_usd usd_per_gb usd_per_tpm usd_per_tps usd_per_iops reference:t "
    "using:t usd"),
    summary=("cheapest", "config", "total_usd", "price_usd", "iops_per_usd", "reference", "using", "usd"))
ADVISE = View("advise", "one row per advise run: the recommended option and the requirement", run_keys=_cols(
    "recommended:t total_usd read_iops write_iops capacity_gb"), summary=("recommended", "total_usd"))
SIMULATE = View("simulate", f"one row per simulate run ({_actions('simulate')}: see action)", run_keys=_cols(
    "design:t policy:t requests read_hit_ratio request_hit_ratio read_p50_us read_p99_us write_p50_us "
    "write_p99_us resync_gb resync_s unprotected_s trace_format:t objects footprint_gib best_policy:t "
    "best_miss_ratio_pct best_above_belady_pp"),
    summary=("read_hit_ratio", "read_p99_us", "best_policy", "best_miss_ratio_pct"))
# Every kind's view (dbtier.results.kinds `view`), in the order `dbtier runs sql --help` lists them.
VIEWS: dict[str, View] = {v.name: v for v in (PROBE, OLTP, DSS, BACKUP, HISTORY, PLAN, ADVISE, SIMULATE)}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _pivot(keys: tuple[tuple[str, str], ...], alias: str) -> str:
    return ", ".join(f"{'max(value)' if t == N else 'any_value(text)'} FILTER (WHERE key = {_lit(k)}) "
                     f"AS {_q(alias + k)}" for k, t in keys)


def view_sql(v: View) -> str:
    item_keys, run_keys = dict(v.item_keys), dict(v.run_keys)
    parts, joins = [], []
    if v.item:
        extra = "any_value(device) AS device, any_value(model) AS model, " if v.targets else ""
        parts.append(f"it AS (SELECT path, item, {extra}{_pivot(v.item_keys, 'i_')} FROM index_figures "
                     f"WHERE kind = {_lit(v.name)} AND item <> '' AND key IN ({', '.join(map(_lit, item_keys))}) "
                     "GROUP BY path, item)")
        joins.append("LEFT JOIN it ON it.path = r.path")
    if v.run_keys:
        parts.append(f"rl AS (SELECT path, {_pivot(v.run_keys, 'r_')} FROM index_figures "
                     f"WHERE kind = {_lit(v.name)} AND item = '' GROUP BY path)")
        joins.append("LEFT JOIN rl ON rl.path = r.path")
    cols = []
    for c in v.columns():
        if c in item_keys and c in run_keys:
            cols.append(f"coalesce(it.{_q('i_' + c)}, rl.{_q('r_' + c)}) AS {_q(c)}")
        elif c in item_keys:
            cols.append(f"it.{_q('i_' + c)} AS {_q(c)}")
        elif c in run_keys:
            cols.append(f"rl.{_q('r_' + c)} AS {_q(c)}")
        elif c == v.item:
            cols.append(f"it.item AS {_q(c)}")
        elif v.targets and c in ("device", "model"):
            cols.append(f"it.{c} AS {c}")
        else:
            cols.append(f"r.{_q(c)}")
    return (f"CREATE VIEW {_q(v.name)} AS WITH {', '.join(parts)} SELECT {', '.join(cols)} FROM runs r "
            f"{' '.join(joins)} WHERE r.kind = {_lit(v.name)}")


def _with_root(root: str, t: pa.Table, registry: bool = False) -> pa.Table:
    """The index of `root` with runs_dir and path; a registry's (root '/'): runs_dir NULL, run_id and lab
    the absolute paths."""
    n = t.num_rows
    sep = root if root.endswith("/") else root + "/"
    path = pc.binary_join_element_wise(pa.array([sep] * n, pa.string()), t["run_id"], "")
    if registry:
        lab = pc.binary_join_element_wise(pa.array([sep] * n, pa.string()), t["lab"], "")
        t = t.set_column(t.schema.get_field_index("run_id"), "run_id", path)
        t = t.set_column(t.schema.get_field_index("lab"), "lab", lab)
        roots = pa.nulls(n, pa.string())
    else:
        roots = pa.array([root] * n, pa.string())
    return t.append_column("runs_dir", roots).append_column("path", path)


def connect(indexes: list[tuple[str, pa.Table]], registry: pa.Table | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection holding the runs directories' indexes (and the run registry's runs, made
    elsewhere), the documented views, and nothing else it can reach: no files, no configuration changes."""
    con = duckdb.connect(":memory:")
    parts = [_with_root(r, x) for r, x in indexes] + ([_with_root("/", registry, True)] if registry is not None
                                                      else [])
    t = pa.concat_tables(parts) if parts else _with_root("", SCHEMA.empty_table())
    con.register("idx", t)
    con.execute("CREATE TABLE index_runs AS SELECT * EXCLUDE (figures) FROM idx")
    con.execute("CREATE TABLE index_figures AS SELECT path, kind, unnest(figures, recursive := true) FROM idx")
    con.unregister("idx")
    con.execute(f"CREATE VIEW runs AS SELECT {', '.join(RUN_COLUMNS)} FROM index_runs")
    fig = ", ".join(f"f.{c}" if c not in ("run_id", "kind", "action", "started_at", "host", "status") else f"r.{c}"
                    for c in FIGURE_COLUMNS)
    con.execute(f"CREATE VIEW figures AS SELECT {fig} FROM index_figures f JOIN runs r ON r.path = f.path")
    for v in VIEWS.values():
        con.execute(view_sql(v))
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def columns_of(name: str) -> list[str]:
    if name == "runs":
        return list(RUN_COLUMNS)
    if name == "figures":
        return list(FIGURE_COLUMNS)
    return VIEWS[name].columns()


def view_names() -> list[str]:
    return ["runs", "figures", *VIEWS]


def first_line(exc: Exception) -> str:
    lines = [x for x in str(exc).splitlines() if x.strip()]
    return " ".join(lines[:2]) if lines else type(exc).__name__


VIEWS_HINT = "the views: " + ", ".join(["runs", "figures", *VIEWS]) + "; their columns: dbtier runs sql --help"


def check_select(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse anything but one SELECT (a query, DESCRIBE, SHOW, SUMMARIZE), before it runs."""
    try:
        stmts = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise DbtierError(f"runs sql: not a query DuckDB can read: {first_line(exc)}", VIEWS_HINT) from None
    if len(stmts) != 1:
        raise DbtierError(f"runs sql: {len(stmts)} statements; one SELECT is run",
                          "pass a single SELECT statement (no ';'-separated list)")
    kind = stmts[0].type
    if kind != duckdb.StatementType.SELECT:
        name = str(kind).rsplit(".", 1)[-1]
        raise DbtierError(f"runs sql: a {name} statement; only reads are run (SELECT, WITH ... SELECT, DESCRIBE, "
                          "SHOW, SUMMARIZE)", "write a SELECT over the views, e.g. dbtier runs sql \"SELECT * FROM "
                          "runs\"")


def check_where(expr: str, option: str = "--where") -> str:
    """One SQL boolean expression (DuckDB's expression parser: no statement, no second clause)."""
    if not expr.strip():
        raise DbtierError(f"{option} '': an empty expression", f"e.g. {option} \"kind = 'probe' AND host = 'db1'\"")
    try:
        duckdb.SQLExpression(expr)
    except duckdb.Error as exc:
        raise DbtierError(f"{option} {expr!r}: not one SQL expression: {first_line(exc)}",
                          f"a boolean over the documented columns, e.g. {option} \"status = 'ok' AND "
                          "started_at > '2025-01-01'\"") from None
    return f"({expr})"


def run_query(con: duckdb.DuckDBPyConnection, sql: str, what: str, hint: str = VIEWS_HINT,
              params: list | None = None) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of a query; a DuckDB error (a column that does not exist, a bad cast) is one
    message naming `what`."""
    try:
        cur = con.execute(sql, params or [])
        cols = [d[0] for d in cur.description or []]
        return cols, cur.fetchall()
    except duckdb.Error as exc:
        raise DbtierError(f"{what}: {first_line(exc)}", hint) from None
