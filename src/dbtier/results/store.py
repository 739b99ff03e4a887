"""Run directories: `runs/<UTC timestamp>-<command>[-<name>]/result.json` plus raw engine outputs.

Every run directory carries a marker (RUN_MARKER: the command and the run's name) from the moment it is
made, before its document: a directory with the marker is a run, even one whose result.json is missing or
broken; a directory with neither is somebody else's folder. Each one made is recorded in the run registry
(dbtier.core.runlog), so `dbtier runs` finds it wherever `--out` put it.

The document is rewritten atomically (temp file + rename) after every step, so
an interrupted run keeps everything it finished. A run directory is never
reused: `--out DIR` on a directory that holds anything is refused, and
`--force` replaces a dbtier run directory whole (never a mix of two runs' files).

`load_run` reads a document written elsewhere (another machine, another
version, a hand-edited file) and either returns it at the current schema, its
shape checked for what the commands read, or raises one DbtierError naming the
file and what is wrong with it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any, Iterable

import orjson

from dbtier.core import runlog
from dbtier.core.errors import DbtierError
from dbtier.core.owner import Owner, abandoned_note, alive
from dbtier.core.files import full_error, is_full, kind_of, regular_file, write_bytes_atomic
from dbtier.results.document import upgrade
from dbtier.results.shape import check_document

RESULT_FILE = "result.json"
# What makes a directory a run before (and whatever becomes of) its result.json: {"command", "name"}.
RUN_MARKER = ".dbtier-run"
NAME_MAX = 64
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
# Deeper than any document dbtier writes (about 8 levels) by far; deeper is not ours, and would make
# the renderers and orjson's writer (255 levels) fail later instead of here.
MAX_DEPTH = 64
# Keys the loader attaches (never read from disk: a document cannot point the loader elsewhere).
PRIVATE_PREFIX = "_"

_RUN_HINT = "pass a run directory written by dbtier (runs/<timestamp>-<command>)"


def is_run_dir(path: Path) -> bool:
    """True when `path` holds a dbtier result.json (a regular file whose object has a schema_version)."""
    file = path / RESULT_FILE
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):
            return False
        doc = orjson.loads(file.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    v = doc.get("schema_version") if isinstance(doc, dict) else None
    return isinstance(v, int) and not isinstance(v, bool)


def has_marker(path: str | os.PathLike[str]) -> bool:
    """True when `path` carries the marker of a run directory dbtier made."""
    return os.path.isfile(os.path.join(path, RUN_MARKER))


def marker_of(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What a run directory's marker says ({command, name}), None when it has none (or not one of ours)."""
    try:
        with open(os.path.join(path, RUN_MARKER), "rb") as f:
            doc = json.loads(f.read(4096))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    return {k: doc.get(k) if isinstance(doc.get(k), str) else None for k in ("command", "name")}


def check_name(name: str | None, option: str = "--name") -> str | None:
    """A run's name as given, or one DbtierError: letters, digits, '.', '-' and '_', at most NAME_MAX."""
    if name is None:
        return None
    if not name or len(name) > NAME_MAX or not _NAME.match(name) or name.strip(".") == "":
        shown = name if len(name) <= 80 else name[:77] + "..."
        why = ("empty" if not name else f"{len(name)} characters, over {NAME_MAX}" if len(name) > NAME_MAX
               else "only dots" if name.strip(".") == "" else "only letters, digits, '.', '-' and '_' may be used")
        raise DbtierError(f"{option} {shown!r}: {why} (it becomes part of the run directory's name)",
                          f"e.g. {option} aws-r6i.4xlarge")
    return name


def dir_name(stamp: str, command: str, name: str | None) -> str:
    """`<stamp>-<command>[-<name>]`; a name that starts with the command is not repeated after it
    (`plan-aws-r6i.4xlarge` -> `<stamp>-plan-aws-r6i.4xlarge`)."""
    if not name or name == command:
        return f"{stamp}-{command}"
    return f"{stamp}-{name}" if name.startswith(command + "-") else f"{stamp}-{command}-{name}"


def _within(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def check_out(out: str | os.PathLike[str] | None, force: bool = False) -> None:
    """Refuse an --out that would overwrite or mix a run (before any work is done)."""
    if out is None:
        return
    if str(out).strip() == "":
        raise DbtierError("--out '': an empty directory name", "name the run directory, e.g. --out runs/mine")
    path = Path(out)
    try:
        st = os.lstat(path)
    except OSError:     # absent (or under a file): creating it says what is wrong
        return
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError:
            raise DbtierError(f"--out {path}: a dangling symbolic link", "choose another with --out DIR") from None
        if stat.S_ISDIR(st.st_mode) and any(os.scandir(path)):
            raise DbtierError(f"--out {path}: a symbolic link to a directory that is not empty",
                              "choose a new directory with --out DIR")
    if not stat.S_ISDIR(st.st_mode):
        raise DbtierError(f"--out {path}: exists and is {kind_of(st.st_mode)}", "choose a new directory with --out DIR")
    try:
        empty = not any(os.scandir(path))
    except OSError as exc:
        raise DbtierError(f"--out {path}: {exc.strerror or exc}", "choose another with --out DIR") from None
    if empty:
        return
    ours = is_run_dir(path)
    if not force:
        what = "already a run directory" if ours else "not empty"
        raise DbtierError(f"--out {path}: {what}; a run is never written over another",
                          "choose a new directory with --out DIR" +
                          (", or add --force to replace that run whole" if ours else ""))
    if not ours:
        raise DbtierError(f"--out {path}: not empty and not a dbtier run directory (no result.json with a "
                          "schema_version); --force replaces only run directories",
                          "choose a new directory with --out DIR, or empty it yourself")


def _replace(path: Path, inputs: Iterable[str | os.PathLike[str]]) -> None:
    """--force: remove the run directory `path` whole, unless it holds something this command reads."""
    real = os.path.realpath(path)
    held = [str(i) for i in inputs if str(i) and _within(os.path.realpath(i), real)]
    if _within(os.path.realpath(os.getcwd()), real):
        held.append("the current directory")
    if held:
        raise DbtierError(f"--out {path} --force would remove {held[0]}, which this command reads",
                          "choose a new directory with --out DIR")
    try:
        shutil.rmtree(path)
    except OSError as exc:
        raise DbtierError(f"--out {path} --force: cannot remove the existing run: {exc.strerror or exc}",
                          "remove it yourself or choose another with --out DIR") from exc


# Kept free in every run directory until the run ends (released first when the filesystem fills).
RESERVE_FILE = ".dbtier-reserve"
RESERVE_BYTES = 64 * 1024
# What a document on a full filesystem keeps when even the whole document does not fit the reserve.
_ENVELOPE = ("schema_version", "command", "name", "result_kind", "dbtier_version", "started_at", "finished_at",
             "status", "machine", "params", "errors", "owner")


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, command: str, out: str | os.PathLike[str] | None = None,
               root: str | os.PathLike[str] | None = "runs", force: bool = False,
               inputs: Iterable[str | os.PathLike[str]] = (), name: str | None = None) -> "RunDir":
        check_name(name)
        if out is not None:
            path = Path(out)
            check_out(out, force)
            if force and path.is_dir() and any(path.iterdir()):
                _replace(path, inputs)
        else:
            root = Path(root if root is not None else "runs")
            if str(root).strip() == "":
                raise DbtierError("--runs-dir '': an empty directory name", "e.g. --runs-dir runs")
            stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
            base = dir_name(stamp, command, name)
            path = root / base
            n = 1
            while path.exists():
                n += 1
                path = root / f"{base}-{n}"
        try:
            path.mkdir(parents=True, exist_ok=True)
            (path / RUN_MARKER).touch()     # the run's mark, and the probe that the directory can be written
        except OSError as exc:
            if is_full(exc):
                raise full_error(path, None, "the run directory") from None
            raise DbtierError(f"cannot write the run directory {path}: {exc.strerror}",
                              "choose another with --out DIR") from exc
        rd = cls(path)
        rd.reserve()
        try:    # what the marker says, once the room for the final status is kept: it may not fit (then empty)
            write_bytes_atomic(path / RUN_MARKER, json.dumps({"command": command, "name": name}).encode() + b"\n")
        except OSError:
            pass
        runlog.record(path, command, name)
        return rd

    @property
    def result_path(self) -> Path:
        return self.path / RESULT_FILE

    def raw_path(self, name: str) -> Path:
        """Where an engine's raw output goes (kept beside the document)."""
        raw = self.path / "raw"
        raw.mkdir(exist_ok=True)
        return raw / name

    def write(self, doc: dict[str, Any]) -> None:
        try:
            write_json_atomic(self.result_path, doc)
        except OSError as exc:
            if not is_full(exc):
                raise
            need = len(dumps(doc))
            self.release_reserve()
            err = full_error(self.path, need, "the run's document")
            # the room the reserve kept takes the failure: the document on disk says why the run ended
            done = {**doc, "status": "failed", "finished_at": doc.get("finished_at"),
                    "errors": [*doc.get("errors", []), {"message": err.message, "hint": err.hint}]}
            for attempt in (done, {k: done[k] for k in _ENVELOPE if k in done}):
                try:
                    write_json_atomic(self.result_path, attempt)
                    break
                except OSError:
                    continue
            raise err from None

    def reserve(self) -> None:
        """Keep RESERVE_BYTES of the filesystem for the final status: a run that fills its filesystem can
        still say, on disk, that it failed and why."""
        try:
            with open(self.path / RESERVE_FILE, "wb") as f:
                f.write(b"\0" * RESERVE_BYTES)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            self.release_reserve()
            if is_full(exc):
                raise full_error(self.path, RESERVE_BYTES, "the run directory") from None
            raise

    def release_reserve(self) -> None:
        try:
            os.unlink(self.path / RESERVE_FILE)
        except OSError:
            pass

    def sweep_temp_files(self) -> None:
        """Remove the `.NAME.tmp` files an interrupted atomic write can leave (this run's only)."""
        for root, _dirs, files in os.walk(self.path):
            for f in files:
                if f.startswith(".") and f.endswith(".tmp"):
                    try:
                        os.unlink(os.path.join(root, f))
                    except OSError:
                        pass


def dumps(doc: Any) -> bytes:
    """The document as indented JSON (orjson: Python's own encoder falls back to pure Python when it
    indents, seconds for a history import of a thousand databases). NaN and infinities become null."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"


def write_json_atomic(path: Path, doc: Any) -> None:
    write_bytes_atomic(path, dumps(doc))


# -- reading documents from elsewhere ------------------------------------------------------------------

def _result_file(p: Path) -> Path:
    """The result.json a user named (a run directory or the file itself), checked before it is opened."""
    if str(p) == "":
        raise DbtierError("'': an empty run directory name", _RUN_HINT)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise DbtierError(f"{p}: no {RESULT_FILE} there", _RUN_HINT) from None
    except OSError as exc:
        raise DbtierError(f"{p}: {exc.strerror or exc}", _RUN_HINT) from None
    if stat.S_ISDIR(st.st_mode):
        file = p / RESULT_FILE
        if not os.path.lexists(file):
            raise DbtierError(f"{p}: no {RESULT_FILE} there", _RUN_HINT)
        return regular_file(file, "result document", _RUN_HINT)
    return regular_file(p, "result document", _RUN_HINT)


def _depth_over(doc: Any, limit: int) -> bool:
    stack = [(doc, 1)]
    while stack:
        x, d = stack.pop()
        if d > limit:
            return True
        if isinstance(x, dict):
            stack.extend((v, d + 1) for v in x.values() if isinstance(v, (dict, list)))
        elif isinstance(x, list):
            stack.extend((v, d + 1) for v in x if isinstance(v, (dict, list)))
    return False


def parse_document(data: bytes, file: str | os.PathLike[str]) -> dict[str, Any]:
    """Bytes of a result.json to its object, or a DbtierError naming `file` and what is wrong."""
    if data.startswith(b"\xef\xbb\xbf"):   # a BOM some editors add: still UTF-8
        data = data[3:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DbtierError(f"{file}: not UTF-8 text (byte {exc.start}, line {line})",
                          "a result.json is UTF-8 JSON written by dbtier; pass the run directory itself") from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        why = str(exc).split(":", 1)[0]
        if "depth" in why or "recursion" in why:
            raise DbtierError(f"{file}: nested too deeply (over 1024 levels), not a dbtier result",
                              _RUN_HINT) from None
        raise DbtierError(f"{file}: not valid JSON (line {exc.lineno}: {why})",
                          "the run was probably cut off while writing; re-run the command") from None
    if not isinstance(doc, dict):
        raise DbtierError(f"{file}: not a dbtier result (a JSON {type(doc).__name__}, not an object)", _RUN_HINT)
    if _depth_over(doc, MAX_DEPTH):
        raise DbtierError(f"{file}: nested deeper than {MAX_DEPTH} levels, not a dbtier result", _RUN_HINT)
    return doc


def load_run(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a run directory (or a result.json path) and bring it to the current schema.

    Checks, in order, each failing with one DbtierError naming the file: it is a regular file (a FIFO
    or a directory is refused before opening), UTF-8, JSON, an object not absurdly deep, a dbtier
    document of a schema_version this dbtier reads (upgraded step by step), and of the shape the
    commands read for its kind (results/shape.py)."""
    p = Path(path)
    file = _result_file(p)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise DbtierError(f"{file}: cannot read it: {exc.strerror or exc}", "check its permissions") from None
    doc = parse_document(data, file)
    doc = upgrade(doc, str(file))
    for k in [k for k in doc if isinstance(k, str) and k.startswith(PRIVATE_PREFIX)]:
        del doc[k]
    check_document(doc, str(file))
    _abandoned(doc, file)
    doc["_run_dir"] = str(file.parent)
    return doc


def _abandoned(doc: dict[str, Any], file: Path) -> None:
    """A run still `running` whose dbtier process is gone reads as `abandoned`, with when it was last written
    (the file is left as it is: `dbtier cleanup` rewrites it)."""
    if doc.get("status") != "running":
        return
    owner = Owner.from_dict(doc.get("owner"))
    if owner is None or alive(owner) is not False:
        return
    try:
        mtime = file.stat().st_mtime
    except OSError:
        return
    doc["status"] = "abandoned"
    doc["abandoned"] = abandoned_note(owner, mtime)
    doc["errors"] = [*doc.get("errors", []), {"message": doc["abandoned"]["message"]}]
