"""The placement matrix: the classic placement study, one step at a time, defined once.

Each step places the roles (data, index, wal, temp) on FAST or SLOW, the two directories of
`bench oltp --placement-matrix FAST,SLOW`; a role not named goes where `data` goes. `bench` runs
the steps in this order, the report names the role each step moved to the fast tier, and the
cache guard judges the steps that move tables or indexes (their TPS differences need reads that
reach the devices). Every one of those derives from STEPS below.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    name: str
    placement: dict[str, str]     # role -> "FAST" or "SLOW"
    moves: str | None = None      # the role this step moved to the fast tier, as the report names it
    reads: bool = False           # it moves tables or indexes: its gain needs reads that reach the devices
    label: str = ""               # what the step is, in words (the report's tooltip)


STEPS = (
    Step("all-slow", {"data": "SLOW"}, label="everything on the slow directory"),
    Step("index-fast", {"data": "SLOW", "index": "FAST"}, moves="indexes", reads=True,
         label="indexes moved to fast"),
    Step("tables-fast", {"data": "FAST", "index": "FAST", "wal": "SLOW", "temp": "SLOW"}, moves="tables",
         reads=True, label="+ tables fast"),
    Step("wal-fast", {"data": "FAST", "index": "FAST", "temp": "SLOW"}, moves="WAL", label="+ WAL fast"),
    Step("temp-fast", {"data": "FAST", "index": "FAST", "temp": "FAST"}, moves="temp", label="+ temp fast"),
    Step("all-fast", {"data": "FAST"}, label="everything on the fast directory"),
)

# (name, placement) per step, in order (FAST, SLOW are the two directories).
MATRIX = tuple((s.name, s.placement) for s in STEPS)
# The step that moved a role to the fast tier, and that role.
MATRIX_MOVES = {s.name: s.moves for s in STEPS if s.moves}
# Matrix steps that move tables or indexes: their TPS differences need reads that reach the devices.
READ_STEPS = tuple(s.name for s in STEPS if s.reads)
# Each step in words.
STEP_LABELS = {s.name: s.label for s in STEPS}


def matrix_steps(fast: str, slow: str, matrix: tuple[tuple[str, dict[str, str]], ...] = MATRIX
                 ) -> list[tuple[str, dict[str, str]]]:
    """The matrix (an engine's own, PostgreSQL's by default) with FAST and SLOW replaced by the two directories."""
    return [(n, {r: fast if d == "FAST" else slow for r, d in pl.items()}) for n, pl in matrix]


# InnoDB's placement study (MariaDB): roles data (tables with their indexes), redo, undo, temp; a role not
# named goes where `data` goes. Indexes are not a role: InnoDB keeps them in the table's own file.
INNODB_STEPS = (
    Step("all-slow", {"data": "SLOW"}, label="everything on the slow directory"),
    Step("redo-fast", {"data": "SLOW", "redo": "FAST"}, moves="redo", label="redo log moved to fast"),
    Step("undo-fast", {"data": "SLOW", "redo": "FAST", "undo": "FAST"}, moves="undo", label="+ undo fast"),
    Step("tables-fast", {"data": "FAST", "redo": "FAST", "undo": "FAST", "temp": "SLOW"}, moves="tables",
         reads=True, label="+ tables (and their indexes) fast"),
    Step("temp-fast", {"data": "FAST", "redo": "FAST", "undo": "FAST", "temp": "FAST"}, moves="temp",
         label="+ temp fast"),
    Step("all-fast", {"data": "FAST"}, label="everything on the fast directory"),
)
INNODB_MATRIX = tuple((s.name, s.placement) for s in INNODB_STEPS)
INNODB_MATRIX_MOVES = {s.name: s.moves for s in INNODB_STEPS if s.moves}
INNODB_READ_STEPS = tuple(s.name for s in INNODB_STEPS if s.reads)
INNODB_STEP_LABELS = {s.name: s.label for s in INNODB_STEPS}

# Both matrices, by engine (the document's `engine`; PostgreSQL's for an older document without one).
ENGINE_STEPS = {"postgres": STEPS, "mariadb": INNODB_STEPS}
# Every step's move and read flag across both matrices, by step name: the names the two share
# (all-slow, tables-fast, temp-fast, all-fast) mean the same move in both, so a report can look a step up
# without knowing the engine.
ALL_MATRIX_MOVES = {**INNODB_MATRIX_MOVES, **MATRIX_MOVES}
ALL_READ_STEPS = tuple(dict.fromkeys(READ_STEPS + INNODB_READ_STEPS))


def engine_steps(engine: str | None) -> tuple[Step, ...]:
    """The engine's matrix steps (PostgreSQL's for an unknown or missing engine)."""
    return ENGINE_STEPS.get(str(engine), STEPS)


def step_of(name: str, engine: str | None = None) -> Step | None:
    """A matrix step by name: in the engine's matrix first, then in the other one (None: in neither)."""
    first = engine_steps(engine)
    for s in first + tuple(x for steps in ENGINE_STEPS.values() if steps is not first for x in steps):
        if s.name == name:
            return s
    return None


def step_label(name: str, engine: str | None = None) -> str:
    s = step_of(name, engine)
    return s.label if s else ""
