"""A context manager that never leaves half an opening behind: `with x:` runs x.opening() and, if that
fails or is interrupted part-way, x.close() before the error goes on; leaving the block closes too. What a
managed server and an engine share (close() must be idempotent and safe on a half-open object)."""

from __future__ import annotations

from typing import Any


class ClosedOnFailure:
    def opening(self) -> None:
        """What `with` does on the way in (subclasses)."""

    def close(self) -> None:
        """Undo whatever opening() got done (subclasses); called on every way out."""

    def __enter__(self) -> Any:
        try:
            self.opening()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
