"""The README's and the documentation's examples and the command line agree: every `dbtier ...` line in a
fenced code block of README.md or a hand-written page under docs/ parses with the real argument parser (no
unknown option, no bad value), every runnable command (nested ones included) has at least one example, and
every option a command page names exists.

A block marked runnable (the line before its fence is `<!-- runnable -->`, or `<!-- runnable
expect="TEXT" -->`) is run, in order with the page's other runnable blocks, in a scratch directory that sees
the repository's `tests/` (so `tests/data/...` paths read the committed data): each command must exit 0,
and TEXT, where given, must be in what the block's commands printed. That is how the README quotes real
output."""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, call_main
from dbtier.cli.main import build_parser

# Pages generated from the parser or the bench scripts (docs/gen_pages.py) quote usage and docstrings,
# not examples.
GENERATED = ("docs/reference/", "docs/benchmarks.md")
RUNNABLE = re.compile(r"""^<!-- runnable(?: expect=(?:"([^"]*)"|'([^']*)'))? -->\n```[^\n]*\n(.*?)^```""", re.S | re.M)


def doc_files() -> list[Path]:
    pages = sorted((ROOT / "docs").rglob("*.md"))
    return [ROOT / "README.md"] + [p for p in pages if not p.relative_to(ROOT).as_posix().startswith(GENERATED)]


def _argvs(block: str) -> list[list[str]]:
    """The argv (after `dbtier`) of every example line of a fenced block, `\\` continuations joined and
    `# comments` dropped."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        m = re.match(r"\s*(?:\$ )?(?:uv run )?dbtier (.*)", line)
        if m:
            out.append(_words(m.group(1)))
    return out


def _words(line: str) -> list[str]:
    """A command line's words up to the first shell operator (`> file`, `| grep`, `&`, `;`), comments
    dropped."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    words = []
    for word in lex:
        if word and all(c in lex.punctuation_chars for c in word):
            break
        words.append(word)
    return words


def examples(path: Path) -> list[list[str]]:
    text = path.read_text()
    return [a for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M) for a in _argvs(block)]


@dataclass(frozen=True)
class Runnable:
    argvs: list[list[str]]
    expect: str | None


def runnable_blocks(path: Path) -> list[Runnable]:
    return [Runnable(_argvs(block), (double or single) or None)
            for double, single, block in RUNNABLE.findall(path.read_text())]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


EXAMPLES = [(_name(p), argv) for p in doc_files() for argv in examples(p)]
README_EXAMPLES = [argv for name, argv in EXAMPLES if name == "README.md"]
RUNNABLE_PAGES = [p for p in doc_files() if runnable_blocks(p)]


def leaf_commands(parser: argparse.ArgumentParser | None = None, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command's words: ('lab',), ('bench', 'oltp'), ..."""
    parser = parser or _parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [words] if words else []
    return [w for s in subs for name, p in s.choices.items() for w in leaf_commands(p, words + (name,))]


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def _parse(argv: list[str]) -> tuple[argparse.Namespace | None, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return _parser().parse_args(argv), err.getvalue()
        except SystemExit:
            return None, err.getvalue()


def test_the_readme_and_the_docs_have_examples():
    assert len(README_EXAMPLES) >= 8
    assert len(EXAMPLES) >= 150


@pytest.mark.parametrize("page, argv", EXAMPLES, ids=lambda a: a if isinstance(a, str) else " ".join(a)[:60])
def test_every_example_parses(page, argv):
    ns, err = _parse(argv)
    assert ns is not None, f"{page}: `dbtier {shlex.join(argv)}` does not parse: {err}"
    assert getattr(ns, "func", None), f"{page}: `dbtier {shlex.join(argv)}` names no runnable command"


def test_every_command_has_an_example_in_the_docs():
    shown = {tuple(a[:n]) for _, a in EXAMPLES for n in (1, 2)}
    missing = [" ".join(w) for w in leaf_commands() if w not in shown]
    assert missing == [], f"commands without an example in README.md or docs/: {missing}"


# A command page names its own command's options, and these of others (`lab` runs `bench oltp --engine`,
# `plan --cloud` is `lab --cloud`'s too, a report reads `--repeat` runs), and the programs' own (fio's
# --client, mariadb-backup's --prepare, promtool's --storage...): each page -> the commands whose options it
# may name, and the foreign options it names.
PAGE_COMMANDS = {
    "lab": ["lab", "bench"], "probe": ["probe"], "bench-oltp": ["bench"], "bench-dss": ["bench"],
    "bench-backup": ["bench", "lab"], "report": ["report", "lab", "bench"], "show": ["show"],
    "compare": ["compare", "bench"], "runs": ["runs", "report"], "catalog": ["catalog", "plan"], "plan": ["plan", "bench"],
    "plan-cloud": ["plan", "lab"], "simulate": ["simulate", "bench", "plan"], "advise": ["advise", "plan"],
    "history": ["history", "plan"], "export": ["export"], "cleanup": ["cleanup"],
}
FOREIGN = {"--client", "--server", "--output-format", "--prepare", "--backup", "--time", "--output",
           "--storage.tsdb.retention.time", "--sections"}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    out: set[str] = set()
    for action in parser._actions:
        out.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _options(sub)
    return out


@pytest.mark.parametrize("page", sorted(PAGE_COMMANDS))
def test_every_option_a_command_page_names_exists(page):
    subs = {n: p for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)
            for n, p in a.choices.items()}
    known = set().union(*(_options(subs[c]) for c in PAGE_COMMANDS[page])) | FOREIGN
    text = (ROOT / "docs" / "commands" / f"{page}.md").read_text()
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9.-]*[a-z0-9]", text))
    assert sorted(named - known) == [], f"docs/commands/{page}.md names options its commands do not have"


def test_every_command_page_is_checked():
    assert {p.stem for p in (ROOT / "docs" / "commands").glob("*.md")} - {"index"} == set(PAGE_COMMANDS)


def test_a_wrong_option_in_an_example_would_be_caught():
    """The check itself: an option the parser does not know is refused, as is a bad value; a runnable
    block is found with its expected text."""
    assert _parse(["probe", ".", "--no-such-option"])[0] is None
    assert _parse(["bench", "oltp", "--clients", "nan"])[0] is None
    assert ("bench", "oltp") in leaf_commands() and ("lab",) in leaf_commands()
    blocks = RUNNABLE.findall('text\n<!-- runnable expect="needs 1,820" -->\n```sh\ndbtier show a \\\n  --json\n```\n'
                              "<!-- runnable expect='x=\"1\"' -->\n```sh\ndbtier runs\n```\n")
    assert [(d or s, _argvs(b)) for d, s, b in blocks] == [("needs 1,820", [["show", "a", "--json"]]),
                                                          ('x="1"', [["runs"]])]


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=_name)
def test_runnable_examples_run_on_the_repositorys_data(page, tmp_path):
    """Each runnable block's commands, in order, in a directory where `tests/` is the repository's: exit 0,
    and the block's expected text in their output. Run directories go under the scratch directory."""
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    env = {"DBTIER_STATE_DIR": str(tmp_path / ".state"), "COLUMNS": "110"}
    for block in runnable_blocks(page):
        printed = ""
        for argv in block.argvs:
            done = call_main(*argv, cwd=tmp_path, env=env, timeout=120)
            assert done.returncode == 0, f"{_name(page)}: `dbtier {shlex.join(argv)}` exited " \
                                         f"{done.returncode}: {done.stderr[-2000:]}"
            printed += done.stdout
        if block.expect:
            flat = " ".join(printed.split())
            assert " ".join(block.expect.split()) in flat, \
                f"{_name(page)}: `{block.expect}` is not in what the block printed:\n{printed[-3000:]}"
