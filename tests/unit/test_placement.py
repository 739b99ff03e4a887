"""The placement matrix, defined once in dbtier.model.placement: what bench runs, what the report
names and what the cache guard judges all come from it."""

from dbtier.model import guards, placement
from dbtier.report.figures import core as figures


def test_the_six_steps_in_order():
    assert [n for n, _ in placement.MATRIX] == ["all-slow", "index-fast", "tables-fast", "wal-fast", "temp-fast",
                                               "all-fast"]
    assert dict(placement.MATRIX)["tables-fast"] == {"data": "FAST", "index": "FAST", "wal": "SLOW", "temp": "SLOW"}
    assert dict(placement.MATRIX)["all-slow"] == {"data": "SLOW"}


def test_moves_and_read_steps_derive_from_the_steps():
    assert placement.MATRIX_MOVES == {"index-fast": "indexes", "tables-fast": "tables", "wal-fast": "WAL",
                                      "temp-fast": "temp"}
    assert list(placement.MATRIX_MOVES.values()) == ["indexes", "tables", "WAL", "temp"]   # step order
    assert placement.READ_STEPS == ("index-fast", "tables-fast")
    # the report and the guard use the same objects, not copies
    assert figures.ALL_MATRIX_MOVES is placement.ALL_MATRIX_MOVES
    assert guards.ALL_READ_STEPS is placement.ALL_READ_STEPS
    assert set(placement.STEP_LABELS) == {n for n, _ in placement.MATRIX}


def test_matrix_steps_put_the_two_directories_in():
    steps = placement.matrix_steps("/f", "/s")
    assert steps[0] == ("all-slow", {"data": "/s"})
    assert steps[1] == ("index-fast", {"data": "/s", "index": "/f"})
    assert steps[3] == ("wal-fast", {"data": "/f", "index": "/f", "temp": "/s"})
    assert steps[-1] == ("all-fast", {"data": "/f"})
    assert len(steps) == 6
    # the definition itself is untouched
    assert dict(placement.MATRIX)["all-fast"] == {"data": "FAST"}


def test_both_matrices_looked_up_by_step_name():
    # the names the two matrices share mean the same move in both
    for name in set(placement.MATRIX_MOVES) & set(placement.INNODB_MATRIX_MOVES):
        assert placement.MATRIX_MOVES[name] == placement.INNODB_MATRIX_MOVES[name]
    assert placement.ALL_MATRIX_MOVES == {"index-fast": "indexes", "tables-fast": "tables", "wal-fast": "WAL",
                                          "temp-fast": "temp", "redo-fast": "redo", "undo-fast": "undo"}
    assert placement.ALL_READ_STEPS == ("index-fast", "tables-fast")
    assert placement.step_of("redo-fast").moves == "redo"          # found in InnoDB's without the engine
    assert placement.step_label("tables-fast", "mariadb") == "+ tables (and their indexes) fast"
    assert placement.step_label("tables-fast", "postgres") == "+ tables fast"
    assert placement.step_label("tables-fast") == "+ tables fast"  # no engine: PostgreSQL's first
    assert placement.step_label("nope") == ""
    assert placement.engine_steps("mariadb") is placement.INNODB_STEPS
    assert placement.engine_steps(None) is placement.STEPS
