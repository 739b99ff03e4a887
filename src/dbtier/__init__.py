"""dbtier: where should this database live, and what will that cost?"""

import os as _os
import sys as _sys

__version__ = "0.1.0"

PRUNE_AFTER_S = 30 * 86400


class _NumbaCacheDir:
    """Numba checks a cached kernel against its own file only, while dbtier's kernels inline helpers from
    other modules (sim/cache/slots.py's table into sim/cache/kernels.py) and compile in the values of the
    globals they read: after a change to a helper alone, numba would load the old kernel (wrong answers, or
    writes past an array's end). So the kernels are cached per content of the modules that hold or lend
    them (`kernel_stamp`), under ~/.cache/dbtier/numba/STAMP/ (one NUMBA_CACHE_DIR set by the user is kept).

    Numba reads NUMBA_CACHE_DIR when it is imported, so this finder, first on sys.meta_path, sets it when
    numba is first looked for, from whichever module: `import dbtier` (the CLI's start, --version) reads
    no file, and the stamp is made once per process, only by one that compiles or loads kernels. It finds
    nothing itself: the import goes on as usual."""

    def __init__(self) -> None:
        self.done = False

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "numba" and not self.done:
            self.done = True        # before the work: the modules it imports (re, hashlib) come through here too
            if "NUMBA_CACHE_DIR" not in _os.environ:
                base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
                stamp = kernel_stamp(_os.path.dirname(_os.path.abspath(__file__)))
                _os.environ["NUMBA_CACHE_DIR"] = _os.path.join(base, "dbtier", "numba", stamp)
                prune_kernel_caches(_os.path.join(base, "dbtier", "numba"), stamp)
        return None


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


def kernel_modules(here: str) -> list[str]:
    """The modules the kernels' cache is kept per, as paths relative to the package directory `here`, found
    by reading the package (no list to keep by hand): every module that imports numba or dbtier.sim.jit
    (it holds kernels, or helpers that kernels inline), and every dbtier module one of those imports (a
    kernel compiles in the globals it reads, constants imported from elsewhere included)."""
    import re
    uses = re.compile(rb"^[ \t]*(?:import numba\b|from numba[ .]|from dbtier\.sim\.jit import|"
                      rb"from dbtier\.sim import[^\n]*\bjit\b)", re.M)
    imports = re.compile(rb"^[ \t]*(?:from (dbtier(?:\.\w+)*) import (\([^)]*\)|[^\n]*)|import (dbtier(?:\.\w+)*))",
                         re.M)

    def module(dotted: str) -> str | None:
        rel = _os.path.join(*dotted.split(".")[1:]) if "." in dotted else ""
        for cand in (rel + ".py", _os.path.join(rel, "__init__.py")):
            if cand != ".py" and _os.path.isfile(_os.path.join(here, cand)):
                return _os.path.normpath(cand)
        return None

    found: set[str] = set()
    for top, dirs, files in _os.walk(here):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in files:
            if not f.endswith(".py"):
                continue
            path = _os.path.join(top, f)
            try:
                with open(path, "rb") as fh:
                    text = fh.read()
            except OSError:
                continue
            if (b"numba" not in text and b"jit" not in text) or not uses.search(text):
                continue
            found.add(_os.path.relpath(path, here))
            for m in imports.finditer(text):
                if m.group(3):
                    targets = [m.group(3).decode()]
                else:
                    names = re.findall(r"\w+", re.sub(r"#[^\n]*|\bas\s+\w+", "", m.group(2).decode()))
                    base = m.group(1).decode()
                    targets = [f"{base}.{n}" if module(f"{base}.{n}") else base for n in names] or [base]
                found.update(t for t in map(module, targets) if t)
    return sorted(found)


def kernel_stamp(here: str) -> str:
    """A digest of the kernel modules' contents (`kernel_modules`) under the package directory `here`."""
    import hashlib
    digest = hashlib.sha1()
    for rel in kernel_modules(here):
        try:
            with open(_os.path.join(here, rel), "rb") as f:
                digest.update(rel.encode() + b"\0" + f.read())
        except OSError:
            digest.update(rel.encode() + b"\0missing")
    return digest.hexdigest()[:16]


if not any(type(f).__name__ == "_NumbaCacheDir" for f in _sys.meta_path):      # once, even if reloaded
    _sys.meta_path.insert(0, _NumbaCacheDir())
