"""A light structural check of a loaded result document: the keys of dbtier.results.types (the types the
JSON Schema is generated from), with the types readers expect; not the full JSON Schema (that is for what
dbtier writes, and slow on a history import of a thousand databases).

A shape is a type (or tuple of types), `Opt(shape)` (shape or null), `[shape]` (a list of them), or a
dict of key -> shape (the keys optional, a key "*" for every other value). A document that does not
match gives one DbtierError naming the file, the key path, what it holds and what was expected.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints
from typing import is_typeddict

from dbtier.core.errors import DbtierError
from dbtier.results import kinds, types
from dbtier.results.types_base import Envelope


class Opt:
    def __init__(self, shape: Any):
        self.shape = shape


class Num:
    """An int or a float, never a bool (True is an int to Python, not a measurement)."""


HINT = "pass a run directory written by dbtier (this result.json was edited or written by something else)"


def _field(tp: Any) -> Any:
    """A key's shape: null accepted (readers take it for absent) unless the key is Required[...] and its
    type admits no None."""
    strict = get_origin(tp) is Required
    tp = get_args(tp)[0] if get_origin(tp) in (Required, NotRequired) else tp
    shape = _of(tp)
    if shape is None:
        return None
    return shape if strict and not _nullable(tp) else Opt(shape)


def _nullable(tp: Any) -> bool:
    if get_origin(tp) is Annotated:
        return _nullable(get_args(tp)[0])
    if get_origin(tp) is Literal:
        return None in get_args(tp)
    return tp is type(None) or (get_origin(tp) in (Union, UnionType) and any(_nullable(m) for m in get_args(tp)))


def _of(tp: Any) -> Any:
    """The shape of a result type (dbtier.results.types); None: anything goes there."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _of(get_args(tp)[0])
    if tp is Any:
        return None
    if tp in (int, float):
        return Num
    if tp in (str, bool, dict, list):
        return tp
    if origin is Literal:
        kinds = tuple(dict.fromkeys(Num if type(v) in (int, float) else type(v)
                                    for v in get_args(tp) if v is not None))
        return kinds[0] if len(kinds) == 1 else kinds
    if origin in (Union, UnionType):
        members = [_of(m) for m in get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return members[0]
        if all(isinstance(m, type) for m in members):
            return tuple(members)
        return None
    if origin is list:
        item = _of(get_args(tp)[0])
        return list if item is None else [item]
    if origin is dict:
        value = _of(get_args(tp)[1])
        return dict if value is None else {"*": Opt(value)}
    if is_typeddict(tp):
        hints = get_type_hints(tp, include_extras=True)
        shape = {k: f for k, f in ((k, _field(v)) for k, v in hints.items()) if f is not None}
        extra = types.EXTRA.get(tp, False)
        if extra is not False and _of(extra) is not None:
            shape["*"] = Opt(_of(extra))
        return shape
    raise TypeError(f"no shape for {tp!r}")


COMMON: dict[str, Any] = _of(Envelope)
# The commands whose sections other commands read (report, show's verdict, compare, plan value and
# --from-history, simulate --device, bench dss --probe); the others' documents are shown as they are.
READ_BACK = {"probe", "bench", "lab", "history", "plan", "simulate"}
# (when, shape) for those sections, from the same table as the JSON Schema's if/then
SECTIONS: list[tuple[dict[str, str], dict[str, Any]]] = [(when, _of(cls)) for when, cls in types.SECTIONS
                                                         if when["command"] in READ_BACK]

_NAMES = {str: "a string", dict: "an object", list: "a list", Num: "a number", bool: "true or false",
          int: "an integer", float: "a number"}


def _what(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    for t, name in ((str, "a string"), (dict, "an object"), (list, "a list"), (int, "a number"),
                    (float, "a number")):
        if isinstance(v, t):
            return name
    return type(v).__name__


def _expected(shape: Any) -> str:
    if isinstance(shape, Opt):
        return f"{_expected(shape.shape)} or null"
    if isinstance(shape, tuple):
        return " or ".join(_expected(s) for s in shape)
    if isinstance(shape, list):
        return "a list"
    if isinstance(shape, dict):
        return "an object"
    return _NAMES.get(shape, getattr(shape, "__name__", str(shape)))


def _fits(v: Any, t: Any) -> bool:
    if t is Num:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t in (int, float):
        return isinstance(v, t) and not isinstance(v, bool)
    return isinstance(v, t)


def _check(v: Any, shape: Any, where: str, file: str) -> None:
    said = shape            # what the message says was expected ("... or null" included)
    if isinstance(shape, Opt):
        if v is None:
            return
        shape = shape.shape
    if isinstance(shape, tuple):
        if not any(_fits(v, t) for t in shape):
            _fail(file, where, v, said)
        return
    if isinstance(shape, list):
        if not isinstance(v, list):
            _fail(file, where, v, said)
        for i, x in enumerate(v):
            _check(x, shape[0], f"{where}[{i}]", file)
        return
    if isinstance(shape, dict):
        if not isinstance(v, dict):
            _fail(file, where, v, said)
        rest = shape.get("*")
        for k, x in v.items():
            sub = shape.get(k, rest) if k != "*" else rest
            if sub is not None:
                _check(x, sub, f"{where}.{k}" if where else str(k), file)
        return
    if not _fits(v, shape):
        _fail(file, where, v, said)


def _fail(file: str, where: str, v: Any, shape: Any) -> None:
    raise DbtierError(f"{file}: `{where}` is {_what(v)}, expected {_expected(shape)}", HINT)


def check_document(doc: dict[str, Any], file: str) -> None:
    """Raise one DbtierError when `doc` lacks a command, has a key of the wrong type for its readers, or says
    it is a kind of another command than its own."""
    if "command" not in doc:
        raise DbtierError(f"{file}: not a dbtier result (no `command`)", HINT)
    _check(doc, COMMON, "", file)
    said = doc.get(kinds.KEY)
    if isinstance(said, str) and said.partition(".")[0] != doc["command"]:
        raise DbtierError(f"{file}: `{kinds.KEY}` is {said[:60]!r}, which is not a kind of its command "
                          f"{str(doc['command'])[:40]!r}", HINT)
    for when, shape in SECTIONS:
        if all(_value(doc, key) == value for key, value in when.items()):
            _check(doc, shape, "", file)


def _value(doc: dict[str, Any], key: str) -> Any:
    if key.startswith("params."):
        params = doc.get("params")
        return params.get(key[7:]) if isinstance(params, dict) else None
    return doc.get(key)
