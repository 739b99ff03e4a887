"""The managed server's memory budget split (dbtier.measure.cgroup.budget_parts, small_data), worked by hand."""

from dbtier.measure.cgroup import budget_parts, small_data

MiB = 2**20


def test_the_default_budget_adds_the_clients_and_leaves_them_out_of_the_cache_part():
    # 2 GiB of data, 8 clients: cache part a quarter of the data (512 MiB), plus 8 x 6 MiB
    assert budget_parts(None, 2048 * MiB, 8, 128 * MiB) == (560 * MiB, 512 * MiB, 128 * MiB)
    # a small data set: the 128 MiB floor; shared_buffers capped at a quarter of it
    assert budget_parts(None, 100 * MiB, 1, 128 * MiB) == (134 * MiB, 128 * MiB, 32 * MiB)


def test_a_given_budget_is_all_cache():
    # 100 MiB given: shared_buffers a quarter of it, 25 MiB (3200 pages of 8 kB)
    assert budget_parts(100 * MiB, 10 * 2**30, 32, 128 * MiB) == (100 * MiB, 100 * MiB, 25 * MiB)


def test_small_data_is_under_four_times_the_cache_part():
    assert small_data(300 * MiB, 100 * MiB) is True
    assert small_data(400 * MiB, 100 * MiB) is False


def test_spare_bytes_is_free_space_past_the_margin(tmp_path, monkeypatch):
    import os

    from dbtier.measure import probe

    class St:   # 100 GiB filesystem, 30 GiB available to us, in 4 KiB fragments
        f_frsize, f_blocks, f_bavail = 4096, 100 * 2**30 // 4096, 30 * 2**30 // 4096
    monkeypatch.setattr(os, "statvfs", lambda p: St)
    # margin: 10% of 100 GiB (10 GiB) is more than the 512 MiB floor
    assert probe.spare_bytes(str(tmp_path), 10) == 20 * 2**30
    # 0%: the floor, min(512 MiB, 5% of 100 GiB) = 512 MiB, stays
    assert probe.spare_bytes(str(tmp_path), 0) == 30 * 2**30 - 512 * MiB
