"""One reader per source of I/O history, each turning that source's exported files into one of
history/tables.py's tables (pure parsing into DuckDB; `dbtier.history.read` picks the reader by --source):

awr.py (Oracle AWR CSV), dma.py (Google DMA collections: hour-of-day statistics), sqlserver.py
(sys.dm_io_virtual_file_stats), postgres.py (pg_stat_* views) over psql.py (psql's printed output: its
formats and times), diskstats.py (/proc/diskstats snapshots),
iostat.py (`iostat -x` text or JSON, and `sar -d`) over iostat_json.py (sysstat's `-o JSON`,
report by report), prometheus.py (node_exporter's counters or rates) over promfiles.py
(query_range answers, `promtool tsdb dump`, VictoriaMetrics exports) and promtext.py (node_exporter's
text scrapes, `/federate` answers), cloudwatch.py (RDS, Aurora,
EBS and EC2 disk metrics) over cloudwatch_shapes.py (the answers' saved shapes),
azure.py (Azure Monitor metrics).

What they share: csvio.py (CSV into DuckDB, errors naming file, line and column), times.py (the sources'
times to UTC, --tz), detect.py (which source a file looks like, for "this is not AWR" messages). And
promfetch.py: `history fetch --prometheus`, the live fetch into files these readers read.

They may import each other, dbtier.core and history's tables.py, limits.py and series.py; nothing else of
history/ (summary.py and fleet.py import them), never model/, report/ or cli/.
"""
