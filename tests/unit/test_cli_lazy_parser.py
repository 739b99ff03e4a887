"""The command line builds only its subcommand's parser (cli/main.build_parser(argv)): the same parse and the
same help as the whole parser; where no subcommand is named, each one's name and help line, from no module."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest

from dbtier.cli.main import SUBCOMMANDS, build_parser


def _help(parser, argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_a_subcommands_parser_alone_helps_as_the_whole_one(name):
    argv = [name, "--help"]
    lazy = build_parser(argv)
    assert set(lazy._subparsers._group_actions[0].choices) == {name}
    assert _help(lazy, argv) == _help(build_parser(), argv)


def test_the_same_namespace_and_the_whole_parser_without_a_subcommand():
    argv = ["simulate", "run", "trace.csv", "--design", "single", "--device", "nvme-enterprise-3.84tb", "--json"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))
    for argv in (["--version"], ["nosuch"], []):
        assert set(build_parser(argv)._subparsers._group_actions[0].choices) == set(SUBCOMMANDS)


def test_without_a_subcommand_the_same_help_and_errors_from_no_subcommand_module():
    whole = build_parser()
    for argv in (["--help"], ["-h"]):
        assert _help(build_parser(argv), argv) == _help(whole, argv)
    # the help lines main.py lists are the ones each register() gives
    registered = {a.dest: a.help for a in whole._subparsers._group_actions[0]._choices_actions}
    assert registered == SUBCOMMANDS
    for argv in (["nosuch"], ["--bogus"]):
        errs = []
        for parser in (build_parser(argv), whole):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
                parser.parse_args(argv)
            errs.append(err.getvalue())
        assert errs[0] == errs[1] and argv[0] in errs[0]


HEAVY = ("numpy", "duckdb", "numba", "llvmlite", "pyarrow", "rich", "orjson", "psycopg", "prometheus_client")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_load_no_engine_numpy_numba_or_rich(argv):
    """They answer in the time Python starts (bench/startup.py): a subcommand's module, and what it runs on,
    load only when that subcommand runs."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "dbtier", *argv], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == (2 if not argv else 0), r.stderr[-2000:]
    loaded = {line.rpartition("|")[2].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert loaded, "no -X importtime lines: the check would see nothing"
    assert "dbtier.cli.main" in loaded
    assert not {m for m in loaded if m.partition(".")[0] in HEAVY}
    assert not {m for m in loaded if m.startswith("dbtier.cli.") and m not in
                ("dbtier.cli.entry", "dbtier.cli.main", "dbtier.cli.options")}
