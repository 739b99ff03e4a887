"""A virtual disk's rotational flag is its driver's default: `rotational` is null (unknown) there, the kernel's
flag kept as rotational_flag (measure/machine.py); on hand-made sysfs values, a hand-made /sys tree and, where
this machine has a virtio disk, the real /sys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbtier.measure.machine import ROTATIONAL_NOTE, block_device_info, is_virtual_disk, rotational_fields


@pytest.mark.parametrize("disk, driver, vendor, model", [
    ("vda", "virtio_blk", "0x1af4", None),          # virtio_blk, as this project's VM has it
    ("vdb", None, None, None),                      # by name alone
    ("xvda", None, None, None),                     # Xen blkfront
    ("sda", "sd", "0x1af4", None),                  # virtio's PCI vendor
    ("sda", "sd", "QEMU", "QEMU HARDDISK"),
    ("sdb", "sd", "VMware", "Virtual disk"),
    ("sdc", "sd", "Msft", "Virtual Disk"),
])
def test_virtual_disks(disk, driver, vendor, model):
    assert is_virtual_disk(disk, driver, vendor, model)


@pytest.mark.parametrize("disk, driver, vendor, model", [
    ("sda", "sd", "ATA", "Samsung SSD 870"),
    ("nvme0n1", "nvme", None, "Samsung SSD 980 PRO 1TB"),
    ("sdb", "sd", "SEAGATE", "ST20000NM007D"),
])
def test_physical_disks(disk, driver, vendor, model):
    assert not is_virtual_disk(disk, driver, vendor, model)


def test_rotational_of_a_virtual_disk_is_unknown():
    assert rotational_fields("1", True) == {"rotational": None, "rotational_flag": True,
                                            "rotational_note": "the kernel's flag is the hypervisor's default for a "
                                                               "virtual disk"}
    assert rotational_fields("0", True)["rotational"] is None


def test_rotational_of_a_physical_disk_is_the_flag():
    assert rotational_fields("1", False) == {"rotational": True, "rotational_flag": True}
    assert rotational_fields("0\n", False) == {"rotational": False, "rotational_flag": False}
    assert rotational_fields(None, False) == {"rotational": None, "rotational_flag": None}


def _disk(root: Path, name: str, devnum: str, rotational: str, vendor: str | None, driver: str) -> None:
    disk = root / "devices" / name
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "rotational").write_text(rotational + "\n")
    (disk / "device").mkdir()
    if vendor:
        (disk / "device" / "vendor").write_text(vendor + "\n")
    drv = root / "bus" / "drivers" / driver
    drv.mkdir(parents=True)
    (disk / "device" / "driver").symlink_to(drv)
    (root / "dev" / "block").mkdir(parents=True, exist_ok=True)
    (root / "dev" / "block" / devnum).symlink_to(disk)


def test_block_device_info_on_a_made_sysfs(tmp_path):
    _disk(tmp_path, "vda", "252:0", "1", "0x1af4", "virtio_blk")
    _disk(tmp_path, "sda", "8:0", "1", "SEAGATE", "sd")
    vda = block_device_info(252, 0, str(tmp_path))
    assert (vda["virtual"], vda["rotational"], vda["rotational_flag"], vda["rotational_note"]) == \
        (True, None, True, ROTATIONAL_NOTE)
    sda = block_device_info(8, 0, str(tmp_path))
    assert (sda["virtual"], sda["rotational"], sda["rotational_flag"]) == (False, True, True)
    assert "rotational_note" not in sda


@pytest.mark.skipif(not Path("/sys/block/vda").exists(), reason="no virtio disk vda on this machine")
def test_this_machines_virtio_disk():
    major, minor = (int(x) for x in Path("/sys/block/vda/dev").read_text().split(":"))
    flag = Path("/sys/block/vda/queue/rotational").read_text().strip() == "1"
    info = block_device_info(major, minor)
    assert info["virtual"] is True
    assert info["rotational"] is None and info["rotational_flag"] is flag
    assert info["rotational_note"] == ROTATIONAL_NOTE
    assert os.path.basename(os.path.realpath("/sys/block/vda/device/driver")) == info["driver"]
