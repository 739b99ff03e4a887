#!/bin/sh
# dbtier collector: node_exporter scrapes for `dbtier history import` (no Prometheus needed).
#
# Run it anywhere that reaches the exporter, as any user (curl is all it needs):
#
#   sh node_exporter.sh [URL [INTERVAL_SECONDS [COUNT]]] >> scrapes-$(hostname).prom
#
# URL defaults to http://localhost:9100/metrics, INTERVAL_SECONDS to 60, COUNT to 0 (forever; stop
# with Ctrl-C: the file stays usable). A week of minute scrapes in the background:
#
#   nohup sh node_exporter.sh http://db01:9100/metrics 60 10080 >> scrapes-db01.prom 2>/dev/null &
#
# The same as one line, with nothing to copy:
#
#   while :; do echo "# TIME $(date +%s)"; curl -s localhost:9100/metrics; sleep 60; done >> scrapes.prom
#
# Output: for each scrape a `# TIME` line (seconds since 1970-01-01 UTC), then the page node_exporter
# answered, unchanged:
#
#   # TIME 1795879396.927534379
#   # HELP node_disk_reads_completed_total The total number of reads completed successfully.
#   # TYPE node_disk_reads_completed_total counter
#   node_disk_reads_completed_total{device="vda"} 2.8105408e+07
#   ...
#
# dbtier differences the node_disk_* counters between scrapes (whole disks only, never a partition
# or a dm-/md device with its disks); a rate needs two scrapes. A scrape is 60-300 KB: a week of
# minute scrapes is 0.6-3 GB of plain text (dbtier reads plain text only), a tenth of that once
# trimmed with grep -E '^# TIME|node_disk_|node_boot_time' (the scrape times and the disk counters).

url=${1:-http://localhost:9100/metrics}
interval=${2:-60}
count=${3:-0}
n=0
while :; do
    now=$(date +%s.%N 2>/dev/null)
    case $now in *N*|'') now=$(date +%s) ;; esac   # busybox date has no %N
    echo "# TIME $now"
    curl -s "$url"
    n=$((n + 1))
    if [ "$count" -gt 0 ] && [ "$n" -ge "$count" ]; then
        break
    fi
    sleep "$interval"
done
