"""RoundtableThread: a roundtable in the branch pane — its board, the seats' answers, the moderator's composer.

Each seat's answer streams into its own message block of the chat, headed with the seat's name,
engine and role (in deliberative mode all of them at once). What is typed in the composer goes to
every seat with the next round; the thread stops the composer's message and posts
:class:`BranchThread.Submitted` like any branch, and the session sends it to the roundtable. The
thread's own keys (add or remove a seat, the next round, the board) post :class:`RoundtableThread.Requested`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from tunaflow_tui.keyhints import key_for
from tunaflow_tui.widgets.branch_thread import BranchThread
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.composer import Composer
from tunaflow_tui.widgets.roundtable.roundtable_board import BoardState, RoundtableBoard

ROUNDTABLE = Binding.Group("Roundtable")


class RoundtableThread(BranchThread):
    """One roundtable in the pane: the board above the seats' answers and, while active, the moderator's composer.

    Args:
        conversation_id: The roundtable's conversation (``branch:{id}``).
        chat: The chat view of that conversation.
        board: What the board shows first.
        recipient: Who reads what is typed, e.g. ``every seat (3), next round``.
        read_only: Why the roundtable takes no message (empty: it does).
        restorable: The roundtable is archived or adopted.
        cursor_blink: Blink the composer's cursor.
    """

    HELP = """\
## Roundtable
The seats answer in the pane, each in its own block headed with its name, engine and role; in
sequential mode an answer says whom it responds to. The board above them shows each seat's state
and cost, and the brief when the rounds end.

- What you write in the composer goes to **every seat with the next round**;
  written while a round runs, it is held and goes as soon as that round ends.
- **+** adds a seat and **-** removes one, between rounds.
- **>** runs the next round; **ctrl+r** stops the running round.
- **tab** from the chat reaches the board (up/down scroll the brief); **ctrl+n** folds it to one line
  or unfolds it (it starts folded in a terminal under 32 rows).
- The branch keys work too: **a** adopts the roundtable (its brief goes into the parent), **n**, **x**, **u**.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus", "roundtable('add_seat')", "Add seat", id="roundtable.add_seat", group=ROUNDTABLE,
                tooltip="Add a seat (it speaks from the next round)"),
        Binding("minus", "roundtable('remove_seat')", "Remove seat", id="roundtable.remove_seat",
                group=ROUNDTABLE, tooltip="Remove a seat (its answers stay)"),
        Binding("greater_than_sign", "roundtable('next_round')", "Next round", id="roundtable.next_round",
                group=ROUNDTABLE, tooltip="Every seat answers once more"),
        Binding("ctrl+n", "toggle_board", "Board", id="roundtable.toggle_board", group=ROUNDTABLE,
                tooltip="Fold the board to one line, or unfold it"),
        Binding("ctrl+r", "roundtable('stop')", "Stop round", id="roundtable.stop", show=False,
                tooltip="Cancel the answering seats; no further seat starts"),
    ]

    @dataclass
    class Requested(Message):
        """A roundtable key was pressed: ``action`` is add_seat, remove_seat, next_round or stop."""

        conversation_id: str
        action: str

    def __init__(self, conversation_id: str, chat: ChatView, board: BoardState, recipient: str, *,
                 read_only: str = "", restorable: bool = False, cursor_blink: bool = True,
                 id: str | None = None) -> None:
        super().__init__(conversation_id, chat, recipient, read_only=read_only, restorable=restorable,
                         cursor_blink=cursor_blink, id=id)
        self.board = RoundtableBoard(board, id="roundtable-board")

    def on_mount(self) -> None:
        self.board.toggle_key = key_for(self.app, RoundtableThread, "roundtable.toggle_board", "ctrl+n", words=True)
        self.board.show(self.board.state)

    def action_toggle_board(self) -> None:
        """Fold the board to its summary line (the answers get the room), or unfold it."""
        self.board.toggle()

    DEFAULT_CSS = """
    RoundtableThread > ChatView { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield self.board
        yield self.chat
        if self.read_only:
            yield Static(self.read_only, id="branch-read-only", markup=False)
        else:
            yield Composer(self._recipient, cursor_blink=self._cursor_blink, id="branch-composer")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The roundtable's letter keys act outside the composer, on an active roundtable (stop and the
        board's fold key always)."""
        if action == "toggle_board":
            return True
        if action == "roundtable":
            if parameters and parameters[0] == "stop":
                return True
            composer = self.composer
            if composer is not None and composer.has_focus_within:
                return False
            return not self.read_only
        return super().check_action(action, parameters)

    def action_roundtable(self, action: str) -> None:
        """Ask for a roundtable control."""
        self.post_message(self.Requested(self.conversation_id, action))
