"""The package's modules keep to their own: no import cycles, and no module uses another's private
(underscore) names. Read from the source with ast, so lazy imports inside functions count too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# Private uses tolerated for now (none: the report split and the capture move removed the last two).
KNOWN: set[tuple[str, str]] = set()


@functools.lru_cache(maxsize=1)
def _modules() -> dict[str, ast.Module]:
    """Parsed when a test asks (2 s: not at collection, which every test worker does)."""
    out = {}
    for p in sorted((SRC / "dbtier").rglob("*.py")):
        name = ".".join(p.relative_to(SRC).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = ast.parse(p.read_text(), str(p))
    return out


def _target(module: str, name: str) -> str:
    """`from module import name`: the module `name` is, when it is one, else `module`."""
    return f"{module}.{name}" if f"{module}.{name}" in _modules() else module


def _imports(tree: ast.Module) -> tuple[set[str], dict[str, str], list[tuple[str, str]]]:
    """(modules imported, local name -> module it is bound to, (module, private name) used)."""
    deps: set[str] = set()
    bound: dict[str, str] = {}
    private: list[tuple[str, str]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("dbtier"):
            for a in n.names:
                t = _target(n.module, a.name)
                deps.add(t)
                if t != n.module:
                    bound[a.asname or a.name] = t
                elif a.name.startswith("_") and not a.name.startswith("__"):
                    private.append((n.module, a.name))
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.startswith("dbtier"):
                    deps.add(a.name)
                    if a.asname:
                        bound[a.asname] = a.name
    for n in ast.walk(tree):
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in bound
                and n.attr.startswith("_") and not n.attr.startswith("__")):
            private.append((bound[n.value.id], n.attr))
    return deps, bound, private


def test_no_module_uses_another_modules_private_names():
    found = []
    for name, tree in _modules().items():
        for owner, attr in _imports(tree)[2]:
            if owner != name and (name, owner) not in KNOWN:
                found.append(f"{name} uses {owner}.{attr}")
    assert not found, "make these public in the module that owns them, or move them:\n" + "\n".join(found)


def test_no_import_cycles():
    modules = _modules()
    graph = {name: {d for d in _imports(tree)[0] if d in modules and d != name} for name, tree in modules.items()}
    # A package's __init__ runs before its modules; importing the package itself from inside is not a cycle
    # of modules, so edges to a package are left out.
    packages = {name for name in modules if (SRC / Path(*name.split("."))).is_dir()}
    graph = {k: v - packages for k, v in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for d in sorted(graph[node]):
            if state.get(d) == 1:
                cycles.append(" -> ".join(path[path.index(d):] + [d]))
            elif d not in state:
                visit(d, path + [d])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
