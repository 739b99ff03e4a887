"""Tool versions asked ahead (measure/machine.warm_tool_versions) are the next tool_versions() answer, once."""

from __future__ import annotations

from dbtier.measure import machine


def test_warmed_versions_are_used_once_then_asked_again(monkeypatch):
    calls = []

    def ask():
        calls.append(1)
        return {"fio": f"3.{len(calls)}"}

    monkeypatch.setattr(machine, "_ask_versions", ask)
    machine.warm_tool_versions()
    assert machine.tool_versions() == {"fio": "3.1"}      # the thread's answer (waited for)
    assert machine.tool_versions() == {"fio": "3.2"} and len(calls) == 2


def test_a_failure_while_warming_reaches_the_caller(monkeypatch):
    def ask():
        raise OSError("no /proc")

    monkeypatch.setattr(machine, "_ask_versions", ask)
    machine.warm_tool_versions()
    try:
        machine.tool_versions()
    except OSError as exc:
        assert "no /proc" in str(exc)
    else:
        raise AssertionError("the warming thread's error was lost")


def test_a_program_is_asked_once_per_process_until_it_changes(tmp_path, monkeypatch):
    """In-process commands (lab, tests) ask a program once; a new file at the same path is asked again."""
    import os

    log = tmp_path / "calls"
    tool = tmp_path / "bin" / "fio"
    tool.parent.mkdir()

    def install(version: str, mtime_ns: int) -> None:
        tool.write_text(f"#!/bin/sh\necho x >> {log}\necho fio-{version}\n")
        tool.chmod(0o755)
        os.utime(tool, ns=(mtime_ns, mtime_ns))

    install("3.90", 1_000_000_000)
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    assert machine._cmd_version(["fio", "--version"], r"fio-(\S+)") == "3.90"
    assert machine._cmd_version(["fio", "--version"], r"fio-(\S+)") == "3.90"
    assert log.read_text().count("x") == 1
    install("3.91", 2_000_000_000)
    assert machine._cmd_version(["fio", "--version"], r"fio-(\S+)") == "3.91"
    assert log.read_text().count("x") == 2
