"""The lab's figures (dbtier.model.lab): the fast tier and the catalog standing; the requirement
itself is pinned in test_missing_values.py."""

import os

import pytest

from dbtier.model.plan.catalog import load_catalog
from dbtier.model.lab import requirement_from_oltp, standing, tiers


def _probe(*targets):
    return {"targets": [{"path": p, "summary": s} for p, s in targets]}


def test_the_fast_tier_has_the_most_random_read_iops(tmp_path):
    a, b, c = (str(tmp_path / x) for x in "abc")
    probe = _probe((a, {"read_iops_4k": 200}), (b, {"read_iops_4k": 90_000}), (c, {"read_iops_4k": 5_000}))
    assert tiers([a, b, c], probe) == (b, a)


def test_without_a_probe_the_first_directory_is_fast(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert tiers([a, b], None) == (a, b)
    # a target the probe could not measure counts as 0
    assert tiers([a, b], _probe((a, None), (b, {"read_iops_4k": 10}))) == (b, a)


def test_one_directory_is_both_tiers(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert tiers([str(link)], None) == (os.path.realpath(tmp_path),) * 2


def test_standing_is_measured_over_catalog():
    d = next(iter(load_catalog().devices.values()))
    summary = {"read_iops_4k": 2 * d.read_iops, "write_iops_4k": d.write_iops, "read_mbps_seq": d.read_mbps,
               "write_mbps_seq": d.write_mbps, "read_lat_us_qd1_p50": d.read_latency_us / 4}
    out = standing(_probe(("/x", summary), ("/y", None)))
    assert [s["path"] for s in out] == ["/x"]             # the unmeasured target has no standing
    mine = next(c for c in out[0]["closest"] if c["device"] == d.id)
    assert mine["ratios"] == {"read_iops_4k": 2.0, "write_iops_4k": 1.0, "read_mbps_seq": 1.0,
                              "write_mbps_seq": 1.0, "read_lat_us_qd1_p50": 4.0}   # latency: catalog/measured


def test_requirement_at_the_knee():
    # 2 devices over a 10 s sampled window at the knee (4 clients): sums, bytes per second in MB
    pt = {"clients": 4, "sampled_s": 10.0, "duration_s": 12.0,
          "devices": [{"read_iops": 100.0, "write_iops": 50.0, "read_bytes": 20e6, "write_bytes": 40e6},
                      {"read_iops": 10.0, "write_iops": 5.0, "read_bytes": 10e6, "write_bytes": 0.0}]}
    oltp = {"knee": {"clients": 4}, "points": [{"clients": 1, "devices": []}, pt],
            "load": {"database_bytes": 5e9}}
    req = requirement_from_oltp(oltp)
    assert req.pop("absent") == []
    assert req == pytest.approx({"read_iops": 110.0, "write_iops": 55.0, "read_mbps": 3.0, "write_mbps": 4.0,
                                 "capacity_gb": 15.0})
    assert requirement_from_oltp({**oltp, "knee": None}) is None


# -- lab --engines: one OLTP step per engine ----------------------------------------------------------------------

from dbtier.core.errors import DbtierError  # noqa: E402
from dbtier.model.lab import parse_engines, plan_engine  # noqa: E402

KNOWN = ("postgres", "mariadb")


def test_parse_engines():
    assert parse_engines("postgres,mariadb", KNOWN) == ["postgres", "mariadb"]
    assert parse_engines(" mariadb , postgres,mariadb", KNOWN) == ["mariadb", "postgres"]   # order given, each once
    assert parse_engines("", KNOWN) == ["postgres"] and parse_engines(None, KNOWN) == ["postgres"]  # the default
    with pytest.raises(DbtierError) as e:
        parse_engines("mariadb,foo", KNOWN)
    assert "unknown engine foo" in e.value.message and "postgres, mariadb" in e.value.hint


def test_the_plan_sizes_for_postgres_else_the_first_engine():
    assert plan_engine(["mariadb", "postgres"]) == "postgres" and plan_engine(["mariadb"]) == "mariadb"


def test_the_lab_report_shows_the_catalog_standing_as_a_table():
    """'Against the catalog' is a table (device, kind, distance, a ratio per figure) with what the ratios
    mean -- not the standing's JSON."""
    import json
    import re
    from pathlib import Path
    from dbtier.report.sections.lab import lab_section
    data = Path(__file__).resolve().parent.parent / "data"
    doc = json.loads((data / "lab" / "lab.json").read_text())
    probe = json.loads((data / "probe" / "quick-ext4-virtio.json").read_text())
    doc["standing"] = standing(probe)
    html = lab_section(doc, 0, {})
    part = html[html.index("Against the catalog"):]
    part = part[:part.index("</table>")]
    assert "[{" not in part and "&quot;" not in part
    first = doc["standing"][0]["closest"][0]
    assert first["device"] in part and "4 KiB random read, peak" in part
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", part)
    assert f"{first['ratios']['read_iops_4k']:.2f}" in cells and f"{first['distance']:.3f}" in cells
    assert "above 1 better" in html


def test_a_lab_report_shows_each_machine_part_once(tmp_path):
    """A lab's steps ran on one machine: the host (and what else repeats) is drawn in full once; later
    sections point back to the run that showed it. A report of one run keeps its machine section whole."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from conftest import call_main
    from samples import make_lab
    lab = make_lab(tmp_path)
    for what, out in ((lab, "rep"), (lab / "dss-1", "one")):
        r = call_main("report", str(what), "--out", out, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert html.count("<h3>Machine</h3>") >= 5            # the lab and each of its steps
    assert html.count("<h4>Host</h4>") == 1
    assert html.count("Host: the same as for <b>lab</b> above.") == html.count("<h3>Machine</h3>") - 1
    one = (tmp_path / "one" / "report.html").read_text()
    assert one.count("<h4>Host</h4>") == 1 and "the same as for" not in one
