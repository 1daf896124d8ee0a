"""SearchScreen: search the whole project as you type, and open a hit where it was written.

Typing never waits for a search: each keystroke restarts a short debounce timer, and the search
itself runs on a worker thread (it may load the embedding model). A result that arrives after the
query changed again is dropped, so the list always matches the words in the box.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tunaflow_tui.core.snippet_text import more_like_it, snippet_runs
from tunaflow_tui.screens.dialog import DialogScreen
from tunaflow_tui.viewmodels.search_views import SearchFunction, SearchHitView, SearchResultsView

DEBOUNCE_SECONDS = 0.25
"""How long typing pauses before the search runs."""


#: How the snippet's inline Markdown is drawn (the syntax itself is not shown).
RUN_STYLES: dict[str, str] = {"": "", "code": "bold", "strong": "bold", "em": "italic"}
MATCH_STYLE = "bold reverse"


def hit_prompt(hit: SearchHitView) -> Text:
    """A hit as two lines: where · who · when (and how many alike), then the snippet, query words marked."""
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(hit.where, style="bold")
    head.append(f" · {hit.speaker} · {hit.when}", style="dim")
    if hit.alike:
        head.append(f" · {more_like_it(len(hit.alike))}", style="italic")
    body = Text(no_wrap=True, overflow="ellipsis")
    body.append("  ")
    for run in snippet_runs(hit.snippet):
        style = RUN_STYLES[run.style]
        body.append(run.text, style=f"{style} {MATCH_STYLE}".strip() if run.matched else style)
    return Text("\n").join([head, body])


class HitList(OptionList):
    """The hits: up on the first one goes back to the query box, as down from the box came here."""

    class LeftAtTop(Message):
        """Up was pressed on the first hit."""

    def action_cursor_up(self) -> None:
        """Move the highlight up; from the first hit (or none), hand the focus back to the box."""
        if self.highlighted is None or self.highlighted == 0:
            self.post_message(self.LeftAtTop())
            return
        super().action_cursor_up()


class SearchScreen(DialogScreen[SearchHitView | None]):
    """Search the project's messages; dismisses with the chosen hit (None on escape).

    Args:
        search: Runs one search; called on a worker thread.
        note: A line shown under the box from the start (e.g. that only full text is searched).
        query: Words to start with.
    """

    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    SearchScreen > #dialog { width: 90%; max-width: 120; height: 1fr; max-height: 40; margin-top: 1; }
    SearchScreen #query { margin-bottom: 0; }
    SearchScreen #search-status { color: $text-muted; width: 1fr; height: auto; }
    SearchScreen #hits { height: 1fr; }
    SearchScreen #search-keys { color: $text-muted; height: 1; }
    """

    HELP = """\
## Search
Type to search every message of the project (the main conversation and every branch), by words and
by meaning. **down** moves to the hits (**up** on the first one returns to the words), **enter** opens the highlighted hit where it was written
(the surrounding messages load however far back it is), **escape** closes.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Close", id="search.close"),
        Binding("down", "to_hits", "Hits", show=False, id="search.hits"),
    ]

    def __init__(self, search: SearchFunction, *, note: str = "", query: str = "") -> None:
        super().__init__()
        self._search = search
        self._note = note
        self._initial = query
        self._timer: Timer | None = None
        self._generation = 0
        self._lock = threading.Lock()
        self.results: SearchResultsView | None = None
        """The results on screen."""
        self.searching = False
        """True while the search for the words in the box runs (or waits for typing to pause)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Search the project"
            yield Input(self._initial, placeholder="Words to find in every conversation and branch", id="query")
            yield Static(self._note or "Type to search.", id="search-status", markup=False)
            yield HitList(id="hits")
            yield Static(self._keys_line(), id="search-keys", markup=False)

    def _keys_line(self) -> str:
        from tunaflow_tui.keyhints import key_for

        close = key_for(self.app, type(self), "search.close", "escape", words=True)
        return f"down: hits · enter: open where it was written · {close}: close"

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#query", Input).focus()
        if self._initial.strip():
            self._schedule(self._initial)

    # ------------------------------------------------------------------ typing and searching
    @on(Input.Changed, "#query")
    def _typed(self, event: Input.Changed) -> None:
        self._schedule(event.value)

    def _schedule(self, query: str) -> None:
        with self._lock:
            self._generation += 1
            generation = self._generation
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not query.strip():
            self.searching = False
            self._show(generation, SearchResultsView(query, (), "fts"))
            return
        self.searching = True
        self._timer = self.set_timer(DEBOUNCE_SECONDS, lambda: self._start(generation, query))

    def _start(self, generation: int, query: str) -> None:
        self._timer = None
        if generation != self._generation:
            return
        self._set_status("Searching…")
        self.run_worker(lambda: self._run(generation, query), thread=True, group="search",
                        name="search the project", exit_on_error=False)

    def _run(self, generation: int, query: str) -> None:
        """On a worker thread: one search; its result goes to the screen unless the query moved on."""
        if generation != self._generation:
            return
        try:
            result = self._search(query)
        except Exception as exc:  # a search failure is a line in the view, never a crash
            result = SearchResultsView(query, (), "", error=f"Search failed: {exc}")
        if generation == self._generation:
            self.app.call_from_thread(self._show, generation, result)

    def _show(self, generation: int, result: SearchResultsView) -> None:
        if generation != self._generation or not self.is_attached:
            return
        self.searching = False
        self.results = result
        hits = self.query_one("#hits", OptionList)
        hits.clear_options()
        hits.add_options([Option(hit_prompt(hit), id=str(index)) for index, hit in enumerate(result.hits)])
        if result.hits:
            hits.highlighted = 0
        self._set_status(self._status_text(result))

    def _status_text(self, result: SearchResultsView) -> str:
        if result.error:
            return result.error
        if not result.query.strip():
            return self._note or "Type to search."
        count = len(result.hits)
        found = "No messages match." if not count else f"{count} message{'s' if count != 1 else ''} found."
        note = result.note or self._note
        return f"{found} ({note})" if note else found

    def _set_status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(text)

    # ------------------------------------------------------------------ choosing
    def action_to_hits(self) -> None:
        """Move from the box to the hits."""
        hits = self.query_one("#hits", OptionList)
        if hits.option_count:
            hits.focus()

    @on(HitList.LeftAtTop)
    def _back_to_query(self) -> None:
        box = self.query_one("#query", Input)
        box.focus()

        def caret_after_the_words() -> None:  # focusing selected them all: one key would replace them
            box.cursor_position = len(box.value)

        # focus() takes effect from the app's queue, and the box then handles its focus from its own:
        # queue the caret after both.
        self.app.call_later(box.call_later, caret_after_the_words)

    @on(Input.Submitted, "#query")
    def _submitted(self) -> None:
        hits = self.query_one("#hits", OptionList)
        if self.results is not None and self.results.hits and not self.searching:
            self._open(hits.highlighted or 0)
        elif hits.option_count:
            hits.focus()

    @on(OptionList.OptionSelected, "#hits")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._open(event.option_index)

    def _open(self, index: int) -> None:
        if self.results is not None and 0 <= index < len(self.results.hits):
            self.dismiss(self.results.hits[index])

    def action_cancel(self) -> None:
        """Close without opening anything."""
        self.dismiss(None)
