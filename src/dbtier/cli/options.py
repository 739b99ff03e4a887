"""argparse types for every option that takes a number, size, duration, time zone or DSN.

Each factory returns a callable for `add_argument(type=...)`. It parses with the strict parsers of
dbtier.core.units (ASCII digits only; no NaN, inf, '1_000' or Unicode digits), checks the range,
and raises argparse.ArgumentTypeError naming the value and the reason, so argparse prints
`argument --duration: 'nan' is not a finite number` and exits 2 before anything starts. The upper
bounds are generous but finite: far beyond any real figure, and far enough from float overflow and
int64 that no later product (headroom, counts, prices, bytes) can overflow.
"""

from __future__ import annotations

import argparse
import functools
import re
from typing import Any, Callable, NoReturn

from dbtier.core import units
from dbtier.core.units import INT64_MAX, UnitError

# The largest rate, capacity or price a plan or history option takes (IOPS, MB/s, GB, US$):
# 10^12 is beyond every storage system and leaves ~10^296 of room before a product overflows.
MAX_FIGURE = 1e12
MAX_HEADROOM = 10.0           # 1000 % on top (the range `history requirement` documents)
WEEK_S = 7 * 86400.0


def _fmt(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def named(name: str, fn: Callable[[str], Any]) -> Callable[[str], Any]:
    fn.__name__ = name           # argparse shows it in some messages
    return fn


def check_range(v: float, text: str, lo: float | None = None, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False, noun: str = "a positive number",
                between: bool = False) -> None:
    """Raise ArgumentTypeError unless lo <= v <= hi (strict where open), in the project's wording
    (`must be a positive number, got 0`; the parser puts the option in front). NaN fails every test."""
    got = f", got {text.strip()}"
    low_ok = lo is None or (v > lo if lo_open else v >= lo)
    high_ok = hi is None or (v < hi if hi_open else v <= hi)
    if low_ok and high_ok:
        return
    if between and lo is not None and hi is not None:
        if not lo_open and not hi_open:
            raise argparse.ArgumentTypeError(f"must be between {_fmt(lo)} and {_fmt(hi)}{got}")
        raise argparse.ArgumentTypeError(f"must be {'above' if lo_open else 'at least'} {_fmt(lo)} and "
                                         f"{'below' if hi_open else 'at most'} {_fmt(hi)}{got}")
    if not low_ok:
        assert lo is not None           # only a lower bound refuses from below
        if lo == 0 and lo_open:
            raise argparse.ArgumentTypeError(f"must be {noun}{got}")
        if lo == 0:
            raise argparse.ArgumentTypeError(f"must be 0 or more{got}")
        raise argparse.ArgumentTypeError(f"must be {'above' if lo_open else 'at least'} {_fmt(lo)}{got}")
    assert hi is not None               # v met the lower bound: the upper one refused it
    raise argparse.ArgumentTypeError(f"must be {'below' if hi_open else 'at most'} {_fmt(hi)}{got}")


def _parse(parser: Callable[[str], Any], text: str, lo: float | None = None, lo_open: bool = False,
           noun: str = "positive") -> Any:
    """`parser(text)`; a refusal as ArgumentTypeError. A negative size or duration ('-1', which the
    unit parsers refuse outright) is reported as out of range, like any number below `lo`."""
    try:
        return parser(text)
    except UnitError as exc:
        if lo is not None and text.strip().startswith("-"):
            try:
                v = -parser(text.strip()[1:])
            except UnitError:
                pass
            else:
                check_range(v, text, lo, None, lo_open, noun=noun)
        raise argparse.ArgumentTypeError(str(exc)) from None


def number(lo: float | None = None, hi: float | None = MAX_FIGURE, *, lo_open: bool = False,
           hi_open: bool = False, between: bool = False, name: str = "number") -> Callable[[str], float]:
    """A finite float in the range (`between`: say both bounds when it is out of range)."""
    def conv(text: str) -> float:
        v = _parse(units.parse_float, text)
        check_range(v, text, lo, hi, lo_open, hi_open, between=between)
        return v
    return named(name, conv)


def whole(lo: int | None = None, hi: int | None = INT64_MAX, name: str = "whole number") -> Callable[[str], int]:
    """A whole number (ASCII digits, 64 bits) in the range."""
    def conv(text: str) -> int:
        v = _parse(units.parse_int, text)
        check_range(v, text, lo, hi)
        return v
    return named(name, conv)


def positive_float(hi: float = MAX_FIGURE) -> Callable[[str], float]:
    return number(0, hi, lo_open=True, name="positive number")


def nonneg_float(hi: float = MAX_FIGURE) -> Callable[[str], float]:
    return number(0, hi, name="number")


def fraction() -> Callable[[str], float]:
    """0..1 inclusive."""
    return number(0, 1, between=True, name="fraction")


def positive_int(hi: int = INT64_MAX) -> Callable[[str], int]:
    return whole(1, hi, name="positive whole number")


def port() -> Callable[[str], int]:
    def conv(text: str) -> int:
        v = _parse(units.parse_int, text)
        check_range(v, text, 1, 65535, between=True)
        return v
    return named("TCP port", conv)


def _each(text: str, parse: Callable[[str], Any], check: Callable[[Any, str], None],
          skip_empty: bool = False) -> list[Any]:
    """The comma-separated items of `text`, each parsed and range-checked; an error quotes the whole list."""
    out = []
    for p in text.split(","):
        if skip_empty and not p.strip():
            continue
        try:
            v = parse(p)
        except UnitError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
        check(v, p.strip())
        out.append(v)
    return out


def int_list(lo: int = 1, hi: int = INT64_MAX) -> Callable[[str], list[int]]:
    """'1,2,4,8' -> [1, 2, 4, 8] (in the order given; empty items between commas are ignored)."""
    def conv(text: str) -> list[int]:
        if not any(p.strip() for p in text.split(",")):
            raise argparse.ArgumentTypeError(f"{text!r} holds no numbers (a comma-separated list, e.g. 1,2,4)")
        return _each(text, units.parse_int, lambda v, p: check_range(v, p, lo, hi), skip_empty=True)
    return named("list of whole numbers", conv)


def float_list(lo: float = 0, hi: float = MAX_FIGURE, lo_open: bool = True,
               keep: tuple[str, ...] = ()) -> Callable[[str], Any]:
    """'1,2.5,8' -> (1.0, 2.5, 8.0); a word in `keep` (e.g. 'auto') is returned as is."""
    def conv(text: str) -> Any:
        if text.strip() in keep:
            return text.strip()
        return tuple(_each(text, units.parse_float, lambda v, p: check_range(v, p, lo, hi, lo_open)))
    return named("list of numbers", conv)


def size(lo: int = 1, hi: int = INT64_MAX) -> Callable[[str], int]:
    """Bytes: 8K, 64M, 1.5G (units.parse_size)."""
    def conv(text: str) -> int:
        v = _parse(units.parse_size, text, lo)
        check_range(v, text, lo, hi, noun="positive")
        return v
    return named("size", conv)


def size_or(words: tuple[str, ...], lo: int = 1, hi: int = INT64_MAX) -> Callable[[str], int | str]:
    """Bytes as `size`, or one of `words` (any case, returned lower-case): --memory 256MiB | none."""
    def conv(text: str) -> int | str:
        if text.strip().lower() in words:
            return text.strip().lower()
        try:
            return size(lo, hi)(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc} (or {' or '.join(words)})") from None
    return named("size", conv)


def duration(lo: float = 0, hi: float = WEEK_S, lo_open: bool = True) -> Callable[[str], float]:
    """Seconds: 90, 90s, 10m, 1.5h, 2d (units.parse_duration)."""
    def conv(text: str) -> float:
        v = _parse(units.parse_duration, text, lo, lo_open)
        check_range(v, text, lo, hi, lo_open, noun="positive")
        return v
    return named("duration", conv)


def side_time(sides: tuple[str, ...], hi: float = 1e9) -> Callable[[str], tuple[str, float]]:
    """'fast@600', 'slow@10m' -> (side, seconds)."""
    def conv(text: str) -> tuple[str, float]:
        side, at, t = text.partition("@")
        if not at:
            raise argparse.ArgumentTypeError(f"{text!r} is not SIDE@T (e.g. fast@600 or slow@10m)")
        side = side.strip().lower()
        if side not in sides:
            raise argparse.ArgumentTypeError(f"{text!r}: unknown side {side!r} ({' or '.join(sides)})")
        v = _parse(units.parse_duration, t)
        check_range(v, t, 0, hi, noun="positive")
        return side, v
    return named("SIDE@T", conv)


# -- time zones ---------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def zone_problem(name: str) -> str | None:
    """Why `name` cannot be used as a time zone, or None. History readers convert times both in Python
    (zoneinfo) and in DuckDB (ICU), and the two sets differ (zoneinfo has 'localtime' and 'posixrules',
    DuckDB has 'US/Pacific-New' and takes 'utc' in any case), so a zone must be known to both."""
    import zoneinfo
    if not name or len(name) > 100 or not name.isprintable():
        return "not a time zone name"
    try:
        zoneinfo.ZoneInfo(name)
    except Exception:            # not found, not a normalised key, not a TZif file: all the same to a user
        return "not a time zone Python's zoneinfo knows"
    import duckdb
    try:
        with duckdb.connect() as con:
            con.execute("SELECT CAST(timezone(?, TIMESTAMP '2000-01-01') AS VARCHAR)", [name]).fetchone()
    except duckdb.Error:
        return "not a time zone DuckDB knows"
    return None


def _zone_hint(name: str) -> str:
    import zoneinfo
    low = name.lower()
    close = sorted(z for z in zoneinfo.available_timezones() if z.lower() == low and zone_problem(z) is None)
    return f"did you mean {close[0]}?" if close else "an IANA name such as UTC, Europe/Paris or America/New_York"


def zone() -> Callable[[str], str]:
    """An IANA time zone name both zoneinfo and DuckDB accept."""
    def conv(text: str) -> str:
        if text == "UTC":
            return text
        problem = zone_problem(text)
        if problem:
            raise argparse.ArgumentTypeError(f"{text!r}: {problem} ({_zone_hint(text)})")
        return text
    return named("time zone", conv)


# -- the parser ---------------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    """argparse with dbtier's error format: `dbtier: error: --duration: 'nan' is not a finite number`
    and a `next:` line on stderr, exit 2 (subcommand parsers inherit the class)."""

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # argparse (3.11) drops a lone '--' given as `--duration=--` and stores [] without calling the
        # type, which later code cannot compare with a number: refuse it like any other bad value.
        if action.option_strings and arg_strings == ["--"] and action.nargs in (None, "?"):
            self.error(f"argument {action.option_strings[0]}: '--' is not a value")
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> NoReturn:
        import sys
        # "argument --usd: must be ..." -> "--usd must be ...", "argument --usd: 'x' is ..." -> "--usd: 'x' is ..."
        message = re.sub(r"^argument ([^:]+): (must )?", lambda m: f"{m.group(1)} must " if m.group(2)
                         else f"{m.group(1)}: ", message)
        sys.stderr.write(f"dbtier: error: {message}\n  next: see `{self.prog} --help`\n")
        raise SystemExit(2)


# Shared by the bench commands: runs per point.
MAX_REPEAT = 1000
