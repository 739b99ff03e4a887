"""The probe's headline figures as people read them: each summary key's label, unit and digits; a virtual
disk's rotational flag; a write-back cache's note. Shared by the terminal, the report and compare. Pure."""

from __future__ import annotations

from typing import Any

SUMMARY_LABELS = {
    "read_iops_4k": ("4 KiB random read, peak", "IOPS", 0),
    "write_iops_4k": ("4 KiB random write, peak", "IOPS", 0),
    "mixed_iops_8k": ("8 KiB 70/30 mix, peak", "IOPS", 0),
    "read_lat_us_qd1_p50": ("read latency at QD1, p50", "µs", 1),
    "write_lat_us_qd1_p50": ("write latency at QD1, p50", "µs", 1),
    "read_lat_us_p99_at_max": ("read latency at peak, p99", "µs", 1),
    "read_mbps_seq": ("sequential read", "MB/s", 0),
    "write_mbps_seq": ("sequential write", "MB/s", 0),
    "commit_lat_us_p50": ("commit (8 KiB + fdatasync), p50", "µs", 1),
    "commit_lat_us_p99": ("commit, p99", "µs", 1),
    "commits_per_s": ("commits per second, best", "/s", 0),
}


def rotational_text(bd: Any) -> str:
    """A block device's rotational flag for people: a virtual disk's is its driver's default, so unknown."""
    if not isinstance(bd, dict) or "rotational" not in bd:
        return "—"
    if bd.get("virtual") is True or bd.get("rotational_note"):
        return "unknown (virtual disk)"
    return {True: "yes", False: "no"}.get(bd["rotational"], "unknown")


def cache_note(cache: dict[str, Any]) -> str:
    """What a target's cache_suspect says: whose figures they are and what would measure the media."""
    names = [SUMMARY_LABELS[k][0] if k in SUMMARY_LABELS else k for k in cache.get("figures") or []]
    return f"{' and '.join(names)}: a write-back cache's figure, not the media's ({cache.get('why')}); {cache.get('test')}."
