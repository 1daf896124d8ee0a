"""Which environment a worktree's tests run in: the project's interpreter, the worktree's code first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from project_envs import add_worktree, make_venv, src_layout_project, write

from tunaflow_tui.core.projectenv import (
    detect_environment,
    find_python,
    import_roots,
    lockfile_change,
    node_modules_for_run,
)
from tunaflow_tui.core.testrunner import detect_test_command, run_tests


@pytest.fixture(autouse=True)
def _quiet_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    # the projects' own pytest runs inside these tests: keep it from loading every installed plugin
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("UV_PROJECT_ENVIRONMENT", raising=False)


def _imported_from(python: str, worktree: Path, env: dict[str, str]) -> str:
    probe = "import calcpkg; print(calcpkg.__file__)"
    out = subprocess.run([python, "-c", probe], cwd=worktree, env={**os.environ, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_src_layout_worktree_tests_import_the_worktrees_code_with_the_projects_venv(tmp_path: Path) -> None:
    project = src_layout_project(tmp_path)
    worktree = add_worktree(project, tmp_path / "wt")
    venv_python = str(project / ".venv" / "bin" / "python")

    # the editable install is real: the project's interpreter on its own imports the main tree
    assert _imported_from(venv_python, tmp_path, {}).startswith(str(project / "src"))

    environment = detect_environment(project, worktree)
    assert environment.python == venv_python
    assert ".venv" in environment.label and "src/" in environment.label
    assert "editable install" in environment.label
    assert _imported_from(venv_python, worktree, dict(environment.env)).startswith(str(worktree / "src"))

    command = detect_test_command(worktree, python=environment.python)
    assert command is not None and command.argv[0] == venv_python
    result = run_tests(worktree, command, timeout_s=120, env=environment.env)
    assert result.status == "passed", result.output
    assert result.summary.startswith("2 passed")


def test_without_the_environment_the_same_worktree_fails(tmp_path: Path) -> None:
    """The control for the test above: tunaflow's interpreter lacks the dependency, the venv alone
    imports the main tree (no ``mul``)."""
    project = src_layout_project(tmp_path)
    worktree = add_worktree(project, tmp_path / "wt")
    plain = detect_test_command(worktree, python=sys.executable)
    assert plain is not None
    assert run_tests(worktree, plain, timeout_s=120).status == "failed"
    venv_only = detect_test_command(worktree, python=str(project / ".venv" / "bin" / "python"))
    assert venv_only is not None
    result = run_tests(worktree, venv_only, timeout_s=120)
    assert result.status == "failed" and "mul" in result.output


def test_the_worktrees_own_venv_wins_over_the_projects(tmp_path: Path) -> None:
    project = src_layout_project(tmp_path)
    worktree = add_worktree(project, tmp_path / "wt")
    make_venv(worktree / ".venv", with_pytest=False, dependency=False)
    found = find_python(project, worktree)
    assert found.python == worktree / ".venv" / "bin" / "python"
    assert found.source == "the worktree's .venv"


def test_no_project_environment_falls_back_to_tunaflows_python_and_says_so(tmp_path: Path) -> None:
    project = src_layout_project(tmp_path, venv=False)
    environment = detect_environment(project, project)
    assert environment.python == sys.executable
    assert "tunaflow's own Python" in environment.label
    assert environment.env["PYTHONPATH"].split(os.pathsep)[0] == str((project / "src").resolve())


def test_a_broken_venv_is_used_so_the_run_says_it_cannot_start(tmp_path: Path) -> None:
    project = src_layout_project(tmp_path, venv=False)
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "python").symlink_to(tmp_path / "python-that-was-uninstalled")
    environment = detect_environment(project, project)
    assert environment.python == str(project / ".venv" / "bin" / "python")
    command = detect_test_command(project, python=environment.python)
    assert command is not None
    result = run_tests(project, command, env=environment.env)
    assert result.status == "error"
    assert "does not exist" in result.summary and "broken link" in result.summary


def test_uv_project_environment_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = src_layout_project(tmp_path, venv=False)
    (project / "uv.lock").write_text("version = 1\n")
    make_venv(tmp_path / "envs" / "calc", with_pytest=False, dependency=False)
    monkeypatch.setenv("UV_PROJECT_ENVIRONMENT", str(tmp_path / "envs" / "calc"))
    found = find_python(project)
    assert found.python == tmp_path / "envs" / "calc" / "bin" / "python"
    assert "uv" in found.source


def _stand_in_cli(bin_dir: Path, name: str, expected_args: str, prints: Path) -> None:
    """A stand-in for poetry / hatch printing what the real one prints for these arguments: one path."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\nif [ "$*" = "{expected_args}" ]; then echo "{prints}"; exit 0; fi\nexit 1\n')
    script.chmod(0o755)


@pytest.mark.parametrize(
    ("tool", "args", "config"),
    [("poetry", "env info --path", "[tool.poetry]\nname = 'calc'\n"),
     ("hatch", "env find", "[tool.hatch.envs.default]\n")],
)
def test_environments_managed_by_poetry_and_hatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tool: str, args: str, config: str) -> None:
    project = tmp_path / "calc"
    write(project, {"pyproject.toml": config, "tests/test_x.py": "def test_x():\n    pass\n"})
    venv = tmp_path / "cache" / f"calc-{tool}-py3.11"
    make_venv(venv, with_pytest=False, dependency=False)
    _stand_in_cli(tmp_path / "bin", tool, args, venv)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    found = find_python(project)
    assert found.python == venv / "bin" / "python"
    assert tool.title() in found.source


@pytest.mark.parametrize(
    ("pyproject", "expected"),
    [
        ('[tool.setuptools.packages.find]\nwhere = ["lib"]\n', ["lib"]),
        ('[tool.setuptools]\npackage-dir = {"" = "lib"}\n', ["lib"]),
        ('[tool.poetry]\npackages = [{include = "calc", from = "lib"}]\n', ["lib"]),
        ('[tool.hatch.build.targets.wheel]\npackages = ["lib/calc"]\n', ["lib"]),
        ('[project]\nname = "calc"\n', ["src"]),
        ('[tool.setuptools.packages.find]\nwhere = ["../../etc", "/etc"]\n', ["."]),
    ],
)
def test_import_roots_follow_the_build_configuration(tmp_path: Path, pyproject: str, expected: list[str]) -> None:
    write(tmp_path, {"pyproject.toml": pyproject, "lib/calc/__init__.py": "", "src/calc/__init__.py": ""})
    if expected == ["."]:
        shutil.rmtree(tmp_path / "src")
    roots = import_roots(tmp_path)
    assert roots == [(tmp_path / name).resolve() for name in expected]


def test_lockfile_comparison(tmp_path: Path) -> None:
    project, worktree = tmp_path / "p", tmp_path / "w"
    lock = json.dumps({"lockfileVersion": 3, "packages": {}})
    write(project, {"package.json": "{}", "package-lock.json": lock})
    write(worktree, {"package.json": "{}", "package-lock.json": lock})
    assert lockfile_change(project, worktree) is None
    (worktree / "package-lock.json").write_text(lock + "\n")
    assert lockfile_change(project, worktree) == "package-lock.json changed"
    for tree in (project, worktree):
        (tree / "package-lock.json").unlink()
    (worktree / "package.json").write_text(json.dumps({"scripts": {"test": "node t.js"}}))
    assert lockfile_change(project, worktree) is None, "a changed script is not a changed dependency"
    (worktree / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "1.3.0"}}))
    assert lockfile_change(project, worktree) == "the dependencies in package.json changed"


NODE_PROJECT = {
    "package.json": json.dumps({"name": "greet", "version": "1.0.0", "scripts": {"test": "node test.js"},
                                "dependencies": {"greeter": "1.0.0"}}),
    "package-lock.json": json.dumps({"name": "greet", "lockfileVersion": 3, "packages": {
        "node_modules/greeter": {"version": "1.0.0"}}}),
    "lib.js": "module.exports = (name) => name.toUpperCase();\n",
    "test.js": ("const greet = require('greeter');\nconst shout = require('./lib');\n"
                "if (greet(shout('ada')) !== 'Hello, ADA') { console.error('wrong'); process.exit(1); }\n"
                "console.log('1 test passed');\n"),
    ".gitignore": "node_modules\n",
}
GREETER = {"node_modules/greeter/package.json": json.dumps({"name": "greeter", "version": "1.0.0", "main": "index.js"}),
           "node_modules/greeter/index.js": "module.exports = (name) => `Hello, ${name}`;\n"}


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                    reason="node and npm are not on PATH: the Node project cannot run")
def test_node_project_reuses_the_main_trees_node_modules_when_the_lockfile_is_unchanged(tmp_path: Path) -> None:
    from project_envs import git

    project = tmp_path / "greet"
    write(project, NODE_PROJECT)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "greet")
    write(project, GREETER)  # installed, ignored: a fresh worktree does not have it
    worktree = add_worktree(project, tmp_path / "wt", files={"lib.js": "module.exports = (n) => n.toUpperCase();\n"})
    assert not (worktree / "node_modules").exists()

    environment = detect_environment(project, worktree)
    assert environment.node_modules == project / "node_modules"
    assert "main tree's node_modules" in environment.label and "lockfile unchanged" in environment.label
    command = detect_test_command(worktree)
    assert command is not None and command.label == "npm test"
    with node_modules_for_run(environment, worktree):
        result = run_tests(worktree, command, timeout_s=120, env=environment.env)
    assert result.status == "passed", result.output
    assert not os.path.lexists(worktree / "node_modules"), "the link lives only for the run"
    assert (project / "node_modules" / "greeter" / "index.js").is_file(), "the main tree's modules are intact"

    # the same run without the reused node_modules cannot find the dependency
    assert run_tests(worktree, command, timeout_s=120).status == "failed"

    # a changed lockfile: nothing is reused, and the label says why
    (worktree / "package-lock.json").write_text(NODE_PROJECT["package-lock.json"] + "\n")
    changed = detect_environment(project, worktree)
    assert changed.node_modules is None and "package-lock.json changed" in changed.label


def test_the_node_modules_link_goes_even_when_the_run_raises(tmp_path: Path) -> None:
    project, worktree = tmp_path / "p", tmp_path / "w"
    write(project, {"package.json": "{}", **GREETER})
    write(worktree, {"package.json": "{}"})
    environment = detect_environment(project, worktree)
    with pytest.raises(RuntimeError), node_modules_for_run(environment, worktree):
        assert (worktree / "node_modules").is_symlink()
        raise RuntimeError("the run blew up")
    assert not os.path.lexists(worktree / "node_modules")
    assert (project / "node_modules" / "greeter" / "index.js").is_file()
