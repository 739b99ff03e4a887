"""The generated documentation pages agree with what generates them: the command reference
(docs/reference/*.md) with dbtier's argparse parser, the benchmarks page (docs/benchmarks.md) with the
bench scripts and their committed figures. A changed option, default or help text without the pages
written again fails here, naming the command that writes them."""

from __future__ import annotations

import argparse
import importlib.util

from conftest import ROOT
from dbtier.cli.main import build_parser


def _gen():
    spec = importlib.util.spec_from_file_location("gen_pages", ROOT / "docs" / "gen_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen()


def test_the_committed_pages_are_what_the_parser_and_the_bench_scripts_give():
    expected = GEN.pages()
    differ = [str(p.relative_to(ROOT)) for p, text in expected.items()
              if not p.exists() or p.read_text() != text]
    stale = [str(p.relative_to(ROOT)) for p in GEN.stale_reference_pages(expected)]
    assert differ == [] and stale == [], (
        f"generated documentation out of date: {differ + stale}; run `{GEN.REGENERATE}` and commit the pages")


def test_every_command_and_option_is_in_the_reference():
    """Counted from the parser, not from the generator: each command has its section on its command's page,
    and each of its options a row."""
    def walk(parser: argparse.ArgumentParser, words: list[str]):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, [*words, name])
        if words:
            yield words, parser
    pages = {p.stem: p.read_text() for p in (ROOT / "docs" / "reference").glob("*.md")}
    missing = []
    for words, parser in walk(build_parser(), []):
        page = pages.get(words[0], "")
        if f"# `dbtier {' '.join(words)}`" not in page:
            missing.append(" ".join(words))
        for action in parser._actions:
            for opt in action.option_strings:
                if opt not in ("-h", "--help") and f"`{opt}" not in page:
                    missing.append(f"{' '.join(words)} {opt}")
    assert missing == []


def test_a_changed_help_text_would_be_caught(monkeypatch):
    """The check itself: a help text the parser gives differently makes the pages differ."""
    page = ROOT / "docs" / "reference" / "probe.md"
    real = build_parser

    def changed(argv=None):
        parser = real(argv)
        probe = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["probe"]
        next(a for a in probe._actions if "--fill" in a.option_strings).help = "something else"
        return parser
    monkeypatch.setattr("dbtier.cli.main.build_parser", changed)
    assert GEN.reference_pages()[page] != page.read_text()
