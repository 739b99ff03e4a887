"""What the OLTP drivers and engines print, read into a point's figures. Pure: nothing is run, every rule
is tested on saved output (tests/data/) and hand-made numbers.

oltp.py      pgbench's report and per-transaction log, latency percentiles, the knee, PostgreSQL's wait
             classes, the evidence and the bottleneck named from it
sysbench.py  sysbench 1.0's command line and report, a point's figures
innodb.py    MariaDB's status counters as per-second figures, its wait events and sessions as classes, the
             bottleneck (over oltp.py's evidence)

They may import dbtier.core and dbtier.model (the cache guard), never the rest of workloads/: the drivers
beside this package (pgbench.py, sysbench.py, engine_*.py) run the programs and import these.
"""
