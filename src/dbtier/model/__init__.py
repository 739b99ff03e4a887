"""Pure models: what storage delivers and costs, and what a measured run says. No subprocess, no network;
files read are the shipped data (dbtier.catalog) and the user's catalog or price files.

plan/   on-prem storage and the planner: the device catalog, arrays and shared arrays, prices and grades,
        the service life (endurance, power-loss protection, cost over time), the requirement, the search
        and `plan size`, `plan equivalent`, `plan budget` and their document
cloud/  cloud volumes and instances as the providers sell them, clustered databases on shared volumes,
        and `plan size --cloud` (per volume type, per role of the database)

Here, the judgements of measured runs: guards.py (the cache guard: did the reads reach the storage),
placement.py (the placement matrix's steps), dss.py (TPC-H answers and totals, the backup's bottleneck),
fsync_honesty.py (does a device's flush wait for the data: a probe's commit timings judged), lab.py (the
lab's requirement, tiers and engines) over standing.py (where measured storage stands against the
catalog), lab_steps.py (the lab's steps as typed requests, each writing its own command line).

What each may import: dbtier.core; plan/ nothing else of dbtier but dbtier.results.result (the typed results
of its library calls, plan/calls.py and plan/catalog_calls.py); cloud/ plan/ (the requirement) and
dbtier.results.result (cloud_plan's); the modules here each other and plan/ (lab.py and standing.py: the
catalog). Never measure/, workloads/, history/, report/ or cli/ (the engines'
output parsers are in workloads/parsers/). mypy checks all of it strictly.
"""
