"""The layers as import-linter contracts (pyproject.toml), and no import circles anywhere in the package.

Both read the source, so imports inside functions and under ``TYPE_CHECKING`` count, unlike a check
of ``sys.modules`` after importing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import grimp
import pytest

import tunaflow_tui

REPO = Path(__file__).resolve().parents[1]
PKG_ROOT = Path(tunaflow_tui.__file__).parent


def _lint_imports(config: Path, cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([executable, "--no-cache", "--config", str(config)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def _cycles(package: str, subpackages: tuple[str, ...] = ()) -> list[list[str]]:
    """Each import circle among the modules of ``subpackages`` (all of ``package``'s if none), as a chain
    ``a -> b -> ... -> a``."""
    graph = grimp.build_graph(package, cache_dir=None)
    prefixes = tuple(f"{package}.{sub}" for sub in subpackages)
    modules = {m for m in graph.modules if not prefixes or m.startswith(prefixes)}
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for importer in sorted(modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & modules):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is None:
                continue
            chain = [importer, *back]
            key = frozenset(chain)
            if key not in seen:
                seen.add(key)
                found.append(chain)
    return found


def test_the_layer_contracts_hold() -> None:
    result = _lint_imports(REPO / "pyproject.toml", REPO, PKG_ROOT.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_no_contract_ignores_an_import() -> None:
    """The layers hold as they are: no import is let through by an exception."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    assert contracts
    assert {c["id"]: c.get("ignore_imports", []) for c in contracts} == {c["id"]: [] for c in contracts}


def test_no_import_circles_in_the_package() -> None:
    cycles = _cycles("tunaflow_tui")
    assert cycles == [], "import circles: " + "; ".join(" -> ".join(chain) for chain in cycles)


def _write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


_HIDDEN_IMPORTS = {
    "stack/__init__.py": "",
    "stack/low/__init__.py": "",
    "stack/low/steps.py": """
        from __future__ import annotations
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from stack.high.hub import Hub

        def step(hub: Hub) -> None:
            from stack.high import hub as late
            late.Hub()
        """,
    "stack/high/__init__.py": "",
    "stack/high/hub.py": """
        from stack.low.steps import step

        class Hub:
            pass
        """,
}


def test_the_contracts_see_imports_inside_functions_and_under_type_checking(tmp_path: Path) -> None:
    _write_package(tmp_path, _HIDDEN_IMPORTS)
    (tmp_path / "contracts.toml").write_text(textwrap.dedent("""
        [tool.importlinter]
        root_packages = ["stack"]

        [[tool.importlinter.contracts]]
        name = "high above low"
        type = "layers"
        containers = ["stack"]
        layers = ["high", "low"]
        """), encoding="utf-8")
    result = _lint_imports(tmp_path / "contracts.toml", tmp_path, tmp_path)
    assert result.returncode != 0
    assert "stack.low.steps -> stack.high.hub (l.5, l.8)" in result.stdout, result.stdout


def test_the_circle_check_names_a_circle_made_by_hidden_imports(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _write_package(tmp_path, _HIDDEN_IMPORTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles("stack", ("low", "high")) == [["stack.high.hub", "stack.low.steps", "stack.high.hub"]]


def getattr_on_controllers(source: str) -> list[str]:
    """``getattr(...)`` calls whose object is a controller or a session (undeclared members mypy cannot follow)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and node.args and any(word in ast.unparse(node.args[0]) for word in ("controller", "session"))):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_getattr_check_sees_one() -> None:
    assert getattr_on_controllers("hold = getattr(self.controller, 'hold_update', None)\n") == [
        "line 1: getattr(self.controller, 'hold_update', None)"]


def test_the_app_reaches_its_controllers_through_declared_members() -> None:
    assert getattr_on_controllers((PKG_ROOT / "app.py").read_text(encoding="utf-8")) == []
