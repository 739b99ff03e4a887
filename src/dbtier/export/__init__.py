"""`dbtier export`: runs out to a monitoring stack.

- `families.py`: the metric families (names, labels, help) and the builder that keeps every sample's
  labels in the family's order;
- `metrics.py` (pure): a result document's headline figures as gauges, no timestamps;
- `series.py`: a run's time series (probe points, OLTP per-second samples, history intervals, simulate
  timelines) as gauges with timestamps, each series' samples together and in time order;
- `exposition.py`: the text (prometheus_client's own writers), the textfile written atomically, the push;
- `calls.py`: `export metrics` and `export series` as library calls returning typed results (the runs read
  with dbtier.report.inputs, a lab's steps attached).
"""
