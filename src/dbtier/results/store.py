"""Run directories: `runs/<UTC timestamp>-<command>/result.json` plus raw engine outputs.

The document is rewritten atomically (temp file + rename) after every step, so
an interrupted run keeps everything it finished.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import orjson

from dbtier.core.errors import DbtierError
from dbtier.results.document import upgrade

RESULT_FILE = "result.json"


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, command: str, out: str | os.PathLike | None = None,
               root: str | os.PathLike = "runs") -> "RunDir":
        if out is not None:
            path = Path(out)
        else:
            stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
            path = Path(root) / f"{stamp}-{command}"
            n = 1
            while path.exists():
                n += 1
                path = Path(root) / f"{stamp}-{command}-{n}"
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise DbtierError(f"cannot write the run directory {path}: {exc.strerror}",
                              "choose another with --out DIR") from exc
        return cls(path)

    @property
    def result_path(self) -> Path:
        return self.path / RESULT_FILE

    def raw_path(self, name: str) -> Path:
        """Where an engine's raw output goes (kept beside the document)."""
        raw = self.path / "raw"
        raw.mkdir(exist_ok=True)
        return raw / name

    def write(self, doc: dict[str, Any]) -> None:
        write_json_atomic(self.result_path, doc)


def dumps(doc: Any) -> bytes:
    """The document as indented JSON (orjson: Python's own encoder falls back to pure Python when it
    indents, seconds for a history import of a thousand databases). NaN and infinities become null."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"


def write_json_atomic(path: Path, doc: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(dumps(doc))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_run(path: str | os.PathLike) -> dict[str, Any]:
    """Read a run directory (or a result.json path) and bring it to the current schema."""
    p = Path(path)
    file = p / RESULT_FILE if p.is_dir() else p
    if not file.exists():
        raise DbtierError(f"{p}: no {RESULT_FILE} there",
                          "pass a run directory written by dbtier (runs/<timestamp>-<command>)")
    try:
        doc = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        raise DbtierError(f"{file}: not valid JSON (line {exc.lineno}: {exc.msg})",
                          "the run was probably cut off while writing; re-run the command") from exc
    if not isinstance(doc, dict):
        raise DbtierError(f"{file}: not a dbtier result", "pass a run directory written by dbtier")
    doc = upgrade(doc, str(file))
    doc.setdefault("_run_dir", str(file.parent))
    return doc
