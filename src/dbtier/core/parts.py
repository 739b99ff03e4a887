"""A JSON document's parts as the readers take them: the dict under a key, or {} where that part is missing
or is no dict (a document from an older dbtier, or edited by hand, is shown with that part missing, not
refused). One definition, so that a reader's type is a dict wherever it goes on to call .get."""

from __future__ import annotations

from typing import Any


def dict_at(d: Any, *keys: str) -> dict[str, Any]:
    """d[k1][k2]... when every step is a dict; {} otherwise."""
    for k in keys:
        if not isinstance(d, dict):
            return {}
        d = d.get(k)
    return d if isinstance(d, dict) else {}
