"""Unit conversions, done once at the parsers (DESIGN: units in names).

MB is 10**6 bytes, as storage vendors and fio's `MB/s` quote; MiB is 2**20.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024**2
GIB = 1024**3
MB = 1000**2
GB = 1000**3


def ns_to_us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0


def bytes_per_s_to_mbps(bw_bytes_per_s: float | None) -> float | None:
    return None if bw_bytes_per_s is None else bw_bytes_per_s / MB


def parse_size(text: str) -> int:
    """'4k' -> 4096, '1M' -> 1048576, '2G' -> 2 GiB; plain digits are bytes."""
    s = text.strip().lower().removesuffix("ib").removesuffix("b")
    mult = {"k": KIB, "m": MIB, "g": GIB, "t": 1024**4}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


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
