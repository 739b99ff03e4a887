"""The shipped catalog data says where each figure came from: no figure is left 'as recalled'."""

from __future__ import annotations

import tomllib
from pathlib import Path

import dbtier.catalog

CATALOG_DIR = Path(dbtier.catalog.__file__).parent
SHIPPED = sorted(CATALOG_DIR.glob("*.toml"))


def _entries(data):
    for value in data.values():
        if isinstance(value, list):
            yield from (e for e in value if isinstance(e, dict))
        elif isinstance(value, dict):
            yield from (e for e in value.values() if isinstance(e, dict))


def test_catalog_files_found():
    names = {p.name for p in SHIPPED}
    assert {"current.toml", "legacy.toml", "instances.toml", "cloud_volumes.toml"} <= names


def test_no_shipped_figure_is_as_recalled():
    # A figure is either checked against a named source or said plainly to be an estimate.
    offenders = [
        f"{path.name}:{lineno}"
        for path in SHIPPED
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "as recalled" in line.lower()
    ]
    assert offenders == []


def test_server_idle_is_not_a_link_power_state_figure():
    # Servers leave PCIe ASPM / NVMe APST / SATA link power management off, so no drive idles
    # at the tens of milliwatts a client datasheet quotes: every idle figure is at least 0.1 W.
    low = []
    for name in ("current.toml", "legacy.toml"):
        data = tomllib.loads((CATALOG_DIR / name).read_text(encoding="utf-8"))
        for entry in _entries(data):
            idle = entry.get("idle_watts")
            if idle is not None and idle < 0.1:
                low.append((name, entry.get("id"), idle))
    assert low == []


def test_every_powered_device_says_where_its_watts_came_from():
    missing = []
    for name in ("current.toml", "legacy.toml"):
        data = tomllib.loads((CATALOG_DIR / name).read_text(encoding="utf-8"))
        for entry in _entries(data):
            if "idle_watts" in entry or "active_watts" in entry:
                source = entry.get("source", "")
                if " W" not in source:
                    missing.append(entry.get("id"))
    assert missing == []
