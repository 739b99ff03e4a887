-- 80% of readmix: an index range scan of 100 accounts (as in the PostgreSQL flash study)
\set aid random(1, 100000 * :scale - 100)
SELECT sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + 99;
