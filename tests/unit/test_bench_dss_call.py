"""`dbtier bench dss` as a library call (dbtier.workloads.dss): the request's refusals, each in the command's
words, and the call itself on a stand-in engine (no database): the same section, in the same key order, as
the command stores, saved after the load and after every query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_clean_error, call_main, refused_with
from dbtier.core.errors import DbtierError
from dbtier.results.store import RunDir
from dbtier.workloads import dss
from dbtier.workloads.dss import BenchDss, DssRequest, PowerShow
from dbtier.workloads.engine import Engine, engine_class


def _refused(needle: str, **kw: Any) -> DbtierError:
    return refused_with(needle, lambda: DssRequest(**kw))


def test_each_refusal_in_the_commands_words(tmp_path, monkeypatch):
    d = str(tmp_path)
    _refused("unknown engine 'oracle'", engine="oracle", data=d)
    _refused("--queries: TPC-H has queries 1 to 22 (got 0,23)", queries=(0, 23), data=d)
    _refused("--queries: TPC-H has queries 1 to 22 (got )", queries=(), data=d)
    _refused("--scale must be positive, got 0", scale=0, data=d)
    _refused("--scale must be positive, got nan", scale=float("nan"), data=d)
    _refused("--repeat must be at least 1, got 0", repeat=0, data=d)
    _refused(f"--data {tmp_path / 'no'}: no such directory", data=str(tmp_path / "no"))
    _refused(f"--temp {tmp_path / 'no'}: no such directory", data=d, temp=str(tmp_path / "no"))
    _refused("not enough memory for TPC-H SF 100000: generating it needs about 120000.0 GB", scale=100_000, data=d)
    _refused("--memory applies to --engine duckdb only", engine="postgres", memory=512 * 2**20, data=d)
    _refused("neither the --temp nor the --data directory", temp=d, emulate="/elsewhere=150iops", data=d)
    _refused("cannot read the rate 'fast'", temp=d, emulate=f"{d}=fast", data=d)
    _refused("--probe (the probe document given): not a probe run (bench)", probe_doc={"command": "bench"}, data=d)
    _refused("has no machine.targets list", probe_doc={"command": "probe", "machine": {}}, data=d)
    monkeypatch.setattr(engine_class("postgres", "dss"), "check", classmethod(lambda cls: None))
    _refused("--compression off applies to DuckDB only", engine="postgres", compression="off", data=d)
    monkeypatch.setattr(dss, "spare_bytes", lambda path, margin_pct: 0)
    e = _refused("not enough disk for TPC-H SF 0.5 on duckdb: it needs about", scale=0.5, data=d)
    assert f"in {d}, which has 0.0 GB to spare" in e.message
    monkeypatch.undo()
    monkeypatch.setenv("DBTIER_TPCH_EXTENSION", str(tmp_path / "none.duckdb_extension"))
    _refused("the tpch extension for DuckDB", data=d)


def test_a_request_is_checked_and_derives_what_the_run_needs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    req = DssRequest(scale=0.1, data=".", temp="t", queries=(6, 1, 6), memory_limit="60MB",
                     emulate="t=150riops,300wiops")
    assert (req.data, req.temp, req.queries) == (str(tmp_path), str(tmp_path / "t"), (1, 6))   # absolute
    assert req.budget_bytes == 60 * 2**20 + 128 * 2**20
    assert req.estimate == pytest.approx({"disk_gb": 0.03, "memory_gb": 0.12})
    assert req.emulation is not None and (req.emulation.read_iops, req.emulation.write_iops) == (150, 300)
    assert DssRequest(scale=0.1, data=".", memory_limit="60MB", memory="none").budget_bytes is None
    with pytest.raises(AttributeError):
        req.scale = 2     # type: ignore[misc]
    assert dss.parse_queries("3,1-2, 2") == (1, 2, 3)
    for text, needle in (("0,23", r"queries 1 to 22 \(got 0,23\)"), ("1-x", "is not a list of query numbers")):
        with pytest.raises(DbtierError, match=needle):
            dss.parse_queries(text)


class FakeDss(Engine):
    """A DSS engine without a database: open() makes its data and temp directories, every query answers
    one row at once."""
    name = label = "duckdb"

    @classmethod
    def check(cls) -> None:
        return None

    def open(self) -> None:
        self.db_path = Path(self.spec.placement["data"]) / "fake-dss" / "tpch.db"
        self.temp_path = Path(self.spec.placement.get("temp") or self.db_path.parent) / "fake-dss-temp"
        self.db_path.parent.mkdir()
        self.temp_path.mkdir()
        self.db_path.write_bytes(b"x" * 1000)

    def load_tpch(self, scale: float) -> dict[str, Any]:
        return {"scale": scale, "database_bytes": 1000, "seconds": 0.5}

    def connect(self) -> None:
        return None

    def close_conn(self) -> None:
        return None

    def run_query(self, q: int) -> list[tuple[int]]:
        return [(q,)]

    def server_log(self) -> None:
        return None

    def close(self) -> None:
        for p in (self.temp_path, self.db_path, self.db_path.parent):
            if p.is_dir():
                p.rmdir()
            elif p.exists():
                p.unlink()


def _with_fake(monkeypatch) -> None:
    real = engine_class

    def pick(name: str, kind: str) -> type[Engine]:
        return FakeDss if (name, kind) == ("duckdb", "dss") else real(name, kind)
    import dbtier.cli.bench.dss as cli_dss
    monkeypatch.setattr(dss, "engine_class", pick)
    monkeypatch.setattr(cli_dss, "engine_class", pick)
    monkeypatch.setattr(dss, "drop_caches", lambda: False)     # the cold run without emptying this machine's cache


def _stable(rec: dict[str, Any]) -> tuple:
    return rec["query"], rec["run"], rec["cold"], rec["rows"], rec["answer_ok"], rec["temp_bytes"]


def test_the_call_gives_the_section_the_command_stores(tmp_path, monkeypatch):
    _with_fake(monkeypatch)
    data, temp = tmp_path / "data", tmp_path / "temp"
    data.mkdir()
    temp.mkdir()
    # SF 0.02 has no reference answers: nothing is asked of DuckDB
    argv = ("--scale", "0.02", "--repeat", "2", "--queries", "6,1", "--data", str(data), "--temp", str(temp))
    r = call_main("bench", "dss", *argv, "--json", "--out", str(tmp_path / "cli"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == json.loads((tmp_path / "cli" / "result.json").read_text())

    (tmp_path / "lib").mkdir()
    req = DssRequest(scale=0.02, repeat=2, queries=(1, 6), data=str(data), temp=str(temp))
    started: list[dict[str, Any]] = []
    saved: list[dict[str, Any]] = []
    shown: list[Any] = []

    def start(params: dict[str, Any]) -> RunDir:
        started.append(params)
        return RunDir(tmp_path / "lib")

    def show(total: int):
        import contextlib
        shown.append(total)
        return contextlib.nullcontext(PowerShow(lambda n, cold: shown.append((n, cold)),
                                                lambda rec: shown.append(rec["query"])))

    res = dss.run(req, start, lambda section: saved.append(json.loads(json.dumps(section))), show)
    assert isinstance(res, BenchDss) and res.kind == doc["result_kind"] == "bench.dss"
    assert len(started) == 1 and dict(res.params) == {**started[0], "queries": (1, 6)}
    assert json.loads(json.dumps(started[0])) == doc["params"] and list(started[0]) == list(doc["params"])
    mine = res.to_json()
    envelope = [k for k in doc if k not in mine]
    assert envelope == list(doc)[:len(envelope)]                # the section follows the envelope, in its order
    assert list(mine) == list(doc)[len(envelope):]
    assert [_stable(x) for run in mine["runs"] for x in run] == [_stable(x) for run in doc["runs"] for x in run] \
        == [(q, n, n == 1, 1, None, 0) for n in (1, 2) for q in (1, 6)]
    assert [q["query"] for q in mine["queries"]] == [1, 6] and list(mine["queries"][0]) == list(doc["queries"][0])
    for k in ("bench", "engine", "scale", "placement", "load", "answers_ok", "answers_checked", "emulated",
              "emulated_roles", "memory", "devices"):
        assert mine[k] == doc[k], k
    assert shown == [4, (1, True), 1, 6, (2, False), 1, 6]
    # saved after the load (no query yet), after each of the 4 queries, and at the end: the section returned
    assert len(saved) == 6 and saved[0]["load"] and saved[0]["runs"] == [] and saved[-1] == mine
    assert [sum(len(run) for run in s["runs"]) for s in saved] == [0, 1, 2, 3, 4, 4]
    assert list(data.iterdir()) == [] and list(temp.iterdir()) == []


def test_the_engine_is_closed_and_the_section_saved_when_a_query_fails(tmp_path, monkeypatch):
    _with_fake(monkeypatch)

    def fail(self, q: int) -> list[tuple[int]]:
        raise RuntimeError("No space left on device")
    monkeypatch.setattr(FakeDss, "run_query", fail)
    saved: list[dict[str, Any]] = []
    (tmp_path / "lib").mkdir()
    req = DssRequest(scale=0.02, repeat=1, queries=(3,), data=str(tmp_path))
    with pytest.raises(DbtierError, match="query 3 failed on duckdb: No space left on device"):
        dss.run(req, lambda params: RunDir(tmp_path / "lib"), lambda s: saved.append(json.loads(json.dumps(s))))
    assert saved[-1]["runs"] == [[]] and saved[-1]["memory"]["mechanism"] == "none"
    assert not (tmp_path / "fake-dss").exists()
    r = call_main("bench", "dss", "--scale", "0.02", "--queries", "3", "--data", str(tmp_path), "--out",
                  str(tmp_path / "cli"), cwd=tmp_path)
    assert_clean_error(r, "query 3 failed on duckdb")
    assert json.loads((tmp_path / "cli" / "result.json").read_text())["status"] == "failed"
