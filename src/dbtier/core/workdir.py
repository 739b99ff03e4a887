"""Working directories dbtier makes for itself (a history command's database, a miss-ratio curve's spilled
trace): under DBTIER_TMPDIR, else TMPDIR, free space checked first, removed on the way out."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from dbtier.core.debris import temp_dir
from dbtier.core.errors import DbtierError

# free space kept beyond what the work needs
WORK_MARGIN_BYTES = 512 * 1024 * 1024
_HINT = "free space there, or set DBTIER_TMPDIR to a directory with more"


def work_dir_parent() -> Path:
    """DBTIER_TMPDIR, else TMPDIR (tempfile's choice)."""
    return Path(os.environ.get("DBTIER_TMPDIR") or tempfile.gettempdir())


@contextlib.contextmanager
def workdir(need_bytes: int = 0, what: str = "the history work", prefix: str = "dbtier-history-") -> Iterator[Path]:
    """A working directory of its own under work_dir_parent(), free space checked first (`need_bytes`, about
    the inputs' size, plus a margin), removed on the way out whatever happens."""
    parent = work_dir_parent()
    try:
        parent.mkdir(parents=True, exist_ok=True)
        st = os.statvfs(parent)
    except OSError as exc:
        raise DbtierError(f"{parent}: cannot keep {what} there ({exc.strerror or exc})",
                          "set DBTIER_TMPDIR to a writable directory with free space") from None
    free = st.f_bavail * st.f_frsize
    if free < need_bytes + WORK_MARGIN_BYTES:
        raise DbtierError(f"{parent}: {free / 1e9:.1f} GB free, and {what} needs about "
                          f"{(need_bytes + WORK_MARGIN_BYTES) / 1e9:.1f} GB there (about the inputs' size)", _HINT)
    work, claim = temp_dir(prefix, what, parent)     # the watchdog removes it if dbtier is killed
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not work.exists():
            claim.release()


def room(work: Path, need_bytes: int, what: str) -> None:
    """Refuse to write `need_bytes` more into `work` when that would eat into the margin."""
    free = shutil.disk_usage(work).free
    if free < need_bytes + WORK_MARGIN_BYTES:
        raise DbtierError(f"{work.parent}: {free / 1e9:.2f} GB free, too little for {what} (a "
                          f"{WORK_MARGIN_BYTES / 2**30:.1f} GiB margin is kept)", _HINT)
