"""Opening a project whose own configuration names commands: nothing of it runs before the user trusts it."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import armed, screen_text
from waiting import until

from tunaflow_tui.controllers import ProjectOpener
from tunaflow_tui.core.settings.loader import project_trust
from tunaflow_tui.core.settings.trust import TrustState
from tunaflow_tui.screens.decision_screen import DecisionScreen
from tunaflow_tui.subcommands.open_command import open_project_app

AGENT = "#!/bin/sh\necho ran \"$@\" >> \"$(dirname \"$0\")/../MARKER\"\nexit 1\n"


@pytest.fixture
def shipped(demo_project: Path) -> Path:
    """The sample project as cloned from someone else: its config names tools/agent.sh as an engine."""
    agent = demo_project / "tools" / "agent.sh"
    agent.parent.mkdir()
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(0o755)
    (demo_project / ".tunaflow").mkdir(exist_ok=True)
    (demo_project / ".tunaflow" / "config.toml").write_text(
        f'[roles]\narchitect = "local"\n\n[engines.local]\ntype = "claude"\ncommand = "{agent}"\n'
        '[engines.local.env]\nSHIPPED_TOKEN = "x"\n', encoding="utf-8")
    return demo_project


async def _answer(shipped: Path, key: str) -> str | None:
    """Open the app on the project, answer the trust prompt with ``key``; the Architect's command after."""
    app = open_project_app(shipped, cursor_blink=False)
    opener = app.controller
    assert isinstance(opener, ProjectOpener)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "Trust this project's commands?" in screen_text(app), "the trust prompt")
            shown = screen_text(app)
            assert "Trust this project's commands?" in shown
            # the command's path is long (a test's temporary folder): it may wrap anywhere
            flat = "".join(ch for ch in shown if not ch.isspace() and ch not in "▕▏│┃")
            assert "engines.local.command" in shown and "tools/agent.sh" in flat
            assert "SHIPPED_TOKEN" in shown
            assert not (shipped / "MARKER").exists(), "opening the app ran nothing of the project's"
            prompt = app.screen
            assert isinstance(prompt, DecisionScreen)
            await pilot.press(key)  # a key typed at once, meant for something else, answers nothing
            assert app.screen is prompt
            await armed(pilot, app)  # the user's moment passes (the UI tests' clock is moved by hand)
            await pilot.press(key)
            await until(pilot, lambda: not isinstance(app.screen, DecisionScreen), "the prompt answered")
            runtime = opener.runtime
            assert runtime is not None
            command = runtime.settings.engines["local"].command
    finally:
        opener.close()
    assert not (shipped / "MARKER").exists()
    return command


async def test_trust_from_the_prompt_applies_the_commands_at_once(shipped: Path) -> None:
    assert (await _answer(shipped, "t") or "").endswith("agent.sh")
    assert project_trust(shipped).state is TrustState.TRUSTED


async def test_not_now_leaves_the_commands_out_and_asks_again(shipped: Path) -> None:
    assert await _answer(shipped, "n") == ""
    assert project_trust(shipped).state is TrustState.UNTRUSTED


async def test_never_is_remembered(shipped: Path) -> None:
    assert await _answer(shipped, "v") == ""
    assert project_trust(shipped).state is TrustState.DENIED
