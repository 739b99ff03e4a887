"""dbtier.sim's packages import what their __init__.py docstrings say they may (lazy imports included), and no
folder of it holds more than 20 modules. Read from the source with ast: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

SIM = Path(__file__).resolve().parents[2] / "src" / "dbtier" / "sim"

# What each part of dbtier.sim may import of dbtier.sim besides itself ("." is sim/'s own modules, which
# may import everything; names.py and jit.py import nothing of it).
MAY = {
    "policy": {"jit"},
    "trace": {"names", "jit"},
    "cache": {"policy", "trace", "names", "jit"},
    "mrc": {"policy", "trace", "names", "jit"},
    "device": {"names"},
    "names": set(),
    "jit": set(),
}
# The one import up the order (trace/columnar.py's volume_source builds volumes.Source, imported at the call).
EXCEPTIONS = {("trace/columnar.py", "volumes")}


def _part(rel: Path) -> str:
    """sim/trace/x.py -> trace; sim/names.py -> names; sim/simulate.py -> '.'."""
    if len(rel.parts) > 1:
        return rel.parts[0]
    return rel.stem if rel.stem in MAY else "."


def _sim_imports(tree: ast.Module) -> set[str]:
    """The parts of dbtier.sim a module imports: `dbtier.sim.trace.x` -> trace, `from dbtier.sim import mirror`
    -> mirror."""
    out = set()
    for n in ast.walk(tree):
        names = []
        if isinstance(n, ast.ImportFrom) and n.module and (n.module + ".").startswith("dbtier.sim."):
            names = [n.module] if n.module != "dbtier.sim" else [f"dbtier.sim.{a.name}" for a in n.names]
        elif isinstance(n, ast.Import):
            names = [a.name for a in n.names if a.name.startswith("dbtier.sim.")]
        out |= {name.split(".")[2] for name in names}
    return out


def test_each_package_imports_only_what_its_docstring_allows():
    found = []
    for p in sorted(SIM.rglob("*.py")):
        rel = p.relative_to(SIM)
        part = _part(rel)
        if part == ".":
            continue
        for dep in sorted(_sim_imports(ast.parse(p.read_text())) - {part} - MAY[part]):
            if (rel.as_posix(), dep) not in EXCEPTIONS:
                found.append(f"sim/{rel.as_posix()} imports dbtier.sim.{dep}")
    assert not found, "\n".join(found)


def test_the_rules_see_an_import_up_the_order():
    tree = ast.parse("def f():\n    from dbtier.sim.cache import replay\n\nfrom dbtier.sim import mirror, names\n")
    assert _sim_imports(tree) == {"cache", "mirror", "names"}
    assert _sim_imports(tree) - MAY["mrc"] == {"cache", "mirror"}


def test_every_part_is_described_and_no_folder_holds_more_than_20_modules():
    folders = [SIM, *(d for d in SIM.iterdir() if (d / "__init__.py").exists())]
    assert {d.name for d in folders[1:]} == set(MAY) - {"names", "jit"}
    for d in folders:
        assert len([p for p in d.glob("*.py") if p.name != "__init__.py"]) <= 20, d
    for d in folders[1:]:
        assert "May import" in (ast.get_docstring(ast.parse((d / "__init__.py").read_text())) or ""), d
