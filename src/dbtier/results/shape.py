"""A light structural check of a loaded result document: the keys each kind's readers use, with the
types they expect (not the full JSON Schema: that is for what dbtier writes, and slow on a history
import of a thousand databases).

A shape is a type (or tuple of types), `Opt(shape)` (shape or null), `[shape]` (a list of them), or a
dict of key -> shape (the keys optional, a key "*" for every other value). A document that does not
match gives one DbtierError naming the file, the key path, what it holds and what was expected.
"""

from __future__ import annotations

from typing import Any

from dbtier.core.errors import DbtierError


class Opt:
    def __init__(self, shape: Any):
        self.shape = shape


class Num:
    """An int or a float, never a bool (True is an int to Python, not a measurement)."""


HINT = "pass a run directory written by dbtier (this result.json was edited or written by something else)"

COMMON: dict[str, Any] = {
    "command": str, "status": Opt(str), "started_at": Opt(str), "finished_at": Opt(str),
    "dbtier_version": Opt(str), "params": dict, "errors": [dict],
    "machine": Opt({"hostname": Opt(str), "targets": [dict]}),
}

_SUMMARY = Opt({"fsync_honesty": Opt(str), "fsync_honesty_reason": Opt(str), "*": Opt(Num)})

BY_COMMAND: dict[str, dict[str, Any]] = {
    "probe": {"targets": [{"path": Opt(str), "summary": _SUMMARY, "points": [dict], "status": Opt(str),
                           "fill": Opt(dict), "steady_state": Opt(dict), "fsync_honesty": Opt(dict)}]},
    "bench": {"bench": Opt(str), "engine": Opt(str), "scale": Opt(Num), "points": [dict], "knee": Opt(dict),
              "steps": [dict], "runs": [[dict]], "queries": [dict], "targets": [dict], "placement": Opt(dict),
              "load": Opt(dict), "source": Opt(dict), "devices": Opt([str]),
              # the verdict groups runs by these (hash keys: a list there is refused here, not there)
              "params": {"engine": Opt(str), "scale": Opt(Num), "data": Opt(str), "temp": Opt(str)}},
    "lab": {"steps": [{"name": Opt(str), "run_dir": Opt(str), "status": Opt(str)}], "requirement": Opt(dict),
            "standing": Opt([dict]), "report": Opt(dict)},
    "history": {"params": {"action": Opt(str)}, "kind": Opt(str), "source": Opt(str),
                "databases": Opt([{"name": str, "peaks": Opt({"*": Opt(dict)}), "capacity_gb": Opt(Num)}]),
                "peaks": Opt({"*": Opt(dict)}), "requirement": Opt(dict), "series_files": Opt([str]),
                "drivers": Opt([dict]), "capacity_gb": Opt(Num)},
    "plan": {"plan": Opt(str), "requirement": Opt(dict), "catalog": Opt(dict)},
    "simulate": {"params": {"action": Opt(str)}, "trace": Opt(dict), "simulation": Opt(dict),
                 "latency_us": Opt(dict), "capture": Opt(dict), "resync": Opt(dict)},
}

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
    """Raise one DbtierError when `doc` lacks a command or has a key of the wrong type for its readers."""
    if "command" not in doc:
        raise DbtierError(f"{file}: not a dbtier result (no `command`)", HINT)
    _check(doc, COMMON, "", file)
    extra = BY_COMMAND.get(doc["command"])
    if extra:
        _check(doc, extra, "", file)
