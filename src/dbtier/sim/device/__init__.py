"""Devices: the models of a simulation's devices and what they make of the I/Os sent to them.

devices.py resolves a device ID (a catalog id, a probe run directory, a cloud volume) to a model;
cloudvolume.py models a cloud volume's rate limits; latency.py is the queueing model; tally.py keeps a
replay's latencies in bounded memory; quantiles.py gives np.quantile's answer without its selection.

May import: dbtier.sim.names, dbtier.core, dbtier.model, dbtier.results; no other package of dbtier.sim.
"""
