"""The verdict's backup sentences (dbtier.report.verdict.backup) on hand-made documents: a target throttled at
40 MiB/s limited by that throttle, the study's comparison of a fast and a slow target, and a difference that
the runs' spread does not allow to call."""

from __future__ import annotations

from dbtier.report.verdict.topics import verdict

MIB = 2**20


def _t(method: str, target: str, mbps: float, lo: float, hi: float, limit: str, why: str) -> dict:
    return {"method": method, "target": target, "mbps": lo, "compressed": False, "bottleneck": limit,
            "bottleneck_evidence": why,
            "mbps_spread": {"median": mbps, "min": lo, "max": hi, "n": 2, "spread_pct": 100 * (hi - lo) / mbps}}


def _doc(to: str, targets: list[dict], emulated: dict | None = None) -> dict:
    return {"command": "bench", "bench": "backup", "engine": "postgres", "status": "ok",
            "params": {"to": to, "repeat": 2}, "targets": targets, "emulated": emulated}


SLOW_WHY = ("wrote 39.0 MB/s through the emulated tier, 93% of its throttle's 41.9 MB/s: the throttle; median 39 MB/s "
            "to the directory against median 786 MB/s to the null sink (20.2 times)")
EMU = {"dir": "/mnt/slow", "read_iops": 0, "write_iops": 0, "read_bps": 40 * MIB, "write_bps": 40 * MIB,
       "label": "emulated", "note": "", "roles": ["target"]}


def test_a_throttled_target_and_the_targets_compared():
    fast = _doc("/mnt/fast", [_t("pg_basebackup tar", "null", 786, 780, 792, "source", "the null sink writes nothing"),
                              _t("pg_basebackup tar", "dir", 780, 770, 790, "source", "median 780 MB/s ...")])
    slow = _doc("/mnt/slow", [_t("pg_basebackup tar", "null", 786, 780, 792, "source", "the null sink writes nothing"),
                              _t("pg_basebackup tar", "dir", 39, 38.5, 39.5, "target", SLOW_WHY)], EMU)
    s = verdict([fast, slow])["sentences"]
    assert s[1] == ("Backups (PostgreSQL) to /mnt/slow (emulated: 40 MiB/s of reads and of writes) are limited by the "
                    "target directory (writing) in every method: pg_basebackup tar: " + SLOW_WHY + ".")
    # 780 / 39 = 20.0 times: the study's question answered with both figures
    assert s[2] == ("Backup targets compared (PostgreSQL: /mnt/fast, /mnt/slow (emulated: 40 MiB/s of reads and of "
                    "writes); MB/s of source bytes, the medians of the runs): pg_basebackup tar: 780 MB/s to "
                    "/mnt/fast, 39 MB/s to /mnt/slow, 20.0 times faster to /mnt/fast.")


def test_a_difference_within_the_runs_spread_is_not_called():
    # 400 against 250 MB/s (1.6 times) to the two targets, but the slow target's runs span 200-300 (40%)
    fast = _doc("/mnt/a", [_t("pg_basebackup tar", "dir", 400, 395, 405, "source", "x")])
    slow = _doc("/mnt/b", [_t("pg_basebackup tar", "dir", 250, 200, 300, "target", "y")])
    [cmp] = [t for t in verdict([fast, slow])["sentences"] if t.startswith("Backup targets compared")]
    assert "400 MB/s to /mnt/a, 250 MB/s to /mnt/b;" in cmp and "times faster" not in cmp
    assert "not judged where pg_basebackup tar to /mnt/b: its 2 runs differ by 40%" in cmp


def test_a_rate_at_the_throttle_is_judged_whatever_the_null_sinks_spread():
    # the null sink's runs span 497-621 MB/s (21%, over the 20% guard), the directory's 38.5-39.5 at a 41.9 MB/s
    # throttle: the throttle alone says the target is the limit
    at = dict(_t("pg_basebackup tar", "dir", 39, 38.5, 39.5, "target", SLOW_WHY), at_throttle=True)
    slow = _doc("/mnt/slow", [_t("pg_basebackup tar", "null", 615, 497, 621, "source", "the null sink writes nothing"),
                              at], EMU)
    [s] = [t for t in verdict([slow])["sentences"] if t.startswith("Backups")]
    assert s == ("Backups (PostgreSQL) to /mnt/slow (emulated: 40 MiB/s of reads and of writes) are limited by the "
                 "target directory (writing) in every method: pg_basebackup tar: " + SLOW_WHY + ".")
    # beside a faster method limited by the null-sink ratio, the throttle's rate is the evidence cited
    gz = _t("pg_basebackup tar-gzip", "dir", 197, 195, 199, "target", "median 197 MB/s ... (1.4 times)")
    gz_null = _t("pg_basebackup tar-gzip", "null", 269, 268, 274, "cpu", "compression")
    both = _doc("/mnt/slow", slow["targets"] + [gz_null, gz], EMU)
    [s] = [t for t in verdict([both])["sentences"] if t.startswith("Backups")]
    assert ": pg_basebackup tar: " + SLOW_WHY in s and "(1.4 times)" not in s
    # the same figures without the throttle's word: the null sink's spread leaves it unjudged
    at["at_throttle"] = False
    [s] = verdict([slow])["sentences"]
    assert s.startswith("Which side limits the backups (PostgreSQL) to /mnt/slow (emulated: 40 MiB/s of reads and of "
                        "writes) is not judged, too little evidence: pg_basebackup tar → null: its 2 runs differ by "
                        "20.2% (497–621 MB/s; at most 20% to judge)")
