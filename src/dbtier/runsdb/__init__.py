"""The catalogue of runs: every run directory under one or more runs directories, indexed and queryable.

extract.py turns one result.json into an index row (the run, its key figures as its kind's figures face
defines them, dbtier.results.kinds); index.py keeps those rows in a cached Parquet file per runs directory, refreshed by each
result.json's mtime and size; views.py opens them in DuckDB as documented read-only views; trend.py and
check.py are pure functions over the rows (a figure over time; a run against a baseline with compare's
noise rule); calls.py `runs list`, `sql`, `trend` and `check` as library calls returning typed results (a
trend's page and a check's summaries drawn by dbtier.report).
"""
