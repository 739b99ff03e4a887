"""Every subcommand has help and the shared output options (sqlite-utils style)."""

import argparse

import pytest

from conftest import run_dbtier
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
def test_every_command_has_help_json_and_out(words, parser):
    opts = {o for a in parser._actions for o in a.option_strings}
    assert {"--json", "--out", "-h"} <= opts, words
    assert parser.description or parser.format_usage()
    r = run_dbtier(*words, "--help", cwd=".")
    assert r.returncode == 0 and "--json" in r.stdout

# The README's examples against the parser: tests/unit/test_readme_examples.py.
