"""Device resolution of `simulate run` (dbtier.sim.device.devices): catalog ids, probe runs, and the
role the --probe run fills."""

import json

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import load_catalog
from dbtier.sim.device.devices import device, resolve
from samples import PROBE, run_dir


def _catalog_ids(n=2):
    return list(load_catalog().devices)[:n]


def test_a_catalog_id_takes_the_catalog_figures():
    cid = _catalog_ids(1)[0]
    d = load_catalog().device(cid)
    got = resolve("single", {"device": cid}, None)
    assert list(got) == ["device"]
    m = got["device"]
    assert (m.id, m.read_iops, m.write_mbps, m.read_latency_us) == (cid, d.read_iops, d.write_mbps,
                                                                  d.read_latency_us)


def test_the_probe_run_fills_the_open_role(tmp_path):
    run = run_dir(tmp_path, "probe", PROBE)
    s = json.loads(PROBE.read_text())["targets"][0]["summary"]
    cid = _catalog_ids(1)[0]
    got = resolve("read-cache", {"cache": cid}, str(run))
    assert list(got) == ["cache", "backing"]
    assert got["backing"].read_iops == float(s["read_iops_4k"])
    assert got["backing"].write_latency_us == float(s["write_lat_us_qd1_p50"])
    # the same run named with its target number
    assert device(f"{run}#1", [], {}).read_mbps == float(s["read_mbps_seq"])


def test_misnamed_roles_are_refused():
    a, b = _catalog_ids(2)
    with pytest.raises(DbtierError, match="--cache does not apply to --design single"):
        resolve("single", {"device": a, "cache": b}, None)
    with pytest.raises(DbtierError, match="needs --fast ID and --slow ID"):
        resolve("preferred-read-mirror", {}, None)
    with pytest.raises(DbtierError, match="but 2 are open"):
        resolve("preferred-read-mirror", {}, "somewhere")


def test_a_bad_target_number_is_refused(tmp_path):
    run = run_dir(tmp_path, "probe", PROBE)
    with pytest.raises(DbtierError, match="must be a target number"):
        device(f"{run}#²", [], {})


def test_the_named_mapping_is_not_changed(tmp_path):
    run = run_dir(tmp_path, "probe", PROBE)
    named = {"cache": _catalog_ids(1)[0]}
    resolve("read-cache", named, str(run))
    assert list(named) == ["cache"]
