"""JSON Schema (draft 2020-12) from the result types in dbtier.results.types.

Pure Python over `typing`: str, int, float, bool, None, Any, Literal, unions, list[T], dict[str, T],
TypedDict (a `$defs` entry each) and Annotated (extra keywords, or a Def name). The committed
result.schema.json is `generate()` written by `python -m dbtier.results.schema`; a test keeps them equal.
"""

from __future__ import annotations

import json
import re
import types as _pytypes
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from dbtier.results import types as T
from dbtier.results.types_base import Def, Envelope, S

_PRIMITIVE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _name(cls: type) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


class _Gen:
    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def of(self, tp: Any) -> dict[str, Any]:
        origin = get_origin(tp)
        if origin is Annotated:
            base, *meta = get_args(tp)
            out = dict(self.of(base))
            named = None
            for m in meta:
                if isinstance(m, Def):
                    named = m.name
                elif isinstance(m, S):
                    out.update(m.keywords)
            if named is None:
                return out
            self.defs.setdefault(named, out)
            return {"$ref": f"#/$defs/{named}"}
        if tp is Any:
            return {}
        if tp in _PRIMITIVE:
            return {"type": _PRIMITIVE[tp]}
        if origin is Literal:
            values = list(get_args(tp))
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if origin in (Union, _pytypes.UnionType):
            return self._union(get_args(tp))
        if origin is list:
            (item,) = get_args(tp)
            return {"type": "array", "items": self.of(item)} if item is not Any else {"type": "array"}
        if origin is dict:
            _, value = get_args(tp)
            return {"type": "object"} if value is Any else {"type": "object", "additionalProperties": self.of(value)}
        if is_typeddict(tp):
            name = _name(tp)
            if name not in self.defs:
                self.defs[name] = {}         # a placeholder: a type that refers to itself stops here
                self.defs[name] = self.object(tp)
            return {"$ref": f"#/$defs/{name}"}
        raise TypeError(f"no JSON Schema for {tp!r}")

    def _union(self, members: tuple[Any, ...]) -> dict[str, Any]:
        rest = [m for m in members if m is not type(None)]
        nullable = len(rest) < len(members)
        if all(m in _PRIMITIVE for m in rest):
            names = [_PRIMITIVE[m] for m in rest] + (["null"] if nullable else [])
            return {"type": names[0] if len(names) == 1 else names}
        if not nullable or len(rest) != 1:
            return {"anyOf": [self.of(m) for m in members]}
        one = self.of(rest[0])
        if "enum" in one:
            return {**one, "enum": one["enum"] + [None]}
        if isinstance(one.get("type"), str) and "$ref" not in one:
            return {**one, "type": [one["type"], "null"]}
        return {"oneOf": [{"type": "null"}, one]}

    def object(self, cls: type[Any]) -> dict[str, Any]:
        hints = get_type_hints(cls, include_extras=True)
        out: dict[str, Any] = {"type": "object"}
        if cls.__doc__ and cls.__doc__ != getattr(cls.__mro__[1], "__doc__", None):
            out["description"] = " ".join(cls.__doc__.split())
        required = [k for k in hints if k in cls.__required_keys__ and k not in cls.__optional_keys__]
        if required:
            out["required"] = required
        out["properties"] = {k: self.of(_strip(v)) for k, v in hints.items()}
        if cls in T.EXTRA:
            extra = T.EXTRA[cls]
            out["additionalProperties"] = False if extra is False else self.of(extra)
        return out


def _strip(tp: Any) -> Any:
    """NotRequired[X] / Required[X] -> X (the key's optionality is the TypedDict's)."""
    if getattr(get_origin(tp), "_name", None) in ("NotRequired", "Required"):
        return get_args(tp)[0]
    return tp


def _when(cond: dict[str, str]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    for key, value in cond.items():
        if key.startswith("params."):
            props["params"] = {"properties": {key[7:]: {"const": value}}, "required": [key[7:]]}
            required.append("params")
        else:
            props[key] = {"const": value}
            required.append(key)
    return {"properties": props, "required": required}


def generate() -> dict[str, Any]:
    g = _Gen()
    envelope = g.object(Envelope)
    sections = [{"if": _when(cond), "then": g.of(cls)} for cond, cls in T.SECTIONS]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://dbtier.dev/schema/result-v1.json",
        "title": "dbtier result document, schema_version 1",
        **envelope,
        "allOf": sections,
        "$defs": dict(sorted(g.defs.items())),
    }


def text() -> str:
    return json.dumps(generate(), indent=2) + "\n"
