"""Static checks in the test run: ruff, mypy --strict over the whole package, docstrings on public UI classes."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff not installed")
def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    out = subprocess.run([ruff, "check", "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_config_covers_the_whole_package_strictly() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["packages"] == ["tunaflow_tui"]
    strict = [o for o in config.get("overrides", []) if o.get("strict")]
    assert any(set(o["module"]) >= {"tunaflow_tui", "tunaflow_tui.*"} for o in strict), strict


def test_mypy_strict_on_the_whole_package() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


UI_PACKAGES = ("widgets", "screens", "controllers", "viewmodels")
PACKAGE = ROOT / "src" / "tunaflow_tui"


def classes_without_docstring(source: str) -> list[str]:
    """Public classes (nested ones by dotted name, those under ``if TYPE_CHECKING`` too) lacking a docstring."""
    missing: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                if not child.name.startswith("_") and not ast.get_docstring(child):
                    missing.append(f"{name} (line {child.lineno})")
                visit(child, name + ".")
            elif isinstance(child, ast.If | ast.Try | ast.With):
                visit(child, prefix)

    visit(ast.parse(source), "")
    return missing


def test_the_docstring_check_sees_a_missing_docstring() -> None:
    source = (
        "class Card:\n    '''A card.'''\n\n    class Requested:\n        pass\n\n"
        "class Bare:\n    pass\n\nclass _Private:\n    pass\n"
    )
    assert classes_without_docstring(source) == ["Card.Requested (line 4)", "Bare (line 7)"]


def test_public_ui_classes_have_docstrings() -> None:
    files = [path for package in UI_PACKAGES for path in sorted((PACKAGE / package).rglob("*.py"))]
    files.append(PACKAGE / "app.py")
    assert len(files) > 30
    missing = [f"{path.relative_to(PACKAGE)}: {name}" for path in files
               for name in classes_without_docstring(path.read_text(encoding="utf-8"))]
    assert missing == []


def _calls_of(name: str) -> list[str]:
    """Where in the package a method called ``name`` is called, as ``path:line``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_plan_events_are_written_only_through_the_workflow_service() -> None:
    writers = {where.split(":")[0] for where in _calls_of("add_plan_event")}
    assert writers == {"core/workflow/service.py"}, writers
    assert _calls_of("record"), "the service's record() is how the runtime writes its occurrences"
