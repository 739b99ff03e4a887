"""core.errors.expect: what only a fault in dbtier leaves unset is named as that fault, and nothing that is
set (a zero, an empty string or list, False) is taken for unset."""

from __future__ import annotations

import pytest

from dbtier.core.errors import DbtierError, expect


def test_a_set_value_comes_back_as_it_is_even_when_it_is_falsy():
    row = (3,)
    assert expect(row, "no row") is row
    for falsy in (0, 0.0, "", [], (), False):
        assert expect(falsy, "unset") is falsy


def test_an_unset_value_is_a_runtime_error_naming_the_fault_not_a_users_error():
    with pytest.raises(RuntimeError, match="^the PostgreSQL engine is not open$") as info:
        expect(None, "the PostgreSQL engine is not open")
    assert not isinstance(info.value, DbtierError)


def test_an_engine_read_before_open_names_the_fault():
    from dbtier.workloads.engine_postgres import PostgresEngine
    engine = PostgresEngine.__new__(PostgresEngine)     # no open(): nothing set
    engine.db = engine.cluster = engine.conn = None
    for prop, words in (("_db", "not open"), ("_cluster", "no managed PostgreSQL cluster"),
                        ("_conn", "no PostgreSQL query connection")):
        with pytest.raises(RuntimeError, match=words):
            getattr(engine, prop)
