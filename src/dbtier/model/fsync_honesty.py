"""Is fsync honest? A pure judgement from measured commit timings.

A device (or a layer above it) that acknowledges a flush before the data is
durable loses committed transactions at power loss, so its commit figures are
not comparable with honest ones. Each rule below is evidence of that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# No storage, not even NVMe with power-loss protection, completes the write-back
# of a dirty page plus a flush in under a few microseconds; a syscall alone does.
MIN_HONEST_FLUSH_US = 5.0
# Write + fdatasync must cost clearly more than the buffered write alone.
MIN_SYNC_OVER_WRITE_RATIO = 1.5
# A rotating disk makes one commit durable per revolution at best for one
# writer: 15,000 RPM is 250/s. Allow 20% for measurement noise.
FASTEST_RPM = 15000
ROTATIONAL_SLACK = 1.2


@dataclass(frozen=True)
class CommitEvidence:
    sync_lat_us_p50: float | None          # fdatasync call alone, one writer
    commit_lat_us_p50: float | None        # 8 KiB write + fdatasync, one writer
    write_only_lat_us_p50: float | None    # the same 8 KiB buffered write without fdatasync
    commits_per_s_1: float | None          # one writer
    rotational: bool | None
    virtual_disk: bool
    mount_options: str | None = None
    ld_preload: str | None = None


def judge(ev: CommitEvidence) -> dict[str, Any]:
    """-> {verdict: ok|suspect, reason, checks[]}; each check {name, passed (None: not applicable), detail}."""
    checks: list[dict[str, Any]] = []

    def add(name: str, passed: bool | None, detail: str) -> None:
        checks.append({"name": name, "passed": passed, "detail": detail})

    if ev.sync_lat_us_p50 is None:
        add("flush_time", None, "no fdatasync timings were measured")
    else:
        fast = ev.sync_lat_us_p50 < MIN_HONEST_FLUSH_US
        add("flush_time", not fast,
            f"fdatasync returned in {ev.sync_lat_us_p50:.2f} µs (median)"
            + (f"; no storage makes data durable in under {MIN_HONEST_FLUSH_US:.0f} µs, so flushes are being discarded"
               if fast else ", time enough for a real device write and flush"))

    if ev.commit_lat_us_p50 is None or ev.write_only_lat_us_p50 is None:
        add("sync_costs_time", None, "write-alone baseline not measured")
    else:
        ratio = ev.commit_lat_us_p50 / max(ev.write_only_lat_us_p50, 1e-9)
        cheap = ratio < MIN_SYNC_OVER_WRITE_RATIO
        add("sync_costs_time", not cheap,
            f"write + fdatasync took {ev.commit_lat_us_p50:.1f} µs against {ev.write_only_lat_us_p50:.1f} µs "
            f"for the write alone ({ratio:.1f}x)" + ("; the flush adds nothing" if cheap else ""))

    if ev.rotational is None or ev.commits_per_s_1 is None:
        add("rotation_limit", None, "rotational flag unknown")
    elif ev.virtual_disk:
        add("rotation_limit", None,
            "the disk is virtual: its rotational flag is the driver's default and says nothing about the media")
    elif not ev.rotational:
        add("rotation_limit", None, "not a rotating disk")
    else:
        limit = FASTEST_RPM / 60.0
        over = ev.commits_per_s_1 > limit * ROTATIONAL_SLACK
        add("rotation_limit", not over,
            f"one writer committed {ev.commits_per_s_1:.0f}/s on a rotating disk; at {FASTEST_RPM} RPM at most "
            f"{limit:.0f}/s can be durable" + ("; a volatile write cache is acknowledging flushes "
                                             "(fine only if it is battery- or flash-backed)" if over else ""))

    opts = set((ev.mount_options or "").split(","))
    nobarrier = bool(opts & {"nobarrier", "barrier=0"})
    add("mount_barriers", not nobarrier,
        "mounted with nobarrier: the filesystem sends no flushes" if nobarrier else "barriers on")

    if ev.ld_preload and "eatmydata" in ev.ld_preload:
        add("eatmydata", False, f"LD_PRELOAD has {ev.ld_preload}: libeatmydata turns fsync into a no-op")

    failed = [c for c in checks if c["passed"] is False]
    if failed:
        return {"verdict": "suspect", "reason": "; ".join(c["detail"] for c in failed), "checks": checks}
    passed = [c["detail"] for c in checks if c["passed"]]
    return {"verdict": "ok", "reason": "; ".join(passed) or "no evidence against", "checks": checks}
