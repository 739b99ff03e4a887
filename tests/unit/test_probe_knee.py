"""The probe's knee (results.probe.knee), stored by the probe and read by the report: hand-worked
points; the sweep's stop and the knee are one rule."""

from __future__ import annotations

import pytest

from dbtier.report.figures import core as F
from dbtier.results.probe import KNEE_FIELDS, KNEE_TESTS, PROBE_MIN_GAIN, knee, knees, sweep_done


def pts(test, levels, **extra):
    return [{"test": test, "outstanding": o, "iops": v, "read": {"lat_us": {"p99": 10.0 * o}},
             "write": {"lat_us": {"p99": 20.0 * o}}, **extra} for o, v in levels]


def test_the_rule_is_three_percent_over_the_knee_so_far():
    p = pts("rand-read-4k", [(1, 100), (2, 200), (4, 300), (8, 308), (16, 308.9)])
    # 308 and 308.9 are under 300 x 1.03 = 309: two levels without progress confirm the knee at 4
    assert knee(p, "rand-read-4k") == {"test": "rand-read-4k", "outstanding": 4, "iops": 300, "p99_us": 40.0,
                                       "last_outstanding": 16, "last_iops": 308.9, "still_rising": False}
    p[3]["iops"] = 309.5                                  # beats 300 by 3.2%: progress, the knee moves
    assert knee(p, "rand-read-4k")["outstanding"] == 8
    assert PROBE_MIN_GAIN == 0.03


def test_one_noisy_step_does_not_end_it():
    # 190 at 2, 170 at 4 (a miss), 260 at 8 beats 190 x 1.03: progress; 265 and 262 under 267.8
    p = pts("rand-mix-8k", [(1, 100), (2, 190), (4, 170), (8, 260), (16, 265), (32, 262)])
    k = knee(p, "rand-mix-8k")
    assert (k["outstanding"], k["iops"], k["still_rising"]) == (8, 260, False)


def test_progress_is_measured_from_the_knee_not_from_the_best():
    # 305 is no progress over 300 (< 309), 312 is (>= 309): the sweep's rule puts the knee at 8, the
    # largest load, still rising. (The report's former rule, "no later level beats it by 3%", said 4.)
    p = pts("rand-read-4k", [(1, 100), (2, 300), (4, 305), (8, 312)])
    k = knee(p, "rand-read-4k")
    assert (k["outstanding"], k["iops"], k["still_rising"]) == (8, 312, True)
    assert not sweep_done([q["iops"] for q in p])


def test_a_confirming_point_joins_its_level():
    # The longer re-measures at the peak's load (phase confirm) are runs of the same point: their median.
    p = pts("rand-read-4k", [(1, 100), (2, 200), (4, 300), (8, 325), (16, 322)])
    p += pts("rand-read-4k", [(4, 320), (4, 290)], phase="confirm")
    k = knee(p, "rand-read-4k")
    # level 4: median(300, 320, 290) = 300; 325 beats 300 x 1.03 = 309 (the knee moves to 8); 322 < 334.75
    assert (k["outstanding"], k["iops"], k["p99_us"], k["still_rising"]) == (8, 325, 80.0, False)
    p += pts("rand-read-4k", [(8, 301)], phase="repeat")        # 8 now median(325, 301) = 313: beats 309 still
    assert knee(p, "rand-read-4k")["iops"] == 313.0
    # a split of the same load over two threads is another point of the level: the better median wins
    p += [dict(q, jobs=2, iops=400.0) for q in pts("rand-read-4k", [(8, 400)])]
    assert knee(p, "rand-read-4k")["iops"] == 400.0


def test_the_knee_is_where_the_sweep_stops():
    levels = [100, 190, 170, 260, 265, 262, 400]
    stop = next(n for n in range(1, len(levels) + 1) if sweep_done(levels[:n]))
    assert stop == 6                                      # the sweep measures 262 and stops
    k = knee(pts("rand-read-4k", list(zip((1, 2, 4, 8, 16, 32), levels[:stop]))), "rand-read-4k")
    assert k["outstanding"] == 8 and k["iops"] == 260


def test_latency_is_the_tests_own_side():
    p = pts("rand-write-4k", [(1, 100), (2, 200)])
    assert knee(p, "rand-write-4k")["p99_us"] == 40.0     # the write side: 20 x 2
    bare = [{"test": "rand-read-4k", "outstanding": 1, "iops": 5, "lat_us": {"p99": 7.5}}]
    assert knee(bare, "rand-read-4k")["p99_us"] == 7.5     # a point with only its main latency
    assert knee([{"test": "rand-read-4k", "outstanding": 1, "iops": 5}], "rand-read-4k")["p99_us"] is None


def test_no_points_and_junk():
    assert knee([], "rand-read-4k") is None
    junk = [None, "x", {"test": "rand-read-4k", "outstanding": "4", "iops": 1},
            {"test": "rand-read-4k", "outstanding": 4, "iops": True}, {"test": "rand-read-4k", "iops": 3}]
    assert knee(junk, "rand-read-4k") is None


def test_knees_has_each_stored_test():
    k = knees(pts("rand-read-4k", [(1, 100), (2, 200)]))
    assert tuple(k) == KNEE_TESTS == ("rand-read-4k", "rand-write-4k", "rand-mix-8k")
    assert k["rand-read-4k"]["outstanding"] == 2 and k["rand-write-4k"] is None and k["rand-mix-8k"] is None


def test_the_report_reads_the_stored_knee_and_computes_only_for_older_documents():
    points = pts("rand-read-4k", [(1, 100), (2, 200), (4, 300), (8, 308), (16, 308.9)])
    old = {"points": points}
    assert F.probe_knee(old)["outstanding"] == 4                             # written before: computed
    stored = dict(knee(points, "rand-read-4k"), outstanding=2, iops=200)     # what the probe stored wins
    assert F.probe_knee({"points": points, "knee": {"rand-read-4k": stored}}) == stored
    assert F.probe_knee({"points": points, "knee": {"rand-read-4k": None}}) is None   # stored: not run
    assert F.probe_knee({"points": points, "knee": {"rand-read-4k": {"outstanding": 2}}})["outstanding"] == 4
    assert F.probe_knee({"points": points, "knee": {}}, "rand-read-4k")["outstanding"] == 4
    assert set(F.probe_knee(old)) == set(KNEE_FIELDS)


@pytest.mark.parametrize("values, stops", [([100, 200, 205, 210, 211], False),   # 210 was progress over 200
                                           ([100, 200, 205, 205.5], True)])
def test_sweep_done(values, stops):
    assert sweep_done(values) is stops
