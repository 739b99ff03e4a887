"""sysstat's JSON (`iostat -x -o JSON`): its reports, one at a time, for iostat.py to turn into intervals.

sysstat writes `{"sysstat": {"hosts": [{"nodename": ..., "date": ..., "statistics": [REPORT, ...]}]}}`,
each REPORT `{"timestamp": ... (with -t), "avg-cpu": {...}, "disk": [{"disk_device": "vda", "r/s": ...}]}`.
The reports are decoded one by one, never the whole file at once, so a long run costs one report's memory.
A run stopped by a signal other than Ctrl-C (`kill`, `timeout`) leaves the JSON unclosed, often mid-report:
the complete reports are read and the end is said. `sadf -j` (sar's JSON, also under "sysstat") is told
apart and refused with its next step; any other JSON is refused as not sysstat's.

Imports: dbtier.core and csvio (only).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from dbtier.core.errors import DbtierError
from dbtier.history.sources import csvio

SNIFF = '"sysstat"'         # sysstat's JSON starts with this key
_DEC = json.JSONDecoder()
_WS = " \t\r\n"
_SAVE = "save iostat -x -o JSON's output whole"


class _End(Exception):
    """The text ended before the JSON closed."""


@dataclass
class Report:
    line: int                   # where the report starts
    index: int                  # 1-based, in its host's statistics
    data: dict[str, Any]


@dataclass
class Host:
    fields: dict[str, Any]      # nodename, date, ... (the scalars before "statistics")
    line: int
    reports: list[Report] = field(default_factory=list)


@dataclass
class Walk:
    """What walk() found after the last report: where the JSON stopped short, if it did."""
    truncated: str | None = None


class _Cursor:
    def __init__(self, path: str, text: str):
        self.path, self.text, self.i = path, text, 0
        self._at, self._lines = 0, 0           # newlines before _at: counted once, forward

    def line(self, i: int | None = None) -> int:
        i = self.i if i is None else i
        if i < self._at:
            return self.text.count("\n", 0, i) + 1
        self._lines += self.text.count("\n", self._at, i)
        self._at = i
        return self._lines + 1

    def ws(self) -> str:
        n = len(self.text)
        while self.i < n and self.text[self.i] in _WS:
            self.i += 1
        if self.i >= n:
            raise _End()
        return self.text[self.i]

    def expect(self, chars: str, what: str) -> str:
        c = self.ws()
        if c not in chars:
            raise DbtierError(f"{self.path}: line {self.line()}: {what}, not {c!r}: not sysstat's JSON as iostat "
                              "writes it", _SAVE)
        self.i += 1
        return c

    def value(self) -> Any:
        self.ws()
        start = self.i
        try:
            v, self.i = _DEC.raw_decode(self.text, start)
        except json.JSONDecodeError as exc:
            rest = self.text[exc.pos:].rstrip()
            if exc.pos >= len(self.text.rstrip()) or ("\n" not in rest and len(rest) < 200):
                raise _End() from None      # the text stops inside this value: cut short, not corrupt
            raise DbtierError(f"{self.path}: line {exc.lineno}: not valid JSON ({exc.msg})", _SAVE) from None
        except RecursionError:
            raise DbtierError(f"{self.path}: line {self.line(start)}: JSON nested too deep: not sysstat's output",
                              _SAVE) from None
        return v

    def key(self) -> str:
        k = self.value()
        if not isinstance(k, str):
            raise DbtierError(f"{self.path}: line {self.line()}: a key that is not a string: not valid JSON", _SAVE)
        self.expect(":", "expected ':'")
        return k

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor, each left for the caller to read its value."""
        self.expect("{", "expected an object")
        if self.ws() == "}":
            self.i += 1
            return
        while True:
            yield self.key()
            if self.expect(",}", "expected ',' or '}'") == "}":
                return

    def items(self) -> Iterator[None]:
        """The elements of the array at the cursor, each left for the caller to read."""
        self.expect("[", "expected an array")
        if self.ws() == "]":
            self.i += 1
            return
        while True:
            yield None
            if self.expect(",]", "expected ',' or ']'") == "]":
                return


def read_text(path: str) -> str:
    size = os.path.getsize(path)
    if size > csvio.JSON_MAX_BYTES:
        raise DbtierError(f"{path}: {size / 2**20:,.0f} MiB of JSON", "run iostat over shorter spans, one file each")
    return Path(path).read_text(encoding="utf-8-sig", errors="replace")


def walk(path: str, text: str, out: Walk) -> Iterator[Host | Report]:
    """Each host (before its reports) and each report, in the file's order; `out.truncated` says where
    the JSON stopped short, when it did. Refusals name the file and line."""
    cur = _Cursor(path, text)
    in_reports = False
    last: tuple[int, int] | None = None         # (index, line) of the last complete report
    try:
        if cur.ws() != "{":
            raise DbtierError(f"{path}: JSON that begins with {cur.text[cur.i]!r}, not sysstat's "
                              "(`iostat -o JSON` writes {\"sysstat\": ...})", "pass iostat -x -o JSON's output")
        first = True
        for k in cur.members():
            if first and k != "sysstat":
                raise DbtierError(f"{path}: JSON, but not sysstat's: its first key is {k!r}, not \"sysstat\"",
                                  "pass iostat -x -o JSON's output (or give --source for this file's source)")
            first = False
            if k != "sysstat":
                cur.value()
                continue
            for k2 in cur.members():
                if k2 != "hosts":
                    cur.value()
                    continue
                for _ in cur.items():
                    fields: dict[str, Any] = {}
                    host_line = cur.line()
                    for hk in cur.members():
                        if hk != "statistics":
                            v = cur.value()
                            if isinstance(v, (str, int, float)):
                                fields[hk] = v
                            continue
                        yield Host(fields, host_line)
                        in_reports = True
                        n = 0
                        for _ in cur.items():
                            line = cur.line(cur.i)
                            rep = cur.value()
                            n += 1
                            if not isinstance(rep, dict):
                                raise DbtierError(f"{path}: line {line}: report {n} is not a JSON object",
                                                  _SAVE)
                            yield Report(line, n, rep)
                            last = (n, line)
                        in_reports = False
    except _End:
        if not in_reports:
            raise DbtierError(f"{path}: the JSON ends at line {cur.line(len(text))} before its first report "
                              "(cut short?)", _SAVE) from None
        if last is None:
            out.truncated = "the file ends inside its first report"
        else:
            out.truncated = (f"the JSON is not closed after report {last[0]} (line {last[1]}): iostat was stopped "
                             "by a signal; the complete reports are read")
    return
