"""The one error type users see, and `expect` for what only a fault in dbtier leaves unset.

Every user-fixable failure is a DbtierError: one sentence naming the culprit
(file, line, value, device) and, in `hint`, the next step. The CLI prints it
without a traceback and exits with `exit_code`.
"""

from __future__ import annotations

from typing import TypeVar


class DbtierError(Exception):
    def __init__(self, message: str, hint: str | None = None, exit_code: int = 2):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  next: {self.hint}"


class Interrupted(DbtierError):
    """Ctrl-C or SIGTERM: finished steps are kept, the rest is cleaned up."""

    def __init__(self, what: str = "interrupted"):
        super().__init__(what, "finished steps are kept in the run directory", exit_code=130)


T = TypeVar("T")


def expect(value: T | None, fault: str) -> T:
    """`value`, which the caller's order of calls has set by now (an engine's server once open() ran, the
    row an aggregate always returns); a RuntimeError naming `fault` when it has not: a fault in dbtier,
    never the user's, so not a DbtierError."""
    if value is None:
        raise RuntimeError(fault)
    return value
