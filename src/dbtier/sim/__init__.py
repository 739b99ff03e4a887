"""Trace-driven simulation of tier designs (pure: no subprocess, no network).

traces   block I/O trace readers -> numpy arrays (time_s, op, offset_bytes, length_bytes)
cache    cache policies as numba kernels over dense block ids (LRU, FIFO, S3-FIFO, SIEVE, 2Q)
mirror   preferred-read mirror: failure, write-intent bitmap, resync arithmetic
latency  service times from device figures and the queueing model
simulate ties a trace and a design together into the result of the JSON contract
"""
