/*
  dbtier collector: SQL Server I/O per database file, for `dbtier history import --source sqlserver`.

  One snapshot of sys.dm_io_virtual_file_stats (cumulative since the instance started) per run,
  as CSV with a header. Run it every few minutes and append; dbtier takes the differences.
  Needs VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on SQL Server 2022). Works on
  SQL Server 2012 and later, and Azure SQL Managed Instance.

  Every 5 minutes, appending (Linux/macOS shell, sqlcmd from mssql-tools):

    while :; do
      sqlcmd -S myserver -E -b -W -s "," -i sqlserver_file_stats.sql >> file_stats-myserver.csv
      sleep 300
    done

  On Windows PowerShell (SqlServer module):

    while ($true) {
      Invoke-Sqlcmd -ServerInstance myserver -InputFile sqlserver_file_stats.sql |
        Export-Csv -Append -NoTypeInformation file_stats-myserver.csv
      Start-Sleep 300
    }

  sqlcmd repeats the header (and a dashed line under it) at every run: dbtier skips both.
  Columns: sample_time (with its UTC offset), server_name, sqlserver_start_time (a restart
  shows as a new value), database_name, database_id, file_id, type_desc (ROWS, LOG, ...),
  sample_ms, then the DMV's counters as it names them.
*/
SET NOCOUNT ON;

SELECT
    CONVERT(varchar(33), SYSDATETIMEOFFSET(), 127)           AS sample_time,
    @@SERVERNAME                                               AS server_name,
    CONVERT(varchar(23), si.sqlserver_start_time, 126)        AS sqlserver_start_time,
    DB_NAME(vfs.database_id)                                   AS database_name,
    vfs.database_id,
    vfs.file_id,
    mf.type_desc,
    vfs.sample_ms,
    vfs.num_of_reads,
    vfs.num_of_bytes_read,
    vfs.io_stall_read_ms,
    vfs.num_of_writes,
    vfs.num_of_bytes_written,
    vfs.io_stall_write_ms,
    vfs.io_stall,
    vfs.size_on_disk_bytes
FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS vfs
JOIN sys.master_files AS mf
  ON mf.database_id = vfs.database_id AND mf.file_id = vfs.file_id
CROSS JOIN sys.dm_os_sys_info AS si
ORDER BY vfs.database_id, vfs.file_id;
