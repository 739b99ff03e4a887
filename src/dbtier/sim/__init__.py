"""Trace-driven simulation of tier designs (pure: no subprocess, no network).

Its packages, each importing only those listed before it (and dbtier.core, dbtier.model, dbtier.results;
trace/columnar.py alone reaches up, to volumes.py's Source, imported at the call):
trace/   block and object trace readers -> numpy arrays and chunks, the blocks a request covers, blktrace capture
policy/  cache policies' rules (LRU, FIFO, S3-FIFO, SIEVE, 2Q), shared by the block cache and the curves
cache/   the block cache: its policies as numba kernels over the blocks a cache holds, replayed over a trace
mrc/     miss-ratio curves of object traces, libCacheSim's policies
device/  device models from the catalog, probe runs or cloud volumes; the queueing model; latency tallies

Here, beside them: request.py (what `simulate run` asks, its library call `run` -> SimulateRun, and whether
its trace is streamed, read whole or replayed volume by volume; the CLI's entry), simulate.py (one simulation:
a trace through a design into the result of the JSON contract), volumes.py (each volume of a trace on its
own), routing.py (the read-cache design's device I/Os), mirror.py (the preferred-read mirror's failure and
resync), mirror_plan.py (that model over a whole trace, and the mirror's device I/Os), sweep.py (what a
replay's figures advise), convert.py (`simulate convert` as a library call: a trace's Parquet copy); and what
every package may import: names.py (names and help texts, without numpy: the CLI loads it at start-up) and
jit.py (how the kernels are compiled).
"""
