"""The pure parts of `dbtier advise` on hand-worked numbers: summing per hour of day, a cluster's name,
the options on one basis, their ranking, and the current storage against the requirement."""

from __future__ import annotations

import pytest

from dbtier.advise import answer, options
from dbtier.core.errors import DbtierError
from dbtier.history import combine


def _hours(**per_hour):
    """hour_of_day items: {hour: (p95 read IOPS, max read IOPS)}."""
    return [{"hour": h, "read_iops": {"p50": p / 2, "p95": p, "max": m}} for h, (p, m) in per_hour.items()]


def test_per_hour_of_day_the_sum_of_each_hour_then_the_highest_hour():
    a = {"name": "A", "hour_of_day": _hours(**{"0": (10, 12), "1": (30, 40)})}
    b = {"name": "B", "hour_of_day": _hours(**{"0": (25, 50), "1": (5, 6)})}
    for d in (a, b):
        for h in d["hour_of_day"]:
            h["hour"] = int(h["hour"])
    # hour 0: 10 + 25 = 35, hour 1: 30 + 5 = 35 -> p95 35; max: 12 + 50 = 62 vs 40 + 6 = 46 -> 62
    assert combine.hourly_sum([a, b], "p95")["read_iops"] == 35
    assert combine.hourly_sum([a, b], "max")["read_iops"] == 62
    # the sum of each one's own peak would say 30 + 25 = 55 and 40 + 50 = 90: per hour is tighter
    assert combine.hourly_sum([a, b], "max")["write_iops"] is None          # no database has it
    with pytest.raises(DbtierError, match="no p99"):
        combine.hourly_sum([a, b], "p99")


def test_a_cluster_is_its_name_without_the_instance():
    assert combine.cluster_of("PRODRAC/2", 2) == "PRODRAC"
    assert combine.cluster_of("PRODRAC/2", 1) == "PRODRAC/2"       # one instance: the name as it is
    assert combine.cluster_of("SQL01/sales", 2) == "SQL01/sales"   # not an instance number
    assert combine.cluster_of("DB", None) == "DB"
    g = combine.groups([{"name": "R/1", "instances": 2}, {"name": "X"}, {"name": "R/2", "instances": 2}])
    assert {k: [d["name"] for d in v] for k, v in g.items()} == {"R": ["R/1", "R/2"], "X": ["X"]}


def test_database_rows_sum_a_cluster_and_keep_a_database_s_own_peaks():
    dbs = [{"name": "R/1", "instances": 2, "capacity_gb": 100.0},
           {"name": "R/2", "instances": 2, "capacity_gb": 100.0},
           {"name": "X", "instances": 1, "capacity_gb": 5.0, "peaks": {"read_iops": {"p95": 7.0}}}]
    rows = combine.database_rows(dbs, "p95", {"R": {"read_iops": 300.0}}, {"R/1": 0.25, "R/2": 0.5, "X": None})
    r, x = rows
    assert (r["name"], r["instances"], r["read_iops"], r["capacity_gb"], r["write_tb_per_day"]) == \
        ("R", 2, 300.0, 100.0, 0.75)      # one database's files: 100 GB, not 200; writes of both instances
    assert (x["name"], x["read_iops"], x["write_tb_per_day"]) == ("X", 7.0, None)


def test_mixed_peaks_add_the_series_own_peaks():
    hourly = {"read_iops": {"p50": 1.0, "p95": 10.0, "p99": None, "max": 20.0}}
    timed = [{"peaks": {"read_iops": {"p50": 2.0, "p95": 5.0, "p99": 6.0, "max": 8.0}}}]
    got = combine.mixed_peaks(hourly, timed)["read_iops"]
    assert got == {"p50": 3.0, "p95": 15.0, "p99": None, "max": 28.0}


ONPREM = {"description": "2 x ssd raid1", "layout": "raid1", "layouts": ["raid1", "mirror2"], "price_usd": 300,
          "binding": "iops", "tco": {"purchase_usd": 300.0, "total_usd": 420.0},
          "meets": {"read_iops": {"met": True, "margin": 0.5}, "write_iops": {"met": True, "margin": 0.25}},
          "endurance": {"used_fraction": 0.8}, "durable_writes": {"required": True, "protected": False,
                                                                   "reason": "consumer flash"}}
CLOUD = {"description": "2 x aws gp3 striped on m6i.large",
         "cloud": {"provider": "aws", "instance": "m6i.large", "monthly_usd": {"total": 10.0}, "binding": "capacity",
                   "volumes": [{"iops": 3000}, {"iops": 3000}], "caps": {"binding": "baseline IOPS"},
                   "burst": None, "notes": []}}


def test_on_prem_option_is_its_tco_over_the_service_life():
    o = options.on_prem(ONPREM, 5.0)
    assert (o["purchase_usd"], o["total_usd"], o["per_year_usd"]) == (300.0, 420.0, 84.0)
    assert o["reserve"] == 0.25 and o["meets"] is True and o["binding"] == "IOPS"
    assert "mirror2" in o["description"]
    assert any(c.startswith("flash wear: 80%") for c in o["caveats"])
    assert any(c.startswith("no power-loss protection") for c in o["caveats"])


def test_cloud_option_is_the_month_times_twelve_times_the_years():
    # 6,000 IOPS offered for a need of 2,600 with 30% headroom (2,000 measured): 6,000 / 2,000 - 1 = 2.0
    o = options.cloud(CLOUD, 5.0, {"iops": 2600.0}, 0.3, "burst not checked")
    assert (o["purchase_usd"], o["monthly_usd"], o["total_usd"], o["per_year_usd"]) == (0.0, 10.0, 600.0, 120.0)
    assert o["reserve"] == pytest.approx(2.0)
    assert o["caveats"][0] == "instance cap: m6i.large: baseline IOPS" and "burst not checked" in o["caveats"]


def test_rank_puts_the_cheapest_that_meets_first_and_the_refusals_last():
    on, cl = options.on_prem(ONPREM, 5.0), options.cloud(CLOUD, 5.0, {"iops": 2600.0}, 0.3)
    none = options.none_for("gcp", "Oracle RAC is not supported there", 5.0, "Oracle Database@Google Cloud")
    order, rec = options.rank([none, cl, on])
    assert [o["where"] for o in order] == ["on-prem", "aws", "gcp"] and rec == 0      # $420 < $600
    order, rec = options.rank([none])
    assert rec is None
    rows = answer.rows({"options": [on, none], "recommended": 0})
    assert rows[0][0] == "on-prem *" and rows[1][5] == "no option"


def test_current_storage_figure_by_figure():
    req = {"read_iops": 1000.0, "write_iops": 400.0, "read_mbps": 10.0, "write_mbps": None, "headroom": 0.3}
    s = {"read_iops_4k": 2000.0, "write_iops_4k": 500.0, "read_mbps_seq": 100.0, "write_mbps_seq": 50.0}
    c = options.current(s, "/data", req)
    # write: 500 against 400 x 1.3 = 520 -> short; margin 500 / 400 - 1 = 25%
    assert c["figures"]["write_iops"]["met"] is False and c["figures"]["write_iops"]["margin"] == pytest.approx(0.25)
    assert c["figures"]["read_iops"]["margin"] == pytest.approx(1.0) and "write_mbps" not in c["figures"]
    assert c["meets"] is False and c["margin"] == pytest.approx(0.25)
