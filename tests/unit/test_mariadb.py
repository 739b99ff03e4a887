"""The managed MariaDB server's pure parts: its settings as my.cnf lines, durable(), the --dsn URL, the
refusal of index placement and InnoDB's placement matrix. Nothing here starts a server."""

from __future__ import annotations

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model import placement
from dbtier.workloads import mariadb
from dbtier.workloads.mariadb import Settings, check_placement, cnf_lines, durable, parse_dsn, redact_mysql_dsn


# ------------------------------------------------------------------ settings
def test_default_settings_lines():
    lines = cnf_lines(Settings().conf())
    assert lines == [
        "innodb_buffer_pool_size = 128M",
        "innodb_flush_log_at_trx_commit = 1",
        "innodb_doublewrite = ON",
        "innodb_flush_method = O_DIRECT",
        "performance_schema = ON",
        "max_connections = 200",
        "performance-schema-instrument = 'wait/%=ON'",
        "performance-schema-consumer-events-waits-current = ON",
    ]
    assert "sync_binlog" not in Settings().conf()      # no binary log, nothing to sync


def test_settings_with_binlog_and_relaxed_durability():
    c = Settings(innodb_flush_log_at_trx_commit=2, sync_binlog=0, innodb_doublewrite=False, binlog=True,
                 performance_schema=False, innodb_buffer_pool_size="1G", innodb_flush_method="fsync",
                 extra={"max_connections": "50", "innodb_io_capacity": "2000"}).conf()
    assert c["innodb_flush_log_at_trx_commit"] == "2"
    assert c["innodb_doublewrite"] == "OFF"
    assert c["sync_binlog"] == "0" and c["binlog_format"] == "ROW"
    assert c["performance_schema"] == "OFF" and "performance-schema-instrument" not in c
    assert c["innodb_buffer_pool_size"] == "1G" and c["innodb_flush_method"] == "fsync"
    assert c["max_connections"] == "50" and c["innodb_io_capacity"] == "2000"   # extra wins


@pytest.mark.parametrize("kw, needle", [
    ({"innodb_flush_log_at_trx_commit": 3}, "innodb_flush_log_at_trx_commit 3"),
    ({"sync_binlog": -1}, "sync_binlog -1"),
    ({"innodb_flush_method": "O_SYNC"}, "innodb_flush_method 'O_SYNC'"),
    ({"innodb_buffer_pool_size": "lots"}, "innodb_buffer_pool_size 'lots'"),
    ({"max_connections": 0}, "max_connections 0"),
])
def test_bad_settings_are_refused(kw, needle):
    with pytest.raises(DbtierError) as e:
        Settings(**kw).check()
    assert needle in e.value.message


def test_good_settings_pass():
    for ok in (Settings(), Settings(innodb_flush_log_at_trx_commit=0, innodb_buffer_pool_size="64m"),
               Settings(innodb_flush_method="O_DIRECT_NO_FSYNC", sync_binlog=1000)):
        ok.check()


# ------------------------------------------------------------------ durable (worked by hand)
@pytest.mark.parametrize("kw, expect, word", [
    ({}, True, "binary log off"),                                          # the defaults
    ({"binlog": True, "sync_binlog": 1}, True, "sync_binlog=1"),
    ({"binlog": False, "sync_binlog": 0}, True, "binary log off"),        # sync_binlog moot without a binlog
    ({"innodb_flush_log_at_trx_commit": 2}, False, "innodb_flush_log_at_trx_commit=2"),
    ({"innodb_flush_log_at_trx_commit": 0}, False, "innodb_flush_log_at_trx_commit=0"),
    ({"innodb_doublewrite": False}, False, "innodb_doublewrite=OFF"),
    ({"binlog": True, "sync_binlog": 0}, False, "sync_binlog=0"),
    ({"binlog": True, "sync_binlog": 100}, False, "sync_binlog=100"),
    ({"innodb_flush_method": "nosync"}, False, "nosync"),
    ({"innodb_flush_method": "O_DSYNC"}, True, "doublewrite on"),
    # two faults: the first in the rule's order (flush at commit) is named
    ({"innodb_flush_log_at_trx_commit": 2, "innodb_doublewrite": False}, False, "trx_commit=2"),
])
def test_durable(kw, expect, word):
    ok, why = durable(Settings(**kw))
    assert ok is expect
    assert word in why


# ------------------------------------------------------------------ placement
def test_index_placement_is_refused_with_the_reason():
    with pytest.raises(DbtierError) as e:
        check_placement({"data": "/a", "index": "/b"}, binlog=False)
    assert "index=/b" in e.value.message
    assert "indexes in the table's own file" in e.value.message


def test_unknown_role_and_binlog_without_binary_logging_are_refused():
    with pytest.raises(DbtierError, match="no role 'wal'"):
        check_placement({"wal": "/a"}, binlog=False)
    with pytest.raises(DbtierError, match="binary logging is off"):
        check_placement({"binlog": "/a"}, binlog=False)
    check_placement({"data": "/a", "redo": "/b", "undo": "/c", "temp": "/d", "binlog": "/e"}, binlog=True)


def test_innodb_matrix_steps():
    assert [n for n, _ in placement.INNODB_MATRIX] == ["all-slow", "redo-fast", "undo-fast", "tables-fast",
                                                      "temp-fast", "all-fast"]
    m = dict(placement.INNODB_MATRIX)
    assert m["all-slow"] == {"data": "SLOW"}
    assert m["redo-fast"] == {"data": "SLOW", "redo": "FAST"}
    assert m["tables-fast"] == {"data": "FAST", "redo": "FAST", "undo": "FAST", "temp": "SLOW"}
    assert m["all-fast"] == {"data": "FAST"}
    assert placement.INNODB_MATRIX_MOVES == {"redo-fast": "redo", "undo-fast": "undo", "tables-fast": "tables",
                                             "temp-fast": "temp"}
    assert placement.INNODB_READ_STEPS == ("tables-fast",)
    for _, pl in placement.INNODB_MATRIX:    # only roles the server places; never index
        assert set(pl) <= set(mariadb.ROLES) and "index" not in pl
        check_placement(pl, binlog=False)
    # each step moves one more role to FAST (where data goes when unnamed), until all are
    where = [{r: pl.get(r, pl["data"]) for r in ("data", "redo", "undo", "temp")} for _, pl in placement.INNODB_MATRIX]
    fast = [sum(v == "FAST" for v in w.values()) for w in where]
    assert fast == [0, 1, 2, 3, 4, 4]
    # PostgreSQL's matrix is untouched
    assert [n for n, _ in placement.MATRIX][1] == "index-fast"
    assert placement.matrix_steps("/f", "/s", placement.INNODB_MATRIX)[1] == ("redo-fast", {"data": "/s", "redo": "/f"})


# ------------------------------------------------------------------ DSN
def test_dsn_parsing():
    assert parse_dsn("mysql://bench@db1:3307/") == mariadb.Dsn("bench", "db1", 3307)
    assert parse_dsn("mysql://bench@db1") == mariadb.Dsn("bench", "db1", 3306)
    assert parse_dsn("mariadb://127.0.0.1:3306/") == mariadb.Dsn(None, "127.0.0.1", 3306)
    assert parse_dsn("  mysql://a%40b@[::1]:3310/ ") == mariadb.Dsn("a@b", "::1", 3310)
    assert parse_dsn("mysql://bench@db1:3307/").shown() == "mysql://bench@db1:3307/"


@pytest.mark.parametrize("dsn, needle", [
    ("mysql://bench:s3cret@db1:3306/", "a password in the DSN is refused"),
    ("mysql://bench:@db1/", "a password in the DSN is refused"),
    ("postgresql://bench@db1/", "not a mysql:// URL"),
    ("host=db1 user=bench", "not a mysql:// URL"),
    ("mysql://bench@db1/shop", "a database name ('shop')"),
    ("mysql://bench@/", "no host"),
    ("mysql://bench@db1:99999/", "not a valid URL"),
    ("mysql://bench@db1/?ssl=1", "options after ?"),
])
def test_bad_dsns_are_refused_and_never_show_a_password(dsn, needle):
    with pytest.raises(DbtierError) as e:
        parse_dsn(dsn)
    assert needle in e.value.message
    assert "s3cret" not in str(e.value)


def test_redaction():
    assert redact_mysql_dsn("mysql://bench:s3cret@db1:3306/") == "mysql://bench:***@db1:3306/"
    assert redact_mysql_dsn("mysql://bench@db1:3306/") == "mysql://bench@db1:3306/"
    with pytest.raises(DbtierError) as e:
        parse_dsn("mysql://bench:s3cret@db1:3306/")
    assert "mysql://bench:***@db1:3306/" in e.value.message
