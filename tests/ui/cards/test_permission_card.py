"""The permission card: an agent's question shown with its file and change, answered by key or withdrawn."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from waiting import until

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.controllers.permission_cards import PermissionCards, PermissionCardView
from tunaflow_tui.runtime.events import RuntimeEvent
from tunaflow_tui.runtime.permission_desk import PermissionDesk
from tunaflow_tui.widgets.decision.arming import ArmedCard
from tunaflow_tui.widgets.permission.permission_card import PermissionAnswered, PermissionCard

DIFF = "--- /w/notes.md\n+++ /w/notes.md\n@@ -1 +1 @@\n-old content\n+written by \x1b[31mfake model\n"
REQUEST = PermissionRequest(engine="gemini-acp", role="architect", session_id="s", tool_call_id="t",
                            title="Writing to notes.md", kind="edit", paths=("/w/notes.md",), diff=DIFF)


class DeskApp(App[None]):
    """The runtime's desk, the controller, and a column of cards."""

    def __init__(self) -> None:
        super().__init__()
        self.desk = PermissionDesk(self.on_runtime_event)
        self.cards = PermissionCards(self, self.desk)
        self.told: list[str] = []

    def on_runtime_event(self, event: RuntimeEvent) -> None:
        self.run_worker(self.cards.on_runtime_event(event), group="permissions")

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="cards")

    async def show_permission(self, view: PermissionCardView) -> None:
        card = PermissionCard(view, id=f"permission-{view.request_id}")
        await self.query_one("#cards").mount(card)
        card.focus()

    async def update_permission(self, view: PermissionCardView) -> None:
        self.query_one(f"#permission-{view.request_id}", PermissionCard).view = view

    def tell(self, text: str) -> None:
        self.told.append(text)

    def on_permission_answered(self, message: PermissionAnswered) -> None:
        self.cards.answer(message.request_id, message.answer)


def card_text(app: DeskApp) -> str:
    return app.query_one(PermissionCard).render().plain  # type: ignore[union-attr]


async def test_a_question_shows_as_a_card_and_its_key_answers_the_agent() -> None:
    app = DeskApp()
    async with app.run_test() as pilot:
        asking = asyncio.create_task(app.desk.broker("main").decide(REQUEST))
        await until(pilot, lambda: app.query(PermissionCard), "the card")
        text = card_text(app)
        assert "gemini-acp (Architect) asks: Writing to notes.md" in text
        assert "/w/notes.md" in text and "-old content" in text and "+written by" in text
        assert "\x1b" not in text
        assert app.query_one(PermissionCard).key_hint() == "a allow once · A allow for session · d deny"
        await pilot.press("A")
        assert await asyncio.wait_for(asking, 10) is PermissionAnswer.ALLOW_ALWAYS
        await until(pilot, lambda: "allowed for the rest of this session" in card_text(app), "the answer on the card")
        assert "allow once" not in card_text(app)


async def test_a_withdrawn_question_says_so_and_a_late_key_changes_nothing() -> None:
    app = DeskApp()
    async with app.run_test() as pilot:
        asking = asyncio.create_task(app.desk.broker("main").decide(REQUEST))
        await until(pilot, lambda: app.query(PermissionCard), "the card")
        asking.cancel()  # the turn was cancelled, or its idle timeout ended it
        await asyncio.gather(asking, return_exceptions=True)
        await until(pilot, lambda: "turn ended" in card_text(app), "the card to say the question is over")
        await pilot.press("a")
        await pilot.pause()
        assert app.query_one(PermissionCard).view.state == "withdrawn"
        assert app.desk.open_questions() == []


async def test_keys_wait_for_arming_when_the_card_took_the_focus_on_its_own() -> None:
    app = DeskApp()
    async with app.run_test() as pilot:
        asking = asyncio.create_task(app.desk.broker("main").decide(REQUEST))
        await until(pilot, lambda: app.query(PermissionCard), "the card")
        card = app.query_one(PermissionCard)
        card.blur()
        await pilot.pause()
        card.focus_on_its_own(arming=60)
        await pilot.pause()
        await pilot.press("a")  # typed while the card appeared: no answer
        await pilot.pause()
        assert not asking.done()
        assert isinstance(card, ArmedCard) and not card.is_armed
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)


class ColumnApp(App[None]):
    """A chat, the main conversation's permission dock and its composer, one above the other."""

    AUTO_FOCUS = None

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical
        from textual.widgets import Static

        from tunaflow_tui.widgets.composer import Composer
        from tunaflow_tui.widgets.permission.permission_dock import PermissionDock

        with Vertical():
            yield Static("chat", id="chat")
            yield PermissionDock("main")
            yield Composer("Architect", cursor_blink=False)


async def _two_tall_questions(dock) -> PermissionCard:  # type: ignore[no-untyped-def]
    """Two questions with eight-line diffs in ``dock`` (they do not fit at 80×24); the first one's card."""
    from dataclasses import replace

    from tunaflow_tui.viewmodels.permission_views import card_view

    long_diff = "".join(f"+line {n}\n" for n in range(8))
    card: PermissionCard = await dock.show(card_view(1, "main", replace(REQUEST, diff=long_diff)))
    await dock.show(card_view(2, "main", replace(REQUEST, diff=long_diff, title="Writing to other.md")))
    return card


async def test_a_card_scrolled_out_of_view_gives_its_keys_to_the_composer() -> None:
    from tunaflow_tui.widgets.composer import Composer
    from tunaflow_tui.widgets.permission.permission_dock import PermissionDock

    app = ColumnApp()
    async with app.run_test(size=(80, 24)) as pilot:
        dock = app.query_one(PermissionDock)
        card = await _two_tall_questions(dock)
        await pilot.pause()
        card.focus()
        dock.scroll_home(animate=False)
        await until(pilot, lambda: dock.can_view_partial(card) and card.has_focus, "the first card in view, focused")
        await pilot.pause()
        assert dock.hint_text().startswith("gemini-acp (Architect) asks — f2 focuses it")  # the newest, unfocused
        dock.scroll_end(animate=False)  # the user scrolls the questions: the focused one leaves the view
        await until(pilot, lambda: not dock.can_view_partial(card), "the first card out of view")
        await until(pilot, lambda: app.query_one(Composer).input.has_focus, "the keys back in the composer")
        await pilot.press("a")  # typed, not an answer
        assert app.query_one(Composer).text == "a"


async def test_a_card_focused_where_it_already_stands_gives_its_keys_up_when_scrolled_away() -> None:
    """Focused with no scroll to tell (already in view): still seen there, so leaving the view hands the keys back."""
    from tunaflow_tui.widgets.composer import Composer
    from tunaflow_tui.widgets.permission.permission_dock import PermissionDock

    app = ColumnApp()
    async with app.run_test(size=(80, 24)) as pilot:
        dock = app.query_one(PermissionDock)
        card = await _two_tall_questions(dock)
        await pilot.pause()
        dock.scroll_home(animate=False)
        await until(pilot, lambda: dock.scroll_y == 0 and dock.can_view_partial(card), "the first card in view")
        await pilot.pause()
        card.focus()  # where it stands: nothing scrolls
        await until(pilot, lambda: card.has_focus, "the first card focused")
        await pilot.pause()
        dock.scroll_end(animate=False)
        await until(pilot, lambda: not dock.can_view_partial(card), "the first card out of view")
        await until(pilot, lambda: app.query_one(Composer).input.has_focus, "the keys back in the composer", limit=10)
