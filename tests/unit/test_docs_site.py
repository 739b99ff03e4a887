"""The documentation site builds: `mkdocs build --strict` over mkdocs.yml (a broken link or anchor, a page
missing from nav or a nav entry without its page fails it), offline (no web font), engine-free. The build
is in-process (mkdocs' own build function with the project's configuration), into a scratch directory."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from conftest import ROOT

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")   # mkdocs-material's banner about MkDocs 2.0 on stderr

from mkdocs.commands.build import build  # noqa: E402
from mkdocs.config import load_config  # noqa: E402
from mkdocs.exceptions import Abort  # noqa: E402


def _build(config_file: Path, site: Path, warnings: list[str] | None = None) -> list[str]:
    """Build the site strictly; the warnings mkdocs logged (a strict build aborts on any), also kept in
    `warnings` when given, for a build that aborts."""
    warnings = [] if warnings is None else warnings

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                warnings.append(record.getMessage())
    handler = Keep()
    logging.getLogger("mkdocs").addHandler(handler)
    try:
        build(load_config(str(config_file), strict=True, site_dir=str(site)))
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)
    return warnings


@pytest.mark.slow   # 1.2-1.9 s on 2 cores: the search index and the offline plugin's pass over every page
def test_the_site_builds_strict_and_offline(tmp_path):
    site = tmp_path / "site"
    assert _build(ROOT / "mkdocs.yml", site) == []
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert "index.html" in pages and "reference/probe.html" in pages and "commands/advise.html" in pages
    html = "".join(p.read_text() for p in site.rglob("*.html"))
    assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The check itself: the project's validation settings turn a link to a missing page into a failed
    build, as they would on a real page."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    config = (ROOT / "mkdocs.yml").read_text()
    config = config[:config.index("\nnav:")] + "\nnav:\n  - Home: index.md\n"
    config = config.replace("  - offline\n", "").replace("  - search\n", "")
    (tmp_path / "mkdocs.yml").write_text(config.replace("plugins:\n", "plugins: []\n", 1))
    warnings: list[str] = []
    with pytest.raises(Abort):
        _build(tmp_path / "mkdocs.yml", tmp_path / "site", warnings)
    assert len(warnings) == 1 and "missing.md" in warnings[0]
