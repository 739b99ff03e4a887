"""Cache policies' rules, one implementation each, shared by the block cache (sim/cache/) and the miss-ratio
curves (sim/mrc/): what a hit does, what a miss admits and what it evicts, as numba functions that both
one's kernels inline (`inline="always"`).

lists.py: the linked lists every policy keeps over prev/next arrays, and an object's bytes; lru.py (LRU and
FIFO), s3fifo.py, sieve.py and twoq.py: each policy's rules, as libCacheSim runs them. An object is held[x]
bytes, or `unit` each when unit > 0 (the block cache's blocks); a dirty object (the block cache's
write-back) that leaves the cache counts as destaged.

May import: dbtier.sim.jit only.
"""
