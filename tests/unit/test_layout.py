"""The package's folders by domain: none holds more than MAX_MODULES modules, every package says in its
docstring what it holds, and only the command line imports the command line. Read from the source (ast),
so lazy imports inside functions count too.

Each exception below is named with its reason, and a test fails once it is no longer needed, so that the
list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "src" / "dbtier"
MAX_MODULES = 20

# Folders still over MAX_MODULES: folder (relative to src/dbtier) -> why (none now).
OVER_MAX: dict[str, str] = {}

# Packages whose __init__.py has no docstring yet: dotted name -> why (none now).
NO_DOCSTRING: dict[str, str] = {}

# Imports of dbtier.cli from outside it: (importing module, imported module) -> why.
CLI_IMPORTS = {
    ("dbtier.__main__", "dbtier.cli.entry"): "`python -m dbtier` is the command line's own entry point",
}


def modules_per_folder(root: Path) -> dict[str, int]:
    """Folder (relative to root, "." for root itself) -> its .py files other than __init__.py, for every
    folder under root that holds any .py file."""
    out: dict[str, int] = {}
    for d in [root, *sorted(p for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        files = [f for f in d.glob("*.py") if f.name != "__init__.py"]
        if files or (d / "__init__.py").exists():
            out[d.relative_to(root).as_posix()] = len(files)
    return out


def _dotted(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The dbtier modules (or packages) a file imports, `from pkg import mod` resolved to pkg.mod."""
    out: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names if a.name.startswith("dbtier"))
        elif isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("dbtier"):
            for a in n.names:
                sub = PKG.parent / Path(*f"{n.module}.{a.name}".split("."))
                is_module = sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()
                out.add(f"{n.module}.{a.name}" if is_module else n.module)
    return out


def test_modules_per_folder_counts_what_it_should(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for i in range(21):
        (tmp_path / "a" / f"m{i}.py").write_text("")
    (tmp_path / "a" / "__init__.py").write_text("")
    (tmp_path / "a" / "b" / "__init__.py").write_text("")
    (tmp_path / "a" / "data.toml").write_text("")
    assert modules_per_folder(tmp_path) == {"a": 21, "a/b": 0}


def test_no_folder_holds_more_than_the_most_modules():
    counts = modules_per_folder(PKG)
    over = {d: n for d, n in counts.items() if n > MAX_MODULES and d not in OVER_MAX}
    assert not over, (f"more than {MAX_MODULES} modules in a folder (group them by domain in packages, each with a "
                      f"docstring): {over}")
    done = {d: counts.get(d, 0) for d in OVER_MAX if counts.get(d, 0) <= MAX_MODULES}
    assert not done, f"now within {MAX_MODULES} modules: remove from OVER_MAX in {Path(__file__).name}: {done}"


def test_every_package_has_a_docstring():
    packages = {_dotted(p): p for p in PKG.rglob("__init__.py") if "__pycache__" not in p.parts}
    missing = sorted(name for name, p in packages.items()
                     if not ast.get_docstring(ast.parse(p.read_text())) and name not in NO_DOCSTRING)
    assert not missing, ("packages without a docstring saying what they hold and what they may import: "
                         + ", ".join(missing))
    done = sorted(name for name in NO_DOCSTRING
                  if name not in packages or ast.get_docstring(ast.parse(packages[name].read_text())))
    assert not done, f"have a docstring now: remove from NO_DOCSTRING in {Path(__file__).name}: {done}"


def test_only_the_command_line_imports_the_command_line():
    found = set()
    for p in sorted(PKG.rglob("*.py")):
        name = _dotted(p)
        if name == "dbtier.cli" or name.startswith("dbtier.cli."):
            continue
        found.update((name, m) for m in _imports(p) if m == "dbtier.cli" or m.startswith("dbtier.cli."))
    extra = sorted(found - set(CLI_IMPORTS))
    assert not extra, ("imports of dbtier.cli from below it (move what they need out of cli/): "
                       + ", ".join(f"{a} -> {b}" for a, b in extra))
    gone = sorted(set(CLI_IMPORTS) - found)
    assert not gone, f"no longer imported: remove from CLI_IMPORTS in {Path(__file__).name}: {gone}"
