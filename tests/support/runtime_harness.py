"""Scripted scenarios for the workflow runtime: a project with a real pytest suite, claude/codex stand-ins."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.core.settings import EngineConfig, RolesConfig, Settings, WorkflowConfig
from tunaflow_tui.core.settings.loader import project_trust
from tunaflow_tui.core.settings.trust import TrustStore

FAKE = Path(__file__).resolve().parents[1] / "runtime" / "fakes" / "scripted_agent.py"

PROPOSAL = """I looked at calc.py. Here is the plan.

<!-- tunaflow:plan-proposal -->
# Add multiplication to calc

## Subtasks
1. Add `mul(a, b)` to calc.py
2. Test `mul` in tests/test_mul.py

## Description
The calculator can add but not multiply.
<!-- /tunaflow:plan-proposal -->
"""

REVISED = PROPOSAL.replace("# Add multiplication to calc", "# Add multiplication and division to calc").replace(
    "2. Test", "2. Add `div(a, b)` with a clear error on zero\n3. Test"
)

MUL = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
MUL_DOC = 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    """Multiply."""\n    return a * b\n'
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n"

DEV_DONE = (
    "I added mul and its test.\n\n<!-- tunaflow:subtask-done:1 -->\n<!-- tunaflow:subtask-done:2 -->\n"
    "<!-- tunaflow:impl-complete -->\n"
)


def verdict(kind: str, finding: str = "mul() has no docstring") -> str:
    """A reviewer reply carrying one verdict block."""
    return (
        f"I read the diff and the tests.\n\n<!-- tunaflow:review-verdict -->\nverdict: {kind}\n"
        "scores:\n- plan_coverage: 4\n- code_quality: 3\n"
        f"findings:\n- {finding}\nrecommendations:\n- keep it small\n<!-- /tunaflow:review-verdict -->\n"
    )


def dev_turn(content: str = MUL, text: str = DEV_DONE, **extra: Any) -> dict[str, Any]:
    """A Developer turn that writes calc.py and the test."""
    return {"text": text, "write": {"calc.py": content, "tests/test_mul.py": TEST_MUL}, **extra}


@dataclass
class Harness:
    """One scripted project: write the script, build settings, read the call log."""

    root: Path
    project: Path
    bin_dir: Path
    data_dir: Path
    script: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def log_path(self) -> Path:
        return self.root / "calls.jsonl"

    def set_script(self, **roles: list[dict[str, Any]]) -> None:
        self.script = roles
        (self.root / "script.json").write_text(json.dumps(roles))
        (self.root / "state.json").unlink(missing_ok=True)

    def env(self) -> dict[str, str]:
        return {
            "TUNAFLOW_FAKE_SCRIPT": str(self.root / "script.json"),
            "TUNAFLOW_FAKE_STATE": str(self.root / "state.json"),
            "TUNAFLOW_FAKE_LOG": str(self.log_path),
            "CODEX_API_KEY": "not-a-real-key",
            # where the trust given by write_config is kept: every process of the test must see it
            "XDG_STATE_HOME": str(self.root / "xdg-state"),
            # the project's own pytest runs inside these tests: keep it from loading every installed plugin
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }

    def settings(self, **workflow: Any) -> Settings:
        engines = {
            "fclaude": EngineConfig(name="fclaude", type="claude", command=str(self.bin_dir / "claude"),
                                    timeout_idle_s=30, timeout_total_s=60),
            "fcodex": EngineConfig(name="fcodex", type="codex", command=str(self.bin_dir / "codex"),
                                   timeout_idle_s=30, timeout_total_s=60),
        }
        roles = RolesConfig(architect="fclaude", developer="fclaude", reviewer="fclaude", verifier="fcodex",
                            synthesizer="fclaude", summarizer="fclaude")
        wf = WorkflowConfig(worktree_root=self.data_dir / "worktrees", test_timeout_s=120, **workflow)
        return Settings(roles=roles, engines=engines, workflow=wf)

    def config_toml(self, idle_s: int = 30) -> str:
        """The same settings as a project config file, for `tunaflow run` in a subprocess.

        ``idle_s`` is the engines' idle timeout: a test whose stand-in waits at a gate for as long as the
        test needs (on a loaded machine, longer than 30 s) gives it more, so the turn is not ended under it.
        """
        return (
            "[roles]\narchitect = \"fclaude\"\ndeveloper = \"fclaude\"\nreviewer = \"fclaude\"\n"
            "verifier = \"fcodex\"\nsynthesizer = \"fclaude\"\nsummarizer = \"fclaude\"\n\n"
            f"[engines.fclaude]\ntype = \"claude\"\ncommand = \"{self.bin_dir / 'claude'}\"\ntimeout_idle_s = {idle_s}\n\n"
            f"[engines.fcodex]\ntype = \"codex\"\ncommand = \"{self.bin_dir / 'codex'}\"\ntimeout_idle_s = {idle_s}\n\n"
            f"[workflow]\nworktree_root = \"{self.data_dir / 'worktrees'}\"\ntest_timeout_s = 120\n"
        )

    def write_config(self, extra: str = "", *, idle_s: int = 30) -> None:
        """Write :meth:`config_toml` (plus ``extra``) as the project's config file and trust it, as its
        user would with `tunaflow trust`: the file names the stand-in CLIs as commands."""
        (self.project / ".tunaflow").mkdir(exist_ok=True)
        (self.project / ".tunaflow" / "config.toml").write_text(self.config_toml(idle_s) + extra)
        TrustStore().trust(self.project, project_trust(self.project).commands)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def commands(self) -> list[dict[str, Any]]:
        """The commands the stand-in agents ran (or were refused), one dict each."""
        path = Path(str(self.log_path) + ".commands")
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def git(self, *args: str, cwd: Path | None = None) -> str:
        out = subprocess.run(["git", *args], cwd=cwd or self.project, capture_output=True, text=True, check=True)
        return out.stdout


def _calc_project(project: Path) -> Path:
    """The calculator project, a git repository with one commit, at ``project``."""
    (project / "tests").mkdir(parents=True)
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "calc"], cwd=project, check=True)
    return project


def make_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    """Build the scripted project under ``tmp_path`` and point the environment at it.

    The project is copied from one made once per test process (beside the test folders, in pytest's
    base temporary folder): three git commands fewer per test.
    """
    template = tmp_path.parent / "calc-project-template"
    if not template.is_dir():
        _calc_project(tmp_path.parent / f"calc-project-{os.getpid()}")
        os.replace(tmp_path.parent / f"calc-project-{os.getpid()}", template)
    project = Path(shutil.copytree(template, tmp_path / "calc-project", symlinks=True))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        target = bin_dir / name
        # the wrapper tells the fake which CLI it stands in for (its stream format)
        target.write_text(f"#!/bin/sh\nexport TUNAFLOW_FAKE_AS={name}\nexec {sys.executable} {FAKE} \"$@\"\n")
        target.chmod(0o755)
    h = Harness(tmp_path, project, bin_dir, tmp_path / "data")
    for key, value in h.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    os.environ.pop("TUNAFLOW_ROLES__ARCHITECT", None)
    return h
