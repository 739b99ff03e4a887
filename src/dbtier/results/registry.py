"""The registry of kinds, resolved: the object each face of a kind names (dbtier.results.kinds declares the
faces as "module:name" paths), for the parts of dbtier that look a kind's face up instead of telling kinds
apart: report.figures (figures, terminal), report.html (section), export (metrics, series), runsdb (view).

A path is imported when first asked and looked up each time (a module once imported costs a dict lookup), so
results/ imports nothing above it and a test can replace a face by setting the module's attribute.
"""

from __future__ import annotations

import importlib
from typing import Any

from dbtier.results import kinds

FACES = ("figures", "terminal", "section", "metrics", "series", "view")


def resolve(path: str) -> Any:
    """The object a "module:name" path names."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def face(name: str, which: str) -> Any:
    """The `which` face of the kind `name` (kinds.faces: an unknown one's command's, else the generic ones);
    None when the kind has none."""
    if which not in FACES:
        raise ValueError(f"{which!r} is not a face of a kind (one of {', '.join(FACES)})")
    path = getattr(kinds.faces(name), which)
    return resolve(path) if path is not None else None


def face_of(doc: dict[str, Any], which: str) -> Any:
    """The `which` face of the document's kind (kinds.kind_of)."""
    return face(kinds.kind_of(doc), which)
