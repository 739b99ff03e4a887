"""Every subcommand has help and the shared output options (sqlite-utils style). Help is read in-process
(`main(argv)`); the last tests run the real entry point (`python -m dbtier`) for its exit codes."""

import argparse

import pytest

from conftest import assert_clean_error, call_main, run_dbtier
from dbtier.cli.main import SUBCOMMANDS, build_parser


def _leaf_parsers():
    """(command words, parser) for every runnable subcommand, nested ones included."""
    out = []

    def walk(words, parser):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append((words, parser))
        for s in subs:
            for name, p in s.choices.items():
                walk(words + [name], p)

    walk([], build_parser())
    return [(w, p) for w, p in out if w]


def test_every_subcommand_is_registered():
    names = {w[0] for w, _ in _leaf_parsers()}
    assert names == set(SUBCOMMANDS)


@pytest.mark.parametrize("words,parser", _leaf_parsers(), ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_every_command_has_help_json_out_and_name(words, parser):
    opts = {o for a in parser._actions for o in a.option_strings}
    assert {"--json", "--out", "--name", "-h"} <= opts, words
    assert parser.description or parser.format_usage()
    r = call_main(*words, "--help", cwd=".")
    assert r.returncode == 0 and "--json" in r.stdout


@pytest.mark.slow
def test_the_real_entry_point_exits_0_on_help_and_2_on_a_bad_option(tmp_path):
    r = run_dbtier("plan", "size", "--help", cwd=tmp_path)
    assert r.returncode == 0 and "--read-iops" in r.stdout and r.stderr == ""
    r = run_dbtier("plan", "size", "--no-such-option", cwd=tmp_path)
    assert r.returncode == 2
    assert_clean_error(r, "--no-such-option")
    r = run_dbtier("--version", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("dbtier ")


@pytest.mark.slow
def test_in_process_and_real_process_say_the_same(tmp_path):
    """call_main is a stand-in for the real process: same exit code, stdout and stderr."""
    for argv in (["catalog", "show", "nope"], ["catalog", "list", "--kind", "tape"], ["simulate", "run", "--help"]):
        a, b = call_main(*argv, cwd=tmp_path), run_dbtier(*argv, cwd=tmp_path)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), argv

# The README's examples against the parser: tests/unit/test_readme_examples.py.


def test_call_main_stops_a_hang(tmp_path, monkeypatch):
    """call_main's timeout: a command blocked in a system call is interrupted and fails the test."""
    import time

    import dbtier.cli.main
    from conftest import Hang
    monkeypatch.setattr(dbtier.cli.main, "main", lambda argv: time.sleep(30))
    t = time.monotonic()
    with pytest.raises(Hang, match="still running after 0.2 s"):
        call_main("simulate", "run", "x", cwd=tmp_path, timeout=0.2)
    assert time.monotonic() - t < 5
