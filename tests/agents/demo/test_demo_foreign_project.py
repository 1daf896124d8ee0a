"""The demo engine on the user's own repository: an honest plan it really carries out, to Done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tunaflow_tui.agents.agent_events import EngineEvent, FinalMessage
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.agents.demo import DemoEngine
from tunaflow_tui.agents.demo.generic import NOTE_PATH
from tunaflow_tui.core.markers import parse_markers
from tunaflow_tui.core.settings.engines import EngineConfig

SAMPLE_WORDS = ("textstats", "word-frequency", "frequency.py")


@pytest.fixture
def foreign_repo(tmp_path: Path) -> Path:
    """Someone's own project: a git repository with a README and a source folder, nothing of the sample."""
    repo = tmp_path / "my-service"
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("# my-service\n", encoding="utf-8")
    (repo / "src" / "main.go").write_text("package main\n\nfunc main() {}\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "initial"], check=True)
    return repo


async def _final(role: str, prompt: str, cwd: Path) -> str:
    engine = DemoEngine(EngineConfig(name="demo", type="demo", demo_delay_s=0))  # type: ignore[arg-type]
    events: list[EngineEvent] = [e async for e in engine.start(
        TurnRequest(prompt=prompt, cwd=cwd, role=role, profile=PermissionProfile.CHAT))]
    assert isinstance(events[-1], FinalMessage)
    return events[-1].text


async def test_the_architect_proposes_the_note_not_the_sample_plan(foreign_repo: Path) -> None:
    text = await _final("architect", "Please plan a change for this project.", foreign_repo)
    [proposal] = parse_markers(text, "architect").to_json()["markers"]
    assert proposal["kind"] == "plan-proposal" and proposal["accepted"]
    assert proposal["title"] == f"Add a demo note ({NOTE_PATH}) to my-service"
    assert not any(word in text for word in SAMPLE_WORDS)


async def test_asked_anything_else_the_architect_says_plainly_what_it_can_do(foreign_repo: Path) -> None:
    text = await _final("architect", "What does this repository do?", foreign_repo)
    assert "I don't read or change your code" in text and NOTE_PATH in text
    assert not any(word in text for word in SAMPLE_WORDS)


@pytest.mark.e2e
def test_run_demo_on_a_foreign_repository_reaches_done(foreign_repo: Path, tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith("TUNAFLOW_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    result = subprocess.run(
        [sys.executable, "-m", "tunaflow_tui", "run", "--demo", "--approve", "--accept",
         "--request", "Plan an improvement", str(foreign_repo)],
        capture_output=True, text=True, timeout=180, env=env,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "is done" in result.stdout
    assert "stopped without reporting" not in output
    assert not any(word in output for word in SAMPLE_WORDS)
    branches = subprocess.run(["git", "-C", str(foreign_repo), "branch", "--list", "tunaflow/*",
                               "--format=%(refname:short)"], capture_output=True, text=True, check=True)
    [branch] = branches.stdout.split()
    note = subprocess.run(["git", "-C", str(foreign_repo), "show", f"{branch}:{NOTE_PATH}"],
                          capture_output=True, text=True, check=True).stdout
    assert "- `README.md`" in note and "- `src/`" in note
    changed = subprocess.run(["git", "-C", str(foreign_repo), "diff", "--name-only", "main", branch],
                             capture_output=True, text=True, check=True).stdout.split()
    assert [path for path in changed if not path.startswith("docs/plans/")] == [NOTE_PATH], "nothing else changed"
    assert not (foreign_repo / NOTE_PATH).exists(), "the user's own tree is untouched until a merge"


@pytest.mark.parametrize("role", ["synthesizer", "summarizer", "security-lead"])
async def test_roundtable_voices_do_not_talk_about_the_sample(foreign_repo: Path, role: str) -> None:
    text = await _final(role, "Discuss the architecture.", foreign_repo)
    assert not any(word in text for word in SAMPLE_WORDS), text
