"""The block cache: a trace's blocks replayed through one cache of a policy and a write mode.

replay.py runs it (whole trace or chunk by chunk, sweeps of sizes); kernels.py and queues.py are the
policies as numba kernels, slots.py the rows of the blocks a cache holds, workingset.py the distinct
blocks a trace touches.

May import: dbtier.sim.policy (the rules it shares with the miss-ratio curves), dbtier.sim.trace,
dbtier.sim.names, dbtier.sim.jit, dbtier.core; not dbtier.sim.mrc.
"""
