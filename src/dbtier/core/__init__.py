"""What every package may import: pure helpers (units.py, stats.py, numbers.py, errors.py: the one error
users see, files.py: input files checked, parts.py: a document's parts) and the machine-wide bookkeeping
(debris.py, owner.py, runlog.py, workdir.py, closing.py, priority.py, malloc.py). It imports no other
dbtier package.
"""
