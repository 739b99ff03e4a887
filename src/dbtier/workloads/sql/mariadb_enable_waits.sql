-- dbtier: turn on what the bottleneck's wait sampling reads, on a MariaDB server started with
-- performance_schema=ON (that one is a startup option only: a managed server gets it in its my.cnf,
-- with performance-schema-instrument='wait/%=ON' and performance-schema-consumer-events-waits-current=ON
-- so the instruments are on from the first statement; these UPDATEs do the same at run time).
-- Every wait instrument (file and socket I/O, table I/O and locks, metadata locks, InnoDB's mutexes,
-- rwlocks and sxlocks) and `idle` (a connection waiting for its client), timed.
UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES'
 WHERE NAME LIKE 'wait/%' OR NAME = 'idle';
-- events_waits_current holds each thread's latest wait; it needs the global and per-thread switches.
UPDATE performance_schema.setup_consumers SET ENABLED = 'YES'
 WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'events_waits_current');
