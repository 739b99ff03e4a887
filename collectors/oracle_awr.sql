-- dbtier collector: Oracle AWR I/O history, for `dbtier history import --source awr`.
--
-- Writes two CSV files from the AWR repository (no load on the database beyond two queries):
--
--   awr_sysstat_<DB>.csv          one row per instance and snapshot: the interval times, the
--                                 startup time, SNAP_TIMEZONE, and the statistics
--                                 physical read/write total IO requests, physical read/write total
--                                 bytes, redo size (from dba_hist_sysstat)
--   awr_iostat_filetype_<DB>.csv  one row per instance, snapshot and file type (Data File, Log File,
--                                 Temp File, Control File, Archive Log, ...) from
--                                 dba_hist_iostat_filetype: small/large read/write requests,
--                                 megabytes and service times
--
-- Needs SQL*Plus 12.2 or later (SET MARKUP CSV), SELECT on the DBA_HIST views, and the Oracle
-- Diagnostics Pack licence (AWR). On 11g, remove SNAP_TIMEZONE and give `--tz` to dbtier.
-- Run it as a DBA, giving the number of days to export (AWR keeps 8 by default):
--
--   sqlplus -s / as sysdba @oracle_awr.sql 30
--
-- then: dbtier history import --source awr awr_sysstat_<DB>.csv awr_iostat_filetype_<DB>.csv
-- (import the sysstat file alone for the totals; the file types add latency and the split.)

SET MARKUP CSV ON QUOTE ON
SET ECHO OFF FEEDBACK OFF HEADING ON PAGESIZE 50000 TERMOUT OFF VERIFY OFF TRIMSPOOL ON
DEFINE days = &1
ALTER SESSION SET NLS_TIMESTAMP_FORMAT = 'YYYY-MM-DD HH24:MI:SS.FF3';
ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD HH24:MI:SS';
COLUMN db_name NEW_VALUE db_name NOPRINT
SELECT name AS db_name FROM v$database;

SPOOL awr_sysstat_&db_name..csv
SELECT '&db_name' AS db_name, sn.snap_id, sn.dbid, sn.instance_number,
       TO_CHAR(sn.startup_time, 'YYYY-MM-DD HH24:MI:SS.FF3') AS startup_time,
       TO_CHAR(sn.begin_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') AS begin_interval_time,
       TO_CHAR(sn.end_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') AS end_interval_time,
       sn.snap_timezone,
       st."physical read total IO requests", st."physical write total IO requests",
       st."physical read total bytes", st."physical write total bytes", st."redo size"
FROM dba_hist_snapshot sn
JOIN (SELECT * FROM (SELECT snap_id, dbid, instance_number, stat_name, value FROM dba_hist_sysstat
                     WHERE stat_name IN ('physical read total IO requests', 'physical write total IO requests',
                                         'physical read total bytes', 'physical write total bytes', 'redo size'))
      PIVOT (MAX(value) FOR stat_name IN ('physical read total IO requests' AS "physical read total IO requests",
                                          'physical write total IO requests' AS "physical write total IO requests",
                                          'physical read total bytes' AS "physical read total bytes",
                                          'physical write total bytes' AS "physical write total bytes",
                                          'redo size' AS "redo size"))) st
  ON st.snap_id = sn.snap_id AND st.dbid = sn.dbid AND st.instance_number = sn.instance_number
WHERE sn.dbid = (SELECT dbid FROM v$database)
  AND sn.end_interval_time > SYSTIMESTAMP - &days
ORDER BY sn.instance_number, sn.snap_id;
SPOOL OFF

SPOOL awr_iostat_filetype_&db_name..csv
SELECT '&db_name' AS db_name, f.snap_id, f.dbid, f.instance_number,
       TO_CHAR(sn.startup_time, 'YYYY-MM-DD HH24:MI:SS.FF3') AS startup_time,
       TO_CHAR(sn.begin_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') AS begin_interval_time,
       TO_CHAR(sn.end_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') AS end_interval_time,
       sn.snap_timezone,
       f.filetype_id, f.filetype_name,
       f.small_read_megabytes, f.small_write_megabytes, f.large_read_megabytes, f.large_write_megabytes,
       f.small_read_reqs, f.small_write_reqs, f.small_sync_read_reqs, f.large_read_reqs, f.large_write_reqs,
       f.small_read_servicetime, f.small_write_servicetime, f.small_sync_read_latency,
       f.large_read_servicetime, f.large_write_servicetime, f.retries_on_error
FROM dba_hist_iostat_filetype f
JOIN dba_hist_snapshot sn
  ON sn.snap_id = f.snap_id AND sn.dbid = f.dbid AND sn.instance_number = f.instance_number
WHERE f.dbid = (SELECT dbid FROM v$database)
  AND sn.end_interval_time > SYSTIMESTAMP - &days
ORDER BY f.instance_number, f.snap_id, f.filetype_id;
SPOOL OFF
EXIT
