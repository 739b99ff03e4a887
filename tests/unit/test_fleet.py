"""The fleet probe's pure parts: hosts and targets from the command line, the trust check, fio's client-mode
output (saved from fio 3.33 on this project's machine: two servers on 127.0.0.2 and 127.0.0.3; a run where
one server was killed mid-run) and the aggregate's latency from merged bins."""

from __future__ import annotations

import ipaddress
import json
import math
import re
from pathlib import Path

import pytest

from dbtier.measure.fleet import target_paths, trust_networks
from dbtier.core.errors import DbtierError
from dbtier.measure import fio, fleet

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
TWO = DATA / "client-2hosts-randread-jsonplus.json"
DROPPED = DATA / "client-host-dropped-jsonplus.txt"


def test_hosts_from_a_list_and_a_file(tmp_path):
    hs = fleet.parse_hosts("db1, 10.0.0.5:8766,[fd00::5]:9000,[::1]")
    assert [(h.address, h.port) for h in hs] == [("db1", 8765), ("10.0.0.5", 8766), ("fd00::5", 9000), ("::1", 8765)]
    assert hs[2].client() == "ip6:fd00::5,9000" and hs[1].client() == "10.0.0.5,8766"
    f = tmp_path / "hosts.txt"
    f.write_text("# the array's hosts\n127.0.0.2:8765\n\n127.0.0.3  # second\n")
    assert [h.name for h in fleet.parse_hosts(str(f))] == ["127.0.0.2:8765", "127.0.0.3"]


@pytest.mark.parametrize("spec,needle", [
    ("db1:0", "port must be 1 to 65535"), ("db1:99999", "port must be 1 to 65535"), ("db1:x", "port must be"),
    ("db1,db1", "given twice"), (" , ", "no hosts"), ("a b", "not host[:port]"),
])
def test_bad_hosts_are_named(spec, needle):
    with pytest.raises(DbtierError, match=re.escape(needle)):
        fleet.parse_hosts(spec)


def test_targets_one_for_all_or_one_each():
    hs = fleet.parse_hosts("127.0.0.2,127.0.0.3:9000")
    assert target_paths(hs, ["/data"]) == {"127.0.0.2": "/data", "127.0.0.3:9000": "/data"}
    assert target_paths(hs, ["127.0.0.2=/a", "127.0.0.3=/b"]) == {"127.0.0.2": "/a", "127.0.0.3:9000": "/b"}
    for items, needle in ((["/a", "/b"], "one target for every host"), (["127.0.0.2=/a"], "no target for"),
                          (["/a", "127.0.0.2=/b"], "mixing"), (["db9=/a", "127.0.0.3=/b"], "not one of --hosts"),
                          ([], "needs the target")):
        with pytest.raises(DbtierError, match=needle):
            target_paths(hs, items)


def test_only_loopback_and_trusted_networks_go_without_a_warning():
    lo, lan = fleet.Host("127.0.0.3", "127.0.0.3"), fleet.Host("10.1.2.3", "10.1.2.3")
    assert fleet.untrusted(lo, []) is None and fleet.is_local(lo)
    why = fleet.untrusted(lan, [])
    assert why and "no authentication" in why and not fleet.is_local(lan)
    assert fleet.untrusted(lan, trust_networks(["10.0.0.0/8"])) is None
    assert fleet.untrusted(lan, [ipaddress.ip_network("192.168.0.0/16")]) is not None
    with pytest.raises(DbtierError, match="not a network"):
        trust_networks(["10.0.0.0/33"])


def test_the_request_from_the_options_refuses_what_a_fleet_cannot_take(monkeypatch):
    from dbtier.measure import executor
    from dbtier.measure.probe import PROFILES
    monkeypatch.setattr(executor, "require", lambda *_a, **_k: None)       # no fio needed to check options
    quick = PROFILES["quick"]

    def checked(**kw):
        return fleet.ProbeFleetRequest.checked(**{"hosts": "127.0.0.2,127.0.0.3:9000", "targets": ["/data"],
                                                  "profile": quick, "tests": ("sequential",), **kw})
    # each refusal with the command's wording, the options a fleet cannot take before the hosts' text
    for kw, needle in (({"fill": True, "hosts": "a:0"}, "--fill with --hosts: filling needs each host's free space"),
                       ({"devices": ["/dev/sdb"], "hosts": "a:0"}, "--device with --hosts: give the device as the"),
                       ({"hosts": "a:0", "trust": ["x"]}, "--hosts: 'a:0': the port must be 1 to 65535"),
                       ({"trust": ["x"], "targets": ["/a", "/b"]}, "--trust x: not a network"),
                       ({"targets": ["/a", "/b"]}, "--hosts takes one target for every host")):
        with pytest.raises(DbtierError, match=re.escape(needle)):
            checked(**kw)
    req = checked(targets=["127.0.0.3=/b", "127.0.0.2=/a"], trust=["10.0.0.0/8"], hosts_step=True)
    assert [h.name for h in req.hosts] == ["127.0.0.2", "127.0.0.3:9000"] and req.trust == ("10.0.0.0/8",)
    assert list(req.paths.items()) == [("127.0.0.3:9000", "/b"), ("127.0.0.2", "/a")]      # as given
    assert req.hosts_step and req.direct and not req.hosts_remote and req.size is None


def _reference_percentile(bins: dict[int, int], q: float) -> float:
    """A tiny reference: expand the bins into a sorted list and take the ceil(q N)-th value (1-based)."""
    values = sorted(v for v, c in bins.items() for _ in range(c))
    return values[math.ceil(q / 100 * len(values)) - 1] / 1000.0


def test_client_output_per_host_and_merged_latency():
    text = TWO.read_text()
    hosts = fleet.parse_hosts("127.0.0.2,127.0.0.3")
    parts, raw = fleet.parse_client(text, hosts, "two")
    assert set(parts) == {"127.0.0.2", "127.0.0.3"}
    data = json.loads(text)
    by_host = {j["hostname"]: j for j in data["client_stats"] if j["jobname"] != "All clients"}
    for h in ("127.0.0.2", "127.0.0.3"):
        assert parts[h]["read"]["iops"] == by_host[h]["read"]["iops"]
        # one host's bins give back fio's own percentiles exactly
        one = fio.merged_lat_us([by_host[h]["read"]])
        assert one["p50"] == by_host[h]["read"]["lat_ns"]["percentile"]["50.000000"] / 1000
        assert one["p99"] == by_host[h]["read"]["lat_ns"]["percentile"]["99.000000"] / 1000
    agg = fleet.aggregate(parts, raw)
    assert agg["iops"] == pytest.approx(28665.334665 + 28763.118441)       # the hosts' rates summed
    # fio's own "All clients" divides the summed I/Os by the longest runtime: within 0.1% here
    assert agg["read"]["iops"] == pytest.approx(next(j for j in data["client_stats"]
                                                     if j["jobname"] == "All clients")["read"]["iops"], rel=1e-3)
    merged: dict[int, int] = {}
    for j in by_host.values():
        for k, v in j["read"]["lat_ns"]["bins"].items():
            merged[int(k)] = merged.get(int(k), 0) + v
    for name, q in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        assert agg["read"]["lat_us"][name] == _reference_percentile(merged, q)
    n = [j["read"]["lat_ns"]["N"] for j in by_host.values()]
    means = [j["read"]["lat_ns"]["mean"] for j in by_host.values()]
    assert agg["read"]["lat_us"]["mean"] == pytest.approx((n[0] * means[0] + n[1] * means[1]) / sum(n) / 1000)
    assert agg["write"] is None and agg["sync"] is None


def test_a_dropped_host_is_missing_from_the_parse():
    hosts = fleet.parse_hosts("127.0.0.2,127.0.0.3")
    text = DROPPED.read_text()
    assert text.startswith("client: host=127.0.0.3 disconnected")
    parts, _ = fleet.parse_client(text, hosts, "dropped")
    assert set(parts) == {"127.0.0.2"}
    assert "disconnected" in fleet._why(hosts[1], text, None)


def test_commit_sync_latency_survives_client_mode():
    """fio's client mode reports the fdatasync phase with its bins (fio issue #878 was about it missing)."""
    hosts = fleet.parse_hosts("127.0.0.2")
    parts, raw = fleet.parse_client((DATA / "client-commit-jsonplus.json").read_text(), hosts, "commit")
    agg = fleet.aggregate(parts, raw)
    assert parts["127.0.0.2"]["sync"]["ops"] == agg["sync"]["ops"] > 0
    assert agg["sync"]["lat_us"]["p50"] == parts["127.0.0.2"]["sync"]["lat_us"]["p50"]


def test_job_file_carries_the_command_lines_options():
    job = fio.FioJob(name="rr", rw="randread", bs_bytes=4096, size_bytes=1 << 26, filename="/d/x", iodepth=4)
    text = fio.job_file(job)
    assert text.startswith("[rr]\n") and "rw=randread\n" in text and "filename=/d/x\n" in text
    assert "output" not in text
    assert sorted(text.splitlines()[1:]) == sorted(a[2:] for a in fio.build_args(job)[2:]
                                                   if not a.startswith("--output"))


def test_scaling_names_the_host_count_and_the_rule_that_tripped():
    from dbtier.measure.scaling import verdict as scaling_verdict

    def step(hosts, per_host, p99):
        return {"hosts": hosts, "iops_per_host": per_host, "worst_host_lat_us_p99": p99}
    held = scaling_verdict([step(1, 10_000, 500), step(2, 9_500, 600), step(4, 8_100, 740)])
    assert held["degraded_at_hosts"] is None and "hold up to 4 hosts" in held["verdict"]
    lat = scaling_verdict([step(1, 10_000, 500), step(2, 9_900, 700), step(4, 9_000, 760)])
    assert lat["degraded_at_hosts"] == 4 and "p99 760 µs vs 500 µs" in lat["verdict"]   # 760 > 1.5 x 500
    iops = scaling_verdict([step(1, 10_000, 500), step(2, 7_900, 400)])
    assert iops["degraded_at_hosts"] == 2 and "7,900 IOPS a host vs 10,000" in iops["verdict"]
    assert "p99" not in iops["verdict"]


def test_scaling_steps_double_up_to_the_live_hosts_and_read_each_hosts_points():
    from dbtier.measure import scaling
    assert scaling.host_counts(1) == [1] and scaling.host_counts(4) == [1, 2, 4]
    assert scaling.host_counts(5) == [1, 2, 4, 5] and scaling.host_counts(12) == [1, 2, 4, 8, 12]
    rr = [{"iops": 900, "jobs": 1, "iodepth": 8}, {"iops": 1_500, "jobs": 2, "iodepth": 16}]
    assert scaling.peak_load(rr)["iodepth"] == 16 and scaling.peak_load([]) == {"jobs": 1, "iodepth": 32}
    # 3 hosts at once, 6,000 IOPS: 2,000 a host; the worst host's p99 is the largest of theirs, a host
    # without a p99 left out
    agg = {"hosts": 3, "iops": 6_000, "lat_us": {"p99": 700}, "raw": "x.json"}
    hosts = [{"iops": 2_100, "lat_us": {"p99": 650}}, {"iops": 1_900, "lat_us": {"p99": 810}},
             {"iops": 2_000, "lat_us": None}]
    s = scaling.step(agg, hosts)
    assert (s["iops_per_host"], s["lat_us_p99"], s["worst_host_lat_us_p99"]) == (2_000, 700, 810)
    assert s["host_iops"] == [2_100, 1_900, 2_000] and s["raw"] == "x.json"


def test_plan_value_prices_the_fleets_aggregate(tmp_path):
    """`plan value --result` of a fleet probe reads the aggregate (the document's one target): doubling the
    aggregate's 4 KiB random-read peak doubles IOPS per dollar; the hosts' own figures play no part."""
    from conftest import call_main
    from samples import run_dir
    src = DATA.parent / "probe" / "fleet-2hosts-quick.json"
    doc = json.loads(src.read_text())
    doc["aggregate"]["summary"]["read_iops_4k"] *= 2
    doc["targets"] = [doc["aggregate"]]
    for h in doc["hosts"]:
        h["targets"][0]["summary"]["read_iops_4k"] = 1.0
    doubled = tmp_path / "doubled.json"
    doubled.write_text(json.dumps(doc))

    def value(path):
        run = run_dir(tmp_path / "runs", path.stem, path)
        r = call_main("plan", "value", "--result", str(run), "--config", "nvme-enterprise-3.84tb:8:raid10",
                      "--json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["value"]["iops_per_usd_read_4k"]
    assert value(doubled) == pytest.approx(2 * value(src))
