"""dbtier: where should this database live, and what will that cost?"""

import hashlib as _hashlib
import os as _os

__version__ = "0.1.0"

# The modules holding numba kernels (`cache=True`), and the helpers those inline.
_KERNEL_MODULES = ("history/dense.py", "sim/cache/kernels.py", "sim/cache/queues.py", "sim/cache/replay.py",
                   "sim/cache/slots.py", "sim/cache/workingset.py", "sim/device/latency.py", "sim/device/quantiles.py",
                   "sim/device/tally.py", "sim/jit.py", "sim/mrc/kernels.py", "sim/mrc/lirs.py", "sim/mrc/queues.py",
                   "sim/mrc/tinylfu.py", "sim/policy/lists.py", "sim/policy/lru.py", "sim/policy/s3fifo.py",
                   "sim/policy/sieve.py", "sim/policy/twoq.py", "sim/routing.py", "sim/trace/blocks.py",
                   "sim/trace/csvscan.py")


def _numba_cache_dir() -> None:
    """Numba checks a cached kernel against its own file only, while dbtier's kernels inline helpers from
    other modules (sim/cache/slots.py's table into sim/cache/kernels.py): after a change to a helper alone, numba
    would load the old kernel (wrong answers, or writes past an array's end). So the kernels are cached per
    content of every module that holds or lends them, under ~/.cache/dbtier/numba/ (NUMBA_CACHE_DIR, set
    before numba is imported; one set by the user is kept)."""
    if "NUMBA_CACHE_DIR" in _os.environ:
        return
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    stamp = kernel_stamp(_os.path.dirname(_os.path.abspath(__file__)))
    _os.environ["NUMBA_CACHE_DIR"] = _os.path.join(base, "dbtier", "numba", stamp)
    prune_kernel_caches(_os.path.join(base, "dbtier", "numba"), stamp)


PRUNE_AFTER_S = 30 * 86400


def prune_kernel_caches(root: str, keep: str, now: float | None = None) -> None:
    """Remove the kernel caches of other versions that gained no kernel for PRUNE_AFTER_S (a few MB each; one
    still in use is compiled again)."""
    import shutil
    import time
    now = time.time() if now is None else now
    try:
        names = _os.listdir(root)
    except OSError:
        return
    for name in names:
        path = _os.path.join(root, name)
        try:
            if name != keep and now - _os.stat(path).st_mtime > PRUNE_AFTER_S:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def kernel_stamp(here: str) -> str:
    """A digest of the kernel modules' contents under the package directory `here`."""
    digest = _hashlib.sha1()
    for rel in _KERNEL_MODULES:
        try:
            with open(_os.path.join(here, rel), "rb") as f:
                digest.update(rel.encode() + b"\0" + f.read())
        except OSError:
            digest.update(rel.encode() + b"\0missing")
    return digest.hexdigest()[:16]


_numba_cache_dir()
