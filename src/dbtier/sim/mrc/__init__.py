"""Miss-ratio curves of object traces (`simulate mrc`), with libCacheSim's semantics.

curves.py computes them (LRU's one pass, the replays of each policy, SHARDS sampling); kernels.py,
queues.py, lirs.py and tinylfu.py are the policies' numba kernels, policies.py names them; spill.py keeps
a trace on disk as dense codes for the replays to read a chunk at a time.

May import: dbtier.sim.policy, dbtier.sim.trace, dbtier.sim.names, dbtier.sim.jit, dbtier.core; not
dbtier.sim.cache.
"""
