"""The devices of a simulation: each role of a design (the device, the cache and its backing, the
mirror's sides) resolved to a device model from a catalog id, a probe run directory or a cloud volume.

A device ID is a catalog id (`dbtier catalog list`), a probe run directory (`RUN_DIR`, `RUN_DIR#N`
for its N-th target), or a cloud volume (`cloud:aws:gp3:size=1000,iops=6000`: its grammar and model in
cloudvolume.py). numpy and numba load only when a model is built (`latency` is imported inside).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import load_catalog
from dbtier.results.store import load_run
from dbtier.sim import names

if TYPE_CHECKING:
    from dbtier.sim.device import latency


def device(value: str, catalog_files: Sequence[str], catalog_cache: dict[str, Any]) -> latency.DeviceModel:
    """A catalog id, a probe run directory (RUN_DIR or RUN_DIR#N) or a cloud volume (cloud:...)."""
    from dbtier.sim.device import latency
    if value.startswith(names.CLOUD_PREFIX):
        from dbtier.model.cloud import volumes as cloud
        from dbtier.sim.device import cloudvolume
        if "cloud_types" not in catalog_cache:          # the data file is read once for all roles
            catalog_cache["cloud_types"] = cloud.load_volume_types()
        return cloudvolume.device(value, catalog_cache["cloud_types"])
    path, _, num = value.partition("#")
    if os.sep in value or Path(path).is_dir() or Path(path).name == "result.json":
        target = None
        if num:
            if not (num.isascii() and num.isdigit() and len(num) < 10):   # '²'.isdigit() is True too
                raise DbtierError(f"'{value}': the part after # must be a target number", f"e.g. {path}#1")
            target = int(num)
        return latency.from_probe(load_run(path), path, target)
    if "catalog" not in catalog_cache:
        catalog_cache["catalog"] = load_catalog(catalog_files)
    return latency.from_catalog(catalog_cache["catalog"].device(value))


def resolve(design: str, named: dict[str, str], probe: str | None,
            catalog_files: Sequence[str] = ()) -> dict[str, latency.DeviceModel]:
    """The device model of each role of the design, from the IDs the command line named (role -> ID);
    `probe` (a probe run directory) fills the one role left open."""
    named = dict(named)
    roles = names.ROLES[design]
    stray = [r for r in named if r not in roles]
    if stray:
        raise DbtierError(f"--{stray[0]} does not apply to --design {design} (its devices: "
                          + ", ".join(f"--{r}" for r in roles) + ")", f"drop --{stray[0]}")
    if probe:
        open_roles = [r for r in roles if r not in named]
        if len(open_roles) != 1:
            raise DbtierError(f"--probe fills the one device role left open, but {len(open_roles)} are open "
                              f"({', '.join('--' + r for r in open_roles) or 'none'})",
                              "name the other devices, or pass the probe run to a role: --backing RUN_DIR")
        named[open_roles[0]] = probe
    missing = [r for r in roles if r not in named]
    if missing:
        raise DbtierError(f"--design {design} needs " + " and ".join(f"--{r} ID" for r in missing),
                          "ID is a catalog device id (`dbtier catalog list`), a probe run directory or a "
                          f"cloud volume ({names.CLOUD_EXAMPLE})")
    catalog_cache: dict[str, Any] = {}
    return {r: device(named[r], catalog_files, catalog_cache) for r in roles}
