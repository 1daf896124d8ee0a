"""An ACP agent's permission question in the app: a card where its conversation is, answered by key.

The stand-in ACP agent replays claude-code-acp's real write capture (a ``session/request_permission``
for a Write with its diff); what it received is read from its log, so each test asserts the answer
the agent got, not only what the screen says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_rig import capture, permission_answers, with_acp_engine
from app_harness import armed, demo_settings, screen_text
from branch_seeds import fork_seeded, open_in_pane, seed_main
from waiting import until

from tunaflow_tui.widgets.branch_thread import BranchThread
from tunaflow_tui.widgets.permission.permission_card import PermissionCard
from tunaflow_tui.widgets.permission.permission_dock import PermissionDock


def _acp_app(open_app: Any, project: Path, **config: Any) -> tuple[Any, Any, Path]:
    """The app on the demo project with the Architect on claude-code-acp (its write capture replayed)."""
    settings, log = with_acp_engine(demo_settings(project), project.parent / "acp", capture("claude-fake-write-allow"),
                                    subst={"/opt/scratch": str(project / "notes.md")}, **config)
    app, _session, runtime = open_app(settings=settings)
    return app, runtime, log


def _card_text(card: PermissionCard) -> str:
    return card.render().plain  # type: ignore[union-attr]


async def _ask(pilot: Any, composer: Any, text: str = "write file") -> None:
    composer.focus_input()
    composer.input.load_text(text)
    await pilot.press("enter")


async def test_a_question_in_main_shows_its_file_and_change_and_a_answers_the_agent_once(
        open_app: Any, demo_project: Path) -> None:
    app, _runtime, log = _acp_app(open_app, demo_project)
    async with app.run_test(size=(120, 40)) as pilot:
        await _ask(pilot, app.composer)
        await until(pilot, lambda: app.query(PermissionCard), "the permission card")
        card = app.query_one(PermissionCard)
        assert card.parent is not None and card.parent.parent is app.query_one("#chat-column")
        text = _card_text(card)
        assert "claude-acp (Architect) asks: Write" in text
        assert str(demo_project / "notes.md") in text and "+written by fake model" in text
        await until(pilot, lambda: app.focused is card, "the card taking the focus (the user was not typing)")
        await armed(pilot, app)
        hint = screen_text(app)
        assert "claude-acp (Architect) asks: a allow once · A allow for session · d deny" in hint
        assert "a A d Decide" in hint  # the footer names the card's keys
        await pilot.press("a")
        await until(pilot, lambda: permission_answers(log), "the agent getting the answer")
        assert permission_answers(log) == [{"outcome": "selected", "optionId": "allow"}]
        await until(pilot, lambda: "allowed once" in _card_text(card), "the card saying what was answered")
        await until(pilot, lambda: app.composer.input.has_focus, "the keys going back to the composer")
        await until(pilot, lambda: (demo_project / "notes.md").exists(), "the agent's write")
        assert (demo_project / "notes.md").read_text() == "written by fake model\n"
        assert "a A d Decide" not in screen_text(app)
        await pilot.press("a")  # the answered card's key does nothing more: it is typing now
        await pilot.pause()
        assert permission_answers(log) == [{"outcome": "selected", "optionId": "allow"}]


@pytest.mark.parametrize(("key", "option", "words"), [("A", "allow_always", "allowed for the rest of this session"),
                                                      ("d", "reject", "denied")])
async def test_allow_for_the_session_and_deny_reach_the_agent_as_its_own_options(
        open_app: Any, demo_project: Path, key: str, option: str, words: str) -> None:
    app, _runtime, log = _acp_app(open_app, demo_project)
    async with app.run_test(size=(120, 40)) as pilot:
        await _ask(pilot, app.composer)
        await until(pilot, lambda: app.query(PermissionCard) and app.focused is app.query_one(PermissionCard),
                    "the focused card")
        await armed(pilot, app)
        await pilot.press(key)
        await until(pilot, lambda: permission_answers(log), "the agent getting the answer")
        assert permission_answers(log) == [{"outcome": "selected", "optionId": option}]
        await until(pilot, lambda: words in _card_text(app.query_one(PermissionCard)), "the outcome on the card")


async def test_a_question_nobody_answers_ends_with_the_idle_timeout_and_the_card_says_so(
        open_app: Any, demo_project: Path) -> None:
    app, runtime, log = _acp_app(open_app, demo_project, timeout_idle_s=1.5)
    async with app.run_test(size=(120, 40)) as pilot:
        await _ask(pilot, app.composer)
        await until(pilot, lambda: app.query(PermissionCard), "the permission card")
        card = app.query_one(PermissionCard)
        await until(pilot, lambda: "idle timeout" in _card_text(card), "the card saying the timeout ended it")
        assert permission_answers(log) == [{"outcome": "cancelled"}]
        assert runtime.permissions.open_questions() == []
        await until(pilot, lambda: not card.has_focus, "the card giving its keys up")
        card.focus()
        await pilot.press("a")  # a late key on the ended question
        await pilot.pause()
        assert permission_answers(log) == [{"outcome": "cancelled"}]
        assert "not answered in time" in _card_text(card)


async def test_a_question_asked_in_a_branch_shows_in_the_branch_pane_and_is_answered_there(
        open_app: Any, demo_project: Path) -> None:
    app, runtime, log = _acp_app(open_app, demo_project)
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "notes")
    async with app.run_test(size=(120, 40)) as pilot:
        thread = await open_in_pane(pilot, app, branch_id)
        assert thread.composer is not None
        await _ask(pilot, thread.composer)
        await until(pilot, lambda: thread.query(PermissionCard), "the card in the branch pane")
        card = thread.query_one(PermissionCard)
        assert not app.query_one("#chat-column").query(PermissionCard)  # not in main
        dock = card.parent
        assert isinstance(dock, PermissionDock) and dock.conversation_id == f"branch:{branch_id}"
        assert isinstance(dock.parent, BranchThread)
        await until(pilot, lambda: app.focused is card, "the card taking the focus")
        await armed(pilot, app)
        await pilot.press("d")
        await until(pilot, lambda: permission_answers(log), "the agent getting the answer")
        assert permission_answers(log) == [{"outcome": "selected", "optionId": "reject"}]
        await until(pilot, lambda: thread.composer is not None and thread.composer.input.has_focus,
                    "the keys back in the branch's composer")


async def test_f2_shows_a_question_from_a_branch_the_user_does_not_see_and_its_key_answers_it(
        open_app: Any, demo_project: Path) -> None:
    from app_harness import posted

    app, runtime, log = _acp_app(open_app, demo_project)
    ids = seed_main(runtime)
    branch_id = fork_seeded(runtime, ids[1], "notes")
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.send(f"branch:{branch_id}", "write file")  # a turn in a branch, the pane hidden
        await until(pilot, lambda: app.query(PermissionCard), "the question")
        card = app.query_one(PermissionCard)
        assert app.workspace.mode == "hidden" and not card.has_focus
        await until(pilot, lambda: any("f2 shows the question" in n.message for n in posted(app)),
                    "the user told which key shows it")
        await pilot.press("f2")
        await until(pilot, lambda: app.focused is card, "the card focused in the revealed pane")
        assert app.workspace.mode == "drawer"
        await pilot.press("a")  # asked for: the keys act at once
        await until(pilot, lambda: permission_answers(log), "the agent getting the answer")
        assert permission_answers(log) == [{"outcome": "selected", "optionId": "allow"}]
