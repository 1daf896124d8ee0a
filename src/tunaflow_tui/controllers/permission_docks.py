"""PermissionController: agents' permission questions shown where their conversation is on screen.

A question asked in the main chat's conversation shows in a dock above the decision dock; one asked
in a branch shows in the branch pane, above the branch's composer, whenever the pane shows that
branch (a question asked while another branch is shown waits there, and f2 opens it). A card that
arrives takes the focus unless the user is typing, with its keys armed a moment later, as decision
cards do; the bell rings when the user looks elsewhere. f2 walks the open questions with the plans'
decisions, oldest first (see :class:`~tunaflow_tui.controllers.decision_controller.DecisionController`). The user's key goes to the runtime's
:class:`~tunaflow_tui.runtime.permission_desk.PermissionDesk`, for that card's question only.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from textual.widget import Widget

from tunaflow_tui.agents.permissions import PermissionAnswer
from tunaflow_tui.controllers.permission_cards import PermissionAnswering, PermissionCards
from tunaflow_tui.keyhints import app_key
from tunaflow_tui.runtime.events import RuntimeEvent
from tunaflow_tui.viewmodels.permission_views import PermissionCardView
from tunaflow_tui.widgets.branch_thread import BranchThread
from tunaflow_tui.widgets.composer import Composer
from tunaflow_tui.widgets.decision import arming
from tunaflow_tui.widgets.permission.permission_card import PermissionCard
from tunaflow_tui.widgets.permission.permission_dock import PermissionDock

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.attention_controller import AttentionController
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.workers import Workers


class PermissionController:
    """Shows permission questions in their conversation's dock and passes the user's answers on.

    Args:
        app: The app.
        desk: Where answers go (the runtime's permission desk).
        panes: Which branch the pane shows, and how to show another.
        attention: Calls the user back when a question waits and they look elsewhere.
        workers: Where screen work started by a key runs.
        user_is_typing: Whether the user is writing in a composer (main's, or the one given) right now.
    """

    def __init__(self, app: AppPort, desk: PermissionAnswering, panes: PaneController,
                 attention: AttentionController, workers: Workers,
                 user_is_typing: Callable[[Composer | None], bool]) -> None:
        self._app = app
        self._user_is_typing = user_is_typing
        self._panes = panes
        self._attention = attention
        self._workers = workers
        self.cards = PermissionCards(self, desk)
        self.on_queue_changed: Callable[[], None] | None = None
        """Called when a question opens or settles: the decision queue (f2, the dock's line) counts them."""

    async def on_runtime_event(self, event: RuntimeEvent) -> None:
        """A question asked or settled (routed here by the session)."""
        await self.cards.on_runtime_event(event)

    # ------------------------------------------------------------------ where a conversation's dock is
    def dock_of(self, conversation_id: str) -> PermissionDock | None:
        """The dock of ``conversation_id`` if that conversation is on screen and has one."""
        host = self._host(conversation_id)
        if host is None:
            return None
        found = [d for d in host.query_children(PermissionDock) if d.conversation_id == conversation_id]
        return found[0] if found else None

    def _host(self, conversation_id: str) -> Widget | None:
        """The chat column (main) or the pane's branch thread that shows ``conversation_id``."""
        if conversation_id == self._app.conversation_id:
            return self._app.query_one("#chat-column")
        if self._panes.branch_conversation == conversation_id:
            threads = self._app.workspace.pane.query(BranchThread)
            thread = threads.first() if threads else None
            if thread is not None and thread.conversation_id == conversation_id:
                return thread
        return None

    async def _dock(self, conversation_id: str) -> PermissionDock | None:
        """The dock of ``conversation_id``, mounted above its composer on first use; None when off screen."""
        dock = self.dock_of(conversation_id)
        if dock is not None:
            return dock
        host = self._host(conversation_id)
        if host is None:
            return None
        dock = PermissionDock(conversation_id)
        if isinstance(host, BranchThread):
            await host.mount(dock, before=host.children[-1])  # above the composer (or the read-only line)
        else:
            await host.mount(dock, before=self._app.decision_dock)
        return dock

    # ------------------------------------------------------------------ the port the cards use
    async def show_permission(self, view: PermissionCardView) -> None:
        """A new question: its card in its conversation's dock, focused unless the user is typing."""
        self._attention.call(f"{view.asker} asks before: {view.title}", decision=True,
                             conversation_id=view.conversation_id)
        self._queue_changed()
        dock = await self._dock(view.conversation_id)
        jump = app_key(self._app, "decision.jump", "f2")
        if dock is None:  # a branch the pane does not show: f2 opens it
            where = view.conversation_id.replace("branch:", "branch ")
            self._app.notify(f"{view.asker} asks before: {view.title} (in {where}). {jump} shows the question.",
                             timeout=10)
            return
        card = await dock.show(view)
        self._app.call_after_refresh(self._offer_focus, card)

    async def update_permission(self, view: PermissionCardView) -> None:
        """A question settled: its card says how."""
        self._queue_changed()
        dock = self.dock_of(view.conversation_id)
        if dock is not None:
            dock.update(view)

    def _queue_changed(self) -> None:
        if self.on_queue_changed is not None:
            self.on_queue_changed()

    def tell(self, text: str) -> None:
        """A short notice."""
        self._app.notify(text, timeout=6)

    # ------------------------------------------------------------------ focus
    def _typing(self) -> bool:
        focused = self._app.focused
        composer = next((node for node in focused.ancestors_with_self if isinstance(node, Composer)), None) \
            if focused is not None else None
        return composer is not None and self._user_is_typing(composer)

    def _offer_focus(self, card: PermissionCard) -> None:
        """Focus a card that just arrived, unless the user is typing or cannot see it (a hidden branch
        pane): then they are told the key that reaches it."""
        if not card.is_attached or not card.view.is_open:
            return
        focused = self._app.focused
        if isinstance(focused, PermissionCard) and focused.view.is_open:
            return  # the user is on another question: it keeps the keys
        jump = app_key(self._app, "decision.jump", "f2")
        if not _shown(card):
            self._app.notify(f"{card.view.asker} asks before: {card.view.title} (in the branch pane). "
                             f"{jump} shows the question.", timeout=10)
            return
        if self._typing():
            self._app.notify(f"An agent asks a question while you type: {jump} focuses it when you are ready.",
                             timeout=8)
            return
        card.focus_on_its_own(arming.ARMING_SECONDS)
        card.scroll_visible(animate=False)

    def open_questions(self) -> list[tuple[datetime, int]]:
        """(asked at, request id) of every question still waiting, oldest first (f2 walks them)."""
        asked = self.cards.asked_at
        return sorted((asked[v.request_id], v.request_id) for v in self.cards.open_views() if v.request_id in asked)

    def focused_question(self) -> int | None:
        """The open question whose card has the keys, if one has."""
        focused = self._app.focused
        card = next((node for node in focused.ancestors_with_self if isinstance(node, PermissionCard)), None) \
            if focused is not None else None
        return card.view.request_id if card is not None and card.view.is_open else None

    def asker_of(self, request_id: int) -> str:
        """The role of the agent that asks the question (``Architect``), as the decision queue names it."""
        view = self.cards.views.get(request_id)
        return view.role if view is not None else ""

    def show_question(self, request_id: int) -> None:
        """f2 reached this question: its card shown (its branch first) and focused, its keys armed."""
        view = self.cards.views.get(request_id)
        if view is not None and view.is_open:
            self._workers.run_ui(self._focus(view), "show the permission question")

    async def _focus(self, view: PermissionCardView) -> None:
        cid = view.conversation_id
        if cid.startswith("branch:"):
            if self._host(cid) is None:
                await self._panes.open_branch(int(cid.removeprefix("branch:")), reveal=True)
            workspace = self._app.workspace
            if workspace.mode == "hidden":
                workspace.mode = "drawer"
            elif workspace.mode == "pinned" and workspace.narrow:
                workspace.showing_pane = True
        dock = await self._dock(cid)
        if dock is None:
            return
        card = dock.card_for(view.request_id) or await dock.show(view)

        def focus() -> None:
            if card.is_attached and _shown(card):
                card.arm()  # the user asked for it: the keys act at once
                card.focus()
                card.scroll_visible(animate=False)

        self._app.call_after_refresh(focus)

    async def branch_shown(self, conversation_id: str) -> None:
        """The pane shows a branch anew: its questions (still open, or just answered) come with it."""
        views = [v for v in self.cards.views.values() if v.conversation_id == conversation_id]
        if not views:
            return
        dock = await self._dock(conversation_id)
        if dock is not None:
            for view in views:
                await dock.show(view)

    # ------------------------------------------------------------------ the user's answer
    def answer(self, request_id: int, answer: PermissionAnswer) -> bool:
        """A card's key: the answer goes to that card's question only."""
        return self.cards.answer(request_id, answer)


def _shown(widget: Widget) -> bool:
    """True when ``widget`` and every container around it are displayed (not in a hidden pane)."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))
