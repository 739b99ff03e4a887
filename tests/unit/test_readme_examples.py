"""The README's examples and the command line agree: every `dbtier ...` line in a README code block parses
with the real argument parser (no unknown option, no bad value), and every runnable command (nested ones
included) has at least one example there."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex

import pytest

from conftest import ROOT
from dbtier.cli.main import build_parser


def readme_examples() -> list[list[str]]:
    """The argv (after `dbtier`) of every example line in a fenced block, `\\` continuations joined and
    `# comments` dropped."""
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
        lines = block.replace("\\\n", " ").splitlines()
        for line in lines:
            m = re.match(r"\s*(?:\$ )?(?:uv run )?dbtier (.*)", line)
            if m:
                out.append(shlex.split(m.group(1), comments=True))
    return out


def leaf_commands(parser: argparse.ArgumentParser | None = None, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command's words: ('lab',), ('bench', 'oltp'), ..."""
    parser = parser or build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [words] if words else []
    return [w for s in subs for name, p in s.choices.items() for w in leaf_commands(p, words + (name,))]


EXAMPLES = readme_examples()


def _parse(argv: list[str]) -> tuple[argparse.Namespace | None, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return build_parser().parse_args(argv), err.getvalue()
        except SystemExit:
            return None, err.getvalue()


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 40


@pytest.mark.parametrize("argv", EXAMPLES, ids=lambda a: " ".join(a)[:60])
def test_every_readme_example_parses(argv):
    ns, err = _parse(argv)
    assert ns is not None, f"README: `dbtier {shlex.join(argv)}` does not parse: {err}"
    assert getattr(ns, "func", None), f"README: `dbtier {shlex.join(argv)}` names no runnable command"


def test_every_command_has_a_readme_example():
    shown = {tuple(a[:n]) for a in EXAMPLES for n in (1, 2)}
    missing = [" ".join(w) for w in leaf_commands() if w not in shown]
    assert missing == [], f"commands without an example in README.md: {missing}"


def test_a_wrong_option_in_an_example_would_be_caught():
    """The check itself: an option the parser does not know is refused, as is a bad value."""
    assert _parse(["probe", ".", "--no-such-option"])[0] is None
    assert _parse(["bench", "oltp", "--clients", "nan"])[0] is None
    assert ("bench", "oltp") in leaf_commands() and ("lab",) in leaf_commands()
