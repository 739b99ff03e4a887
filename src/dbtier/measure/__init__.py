"""The side effects of measuring: the one process executor every subprocess goes through (executor.py),
fio (fio.py), the probe (probe.py) and the fleet probe (fleet.py; scaling.py its pure steps and verdict),
machine metadata (machine.py), CPU and device sampling (sampler.py), where placed parts went (placed.py),
blktrace capture (capture.py), memory cgroups (cgroup.py), the emulated slow tier (slowtier.py), and
removing what a dead dbtier left (watchdog.py, reap.py).

They may import core/, results/, model/ (fsync_honesty.py) and sim/trace (the capture's pure parts),
never workloads/, history/, report/ or cli/.
"""
