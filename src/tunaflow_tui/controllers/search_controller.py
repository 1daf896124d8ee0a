"""SearchController: project search in the app, and opening a hit where it was written.

The search view asks for results on a worker thread (embedding the query may load the model);
this controller turns the runtime's hits into plain views. A chosen hit opens in the main chat,
or in the branch pane for a branch's message, with the page around it mounted and the message
focused, however far back it is.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.sources import speaker_label
from tunaflow_tui.screens.search_screen import SearchScreen
from tunaflow_tui.viewmodels.search_views import SearchHitView, SearchResultsView, results_view

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.core.memory.project_search import ProjectHit
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

HITS = 40
"""Hits the search view lists."""

now: Callable[[], datetime] = lambda: datetime.now().astimezone()  # noqa: E731 - tests move the clock by hand
"""The clock hit times are written against (today's hits show only the time)."""


def _speaker(hit: ProjectHit) -> str:
    message = hit.message
    return speaker_label(message.role, message.persona, message.engine, message.model)


class SearchController:
    """Opens the search view and the hit the user picks.

    Args:
        app: The app.
        runtime: The project's runtime (its memory searches).
        panes: Opens a branch in the branch pane.
        workers: Where opening a hit runs.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, panes: PaneController,
                 workers: Workers) -> None:
        self._app = app
        self._runtime = runtime
        self._panes = panes
        self._workers = workers

    def search(self, query: str) -> SearchResultsView:
        """One search over every finished message of the project (call on a worker thread)."""
        result = self._runtime.memory.search(query, limit=HITS, mode="hybrid")
        labels = {branch.id: branch.label for branch in self._runtime.store.list_branches()}
        return results_view(query, result, labels, now(), _speaker)

    def note(self) -> str:
        """What the view says before the first search when only full text can be searched."""
        engine = self._runtime.memory.search_engine
        if engine.vectors_available():
            return ""
        return f"full-text search only: {engine.unavailable_reason() or 'no embedding model'}"

    def open(self) -> None:
        """Show the search view; the hit chosen opens where it was written."""
        if any(isinstance(screen, SearchScreen) for screen in self._app.screen_stack):
            return

        def chosen(hit: SearchHitView | None) -> None:
            if hit is not None:
                self._workers.run_ui(self.open_hit(hit), "open the message")

        self._runtime.memory.wake()  # the first query then finds the embedding worker started
        self._app.push_screen(SearchScreen(self.search, note=self.note()), chosen)

    async def open_hit(self, hit: SearchHitView) -> None:
        """Show the hit's message in its conversation (the main chat or the branch pane) and focus it."""
        app = self._app
        branch_id = hit.branch_id
        if branch_id is None or hit.conversation_id == app.conversation_id:
            if app.workspace.mode == "drawer":  # the drawer lies over the chat the message is in
                app.show_branch_pane(False)
            block = await app.chat_view.open_at(hit.message_id)
        else:
            await self._panes.open_branch(branch_id)
            chat = self._panes.chat_for(hit.conversation_id)
            block = await chat.open_at(hit.message_id) if chat is not None else None
        if block is None:
            app.notify("That message is no longer there (its branch or the message was deleted).",
                       severity="warning")
