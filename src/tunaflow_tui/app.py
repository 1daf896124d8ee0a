"""The tunaflow application shell: sidebar slot | workspace (chat column + branch pane).

The chat column holds the chat, the decision dock (cards waiting for the user), a status line and
the composer; the workspace lays the branch pane over it as a drawer or pins it 50:50.

The app knows nothing about engines, workflow or storage.  Everything it needs comes through a
:class:`~tunaflow_tui.controllers.chat_port.ChatController` passed in by whoever starts it; results come back down through the
widgets' methods (``app.chat_view.start_stream(view)``, ``app.composer.recipient = ...``).  An open
project's session (``controller.session``) receives the runtime's updates, which arrive as
``RuntimeUpdate`` messages, and the cards' decisions.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import DeliveryComplete, DeliveryFailed
from textual.geometry import Size
from textual.notifications import SeverityLevel
from textual.theme import Theme
from textual.widgets import Header, Static

from tunaflow_tui.heap import freeze_loaded
from tunaflow_tui.palette import TunaflowCommands
from tunaflow_tui.textual_compat import (
    declared_bindings,
    lay_out_screens_under_dialogs,
    share_css_parses,
    write_to_terminal,
)
from tunaflow_tui.viewmodels.chat import ListMessageSource, MessageSource, MessageView
from tunaflow_tui.viewmodels.glyphs import APP_ICON
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.composer import Composer
from tunaflow_tui.widgets.decision.decision_dock import DecisionDock
from tunaflow_tui.widgets.key_footer import KeyFooter
from tunaflow_tui.widgets.stream_clock import StreamClock
from tunaflow_tui.widgets.workspace import Workspace

if TYPE_CHECKING:  # cards, messages, help and workflow load on first use: the first frame needs none of them
    from textual.screen import Screen

    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.bridge import RuntimeUpdate
    from tunaflow_tui.controllers.chat_port import ChatController, SessionControls
    from tunaflow_tui.screens.help import BindingSection
    from tunaflow_tui.widgets.branch_thread import BranchThread
    from tunaflow_tui.widgets.decision.decision_card import DecisionRequested
    from tunaflow_tui.widgets.decision.done_card import DoneCard
    from tunaflow_tui.widgets.decision.records.adopt_record import AdoptCard
    from tunaflow_tui.widgets.message_block import MessageBlock
    from tunaflow_tui.widgets.permission.permission_card import PermissionAnswered
    from tunaflow_tui.widgets.roundtable.roundtable_thread import RoundtableThread
    from tunaflow_tui.widgets.sidebar import Sidebar
    from tunaflow_tui.widgets.terminal_pane import TerminalPane
    from tunaflow_tui.widgets.workflow_view import WorkflowView


SIDEBAR_MIN_COLUMNS = 100
"""Below this terminal width the sidebar starts hidden (ctrl+b shows it): the chat keeps its room."""

SHORT_ROWS = 24
"""Up to this terminal height the header is left out: the chat's titled rule takes its place, so the
rule costs the chat no row."""


def _rows_wanted(line: Static, viewport: Size) -> int:
    """The rows ``line`` would take for its content now (up to its ``max-height`` in cells)."""
    rows = line.get_content_height(line.container_size, viewport, line.content_size.width)
    cap = line.styles.max_height
    if cap is not None and cap.is_cells:
        rows = min(rows, int(cap.value))
    return rows


class TunaflowApp(App[None]):
    """The tunaflow terminal app.

    Args:
        controller: The bridge to workflow, engines and storage (see :class:`ChatController`).
        mouse: False for ``--no-mouse``: leave the mouse to the terminal's own text selection.
        keymap: Binding id → keys, e.g. ``{"composer.newline": "ctrl+n"}``.
        conversation_id: The conversation shown in the centre.
        chat_window: How many of the newest messages to mount when a conversation opens (default:
            about two screens' worth, see :attr:`ChatView.window_size`).
        cursor_blink: Blink the composer cursor (off for tests and snapshots).
    """

    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {TunaflowCommands}
    TITLE = "tunaflow"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012 - Textual declares it an instance variable
    # on the screen: up to 24 rows the header gives its row to the chat (whose rule names the project)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_ROWS + 1, "-tall")]  # noqa: RUF012 - as above
    HELP = """\
## tunaflow
Press **f1** for the full list of keys and how plans, gates and branches work.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("ctrl+p", "command_palette", "palette", id="app.palette", show=False, priority=True,
                tooltip="Every action by name"),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar", id="app.sidebar"),
        Binding("i", "focus_composer", "Write", id="app.compose"),
        Binding("escape", "focus_chat", "To chat", show=False, id="app.focus_chat"),
        # priority: f2 also works in the document viewer and help, which it closes on the way
        Binding("f2,ctrl+g", "jump_decision", "Decision", id="decision.jump", priority=True,
                tooltip="Walk the decisions waiting for you, oldest first, across plans"),
        Binding("f3", "open_workflow", "Workflow", id="workflow.open",
                tooltip="Plans, subtasks, timeline, documents and usage"),
        Binding("f4", "cancel_agent", "Cancel agent", id="agent.cancel",
                tooltip="Stop the running agents; the plan keeps its phase"),
        # priority: ctrl+f finds from the composer too (its word deletion stays on ctrl+delete)
        Binding("f5,ctrl+f", "open_search", "Search", id="search.open", priority=True,
                tooltip="Search every conversation and branch of the project"),
    ]

    help_sources: ClassVar[list[tuple[str, str]]] = [
        ("App", "textual.app:App"),
        ("Chat", "tunaflow_tui.widgets.chat_view:ChatView"),
        ("Message", "tunaflow_tui.widgets.message_block:MessageBlock"),
        ("Composer", "tunaflow_tui.widgets.composer:ComposerInput"),
        ("Branch pane", "tunaflow_tui.widgets.workspace:Workspace"),
        ("Branch", "tunaflow_tui.widgets.branch_thread:BranchThread"),
        ("Native CLI pane", "tunaflow_tui.widgets.terminal_pane:TerminalPane"),
        ("Adopted branch card", "tunaflow_tui.widgets.decision.records.adopt_record:AdoptCard"),
        ("Adopt branch", "tunaflow_tui.screens.adopt_editor:AdoptEditorScreen"),
        ("Rename branch", "tunaflow_tui.screens.branch_dialogs:RenameBranchScreen"),
        ("Delete branch", "tunaflow_tui.screens.branch_dialogs:ConfirmBranchScreen"),
        ("Plan proposal card", "tunaflow_tui.widgets.decision.plan_card:PlanProposalCard"),
        ("Review verdict card", "tunaflow_tui.widgets.decision.verdict_card:ReviewVerdictCard"),
        ("Done card", "tunaflow_tui.widgets.decision.done_card:DoneCard"),
        ("Plan waiting card", "tunaflow_tui.widgets.decision.way_card:WayCard"),
        ("Merge conflict card", "tunaflow_tui.widgets.decision.conflict_card:ConflictCard"),
        ("Agent's permission question", "tunaflow_tui.widgets.permission.permission_card:PermissionCard"),
        ("Workflow view", "tunaflow_tui.screens.workflow:WorkflowScreen"),
        ("Workflow view: plans", "tunaflow_tui.widgets.workflow_view:PlanList"),
        ("Workflow view: plan details", "tunaflow_tui.widgets.workflow_view:PlanDetail"),
        ("Document viewer", "tunaflow_tui.screens.documents:DocumentScreen"),
        ("Decisions", "tunaflow_tui.screens.decision_screen:DecisionScreen"),
        ("The Developer stopped", "tunaflow_tui.screens.decision_screen:DevStalledScreen"),
        ("Review keeps failing", "tunaflow_tui.screens.doom_loop:DoomLoopScreen"),
        ("Worktree setup failed", "tunaflow_tui.screens.worktree_setup_screen:WorktreeSetupScreen"),
        ("Revision feedback", "tunaflow_tui.screens.feedback:FeedbackScreen"),
        ("Plan editor", "tunaflow_tui.screens.proposal_editor:ProposalEditorScreen"),
        ("Confirmation", "tunaflow_tui.screens.confirm:ConfirmDecisionScreen"),
        ("Pickers", "tunaflow_tui.screens.pickers:PickerScreen"),
        ("Context pack", "tunaflow_tui.screens.pickers:ContextPackScreen"),
        ("Roundtable set-up", "tunaflow_tui.screens.roundtable_setup:RoundtableSetupScreen"),
        ("Roundtable", "tunaflow_tui.widgets.roundtable.roundtable_thread:RoundtableThread"),
        ("Roundtable board", "tunaflow_tui.widgets.roundtable.roundtable_board:RoundtableBoard"),
        ("Add seat", "tunaflow_tui.screens.roundtable_seat:AddSeatScreen"),
        ("Search", "tunaflow_tui.screens.search_screen:SearchScreen"),
        ("Help", "tunaflow_tui.screens.help:HelpScreen"),
    ]
    """(title, "module:Class") pairs whose BINDINGS the help screen lists (imported when help opens)."""

    footer_first: ClassVar[tuple[str, ...]] = ("help",)
    """Actions whose keys lead the footer, at any width: help lists every other key."""

    footer_keep: ClassVar[tuple[str, ...]] = ("quit",)
    """Actions whose keys follow the focused widget's keys and never drop out of the footer."""

    footer_then: ClassVar[tuple[str, ...]] = ("jump_decision", "open_workflow", "cancel_agent")
    """The app's keys shown next, as far as the width allows (all of them are in help)."""

    viewer_screens: ClassVar[tuple[tuple[str, str], ...]] = (
        ("tunaflow_tui.screens.workflow", "WorkflowScreen"),
        ("tunaflow_tui.screens.documents", "DocumentScreen"),
        ("tunaflow_tui.screens.help", "HelpScreen"),
        ("tunaflow_tui.screens.pickers", "ContextPackScreen"),
    )
    """(module, class) of screens that only show something: jumping to a decision closes them."""

    def __init__(
        self,
        controller: ChatController,
        *,
        mouse: bool = True,
        keymap: Mapping[str, str] | None = None,
        conversation_id: str = "main",
        chat_window: int | None = None,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        # every app of the process shares its parsed CSS: the app tests open hundreds
        share_css_parses(self)
        # a change to the screen under a dialog (its footer) is laid out at once, not when the dialog closes
        lay_out_screens_under_dialogs(self)
        self.controller = controller
        self.mouse_enabled = mouse
        self.conversation_id = conversation_id
        self._chat_window = chat_window
        self._cursor_blink = cursor_blink
        self._keymap_overrides: dict[str, str] = dict(keymap or {})
        self._narrow: bool | None = None  # whether the terminal was too narrow for the sidebar at the last resize
        if keymap:
            self.set_keymap(dict(keymap))

    # -- layout ----------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        """Textual's default screen, its breakpoint classes (``-wide``, ``-short``…) set for the terminal's size
        before anything mounts on it: Textual sets them at the screen's first resize, once every widget is
        styled, and then styles every one of them again."""
        screen = super().get_default_screen()
        width, height = self.size
        for size, breakpoints in ((width, self.HORIZONTAL_BREAKPOINTS), (height, self.VERTICAL_BREAKPOINTS)):
            reached = [(start, name) for start, name in breakpoints or () if size >= start]
            if reached:
                screen.add_class(max(reached)[1])
        return screen

    def compose(self) -> ComposeResult:
        self.controller.attach(self)
        # Before the widgets exist: a class change on the app later would restyle every one of them.
        self._narrow = self.size.width < SIDEBAR_MIN_COLUMNS
        self.set_class(self._narrow, "-sidebar-hidden")
        yield Header(icon=APP_ICON, id="app-header")  # Textual's ⭘ is an empty box in DejaVu Sans Mono
        with Horizontal(id="body"):
            yield Vertical(id="sidebar")
            column = Vertical(
                ChatView(
                    self.controller.message_source(self.conversation_id),
                    window=self._chat_window,
                    id="chat",
                ),
                DecisionDock(id="decision-dock"),
                Static("", id="status-line", markup=False),
                self._vetted(Composer(
                    self.controller.recipient(self.conversation_id),
                    cursor_blink=self._cursor_blink,
                    id="composer",
                )),
                id="chat-column",
            )
            column.border_title = self._chat_title(self.size.height)
            yield Workspace(column, id="workspace")
        yield KeyFooter(first=self.footer_first, keep=self.footer_keep, then=self.footer_then)

    def _vetted(self, composer: Composer) -> Composer:
        """The main composer, which refuses a message pointed at a plan that does not exist (``#99 …``)."""
        composer.vet = self._pointer_refusal
        return composer

    def _pointer_refusal(self, text: str) -> str | None:
        session = self.controller.session
        if session is None:
            return None
        from tunaflow_tui.controllers.conversation import pointer_refusal

        return pointer_refusal(session.runtime, self.conversation_id, text)

    def on_resize(self, event: events.Resize) -> None:
        """The sidebar gives way when the terminal gets too narrow for it, and comes back when it widens.

        Only crossing the width changes it: ctrl+b's choice holds while the terminal stays on one side.
        """
        narrow = event.size.width < SIDEBAR_MIN_COLUMNS
        if narrow != self._narrow:
            self._narrow = narrow
            self.set_class(narrow, "-sidebar-hidden")
        for column in self.query("#chat-column"):
            column.border_title = self._chat_title(event.size.height)

    def _chat_title(self, rows: int) -> str:
        """``Chat``; on a short terminal, without the header, ``Chat · <project>``."""
        return f"Chat · {self.sub_title}" if rows <= SHORT_ROWS and self.sub_title else "Chat"

    async def on_mount(self) -> None:
        # The cursor is in the composer from the first frame: focus() would put it there only once the
        # project's opening below is done, and the screen gives it to the chat meanwhile (keys typed
        # then went to the chat, the footer showed the chat's keys, and was composed twice).
        self.screen.set_focus(self.composer.input)
        await self.controller.ready()
        self.call_after_refresh(freeze_loaded, "first frame")

    def on_unmount(self) -> None:
        """The stream clock stops, and full garbage collections run again if typing held them."""
        StreamClock.of(self).stop()

    @property
    def chat_view(self) -> ChatView:
        """The main chat."""
        return self.query_one("#chat", ChatView)

    @property
    def composer(self) -> Composer:
        """The composer under the main chat."""
        return self.query_one("#composer", Composer)

    @property
    def workspace(self) -> Workspace:
        """The chat column and the branch pane."""
        return self.query_one("#workspace", Workspace)

    @property
    def composer_cursor_blink(self) -> bool:
        """Whether composers blink their cursor (off in tests and snapshots): the branch pane's follows it."""
        return self._cursor_blink

    @property
    def decision_dock(self) -> DecisionDock:
        """The cards waiting for the user, above the composer."""
        return self.query_one("#decision-dock", DecisionDock)

    def set_status(self, text: str) -> None:
        """Show what is going on above the composer, a line per running thing (empty hides it).

        The lines tick every second while agents run: a tick that keeps their height redraws the
        line alone, where a layout would lay out the whole screen (and hold up a key typed meanwhile).
        """
        for line in self.query("#status-line").results(Static):
            shown = bool(text)
            line.update(text, layout=False)
            if line.display != shown:
                line.display = shown
            elif shown and _rows_wanted(line, self.size) != line.content_size.height:
                line.refresh(layout=True)

    @property
    def session(self) -> SessionControls | None:
        """The open project's session (None while it opens, or in an app without a workflow)."""
        return self.controller.session

    @property
    def keymap_overrides(self) -> Mapping[str, str]:
        """Binding id → keys, as the user remapped them (what hints and help show)."""
        return dict(self._keymap_overrides)

    def write_terminal_sequence(self, sequence: str) -> None:
        """Write an escape sequence to the terminal between frames (a desktop notification).

        Textual writes its own sequences (the bell, the clipboard) through its driver; there is no
        public way to write another, so this one method does the same.
        """
        write_to_terminal(self, sequence)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Show a toast. Plain text unless ``markup`` is asked for: notifications often quote agent
        output, errors or plan titles, whose square brackets must never be read as markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    # -- theme and screenshot ----------------------------------------------------------------------

    def get_theme(self, theme_name: str) -> Theme | None:
        """The theme as this terminal shows it: under 16 colours, attention is never the error colour."""
        theme = super().get_theme(theme_name)
        if theme is None:
            return None
        from tunaflow_tui.themes import for_color_system

        console = getattr(self, "console", None)  # asked for while the app is built, before the console
        system = console.color_system if console is not None else None
        # Asked for by every widget drawn (for its ANSI colours): the theme is adapted once per theme
        # object and colour system, not on every draw.
        cache: dict[tuple[str, str | None], tuple[Theme, Theme]] = self.__dict__.setdefault("_adapted_themes", {})
        known = cache.get((theme_name, system))
        if known is not None and known[0] is theme:
            return known[1]
        adapted = for_color_system(theme, system)
        cache[(theme_name, system)] = (theme, adapted)
        return adapted

    def action_change_theme(self) -> None:
        """Pick a theme (the palette's Theme command too); the choice is saved for the next start."""
        from tunaflow_tui.themes import pick_theme

        session = self.session
        pick_theme(self, session.runtime.project_dir if session is not None else None)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Save an SVG of the screen: in ``path``, else the Downloads folder, else tunaflow's own folder."""
        if path is None:
            path = str(screenshot_folder())
        try:
            return super().deliver_screenshot(filename, path, time_format)
        except Exception as error:  # the export itself failed: say so rather than nothing
            self.notify(f"Could not save the screenshot: {_failure(error)}", title="Screenshot",
                        severity="error", timeout=10)
            return None

    def on_delivery_complete(self, event: DeliveryComplete) -> None:
        """A screenshot was saved: say where, in plain text (Textual's own toast showed raw markup)."""
        if event.name == "screenshot":
            event.prevent_default()
            where = f" to {event.path}" if event.path is not None else ""
            self.notify(f"Saved the screenshot{where}.", title="Screenshot")

    def on_delivery_failed(self, event: DeliveryFailed) -> None:
        """A screenshot could not be saved: say why and where."""
        if event.name == "screenshot":
            event.prevent_default()
            self.notify(f"Could not save the screenshot: {_failure(event.exception)}", title="Screenshot",
                        severity="error", timeout=10)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run the app; without the mouse when constructed with ``mouse=False``."""
        kwargs.setdefault("mouse", self.mouse_enabled)
        return super().run(*args, **kwargs)

    # -- keymap and help ---------------------------------------------------------------------------

    def set_keymap(self, keymap: Mapping[str, str]) -> None:
        """Remap bindings by id (and remember the map, so help shows the keys actually in use)."""
        self._keymap_overrides = dict(keymap)
        super().set_keymap(keymap)

    def binding_sections(self) -> list[BindingSection]:
        """Every binding of the app and its views, with keys as currently mapped and as the footer shows them."""
        from tunaflow_tui.screens.help import binding_sections

        return binding_sections(self, self.help_sources, self._keymap_overrides)

    def action_help(self) -> None:
        """Show every key and the concepts."""
        from tunaflow_tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.binding_sections()))

    # -- which keys apply where ---------------------------------------------------------------------

    def _on_main_screen(self) -> bool:
        return len(self.screen_stack) <= 1

    def _is_viewer(self, screen: Screen[Any]) -> bool:
        for module_name, class_name in self.viewer_screens:
            module = sys.modules.get(module_name)  # not loaded: no screen of it can be open
            if module is not None and isinstance(screen, getattr(module, class_name)):
                return True
        return False

    def _only_viewers_open(self) -> bool:
        """True when every screen over the main one only shows something (f2 may close them)."""
        return all(self._is_viewer(screen) for screen in self.screen_stack[1:])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys for the chat column only apply on the main screen; f2 also from screens it can close."""
        if action in ("focus_composer", "focus_chat", "toggle_sidebar"):
            return self._on_main_screen()
        if action == "jump_decision":
            return self._only_viewers_open()
        if action == "open_search":
            return self._only_viewers_open()
        return True

    def action_toggle_sidebar(self) -> None:
        """Show or hide the sidebar."""
        self.toggle_class("-sidebar-hidden")

    def action_focus_composer(self) -> None:
        """Move the cursor to the composer (only on the main screen: elsewhere the composer is hidden)."""
        if self._on_main_screen():
            self.composer.chosen()

    def on_key(self, event: events.Key) -> None:
        """A printable key that nothing on the main screen takes is writing: it goes to the composer.

        Reached when no widget handled the key on its way up (a text field keeps its own keys); a key
        bound anywhere in the focus chain (a card's decision keys, ``i``) is left to its binding.
        """
        if not (event.is_printable and event.character and self._on_main_screen()):
            return
        focused = self.focused
        chain = focused.ancestors_with_self if focused is not None else (self.screen, self)
        # bound here, even where it cannot act just now (a held plan's `h`): a decision key is never typing.
        # Screen.active_bindings leaves out the bindings whose check_action says no, so the maps are read.
        if any(event.key in declared_bindings(node) for node in chain):
            return
        composer = next((c for node in (focused.ancestors_with_self if focused is not None else ())
                         for c in node.query(Composer)), self.composer)
        if composer.disabled or not composer.display or focused is composer.input:
            return
        event.stop()
        composer.focus_input()
        composer.input.post_message(events.Key(event.key, event.character))

    def action_focus_chat(self) -> None:
        """Leave the composer and move between messages with up/down."""
        blocks = self.chat_view.blocks()
        (blocks[-1] if blocks else self.chat_view).focus()

    def show_branch_pane(self, show: bool = True) -> None:
        """Open the branch pane as a drawer (or hide it)."""
        if show and self.workspace.mode == "hidden":
            self.workspace.mode = "drawer"
        elif not show:
            self.workspace.mode = "hidden"

    def _session_or_say(self) -> SessionControls | None:
        """The open session; otherwise the user is told why nothing happens."""
        session = self.session
        if session is not None:
            return session
        if not self.controller.is_open:
            self.notify(self.controller.error or "The project is still opening; try again in a moment.",
                        severity="warning")
        else:
            self.notify("There is no workflow in this session.", severity="warning")
        return None

    def action_jump_decision(self) -> None:
        """Close the workflow view, document viewer or help, then focus the next decision in the queue.

        A dialog that asks something (feedback, a picker, a decision) stays: it is answered first.
        """
        if (session := self._session_or_say()) is None:
            return
        if not self._only_viewers_open():
            self.notify("Answer or close this dialog first (escape).")
            return
        while not self._on_main_screen():
            self.pop_screen()
        session.decisions.jump_to_decision()

    def action_open_workflow(self) -> None:
        """Show plans, subtasks, the event timeline, documents and usage."""
        if (session := self._session_or_say()) is not None:
            session.workers.run_ui(session.panes.open_workflow(), "open the workflow view")

    def action_open_search(self) -> None:
        """Search every message of the project; a hit opens where it was written."""
        if (session := self._session_or_say()) is None:
            return
        while not self._on_main_screen():  # the workflow view, a document or help: search replaces it
            self.pop_screen()
        session.search.open()

    def action_cancel_agent(self) -> None:
        """Stop the running agents."""
        if (session := self._session_or_say()) is not None:
            session.project.cancel_agent()

    # -- messages from the widgets -----------------------------------------------------------------

    # Handlers by name rather than @on(Class.Message): the card and message classes then load with
    # the first card or message instead of before the first frame.

    @on(Composer.Submitted)
    def _send(self, event: Composer.Submitted) -> None:
        self.chat_view.follow()
        self.controller.send(self.conversation_id, event.text)

    async def on_composer_chat_jump(self, event: Composer.ChatJump) -> None:
        """ctrl+home / ctrl+end in the composer: the chat shows its first / newest message."""
        if event.where == "first":
            await self.chat_view.jump_first()
        else:
            await self.chat_view.jump_latest()

    def on_message_block_retry_requested(self, event: MessageBlock.RetryRequested) -> None:
        """A failed turn's retry key: run that turn again."""
        self.controller.retry(self.conversation_id, event.message_id)

    def on_message_block_branch_requested(self, event: MessageBlock.BranchRequested) -> None:
        """A message's branch key (or a right click): fork a branch with that message as its checkpoint."""
        event.stop()
        if (session := self._session_or_say()) is None:
            return
        chat = next((node for node in event.block.ancestors if isinstance(node, ChatView)), None)
        conversation_id = session.branches.conversation_of_chat(chat) if chat is not None else self.conversation_id
        session.branches.branch_from(conversation_id, event.message_id)

    def on_workspace_next_branch(self, event: Workspace.NextBranch) -> None:
        """The pane's next-branch key."""
        if (session := self._session_or_say()) is not None:
            session.branches.cycle()

    def on_terminal_pane_left(self, event: TerminalPane.Left) -> None:
        """The user left a native CLI's pane (the CLI runs on): back to the composer."""
        self.composer.focus_input()

    def on_branch_thread_submitted(self, event: BranchThread.Submitted) -> None:
        """The branch pane's composer sent a message: it goes to that branch."""
        self.controller.send(event.conversation_id, event.text)

    def on_branch_thread_requested(self, event: BranchThread.Requested) -> None:
        """A branch key in the pane: adopt, rename, archive, restore or delete that branch."""
        if (session := self._session_or_say()) is not None:
            session.branches.requested(event.conversation_id, event.action)

    def on_roundtable_thread_requested(self, event: RoundtableThread.Requested) -> None:
        """A roundtable key in the pane: add or remove a seat, the next round, stop."""
        if (session := self._session_or_say()) is not None:
            session.roundtable.requested(event.conversation_id, event.action)

    def on_adopt_card_open_branch(self, event: AdoptCard.OpenBranch) -> None:
        """An adopt card's open key: show the adopted branch in the pane."""
        if (session := self._session_or_say()) is not None:
            session.branches.open(event.branch_id)

    def on_decision_requested(self, event: DecisionRequested) -> None:
        """A card or dialog decided on a plan."""
        if (session := self._session_or_say()) is not None:
            session.decisions.requested(event)

    def on_permission_answered(self, event: PermissionAnswered) -> None:
        """An agent's permission question answered with its card's key: the answer goes to that question."""
        if (session := self._session_or_say()) is not None:
            session.permissions.answer(event.request_id, event.answer)

    def on_done_card_requested(self, event: DoneCard.Requested) -> None:
        """Merge or worktree removal asked for on a done card."""
        if (session := self._session_or_say()) is not None:
            session.outcomes.requested(event.plan_id, event.action)

    def on_sidebar_selected(self, event: Sidebar.Selected) -> None:
        """An item chosen in the sidebar."""
        if (session := self._session_or_say()) is None:
            return
        if event.kind == "native":  # a live native CLI: its pane, focused
            session.native.open(str(event.id))
        else:
            session.panes.sidebar_selected(event)

    def on_workflow_view_plan_selected(self, event: WorkflowView.PlanSelected) -> None:
        """A plan chosen in the workflow view: close the view and jump to its decision."""
        from tunaflow_tui.screens.workflow import WorkflowScreen

        if (session := self._session_or_say()) is not None:
            if isinstance(self.screen, WorkflowScreen):
                self.screen.dismiss()
            session.decisions.jump_to_decision(event.plan_id)

    def on_workflow_view_plan_pointed(self, event: WorkflowView.PlanPointed) -> None:
        """Write about a plan from the board: back to the chat, ``#N`` at the start of the composer."""
        from tunaflow_tui.runtime.plans_in_flight import pointed_at
        from tunaflow_tui.screens.workflow import WorkflowScreen

        if isinstance(self.screen, WorkflowScreen):
            self.screen.dismiss()
        composer = self.composer
        composer.input.load_text(pointed_at(composer.text, event.plan_id))
        composer.input.move_cursor(composer.input.document.end)
        composer.focus_input()

    async def on_runtime_update(self, update: RuntimeUpdate) -> None:
        """Something happened in the runtime: the session's controllers show it, in order."""
        session = self.session
        if session is not None:
            await session.route(update)
            return
        self.controller.hold_update(update)  # the project is still opening


def screenshot_folder() -> Path:
    """Where screenshots go: the user's Downloads folder if there is one, else tunaflow's data folder."""
    from platformdirs import user_data_path, user_downloads_path

    downloads = user_downloads_path()
    if downloads.is_dir():
        return downloads
    folder = user_data_path("tunaflow") / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _failure(error: BaseException) -> str:
    """Why a file could not be written, in words: ``Permission denied: /path/file.svg``."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    return str(error) or type(error).__name__


class DemoChatController:
    """An in-memory controller that echoes what you write, streamed; for trying the shell alone."""

    session: SessionControls | None = None
    """No project: the plan, decision and pane keys say there is no workflow."""
    is_open = True
    error: str | None = None

    def __init__(self, messages: Sequence[MessageView] = ()) -> None:
        self.source = ListMessageSource(messages)
        self.app: AppPort | None = None

    def attach(self, app: AppPort) -> None:
        self.app = app

    async def ready(self) -> None:
        pass

    def hold_update(self, update: RuntimeUpdate) -> None:
        pass  # no runtime talks to the demo

    def message_source(self, conversation_id: str) -> MessageSource:
        return self.source

    def recipient(self, conversation_id: str) -> str:
        return "Architect (demo)"

    def send(self, conversation_id: str, text: str) -> None:
        if self.app is not None:
            self.app.run_worker(self._reply(text), group="demo", exit_on_error=False)

    def retry(self, conversation_id: str, message_id: int) -> None:
        if self.app is not None:
            self.app.notify("Nothing to retry in the demo.")

    async def _reply(self, text: str) -> None:
        assert self.app is not None
        chat = self.app.chat_view
        user = MessageView(self.source.next_id(), "user", "You", text)
        self.source.append(user)
        await chat.add_message(user)
        answer = f"You wrote:\n\n> {text}\n\nThis is the demo engine; nothing was sent anywhere."
        view = MessageView(self.source.next_id(), "assistant", "Architect · demo", "", "streaming")
        self.source.append(view)
        block = await chat.start_stream(view)
        for word in answer.split(" "):
            await block.append(word + " ")
            await asyncio.sleep(0.02)
        done = MessageView(view.id, "assistant", view.label, answer, "done",
                           usage_text=f"{len(text)} in · {len(answer)} out")
        self.source.replace(done)
        await block.finish(done)


if TYPE_CHECKING:

    def _controllers_see_this_app(app: TunaflowApp) -> AppPort:
        """Checked by mypy: the app is everything the controllers are typed against."""
        return app


if __name__ == "__main__":
    TunaflowApp(DemoChatController()).run()
