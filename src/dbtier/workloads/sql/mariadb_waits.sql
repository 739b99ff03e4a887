-- dbtier: what each client session of the benchmark's database is doing now (one sample; the
-- sampler runs it every half second on its own connection). One row per wait event of the session in
-- events_waits_current: MariaDB keeps the latest event per nesting level, so a table access
-- (wait/io/table/sql/handler) comes with the lock or file read nested in it; `in_progress` says
-- whether the event is still running (END_EVENT_ID IS NULL) or has ended and the thread moved on.
-- InnoDB's redo log writes and fsyncs, and its row lock waits, have no instrument in MariaDB 10.11:
-- PROCESSLIST_STATE = 'Commit' and INNODB_TRX.trx_state = 'LOCK WAIT' tell those apart
-- (parsers/innodb.py classify_session). Sessions without a wait row come out with NULL event columns.
-- DATABASE() is the benchmark's database: connect the sampler to it.
SELECT t.PROCESSLIST_ID AS conn_id, t.PROCESSLIST_COMMAND AS command, t.PROCESSLIST_STATE AS state,
       x.trx_state AS trx_state,
       w.EVENT_ID AS event_id, w.END_EVENT_ID IS NULL AS in_progress, w.EVENT_NAME AS event_name,
       w.OPERATION AS operation, w.NESTING_EVENT_ID AS nesting_event_id
FROM performance_schema.threads t
LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID
LEFT JOIN information_schema.INNODB_TRX x ON x.trx_mysql_thread_id = t.PROCESSLIST_ID
WHERE t.TYPE = 'FOREGROUND' AND t.PROCESSLIST_ID IS NOT NULL AND t.PROCESSLIST_ID <> CONNECTION_ID()
  AND t.PROCESSLIST_DB = DATABASE()
ORDER BY t.PROCESSLIST_ID, w.EVENT_ID;
