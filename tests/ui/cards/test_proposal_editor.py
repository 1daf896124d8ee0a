"""The plan editor: ctrl+e hands the proposal to ``$EDITOR`` (the terminal handed over with
``App.suspend``); what the editor saved comes back, is read strictly, and a text that cannot be read
keeps the editor open with its line named and nothing lost."""

from __future__ import annotations

import contextlib
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Label

from tunaflow_tui.core.proposal_editing import EditedProposal, EditedSubtask, proposal_to_editable_text
from tunaflow_tui.screens.proposal_editor import ProposalEditorScreen

PROPOSAL = EditedProposal("Add rate limiting", (EditedSubtask("Token bucket", "per key"), EditedSubtask("Tests")),
                          "Limit requests per key.", "HTTP 429 above the limit.")


class EditorApp(App[None]):
    def __init__(self, screen: ProposalEditorScreen) -> None:
        super().__init__()
        self.editor = screen
        self.result: list[EditedProposal | None] = []

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def on_mount(self) -> None:
        self.push_screen(self.editor, self.result.append)

    def suspend(self):  # type: ignore[override]
        return contextlib.nullcontext()  # the test terminal cannot be handed over; the editor runs all the same


def _editor(rewrite):
    calls: list[list[str]] = []

    def run(argv: list[str]) -> None:
        calls.append(argv)
        path = Path(argv[-1])
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")

    return run, calls


async def test_ctrl_e_edits_in_the_users_editor_and_saves_what_it_wrote(monkeypatch) -> None:
    monkeypatch.setenv("VISUAL", "my-editor --wait")
    run, calls = _editor(lambda text: text.replace("2. Tests", "2. Tests for bursts\n3. Document the limits"))
    app = EditorApp(ProposalEditorScreen(proposal_to_editable_text(PROPOSAL), run_editor=run))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert calls and calls[0][:2] == ["my-editor", "--wait"] and calls[0][2].endswith(".md")
        [edited] = app.result
        assert edited is not None
        assert [s.title for s in edited.subtasks] == ["Token bucket", "Tests for bursts", "Document the limits"]
        assert not Path(calls[0][2]).exists(), "the temporary file is removed"


async def test_an_unreadable_edit_from_the_editor_keeps_the_text_and_names_the_line(monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", "vi")
    monkeypatch.delenv("VISUAL", raising=False)
    run, _calls = _editor(lambda text: text.replace("## Subtasks", "loose words\n## Subtasks"))
    screen = ProposalEditorScreen(proposal_to_editable_text(PROPOSAL), run_editor=run)
    app = EditorApp(screen)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert app.result == [] and app.screen is screen
        assert "loose words" in screen.text
        problem = str(screen.query_one("#problem").render())
        # the line as the dialog shows it (the editor's guide above the title is not in the dialog)
        assert "line 3" in problem and "'loose words' is outside any section" in problem
        assert screen.query_one("TextArea").cursor_location == (2, 0)


async def test_the_editor_s_guide_is_for_the_editor_only(monkeypatch) -> None:
    monkeypatch.setenv("VISUAL", "my-editor")
    seen: list[str] = []

    def keep(text: str) -> str:
        seen.append(text)
        return text.replace("per key", "per API key")

    run, _calls = _editor(keep)
    screen = ProposalEditorScreen(proposal_to_editable_text(PROPOSAL), run_editor=run)
    app = EditorApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        shown = screen.text
        assert shown.startswith("# Add rate limiting"), "the dialog opens at the plan's title, not at the guide"
        assert "close the editor" not in shown
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert seen and seen[0].startswith("<!-- Edit the plan, save, and close the editor")
        [edited] = app.result
        assert edited is not None and edited.subtasks[0].details == "per API key"


async def test_ctrl_e_in_the_revision_feedback_reaches_the_editor_too(monkeypatch) -> None:
    from tunaflow_tui.screens.feedback import FeedbackScreen

    monkeypatch.setenv("VISUAL", "my-editor")
    run, calls = _editor(lambda text: text + " and split the tests")

    class FeedbackApp(App[None]):
        def compose(self) -> ComposeResult:
            yield Label("main screen")

        def on_mount(self) -> None:
            self.push_screen(FeedbackScreen(initial="keep the API", run_editor=run))

        def suspend(self):  # type: ignore[override]
            return contextlib.nullcontext()

    app = FeedbackApp()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert calls, "ctrl+e opened the editor rather than moving to the end of the line"
        assert app.screen.query_one("TextArea").text == "keep the API and split the tests"
