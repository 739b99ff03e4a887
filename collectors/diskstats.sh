#!/bin/sh
# dbtier collector: /proc/diskstats snapshots for `dbtier history import --source diskstats`.
#
# Run it on the database host, as any user (no root, nothing to install):
#
#   sh diskstats.sh [INTERVAL_SECONDS [COUNT]] > diskstats-$(hostname).txt
#
# INTERVAL_SECONDS defaults to 60; COUNT to 0 (forever, stop with Ctrl-C: the file stays
# usable). For a week of 5-minute snapshots in the background:
#
#   nohup sh diskstats.sh 300 2016 > diskstats-$(hostname).txt 2>/dev/null &
#
# Output: for each snapshot one marker line, then /proc/diskstats exactly as the kernel prints it:
#
#   # dbtier-diskstats time=1732233600.123456789 btime=1732100000 host=db01
#      8       0 sda 3911 1532 331058 1403 2911 3121 96256 6127 0 6700 7530 0 0 0 0 1038 0
#      ...
#
# time is the sample time in seconds since 1970-01-01 UTC; btime is the kernel's boot time
# (from /proc/stat), so dbtier knows a reboot (counters back to zero) from a counter that wraps.
# Sectors in /proc/diskstats are always 512 bytes.

interval=${1:-60}
count=${2:-0}
btime=$(awk '/^btime/ {print $2}' /proc/stat)
host=$(uname -n)
n=0
while :; do
    now=$(date +%s.%N 2>/dev/null)
    case $now in *N*|'') now=$(date +%s) ;; esac   # busybox date has no %N
    echo "# dbtier-diskstats time=$now btime=$btime host=$host"
    cat /proc/diskstats
    n=$((n + 1))
    if [ "$count" -gt 0 ] && [ "$n" -ge "$count" ]; then
        break
    fi
    sleep "$interval"
done
