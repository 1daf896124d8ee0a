"""BranchThread: a branch's chat and its own composer, as the branch pane shows them.

Typing in the thread's composer talks to the branch, not to main: the thread stops the composer's
message and posts :class:`BranchThread.Submitted` with the branch's conversation. An adopted or
archived branch has no composer: a line says it is read-only and how to restore it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.composer import Composer

BRANCH = Binding.Group("Branch")


class BranchThread(Vertical):
    """One branch in the pane: its chat and, while it is active, a composer that talks to it.

    Args:
        conversation_id: The branch's conversation (``branch:{id}``).
        chat: The chat view of that conversation.
        recipient: Who answers in the branch, e.g. ``Architect (demo)``.
        read_only: Why the branch takes no message (empty: it does).
        restorable: The branch is archived or adopted (its restore key acts; adopt and archive do not).
        cursor_blink: Blink the composer's cursor.
    """

    HELP = """\
## Branch
A branch is its own conversation, forked from a message of main or of another branch. Its composer
talks to the branch; main stays usable and both may answer at once.

- **escape** leaves the branch's composer for its newest message (up/down move between its messages).
- **a** adopts the branch: a summary is written, you edit it, and it goes into the parent as a card.
- **n** renames the branch; **x** archives it; **u** restores an archived or adopted one.
- **delete** deletes the branch (an active branch's messages go with it, after you confirm).
"""

    DEFAULT_CSS = """
    BranchThread { height: 1fr; }
    BranchThread > ChatView { height: 1fr; }
    BranchThread > #branch-read-only { height: auto; color: $text-muted; padding: 0 1; border-top: solid $panel; }
    BranchThread > Composer { height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "focus_chat", "To branch chat", show=False, id="branch.focus_chat"),
        Binding("a", "adopt", "Adopt", id="branch.adopt", group=BRANCH,
                tooltip="Summarize the branch and insert the summary into its parent conversation"),
        Binding("n", "rename", "Rename", id="branch.rename", group=BRANCH, show=False),
        Binding("x", "archive", "Archive", id="branch.archive", group=BRANCH, show=False),
        Binding("u", "restore", "Restore", id="branch.restore", group=BRANCH),
        Binding("delete", "delete", "Delete branch", id="branch.delete", group=BRANCH, show=False),
    ]

    @dataclass
    class Submitted(Message):
        """The user sent ``text`` to the branch."""

        conversation_id: str
        text: str

    @dataclass
    class Requested(Message):
        """A branch key was pressed: ``action`` is adopt, rename, archive, restore or delete."""

        conversation_id: str
        action: str

    def __init__(self, conversation_id: str, chat: ChatView, recipient: str, *, read_only: str = "",
                 restorable: bool = False, cursor_blink: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conversation_id = conversation_id
        self.chat = chat
        self.read_only = read_only
        self.restorable = restorable
        self._recipient = recipient
        self._cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        yield self.chat
        if self.read_only:
            yield Static(self.read_only, id="branch-read-only", markup=False)
        else:
            yield Composer(self._recipient, cursor_blink=self._cursor_blink, id="branch-composer")

    @property
    def composer(self) -> Composer | None:
        """The branch's composer (None for a read-only branch)."""
        found = self.query_children(Composer)
        return found.first() if found else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Adopt and archive a branch that takes messages; restore an archived or adopted one.

        While the composer has the cursor its letters are typed: the branch's letter keys are not offered.
        """
        composer = self.composer
        if action != "focus_chat" and composer is not None and composer.has_focus_within:
            return False
        if action == "restore":
            return self.restorable
        if action in ("adopt", "archive"):
            return not self.read_only
        return True

    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        event.stop()
        self.chat.follow()
        self.post_message(self.Submitted(self.conversation_id, event.text))

    @on(Composer.ChatJump)
    async def _jump(self, event: Composer.ChatJump) -> None:
        event.stop()
        if event.where == "first":
            await self.chat.jump_first()
        else:
            await self.chat.jump_latest()

    def action_focus_chat(self) -> None:
        """Leave the branch's composer for its newest message."""
        blocks = self.chat.blocks()
        (blocks[-1] if blocks else self.chat).focus()

    def _request(self, action: str) -> None:
        self.post_message(self.Requested(self.conversation_id, action))

    def action_adopt(self) -> None:
        """Adopt the branch into its parent conversation."""
        self._request("adopt")

    def action_rename(self) -> None:
        """Give the branch another label."""
        self._request("rename")

    def action_archive(self) -> None:
        """Move the branch to the Archive (read-only, its messages kept)."""
        self._request("archive")

    def action_restore(self) -> None:
        """Make an archived or adopted branch active again."""
        self._request("restore")

    def action_delete(self) -> None:
        """Delete the branch (asks first)."""
        self._request("delete")
