"""A command's result as a library call returns it: typed, immutable, its kind named.

`Result` is what a command's library call gives back (`dbtier.model.plan.calls.size_plan`,
`dbtier.sim.request.run`, `dbtier.history.fleet.import_files`): its kind (dbtier.results.kinds) and the
section it adds to the run document's envelope, read-only (`Frozen`: a mapping that cannot be changed, its
lists tuples), with the typed objects the section was made from beside it in each kind's subclass (a plan's
`Sizing`, an import's series parts). `to_json()` is the section as the command writes it, a new plain dict
each time: the CLI puts it in the run's document, stores it and renders it, and a library user gets the
same figures without a run directory.

The section's keys are the ones its kind's types declare (dbtier.results.types, the `result` face of the
kind in dbtier.results.kinds); `Result` checks the kind's name, and the tests check each call's section
against the JSON Schema made from those types.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from dataclasses import dataclass
from typing import Any

from dbtier.results import kinds


# what a document holds that is already immutable: returned as it is, without the checks below (a runs
# listing freezes and thaws about 250,000 of them; bench/runs_scale.py)
_PLAIN = frozenset({str, int, float, bool, type(None)})


class Frozen(Mapping[str, Any]):
    """A read-only mapping: no item can be set or removed, and what it holds is frozen too (`freeze`)."""

    __slots__ = ("_items",)
    _items: dict[str, Any]

    def __init__(self, items: Mapping[str, Any]):
        object.__setattr__(self, "_items", {str(k): v if type(v) in _PLAIN else freeze(v) for k, v in items.items()})

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> ItemsView[str, Any]:
        return self._items.items()          # a view: it reads, it cannot change anything

    def values(self) -> ValuesView[Any]:
        return self._items.values()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Frozen mapping cannot be changed")

    def __repr__(self) -> str:
        return f"Frozen({self._items!r})"


def freeze(value: Any) -> Any:
    """`value` with every dict made a Frozen mapping and every list or tuple a tuple, all the way down."""
    if type(value) in _PLAIN or isinstance(value, Frozen):
        return value
    if isinstance(value, Mapping):
        return Frozen(value)
    if isinstance(value, (list, tuple)):
        return tuple(v if type(v) in _PLAIN else freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The JSON form of a frozen value: mappings as new dicts, tuples as lists."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Mapping):
        return {k: v if type(v) in _PLAIN else thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _PLAIN else thaw(v) for v in value]
    return value


@dataclass(frozen=True, kw_only=True)
class Result:
    """A command's result: its kind and the section it adds to the document's envelope (read-only), and the
    warnings it has for the person who ran it."""
    kind: str
    section: Frozen
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        kinds.check(self.kind)
        if not isinstance(self.section, Frozen):
            object.__setattr__(self, "section", Frozen(self.section))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    def __getitem__(self, key: str) -> Any:
        return self.section[key]

    def to_json(self) -> dict[str, Any]:
        """The section as the command writes it into its document: a new plain dict each time."""
        out: dict[str, Any] = thaw(self.section)
        return out
