"""`bench backup` as a library call: the request's refusals (each with the command's wording, before anything
is built), what it makes of its values, and the call's section (the keys of the command's document, in its
order), saved after each step and handed over when the call fails.

The backups need an engine; here a stand-in engine (the `Engine` interface: open, backup_source, backup,
close) gives records shaped as the real ones, so the call runs without one. The command's documents with the
real engines are the engine tests' (tests/e2e/test_bench_dss_backup.py, test_bench_oltp_mariadb.py)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from dbtier.cli.bench import backup as command
from dbtier.core.errors import DbtierError
from dbtier.model.dss import BACKUP_RULE
from dbtier.results.result import Frozen
from dbtier.results.store import RunDir
from dbtier.workloads import backup
from dbtier.workloads.backup import BackupRequest, BenchBackup
from dbtier.workloads.engine import Engine, engine_class


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    to, data = tmp_path / "to", tmp_path / "data"
    to.mkdir()
    data.mkdir()
    return to, data


@pytest.mark.parametrize("kw, message, hint", [
    ({"engine": "duckdb", "methods": ("plain",)}, "--methods does not apply to duckdb (it runs file copy, "
     "EXPORT DATABASE parquet)", "leave --methods out"),
    ({"methods": ("zip", "tar")}, "--methods: unknown method zip", "choose from plain, tar, tar-gzip"),
    ({"methods": ()}, "--methods: unknown method (none)", "choose from plain, tar, tar-gzip"),
    ({"engine": "mariadb", "methods": ("tar",)}, "--methods: unknown method tar",
     "choose from plain, stream, stream-gzip"),
    ({"scale": 0}, "--scale must be positive, got 0", "for example --scale 20"),
    ({"scale": float("nan")}, "--scale must be positive, got nan", "for example --scale 20"),
    ({"scale": 0.5}, "--scale 0.5: the postgres source is pgbench/sysbench data, whose scale is at least 1",
     "for example --scale 20"),
    ({"engine": "mariadb", "scale": 0.5}, "--scale 0.5: the mariadb source is pgbench/sysbench data, whose "
     "scale is at least 1", "for example --scale 20"),
])
def test_each_refusal_in_the_commands_words(tmp_path, kw, message, hint):
    to, data = _dirs(tmp_path)
    with pytest.raises(DbtierError) as e:
        BackupRequest(**{"to": str(to), "data": str(data), **kw})
    assert (e.value.message, e.value.hint) == (message, hint)


def test_directories_and_emulate_are_refused_naming_their_option(tmp_path):
    to, data = _dirs(tmp_path)
    for kw, flag, missing in (({"to": str(tmp_path / "nope"), "data": str(data)}, "--to", tmp_path / "nope"),
                              ({"to": str(to), "data": str(tmp_path / "gone")}, "--data", tmp_path / "gone")):
        with pytest.raises(DbtierError) as e:
            BackupRequest(**kw)
        assert (e.value.message, e.value.hint) == (f"{flag} {missing}: no such directory",
                                                   "create it, or pass an existing directory")
    elsewhere = tmp_path / "elsewhere"
    with pytest.raises(DbtierError) as e:
        BackupRequest(to=str(to), data=str(data), emulate=f"{elsewhere}=40MiBps")
    assert e.value.message == (f"--emulate {elsewhere}=40MiBps: {elsewhere} is neither --to ({to}) nor "
                               f"--data ({data})")
    assert e.value.hint == "emulate the backup target (--emulate TO_DIR=40MiBps) or the source's directory"
    with pytest.raises(DbtierError, match="cannot read the rate"):
        BackupRequest(to=str(to), data=str(data), emulate=f"{to}=40MiB")


def test_a_request_holds_its_values_checked(tmp_path, monkeypatch):
    _dirs(tmp_path)
    monkeypatch.chdir(tmp_path)
    req = BackupRequest(to="to", data="data", methods=["tar", "plain"], emulate=f"{tmp_path / 'to'}=40MiBps")
    # absolute, as the result says them; the methods a tuple; the options the engine's defaults; the rate parsed
    assert (req.to, req.data) == (str(tmp_path / "to"), str(tmp_path / "data"))
    assert req.methods == ("tar", "plain") and req.options == engine_class("postgres", "backup").options_type("backup")
    assert req.emulation is not None and req.emulation.write_bps == 40 * 2**20
    assert BackupRequest(to="to", data="data").methods == ("plain", "tar", "tar-gzip")        # all of the engine's
    assert BackupRequest(engine="duckdb", to="to", data="data", scale=0.01).methods == ()     # it has no choice
    with pytest.raises(AttributeError):
        req.scale = 5                                   # type: ignore[misc]


class _Engine(Engine):
    """Stands in for PostgreSQL: a source of `scale` and, per method, a backup to null and to the directory,
    each kept with its program output; `fail` raises after the first backup, as a full target does."""
    name = "postgres"
    kinds = ("backup",)
    backup_methods = ("plain", "tar")
    fail = False
    closed: list[str] = []

    def open(self) -> None:
        pass

    def close(self) -> None:
        self.closed.append(str(self.spec.dir))

    def backup_source(self, scale: float) -> dict[str, Any]:
        return {"scale": scale, "bytes": int(scale * 16e6)}

    def backup(self, to_dir: Path, methods: list[str], devices: list[str], src_dev: str | None,
               dst_dev: str | None, on_result: Callable[[dict[str, Any]], None], repeat: int = 1
               ) -> list[dict[str, Any]]:
        out = []
        for m in methods:
            for target in ("null", "dir"):
                rec = {"bytes": 16_000_000, "output_bytes": 16_000_000 if target == "dir" else None, "seconds": 0.5,
                       "mbps": 32.0, "proc_cpu_cores": 0.1, "devices": {}, "run": 1, "runs": repeat,
                       "mbps_spread": {"median": 33.0, "min": 32.0, "max": 34.0, "n": repeat, "spread_pct": 6.1},
                       "target": target, "method": f"fake {m}", "compressed": False, "null_mbps": None,
                       "raw_outputs": {f"backup-{m}-{target}-run1.txt": f"{m} to {target}\n"},
                       "bottleneck": "source", "bottleneck_evidence": "stand-in"}
                out.append(rec)
                on_result(rec)
                if self.fail:
                    raise DbtierError(f"{to_dir} filled up during the {m} backup (no space left on device)",
                                      "free space there or choose another --to; finished backups are kept")
        return out


@pytest.fixture
def fake(monkeypatch):
    _Engine.fail, _Engine.closed = False, []
    for mod in (backup, command):
        monkeypatch.setattr(mod, "engine_class", lambda name, kind: _Engine)
    return _Engine


# the section's keys in the order the command's document has them (after its envelope): bench backup's own
# first, `guards` from the first backup kept
SECTION = ["bench", "engine", "source", "targets", "emulated", "guards"]


def test_the_call_builds_the_section_and_saves_after_each_step(tmp_path, fake):
    to, data = _dirs(tmp_path)
    starts, saved, shown, phases = [], [], [], []

    def start(params: dict[str, Any]) -> RunDir:
        starts.append(params)
        return RunDir.create("bench", tmp_path / "run")

    def progress(what: str) -> contextlib.nullcontext[None]:
        phases.append(what)
        return contextlib.nullcontext()

    res = backup.run(BackupRequest(to=str(to), data=str(data), scale=2.0, methods=("tar",), repeat=2), start,
                     lambda section: saved.append(json.dumps(section)), on_result=shown.append, progress=progress)
    assert isinstance(res, BenchBackup) and isinstance(res.section, Frozen) and res.kind == "bench.backup"
    section = res.to_json()
    assert list(section) == SECTION
    assert (section["bench"], section["engine"], section["emulated"]) == ("backup", "postgres", None)
    assert section["source"] == {"scale": 2.0, "bytes": 32_000_000}
    assert section["guards"][0]["kind"] == "reads-from-memory"          # the stand-in's devices read nothing
    # the params the command's envelope holds, as the command wrote them before the call
    assert starts == [{"engine": "postgres", "to": str(to), "data": str(data), "scale": 2.0, "methods": ["tar"],
                       "repeat": 2, "emulate": None, "method": backup.METHOD, "limit_rule": BACKUP_RULE}]
    # saved after the source and after each backup kept; each shown once kept; the program output in raw/
    assert len(saved) == 3 and json.loads(saved[-1]) == section
    assert [json.loads(s)["targets"] for s in saved[:2]] == [[], section["targets"][:1]]
    assert [(r["method"], r["target"]) for r in shown] == [("fake tar", "null"), ("fake tar", "dir")]
    assert phases == ["building the postgres source"] and fake.closed == [str(data)]
    assert (tmp_path / "run" / "raw" / "backup-tar-dir-run1.txt").read_text() == "tar to dir\n"
    assert [t["raw_files"] for t in section["targets"]] == [["raw/backup-tar-null-run1.txt"],
                                                            ["raw/backup-tar-dir-run1.txt"]]
    assert "raw_outputs" not in section["targets"][0]
    # the terminal's line of a backup, from the record the call gave
    assert command.line(shown[1]).startswith("fake tar                 dir        16 MB    0.50 s      32 MB/s  "
                                             "source  (run 1 of 2, the middle one; median 33 MB/s, runs 32–34)")


def test_a_call_that_fails_hands_over_what_it_measured(tmp_path, fake):
    to, data = _dirs(tmp_path)
    fake.fail = True
    saved: list[dict[str, Any]] = []
    with pytest.raises(DbtierError, match="filled up during the plain backup"):
        backup.run(BackupRequest(to=str(to), data=str(data), scale=2), lambda params: RunDir.create(
            "bench", tmp_path / "run"), lambda section: saved.append(json.loads(json.dumps(section))))
    # the section as it stood, for the caller to end its run with; the engine closed
    assert list(saved[-1]) == SECTION and [t["target"] for t in saved[-1]["targets"]] == ["null"]
    assert fake.closed == [str(data)]


def test_nothing_starts_when_the_engine_is_missing(tmp_path, fake, monkeypatch):
    to, data = _dirs(tmp_path)

    def missing() -> None:
        raise DbtierError("pg_basebackup is not installed", "install PostgreSQL")
    monkeypatch.setattr(fake, "check", staticmethod(missing))
    starts: list[dict[str, Any]] = []
    with pytest.raises(DbtierError, match="not installed"):
        backup.run(BackupRequest(to=str(to), data=str(data)), lambda params: starts.append(params) or RunDir.create(
            "bench", tmp_path / "run"), lambda section: None)
    assert starts == [] and fake.closed == []
