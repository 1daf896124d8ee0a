"""Textual's private API: only in ``textual_compat``, only on a Textual version it was checked against."""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tunaflow_tui import textual_compat

ROOT = Path(__file__).resolve().parents[1]
COMPAT = Path(textual_compat.__file__)


def test_the_installed_textual_is_one_textual_compat_was_checked_against() -> None:
    installed = textual_compat.installed_textual()
    assert Version(installed) in SpecifierSet(textual_compat.TEXTUAL_RANGE), (
        f"Textual {installed} is installed, but src/tunaflow_tui/textual_compat.py was checked against "
        f"{textual_compat.TEXTUAL_CHECKED} (accepts {textual_compat.TEXTUAL_RANGE}): read each function there "
        "against this version, then update TEXTUAL_CHECKED, TEXTUAL_RANGE and the pin in pyproject.toml")
    assert Version(textual_compat.TEXTUAL_CHECKED) in SpecifierSet(textual_compat.TEXTUAL_RANGE)


def test_the_package_pin_allows_no_textual_outside_the_checked_range() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    textual = next(Requirement(d) for d in dependencies if Requirement(d).name == "textual")
    assert textual.specifier == SpecifierSet(textual_compat.TEXTUAL_RANGE), (
        f"pyproject.toml pins {textual}, textual_compat.py was checked for {textual_compat.TEXTUAL_RANGE}")


def _instance(cls: type[Any]) -> Any:
    """An object of ``cls`` as Textual makes one (instance attributes are set in ``__init__``)."""
    from textual.app import App
    from textual.pilot import Pilot
    from textual.widget import Widget

    if cls.__name__ == "FooterKey":
        return cls("a", "a", "A", "a")
    if cls is Pilot:
        return Pilot(App())
    if cls.__name__ == "RenderStyles":
        return Widget().styles
    return cls()


def _missing(owner: str, names: tuple[str, ...]) -> list[str]:
    module_name, _, class_name = owner.partition(":")
    module = importlib.import_module(module_name)
    if not class_name:
        if names == ("__watchers",):  # an attribute the module sets on objects by name
            return [] if '"__watchers"' in inspect.getsource(module) else [f"{module_name}: __watchers"]
        return [f"{module_name}.{name}" for name in names if not hasattr(module, name)]
    cls = getattr(module, class_name)
    instance = _instance(cls)
    return [f"{owner}.{name}" for name in names if not hasattr(cls, name) and not hasattr(instance, name)]


@pytest.mark.parametrize("owner", sorted(textual_compat.PRIVATE_NAMES))
def test_every_private_name_textual_compat_uses_exists_in_the_installed_textual(owner: str) -> None:
    missing = _missing(owner, textual_compat.PRIVATE_NAMES[owner])
    assert missing == [], (f"src/tunaflow_tui/textual_compat.py uses {missing}, which Textual "
                           f"{textual_compat.installed_textual()} no longer has")


def test_the_name_check_sees_a_name_textual_does_not_have() -> None:
    assert _missing("textual.widget:Widget", ("_anchored", "_no_such_thing")) == ["textual.widget:Widget._no_such_thing"]
    assert _missing("textual.widgets._footer", ("NoSuchKey",)) == ["textual.widgets._footer.NoSuchKey"]


def _used_in_compat() -> set[str]:
    """Every private Textual name the compat module's code reaches (attributes and imported names)."""
    source = COMPAT.read_text(encoding="utf-8")
    attributes = set(re.findall(r"\b(?:app|screen|widget|node|key|footer|styles|pilot)\._(\w+)", source))
    return {f"_{name}" for name in attributes} | set(re.findall(r'getattr\(\w+, "(__\w+)"', source))


def test_private_names_lists_every_private_name_the_module_reaches() -> None:
    listed = {name for names in textual_compat.PRIVATE_NAMES.values() for name in names}
    assert _used_in_compat() - listed == set()


PRIVATE_MODULE = re.compile(r"^\s*(?:from|import)\s+textual(?:\.\w+)*\._\w+", re.MULTILINE)
"""An import of one of Textual's private modules (``textual._styles_cache``, ``textual.widgets._footer``…)."""

# Where the app, its widgets, its UI tests and the benchmarks live: the other layers never import Textual
# (test_layering), and a ``_driver`` there is their own.
UI_SOURCES = ("src/tunaflow_tui/app.py", "src/tunaflow_tui/palette.py", "src/tunaflow_tui/widgets",
              "src/tunaflow_tui/screens", "src/tunaflow_tui/controllers", "src/tunaflow_tui/themes.py",
              "tests/ui", "tests/support", "tests/conftest.py", "bench")


def private_uses(source: str) -> list[str]:
    """The private Textual API ``source`` reaches itself: private modules, or a name in ``PRIVATE_NAMES``."""
    names = sorted({name for names in textual_compat.PRIVATE_NAMES.values() for name in names if name.startswith("_")})
    # an attribute (``x._driver``), a name given as a string (``getattr(x, "_driver")``), an override (``def _end_batch``)
    attribute = re.compile(r"(?:\.|\"|def )(" + "|".join(re.escape(name) for name in names) + r")\b")
    found = [match.group(0).strip() for match in PRIVATE_MODULE.finditer(source)]
    for line in source.splitlines():
        found.extend(match.group(1) for match in attribute.finditer(line.split("#", 1)[0]))
    return found


def _ui_files() -> list[Path]:
    files: list[Path] = []
    for place in UI_SOURCES:
        path = ROOT / place
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else [])
    return files


def test_no_private_textual_api_outside_textual_compat() -> None:
    offenders = {str(path.relative_to(ROOT)): uses for path in _ui_files()
                 if (uses := private_uses(path.read_text(encoding="utf-8")))}
    assert offenders == {}, "private Textual API outside src/tunaflow_tui/textual_compat.py"


def test_the_private_api_check_sees_each_kind_of_use() -> None:
    assert private_uses("from textual.widgets._footer import FooterKey\n") == ["from textual.widgets._footer"]
    assert private_uses("import textual._xterm_parser\n") == ["import textual._xterm_parser"]
    assert private_uses("rows = app.screen._compositor.render_strips()\n") == ["_compositor"]
    assert private_uses('driver = getattr(self, "_driver", None)\n') == ["_driver"]
    assert private_uses("if not self._bindings_ready:\n") == ["_bindings_ready"]
    assert private_uses("        self._anchored = True\n") == ["_anchored"]
    assert private_uses("    def _end_batch(self) -> None:\n") == ["_end_batch"]
    assert private_uses("from textual.widgets import Footer\nrows = screen_rows(app)\n") == []
