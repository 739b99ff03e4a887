"""Miss-ratio curves of object traces (`simulate mrc`), with libCacheSim's semantics.

curves.py computes them (LRU's one pass, the replays of each policy, SHARDS sampling); kernels.py,
queues.py, lirs.py and tinylfu.py are the policies' numba kernels, policies.py names them; spill.py keeps
a trace on disk as dense codes for the replays to read a chunk at a time; call.py is `simulate mrc` as a
library call (MrcRequest -> SimulateMrc, typed and immutable).

May import: dbtier.sim.policy, dbtier.sim.trace, dbtier.sim.names, dbtier.sim.jit, dbtier.core,
dbtier.results.result; not dbtier.sim.cache.
"""
