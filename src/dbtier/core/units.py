"""Unit conversions, done once at the parsers (DESIGN: units in names).

MB is 10**6 bytes, as storage vendors and fio's `MB/s` quote; MiB is 2**20.
"""

from __future__ import annotations

import math
import re

KIB = 1024
MIB = 1024**2
GIB = 1024**3
MB = 1000**2
GB = 1000**3


def bytes_per_s_to_mbps(bw_bytes_per_s: float | None) -> float | None:
    return None if bw_bytes_per_s is None else bw_bytes_per_s / MB


# Sizes, durations and numbers typed by users. ASCII digits only: Python's int() and float() also take
# '²', '٣', '1_000', 'nan' and 'inf', none of which is a size a user means; re's \d matches any Unicode
# digit, so the patterns spell [0-9]. The number part is capped at 30 characters, which keeps every
# value far from float overflow and int64 (a 30-digit count of days is still a finite float).
_NUM = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_MAX_DIGITS = 30
SIZE_UNITS = {"": 1, "k": KIB, "m": MIB, "g": GIB, "t": 1024**4}
_SIZE_RE = re.compile(r"\s*" + _NUM + r"\s*(?:([kmgt])(i?b)?|(b))?\s*", re.I)
SIZE_FORM = "ASCII digits, an optional decimal point, an optional unit k, m, g or t (KiB and KB alike): 8K, 64M, 1.5G"
DURATION_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "hr": 3600.0,
                  "d": 86400.0, "day": 86400.0}
_DURATION_RE = re.compile(r"\s*" + _NUM + r"\s*(s|sec|m|min|h|hr|d|day)?\s*", re.I)
DURATION_FORM = "ASCII digits, an optional decimal point, an optional unit s, m, h or d: 90, 90s, 10m, 1.5h"
_FLOAT_RE = re.compile(r"\s*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?)\s*")
_INT_RE = re.compile(r"\s*([+-]?[0-9]+)\s*")
_NONFINITE_RE = re.compile(r"\s*[+-]?(nan|inf)", re.I)
INT64_MAX = 2**63 - 1


class UnitError(ValueError):
    """A size, duration or number that does not parse; the message says why (the caller names the option)."""


def _too_long(text: str, m: re.Match[str]) -> None:
    if len(m.group(1)) > _MAX_DIGITS:
        raise UnitError(f"{text!r} has too many digits")


def _non_finite(text: str, what: str) -> None:
    if _NONFINITE_RE.match(text):
        raise UnitError(f"{text!r} is not a finite {what}")


def _unsigned(regex: re.Pattern[str], text: str, what: str, form: str) -> re.Match[str]:
    """The match of a size or duration, or a UnitError saying why not (not finite, negative, the form)."""
    m = regex.fullmatch(text) if isinstance(text, str) else None
    if not m:
        _non_finite(str(text), what)
        if str(text).strip().startswith("-"):
            raise UnitError(f"{text!r}: a {what} cannot be negative")
        raise UnitError(f"{text!r} is not a {what} ({form})")
    _too_long(text, m)
    return m


def parse_size(text: str) -> int:
    """Bytes from '4k' (4096), '1M' (1048576), '1.5G', '8KiB', '8KB' (binary units, as fio and md take
    them); plain digits are bytes. Decimal point allowed; the result is rounded down to a whole byte and
    must fit 64 bits. Refused with a UnitError: '', signs, exponents, NaN/inf, non-ASCII digits."""
    m = _unsigned(_SIZE_RE, text, "size", SIZE_FORM)
    whole, _, frac = m.group(1).partition(".")
    unit = SIZE_UNITS[(m.group(2) or "").lower()]
    # Exact: (whole.frac) * unit, rounded down, in integers (no float rounding of 0.1k or 1.5T).
    n = (int(whole or "0") * 10 ** len(frac) + int(frac or "0")) * unit // 10 ** len(frac)
    if n > INT64_MAX:
        raise UnitError(f"{text!r} is too large (more than 2^63 - 1 bytes)")
    return n


def parse_duration(text: str) -> float:
    """Seconds from '90', '90s', '10m', '1.5h', '2d' (units s/sec, m/min, h/hr, d/day, any case); a finite
    float >= 0. Refused with a UnitError: '', signs, exponents, NaN/inf, non-ASCII digits."""
    m = _unsigned(_DURATION_RE, text, "duration", DURATION_FORM)
    return float(m.group(1)) * DURATION_UNITS[(m.group(2) or "").lower()]


def parse_float(text: str) -> float:
    """A finite float from ASCII text: 12, -0.5, 1e6, .5 (no NaN, inf, '1_000', Unicode digits)."""
    m = _FLOAT_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        _non_finite(str(text), "number")
        raise UnitError(f"{text!r} is not a number")
    v = float(m.group(1))
    if not math.isfinite(v):     # 1e999: float() overflows to inf
        raise UnitError(f"{text!r} is not a finite number")
    return v


def parse_int(text: str) -> int:
    """A whole number from ASCII digits (optional sign) that fits 64 bits."""
    m = _INT_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        _non_finite(str(text), "number")
        raise UnitError(f"{text!r} is not a whole number")
    if len(m.group(1).lstrip("+-")) > 19 or not (-INT64_MAX - 1 <= int(m.group(1)) <= INT64_MAX):
        raise UnitError(f"{text!r} does not fit in 64 bits")
    return int(m.group(1))


def human_bytes(n: float) -> str:
    for unit, size in (("TiB", 1024**4), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def human_us(x: float | None, missing: str = "-") -> str:
    """A latency in µs shown in the unit that reads best: 850 µs, 1.20 ms, 2.50 s."""
    if x is None:
        return missing
    if x >= 1e6:
        return f"{x / 1e6:,.2f} s"
    if x >= 1e3:
        return f"{x / 1e3:,.2f} ms"
    return f"{x:,.0f} µs"


def human_pct(x: float | None, missing: str = "-") -> str:
    """A fraction (0..1) as a percentage."""
    return missing if x is None else f"{x * 100:.1f}%"


def pct_below(x: float, line: float) -> str:
    """A percentage (0..100) as a whole number, or to a tenth where rounding would lift it to `line` when it is
    under it: 89.6 against a 90% line reads 89.6, not the 90 that a rule at 90% would have judged otherwise."""
    whole = f"{x:.0f}"
    if not x < line <= float(whole):
        return whole
    tenth = f"{x:.1f}"
    return tenth if float(tenth) < line else f"{math.floor(x * 10) / 10:.1f}"     # 89.96: 89.9, never 90.0


# Figures for people: a unit that fits the magnitude, never an exponent ('3.61e+03'), integers as integers.

def plain_number(x: float, sig: int = 3) -> str:
    """`x` to `sig` significant digits without an exponent, trailing zeros dropped, thousands
    separated: 3610 -> '3,610', 0.00412 -> '0.00412', 1.0 -> '1', 2.50 -> '2.5'."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    digits = sig - 1 - math.floor(math.log10(abs(x)))
    r = round(x, digits)
    if r != 0 and math.floor(math.log10(abs(r))) != math.floor(math.log10(abs(x))):   # 9.996 -> 10.0
        digits -= 1
        r = round(x, digits)
    text = f"{r:,.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


_DURATION_STEPS = ((86400.0, "d", "day"), (3600.0, "h", "hour"), (60.0, "min", "minute"))


def duration_text(seconds: float, adjective: bool = False) -> str:
    """A duration in the unit its size calls for (s below a minute, min below an hour, h below a day,
    then d), to three significant digits: 15 -> '15 s', 90 -> '1.5 min', 3610 -> '1 h'. `adjective`
    gives the form before a noun: '15-s', '1.5-minute', '1-hour', '2-day'."""
    for size, short, long in _DURATION_STEPS:
        if abs(seconds) >= size * 0.9995:      # 3,599.9 s reads as 1 hour, not 60 minutes
            n = plain_number(seconds / size)
            return f"{n}-{long}" if adjective else f"{n} {short}"
    n = plain_number(seconds)
    return f"{n}-s" if adjective else f"{n} s"


_SIZE_STEPS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))


def size_text(n_bytes: float, sig: int = 2) -> str:
    """Bytes in the decimal unit their size calls for (MB = 10**6 bytes, as the rest of dbtier), two
    significant digits, at least the whole part: 4.12e9 -> '4.1 GB', 2.18e6 -> '2.2 MB', 123e9 -> '123 GB'."""
    for size, unit in _SIZE_STEPS:
        if abs(n_bytes) >= size * 0.9995:
            v = n_bytes / size
            return f"{plain_number(v, max(sig, len(str(int(abs(v))))))} {unit}"
    return f"{plain_number(n_bytes, max(sig, len(str(int(abs(n_bytes))))))} B"


def per_day_text(tb_per_day: float) -> str:
    """A daily volume given in TB (10**12 bytes) in the unit that fits it: 0.00412 -> '4.1 GB/day'."""
    return size_text(tb_per_day * 1e12) + "/day"


def count_text(x: float) -> str:
    """A count: integers as integers ('1', '12,000'), other values to three significant digits."""
    return f"{int(x):,}" if float(x).is_integer() else plain_number(x)


def life_cap_years(service_years: float | None) -> float:
    """The lifetime past which a figure says nothing more than 'it outlasts the service life many
    times': ten service lives, and never under 50 years (5-year terms: 50)."""
    return max(50.0, 10.0 * (service_years or 0.0))


def life_years_text(years: float, service_years: float | None) -> str:
    """Years a device lasts, one decimal; beyond `life_cap_years` as '> 50' (a 266-year wear life is
    only 'far beyond the service life': wear figures that far out are not meaningful)."""
    cap = life_cap_years(service_years)
    if years > cap:
        return f"> {plain_number(cap)}"
    return f"{years:,.1f}"
