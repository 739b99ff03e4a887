"""Loading what the report, `show` and `compare` read: run directories, with a lab's step runs attached.

A lab's result.json names each step's run directory relative to the lab directory; each is
loaded here (its own result.json) and attached under the lab document's `_children`, so the
renderers stay pure. A step whose document cannot be read keeps the reason instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.results.store import load_run


def attach_children(doc: dict[str, Any]) -> dict[str, Any]:
    """For a lab document: load each step's run (`steps[].run_dir`, relative to the lab directory)."""
    if doc.get("command") != "lab" or "_children" in doc:
        return doc
    base = Path(doc.get("_run_dir") or ".")
    kids = []
    for s in doc.get("steps") or []:
        if not isinstance(s, dict):
            continue
        entry: dict[str, Any] = {"step": s.get("name"), "doc": None, "error": None}
        rd = s.get("run_dir")
        if isinstance(rd, str) and rd:
            path = Path(rd) if os.path.isabs(rd) else base / rd
            try:
                child = load_run(path)
                if child.get("command") == "lab":
                    raise DbtierError(f"{path}: a lab inside a lab", "")
                entry["doc"] = child
            except DbtierError as exc:
                entry["error"] = exc.message
        kids.append(entry)
    doc["_children"] = kids
    return doc


def load_runs(paths: Sequence[str | os.PathLike]) -> list[dict[str, Any]]:
    """Each run directory's document (brought to the current schema), labs with their step runs."""
    return [attach_children(load_run(p)) for p in paths]
