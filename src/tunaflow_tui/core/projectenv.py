"""The environment a worktree's tests run in: the project's own interpreter and packages, the worktree's code.

A worktree is a fresh checkout: gitignored things such as ``.venv`` and ``node_modules`` are not in it.
Without any configuration the tests still run the way the developer runs them in the main tree:

- Python: the project's interpreter — a ``.venv`` / ``venv`` in the worktree or the project root, the
  environment uv, PDM, Poetry or Hatch manage — with the worktree's import roots (``src/`` and the like)
  first on ``PYTHONPATH``, so an editable install of the *main tree* in that environment is shadowed by
  the Developer's code.
- Node: the main tree's ``node_modules``, reused (linked for the test run) when the worktree's lockfile
  is the same as the main tree's.

:func:`detect_environment` says which environment that is (a one-line label for the UI and the
reviewers), and :func:`node_modules_for_run` links ``node_modules`` for the duration of a run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

EnvKind = Literal["python", "node", "none"]

VENV_DIRS: tuple[str, ...] = (".venv", "venv")
NODE_LOCKFILES: tuple[str, ...] = (
    "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb",
)
_NODE_DEP_KEYS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_TOOL_TIMEOUT_S = 15.0
_SCAN_LIMIT_BYTES = 64_000
_SETUP_CFG_PACKAGE_DIR = re.compile(r"^\s*package_dir\s*=\s*(?:\n\s*)?=\s*(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class TestEnvironment:
    """Where and how a worktree's tests run.

    ``label`` is one line for the test event, the verdict card and ``tunaflow run``; ``python`` the
    interpreter to run ``-m pytest`` / ``-m unittest`` with (None for a non-Python project); ``env``
    the variables set for the run (over the user's environment); ``node_modules`` the main tree's
    ``node_modules`` to link into the worktree for the run, when it can be reused.
    """

    __test__ = False  # not a pytest test class

    kind: EnvKind
    label: str
    python: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    node_modules: Path | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PythonEnvironment:
    """An interpreter and where it was found (``venv`` is None for tunaflow's own interpreter)."""

    python: Path
    venv: Path | None
    source: str


# ---------------------------------------------------------------- Python


def venv_python(venv: Path) -> Path | None:
    """The interpreter of a virtual environment directory, if it has one.

    A dangling link counts: a broken ``.venv`` must end in a clear "cannot start" error, not in a
    silent run with some other interpreter.
    """
    for relative in ("bin/python", "bin/python3", "Scripts/python.exe"):
        candidate = venv / relative
        if os.path.lexists(candidate):
            return candidate
    return None


def _read_pyproject(root: Path) -> dict[str, Any]:
    path = root / "pyproject.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _table(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    node: Any = data
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _tool_output(argv: Sequence[str], cwd: Path) -> str | None:
    """The first line a project tool prints (``poetry env info --path``), or None when it has none."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    return lines[0] if proc.returncode == 0 and lines else None


def _managed_venv(project: Path, pyproject: Mapping[str, Any]) -> tuple[Path, str] | None:
    """The environment a project tool (uv, PDM, Poetry, Hatch) manages outside ``.venv``, if any."""
    uv_env = os.environ.get("UV_PROJECT_ENVIRONMENT")
    if uv_env and (project / "uv.lock").is_file():
        path = Path(uv_env)
        return (path if path.is_absolute() else project / path), "uv's UV_PROJECT_ENVIRONMENT"
    pdm_python = project / ".pdm-python"
    if pdm_python.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            interpreter = Path(pdm_python.read_text(encoding="utf-8").strip())
            if interpreter.name.startswith("python"):
                return interpreter.parent.parent, "PDM's .pdm-python"
    if (project / "poetry.lock").is_file() or _table(pyproject, "tool", "poetry"):
        found = _tool_output(("poetry", "env", "info", "--path"), project)
        if found:
            return Path(found), "Poetry's environment"
    if (project / "hatch.toml").is_file() or _table(pyproject, "tool", "hatch"):
        found = _tool_output(("hatch", "env", "find"), project)
        if found:
            return Path(found), "Hatch's default environment"
    return None


def find_python(project: Path, worktree: Path | None = None) -> PythonEnvironment:
    """The interpreter a project's tests run with.

    In order: a ``.venv``/``venv`` the worktree has of its own (e.g. made by ``worktree_setup``), the
    project's ``.venv``/``venv`` (uv's default too), the environment uv / PDM / Poetry / Hatch manage,
    and finally tunaflow's own interpreter.
    """
    project = Path(project)
    places: list[tuple[Path, str]] = []
    if worktree is not None and Path(worktree).resolve() != project.resolve():
        places += [(Path(worktree) / name, f"the worktree's {name}") for name in VENV_DIRS]
    places += [(project / name, f"the project's {name}") for name in VENV_DIRS]
    for venv, source in places:
        python = venv_python(venv)
        if python is not None:
            return PythonEnvironment(python, venv, source)
    managed = _managed_venv(project, _read_pyproject(project))
    if managed is not None:
        venv, source = managed
        python = venv_python(venv)
        if python is not None:
            return PythonEnvironment(python, venv, source)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return PythonEnvironment(Path(sys.executable), None,
                             f"tunaflow's own Python {version} (no project environment found)")


def _inside(root: Path, relative: str) -> Path | None:
    """``root / relative`` when it is a directory inside ``root`` (configuration cannot point elsewhere)."""
    if not relative or Path(relative).is_absolute():
        return None
    target = (root / relative).resolve()
    if target.is_dir() and target.is_relative_to(root.resolve()):
        return target
    return None


def import_roots(root: Path) -> list[Path]:
    """The directories of ``root`` that hold its importable packages, as its build configuration says.

    setuptools ``package-dir`` / ``packages.find.where`` (and setup.cfg ``package_dir``), Poetry
    ``packages[].from``, Hatch wheel ``packages``; otherwise ``src/`` when there is one; otherwise the
    root itself (a flat layout).
    """
    root = Path(root)
    data = _read_pyproject(root)
    names: list[str] = []
    setuptools = _table(data, "tool", "setuptools")
    package_dir = setuptools.get("package-dir")
    if isinstance(package_dir, Mapping) and isinstance(package_dir.get(""), str):
        names.append(package_dir[""])
    where = _table(setuptools, "packages", "find").get("where")
    if isinstance(where, list):
        names += [w for w in where if isinstance(w, str)]
    for entry in _table(data, "tool", "poetry").get("packages") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("from"), str):
            names.append(entry["from"])
    for package in _table(data, "tool", "hatch", "build", "targets", "wheel").get("packages") or []:
        if isinstance(package, str) and "/" in package.strip("/"):
            names.append(package.strip("/").rsplit("/", 1)[0])
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            match = _SETUP_CFG_PACKAGE_DIR.search(setup_cfg.read_text(encoding="utf-8"))
            if match:
                names.append(match.group(1))
    if not names and (root / "src").is_dir():
        names.append("src")
    found: list[Path] = []
    for name in names:
        path = _inside(root, name.strip())
        if path is not None and path not in found:
            found.append(path)
    return found or [root.resolve()]


def _site_packages(venv: Path) -> list[Path]:
    return [p for p in (*venv.glob("lib/python*/site-packages"), venv / "Lib" / "site-packages") if p.is_dir()]


def editable_install_of(venv: Path, project: Path) -> bool:
    """Whether ``venv`` has an editable install pointing into ``project`` (a ``.pth`` or setuptools finder)."""
    needle = str(Path(project).resolve())
    for site in _site_packages(venv):
        for entry in (*site.glob("*.pth"), *site.glob("__editable__*.py")):
            try:
                if entry.stat().st_size > _SCAN_LIMIT_BYTES:
                    continue
                if needle in entry.read_text(encoding="utf-8", errors="replace"):
                    return True
            except OSError:
                continue
    return False


def _python_environment(project: Path, worktree: Path) -> TestEnvironment:
    found = find_python(project, worktree)
    roots = import_roots(worktree)
    existing = os.environ.get("PYTHONPATH", "")
    env: dict[str, str] = {"PYTHONPATH": os.pathsep.join([*map(str, roots), *([existing] if existing else [])])}
    notes: list[str] = []
    if found.venv is not None:
        bin_dir = found.python.parent
        env["VIRTUAL_ENV"] = str(found.venv)
        env["PATH"] = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    shown_roots = ", ".join(_relative(r, worktree) for r in roots)
    whose = "the project's" if Path(worktree).resolve() == Path(project).resolve() else "worktree"
    where = f" ({_display_path(found.python, project)})" if found.venv is not None else ""
    label = f"{found.source}{where}; {whose} code first ({shown_roots})"
    if found.venv is not None and editable_install_of(found.venv, project) \
            and Path(worktree).resolve() != Path(project).resolve():
        notes.append("the main tree's editable install is shadowed by the worktree's code")
        label += ", ahead of the main tree's editable install"
    return TestEnvironment("python", label, str(found.python), env, None, tuple(notes))


def _relative(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)
    return f"{rel}/" if rel != "." else "./"


def _display_path(path: Path, project: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(Path(project).resolve()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- Node


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _dependency_sections(package_json: Path) -> object:
    try:
        data = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {key: data.get(key) for key in _NODE_DEP_KEYS} if isinstance(data, dict) else None


def lockfile_change(project: Path, worktree: Path) -> str | None:
    """Why the worktree cannot reuse the main tree's ``node_modules`` (a changed lockfile), or None.

    Lockfiles must be byte-identical; without any lockfile the dependency sections of
    ``package.json`` must be equal.
    """
    present = [name for name in NODE_LOCKFILES if (project / name).is_file() or (worktree / name).is_file()]
    for name in present:
        if not _same_bytes(project / name, worktree / name):
            return f"{name} changed"
    if not present and _dependency_sections(project / "package.json") != _dependency_sections(
            worktree / "package.json"):
        return "the dependencies in package.json changed"
    return None


def _node_environment(project: Path, worktree: Path) -> TestEnvironment:
    own = worktree / "node_modules"
    main = project / "node_modules"
    same_tree = worktree.resolve() == project.resolve()
    if os.path.lexists(own) or same_tree:
        bin_dir = own / ".bin"
        env = {"PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])}
        return TestEnvironment("node", "the worktree's own node_modules" if not same_tree else "node_modules",
                               None, env)
    if not main.is_dir():
        return TestEnvironment("node", "no node_modules (none in the project either): install in worktree_setup")
    change = lockfile_change(project, worktree)
    if change is not None:
        return TestEnvironment(
            "node", f"no node_modules: {change}, so the main tree's cannot be reused; install in worktree_setup",
        )
    env = {"PATH": os.pathsep.join([str(own / ".bin"), os.environ.get("PATH", "")])}
    return TestEnvironment("node", "the main tree's node_modules (lockfile unchanged)", None, env, main)


@contextlib.contextmanager
def node_modules_for_run(environment: TestEnvironment, worktree: Path) -> Iterator[None]:
    """Link the main tree's ``node_modules`` into ``worktree`` for the duration of a test run.

    The link exists only while the tests run, so nothing the Developer does later (an ``npm install``)
    can write through it into the main tree, and no commit can pick it up. It is removed as a link,
    never by descending into it.
    """
    link = Path(worktree) / "node_modules"
    made = False
    if environment.node_modules is not None and not os.path.lexists(link):
        with contextlib.suppress(OSError):
            link.symlink_to(environment.node_modules, target_is_directory=True)
            made = True
    try:
        yield
    finally:
        if made and link.is_symlink():
            link.unlink()


# ---------------------------------------------------------------- detection


def _is_python_project(root: Path) -> bool:
    markers = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py", "requirements.txt")
    if any((root / name).is_file() for name in markers):
        return True
    return any(root.glob("test_*.py")) or any(root.glob("tests/**/*.py")) or any(root.glob("test/**/*.py"))


def _combine(parts: Sequence[TestEnvironment]) -> TestEnvironment:
    """One environment from a Python and a Node part (a project may have both)."""
    if len(parts) == 1:
        return parts[0]
    env: dict[str, str] = {}
    prefixes: list[str] = []
    for part in parts:
        for key, value in part.env.items():
            if key == "PATH":
                prefixes.append(value.split(os.pathsep, 1)[0])
            else:
                env[key] = value
    if prefixes:
        env["PATH"] = os.pathsep.join([*prefixes, os.environ.get("PATH", "")])
    python = next((p.python for p in parts if p.python), None)
    node_modules = next((p.node_modules for p in parts if p.node_modules), None)
    label = " · ".join(f"{p.kind.title()}: {p.label}" for p in parts)
    notes = tuple(note for p in parts for note in p.notes)
    return TestEnvironment(parts[0].kind, label, python, env, node_modules, notes)


def detect_environment(project: Path, worktree: Path | None = None) -> TestEnvironment:
    """The environment the tests of ``worktree`` (a checkout of ``project``) run in.

    ``worktree`` None (or the project itself) means the tests run in the project's own tree. A
    project with both Python and Node gets both parts.
    """
    project = Path(project)
    tree = Path(worktree) if worktree is not None else project
    parts: list[TestEnvironment] = []
    if _is_python_project(tree):
        parts.append(_python_environment(project, tree))
    if (tree / "package.json").is_file():
        parts.append(_node_environment(project, tree))
    if not parts:
        return TestEnvironment("none", "the user's environment")
    return _combine(parts)
