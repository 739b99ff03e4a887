"""Traces: block I/O traces read into numpy arrays, whole or in chunks, and cut into the blocks the caches
hold; object traces (libCacheSim's formats); a trace's columnar copy; the pure rules of a blktrace capture.

traces.py is the readers' front (`read_trace`, `read_chunks`, `Trace`, the limits); reader.py, chunked.py,
formats.py, columns.py, files.py and limits.py are its parts; fastread.py (pyarrow) and csvscan.py (numba)
the fast paths of the CSV-like formats, batch.py what those two share. chunks.py is the unit a streamed
replay consumes, blocks.py cuts requests into block keys.

May import: dbtier.sim.names and dbtier.sim.jit, dbtier.core; no other package of dbtier.sim, except
columnar.volume_source, which builds dbtier.sim.volumes' Source (imported at the call).
"""
