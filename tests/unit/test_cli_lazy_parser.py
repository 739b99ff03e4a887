"""The command line builds only its subcommand's parser (cli/main.build_parser(argv)): the same parse and the
same help as the whole parser, and the whole one where no subcommand is named."""

from __future__ import annotations

import contextlib
import io

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
