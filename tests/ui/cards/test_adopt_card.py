"""The adopt card on its own: provenance, the diff stat of a branch with commits, hostile text made inert."""

from __future__ import annotations

from app_harness import screen_text
from textual.app import App, ComposeResult

from tunaflow_tui.viewmodels.chat import ListMessageSource, MessageView
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.decision.records.adopt_record import AdoptCard

META = {
    "kind": "branch_adopt", "branch_id": 4, "branch_label": "try \x1b[31mred\x1b[0m sqlite", "message_count": 1,
    "engine": "claude", "git_branch": "tunaflow/plan-3", "summary": "Use **FTS5**; keep the index small.",
    "summary_source": "summarizer", "summary_note": "",
    "diff_stat": " src/search.py | 12 +++++++---\n 1 file changed, 8 insertions(+), 4 deletions(-)",
}


class CardApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[int] = []

    def compose(self) -> ComposeResult:
        view = MessageView(1, "system", "tunaflow", "Adopted branch 4 …", meta=META)
        yield ChatView(ListMessageSource([view]), window=5)

    def on_adopt_card_open_branch(self, event: AdoptCard.OpenBranch) -> None:
        self.opened.append(event.branch_id)


async def test_the_card_shows_provenance_summary_and_diff_stat_and_opens_the_branch() -> None:
    app = CardApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        [card] = app.query(AdoptCard)
        text = screen_text(app)
        assert "↳ Adopted branch 4: try red sqlite" in text  # the escape sequences are inert
        assert "\x1b" not in card.facts() and "1 message · claude · git tunaflow/plan-3" in text
        assert "FTS5" in text and "1 file changed, 8 insertions(+), 4 deletions(-)" in text
        assert "o opens the branch" in text
        card.parent.focus()  # the message holding the card
        await pilot.press("o")
        await pilot.pause()
        assert app.opened == [4]


async def test_ctrl_e_in_the_adopt_editor_hands_the_summary_to_the_users_editor(monkeypatch) -> None:
    import contextlib
    from pathlib import Path

    from textual.widgets import Label

    from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen

    monkeypatch.setenv("VISUAL", "my-editor --wait")
    calls: list[list[str]] = []
    results: list[str | None] = []

    def run(argv: list[str]) -> None:
        calls.append(argv)
        path = Path(argv[-1])
        path.write_text(path.read_text(encoding="utf-8") + " Open question: per-file totals.", encoding="utf-8")

    class EditorApp(App[None]):
        def compose(self) -> ComposeResult:
            yield Label("main")

        def on_mount(self) -> None:
            self.push_screen(AdoptEditorScreen(title="Adopt branch", prompt="The summary…",
                                               initial="Keep words.", run_editor=run), results.append)

        def suspend(self):  # type: ignore[override]
            return contextlib.nullcontext()

    app = EditorApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert calls and calls[0][:2] == ["my-editor", "--wait"]
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert results == ["Keep words. Open question: per-file totals."]
