"""AppPort: what the controllers use of the app, and nothing more.

The controllers sit below the app shell (``app.py`` imports them, never the other way round). They
are typed against this Protocol, which the :class:`~tunaflow_tui.app.AppPort` satisfies: the
Textual services they call (toasts, screens, workers, timers) and the shell's own parts (the chat,
the composer, the workspace with the branch pane, the decision dock, the status line).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from textual import Logger
    from textual.await_complete import AwaitComplete
    from textual.binding import Binding
    from textual.css.query import DOMQuery
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen, ScreenResultCallbackType
    from textual.timer import Timer, TimerCallback
    from textual.widget import AwaitMount, Widget
    from textual.worker import Worker, WorkType
    from textual.worker_manager import WorkerManager

    from tunaflow_tui.widgets.chat_view import ChatView
    from tunaflow_tui.widgets.composer import Composer
    from tunaflow_tui.widgets.decision.decision_dock import DecisionDock
    from tunaflow_tui.widgets.workspace import Workspace

ResultT = TypeVar("ResultT")
WidgetT = TypeVar("WidgetT", bound="Widget")


@runtime_checkable
class AppPort(Protocol):
    """The app as the controllers see it (all members are used on the event loop)."""

    # ------------------------------------------------------------------ the shell's parts
    conversation_id: str
    """The conversation shown in the centre (``main``)."""

    @property
    def chat_view(self) -> ChatView:
        """The main chat."""
        ...

    @property
    def composer(self) -> Composer:
        """The composer under the main chat."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The chat column and the branch pane."""
        ...

    @property
    def decision_dock(self) -> DecisionDock:
        """The cards waiting for the user, above the composer."""
        ...

    @property
    def composer_cursor_blink(self) -> bool:
        """Whether composers blink their cursor (the branch pane's follows the main one)."""
        ...

    def set_status(self, text: str) -> None:
        """Show what is going on above the composer (empty hides the line)."""
        ...

    def show_branch_pane(self, show: bool = True) -> None:
        """Open the branch pane as a drawer (or hide it)."""
        ...

    def action_focus_chat(self) -> None:
        """Move the focus from the composer to the chat's newest message."""
        ...

    def write_terminal_sequence(self, sequence: str) -> None:
        """Write an escape sequence to the terminal between frames (a desktop notification)."""
        ...

    def action_change_theme(self) -> None:
        """Let the user pick a theme; the choice is saved for the next start."""
        ...

    def action_open_search(self) -> None:
        """Open project search, closing the viewers over the chat (the palette's Search)."""
        ...

    def action_jump_decision(self) -> None:
        """Close the viewers and focus the next decision in the queue (the palette's Jump to decision)."""
        ...

    # ------------------------------------------------------------------ Textual's services
    @property
    def app_focus(self) -> bool:
        """Whether the terminal window has the focus."""
        ...

    @property
    def is_web(self) -> bool:
        """True when the app is served to a browser (``tunaflow serve``)."""
        ...

    @property
    def focused(self) -> Widget | None:
        """The widget with the focus on the screen on top."""
        ...

    @property
    def screen(self) -> Screen[object]:
        """The screen on top."""
        ...

    @property
    def screen_stack(self) -> list[Screen[Any]]:
        """Every open screen, the main one first."""
        ...

    @property
    def workers(self) -> WorkerManager:
        """The app's workers."""
        ...

    @property
    def log(self) -> Logger:
        """The app's log (Textual's devtools console)."""
        ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Show a toast (plain text unless ``markup``)."""
        ...

    def push_screen(self, screen: Screen[ResultT], callback: ScreenResultCallbackType[ResultT] | None = None,
                    wait_for_dismiss: Literal[False] = False) -> AwaitMount:
        """Open ``screen`` over the others; ``callback`` gets what it is dismissed with."""
        ...

    async def push_screen_wait(self, screen: Screen[ResultT]) -> ResultT:
        """Open ``screen`` and wait for what it is dismissed with (from a worker only)."""
        ...

    def pop_screen(self) -> AwaitComplete:
        """Close the screen on top."""
        ...

    def query(self, selector: type[WidgetT]) -> DOMQuery[WidgetT]:
        """Every widget of a type, on the current screen."""
        ...

    def query_one(self, selector: str) -> Widget:
        """The one widget matching a CSS selector, on the current screen."""
        ...

    def get_key_display(self, binding: Binding) -> str:
        """A binding's key as the footer writes it (key hints use it)."""
        ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        """Call ``callback`` after the next screen refresh."""
        ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        """Call ``callback`` on the event loop once the current message is handled."""
        ...

    def set_interval(self, interval: float, callback: TimerCallback | None = None, *,
                     name: str | None = None) -> Timer:
        """Call ``callback`` every ``interval`` seconds."""
        ...

    def run_worker(self, work: WorkType[ResultT], name: str | None = "", group: str = "default",
                   description: str = "", exit_on_error: bool = True, start: bool = True,
                   exclusive: bool = False, thread: bool = False) -> Worker[ResultT]:
        """Run ``work`` in a worker."""
        ...

    def post_message(self, message: Message) -> bool:
        """Put ``message`` on the app's queue (from any thread)."""
        ...

    def bell(self) -> None:
        """Ring the terminal's bell."""
        ...

    def suspend(self) -> AbstractContextManager[None]:
        """Hand the terminal to another program for the duration of the ``with`` block."""
        ...

    def exit(self, result: None = None, return_code: int = 0) -> None:
        """Quit the app with ``return_code``."""
        ...

