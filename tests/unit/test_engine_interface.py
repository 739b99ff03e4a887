"""The engine interface (dbtier.workloads.engine): the registry, what each engine must implement for the
bench kinds it claims, placement parsing by the engine's roles, and the seam the CLI builds on -- an
engine added to the registry gets `--engine NAME` and its own options without a change in cli/."""

import inspect
from pathlib import Path

import pytest

from dbtier.cli.main import build_parser
from dbtier.cli.settings_options import engine_options
from dbtier.core.errors import DbtierError
from dbtier.model.placement import matrix_steps
from dbtier.workloads import engine as eng
from dbtier.workloads.oltp import Study
from dbtier.workloads.settings import Option

# The calls each bench kind makes (the module docstring's list): an engine claiming the kind overrides them.
NEEDS = {"oltp": ("open", "placement", "close", "load", "bound_memory", "run_point"),
         "dss": ("open", "placement", "close", "load_tpch", "connect", "run_query"),
         "backup": ("open", "close", "backup_source", "backup")}


def test_the_registry_names_each_kinds_engines_in_order():
    assert eng.names("oltp") == ("postgres", "mariadb")
    assert eng.names("dss") == ("postgres", "duckdb")
    assert eng.names("backup") == ("postgres", "duckdb", "mariadb")


@pytest.mark.parametrize("name", list(eng.ENGINES))
def test_each_engine_implements_what_its_kinds_call(name):
    cls = eng.engine_class(name, eng.KINDS[name][0])
    assert cls.name == name and issubclass(cls, eng.Engine)
    assert cls.kinds == eng.KINDS[name]      # the start-up map agrees with the class
    for kind in cls.kinds:
        for call in NEEDS[kind]:
            assert getattr(cls, call) is not getattr(eng.Engine, call), f"{name} claims {kind} but lacks {call}()"
    assert "data" in cls.roles


def test_an_engine_without_the_kind_is_refused_with_the_alternatives():
    with pytest.raises(DbtierError, match="the duckdb engine does not run `bench oltp`") as e:
        eng.engine_class("duckdb", "oltp")
    assert "postgres" in e.value.hint
    with pytest.raises(DbtierError, match="unknown engine 'oracle'"):
        eng.engine_class("oracle", "dss")


def test_placement_is_parsed_by_the_engines_roles():
    roles = ("data", "redo", "undo")
    assert eng.parse_placement("data=/a, redo=/b", roles) == {"data": "/a", "redo": "/b"}
    assert eng.parse_placement(None, roles) == {}
    with pytest.raises(DbtierError, match="unknown role 'wal'") as e:
        eng.parse_placement("wal=/b", roles)
    assert e.value.hint == "roles are data, redo, undo"
    with pytest.raises(DbtierError, match="redo is given twice"):
        eng.parse_placement("redo=/a,redo=/b", roles)
    with pytest.raises(DbtierError, match="is not ROLE=DIR"):
        eng.parse_placement("redo", roles)


def test_an_engines_own_matrix_takes_the_two_directories():
    matrix = (("all-slow", {"data": "SLOW"}), ("redo-fast", {"data": "SLOW", "redo": "FAST"}))
    assert matrix_steps("/f", "/s", matrix) == [("all-slow", {"data": "/s"}),
                                               ("redo-fast", {"data": "/s", "redo": "/f"})]


def test_a_failed_open_still_closes():
    calls = []

    class Broken(eng.Engine):
        def open(self):
            calls.append("open")
            raise DbtierError("would not start", "see the log")

        def close(self):
            calls.append("close")
    with pytest.raises(DbtierError):
        with Broken(eng.ServerSpec(Path("."))):
            pass
    assert calls == ["open", "close"]


def test_the_data_set_estimate_per_workload():
    # 5 warehouses x 110 MB; pgbench scale 20 x 16 MB
    s = Study("tpcc", 5, 10, [1], 1, 1.0, 0.0, None, None, None, "")
    assert s.data_bytes_estimate() == 550e6
    s.workload, s.scale = "tpcb", 20
    assert s.data_bytes_estimate() == 320e6


def test_postgres_settings_come_from_its_own_options():
    cls = eng.engine_class("postgres", "oltp")
    args = build_parser().parse_args(["bench", "oltp", "--shared-buffers", "64MB", "--synchronous-commit", "off",
                                      "--clients", "1,4"])
    opts = engine_options(cls, "oltp", args)
    conf = cls.settings(opts, [1, 4])
    assert conf["shared_buffers"] == "64MB" and conf["synchronous_commit"] == "off"
    assert conf["max_connections"] == "14"          # the largest client count + 10
    assert cls.buffer_request_bytes(opts) == 64 * 2**20
    assert cls.log_reserve_bytes(opts) == 2**30      # max_wal_size 1GB


def test_a_new_engine_is_one_registry_line_and_no_cli_change(monkeypatch):
    """The seam MariaDB will use: registered, it is an --engine choice with its own options."""
    class Toy(eng.Engine):
        name, kinds, roles = "toy", ("oltp",), ("data", "redo")

        @classmethod
        def options(cls, kind: str) -> tuple[Option, ...]:
            return (Option("--toy-flush", "1", choices=("0", "1", "2")),)
    import sys
    import types
    mod = types.ModuleType("dbtier_test_toy_engine")
    mod.Toy = Toy
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setitem(eng.ENGINES, "toy", f"{mod.__name__}:Toy")
    monkeypatch.setitem(eng.KINDS, "toy", ("oltp",))
    args = build_parser().parse_args(["bench", "oltp", "--engine", "toy", "--toy-flush", "2"])
    assert args.engine == "toy" and args.toy_flush == "2"
    assert eng.engine_class("toy", "oltp") is Toy
    # cli/ names no engine module: it reaches engines only through the registry
    import dbtier.cli.bench.command as bench
    assert "engine_postgres" not in inspect.getsource(bench) and "pgbench import" not in inspect.getsource(bench)


def test_postgres_says_how_pgbench_measures():
    cls = eng.engine_class("postgres", "oltp")
    assert cls.method(30.0, None) == {"latency": "per-transaction pgbench logs"}
    m = cls.method(2.5, 500.0)     # -T takes whole seconds: 2.5 runs 3
    assert m["latency"] == "per-transaction pgbench logs; from the scheduled start (open loop)"
    assert "--duration 2.5 ran 3 s per point" in m["duration_note"]
