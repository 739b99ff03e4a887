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
