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


def test_a_pool_that_bypasses_the_page_cache_gets_the_whole_cache_part_of_a_quarter_of_the_data():
    # InnoDB with O_DIRECT (share 1): the pool is all the cache, so its part is a quarter of the data with
    # PostgreSQL's shared_buffers floor (32 MiB), not the 128 MiB floor, which held a small data set whole.
    # 183 MiB of data, 2 clients: 183 / 4 = 45.75 MiB (5,856 pages of 8 kB), plus 2 x 6 MiB
    assert budget_parts(None, 183 * MiB, 2, 128 * MiB, share=1) == (45.75 * MiB + 12 * MiB, 45.75 * MiB, 45.75 * MiB)
    # 95 MiB (one TPC-C warehouse in MariaDB): a quarter is 23.75 MiB, under the 32 MiB floor
    assert budget_parts(None, 95 * MiB, 4, 128 * MiB, share=1) == (56 * MiB, 32 * MiB, 32 * MiB)
    # PostgreSQL's shared_buffers a quarter of the 128 MiB floor, the rest page cache
    assert budget_parts(None, 183 * MiB, 2, 128 * MiB) == (140 * MiB, 128 * MiB, 32 * MiB)
    # 2 GiB: both cache a quarter of the data set (512 MiB), InnoDB in its pool (1 GiB asked, more than the part)
    assert budget_parts(None, 2048 * MiB, 8, 1024 * MiB, share=1) == (560 * MiB, 512 * MiB, 512 * MiB)
    # the pool asked for stays the cap: 64 MiB asked of a 100 MiB budget
    assert budget_parts(100 * MiB, 10 * 2**30, 32, 64 * MiB, share=1) == (100 * MiB, 100 * MiB, 64 * MiB)


def test_innodbs_share_follows_its_flush_method():
    from dbtier.workloads.engine import engine_class
    maria, pg = engine_class("mariadb", "oltp"), engine_class("postgres", "oltp")
    assert maria.buffer_share({"innodb_flush_method": "O_DIRECT"}) == 1
    assert maria.buffer_share({"innodb_flush_method": "fsync"}) == 4       # reads through the page cache
    assert pg.buffer_share({"shared_buffers": "128MB"}) == 4


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
