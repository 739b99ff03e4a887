"""Database engines benchmarked: `bench oltp`, `bench dss`, `bench backup` and the lab's runs.

engine.py is the interface an engine implements and the registry; one module per engine
(engine_postgres.py, engine_duckdb.py, engine_mariadb.py) over its managed server (postgres.py, mariadb.py,
what they share in throwaway.py) and its drivers (pgbench.py, sysbench.py, mariadb_tpcc.py; tpcc.py the
TPC-C-like data; duck_sql.py DuckDB statements Ctrl-C stops); the bench kinds for any engine, each a
library call from a request to a typed result (oltp.py `bench(OltpRequest)`, dss.py `run(DssRequest)`,
backup.py `run(BackupRequest)`); dsn.py a user's connection string; settings.py the engines' own options, declared
and typed without argparse (the CLI registers them and builds each engine's typed options from its
arguments). parsers/ reads what the drivers print (pure); sql/, pgbench/ and lua/ hold the engines' scripts.

They may import measure/, model/, results/ and core/, never report/, history/ or cli/.
"""
