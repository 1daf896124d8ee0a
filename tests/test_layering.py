"""core/ and agents/ must never pull in textual or rich; nothing may have import-time side effects."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import tunaflow_tui

PKG_ROOT = Path(tunaflow_tui.__file__).parent


def _modules(subpackage: str) -> list[str]:
    base = PKG_ROOT / subpackage
    names = [f"tunaflow_tui.{subpackage}"]
    for info in pkgutil.walk_packages([str(base)], prefix=f"tunaflow_tui.{subpackage}."):
        names.append(info.name)
    return sorted(names)


def test_core_agents_and_runtime_never_import_the_ui_stack(tmp_path: Path) -> None:
    modules = _modules("core") + _modules("agents") + _modules("runtime")
    assert len(modules) > 2
    script = (
        "import importlib, json, sys\n"
        f"mods = {modules!r}\n"
        "bad = {}\n"
        "for m in mods:\n"
        "    importlib.import_module(m)\n"
        "    leaked = sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))\n"
        "    if leaked:\n"
        "        bad[m] = leaked[:3]\n"
        "        break\n"
        "print(json.dumps(bad))\n"
    )
    # run from an empty cwd so that importing cannot create files anywhere we would not notice
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert json.loads(out.stdout) == {}, f"textual/rich imported by: {out.stdout}"
    assert list(tmp_path.iterdir()) == [], "importing core/agents created files"


def test_layering_check_would_catch_a_leak(tmp_path: Path) -> None:
    # The detector itself must be able to fail: importing textual is seen.
    script = "import sys, textual; print(any(k.startswith('textual') for k in sys.modules))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_ui_never_imports_peewee_models_or_pexpect() -> None:
    offenders = []
    for sub in ("widgets", "screens"):
        for path in (PKG_ROOT / sub).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for needle in ("import peewee", "from peewee", "import pexpect", "from pexpect", "core.storage.models"):
                if needle in text:
                    offenders.append(f"{path.name}: {needle}")
    for name in ("app.py",):
        path = PKG_ROOT / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if "import peewee" in text or "import pexpect" in text:
                offenders.append(name)
    assert offenders == []


def _repeated_names(package: Path) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        if path.name != "__init__.py" and "__pycache__" not in path.parts:
            seen.setdefault(path.name, []).append(str(path.relative_to(package)))
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_every_module_name_is_unique_in_the_package() -> None:
    package = Path(__file__).resolve().parent.parent / "src" / "tunaflow_tui"
    assert _repeated_names(package) == {}, "a file name used twice: rename one, so that a name names one file"


def test_the_unique_name_check_sees_a_repeated_name(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "search.py").write_text("", encoding="utf-8")
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
    assert _repeated_names(tmp_path) == {"search.py": ["a/search.py", "b/search.py"]}
