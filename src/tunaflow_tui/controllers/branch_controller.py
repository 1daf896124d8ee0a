"""BranchesController: forking from a message, talking in a branch, and a branch's life until it is adopted.

- **Fork**: the selected message of the chat the user is in (main or the pane's branch) becomes the
  checkpoint of a new branch, which opens in the pane with its own composer; the palette's "Branch
  from message" takes the selected message, else the conversation's last one.
- **Talk**: the branch's composer sends to the branch; main stays usable, both may stream at once.
- **Manage**: rename, archive, restore, delete (an active branch's messages go, after a question).
- **Adopt**: the summarizer's engine writes a summary of the branch (streamed into the branch,
  cancellable with the cancel key), the user edits it, and it goes into the parent as an adopt card;
  the branch and its branches move to the Archive.

Store and runtime calls that read or write the database run in a thread; the screen is updated on
the event loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tunaflow_tui.controllers import branch_views
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.branching import BranchError

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.conversation import ConversationController
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.core.storage.records import BranchRecord
    from tunaflow_tui.runtime.adoption import BranchSummary
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.widgets.chat_view import ChatView


def branch_id_of(conversation_id: str | None) -> int | None:
    """The branch id behind ``branch:{id}`` (None for main or nothing)."""
    if conversation_id is None or not conversation_id.startswith("branch:"):
        return None
    number = conversation_id.removeprefix("branch:")
    return int(number) if number.isdigit() else None


def _said(error: Exception) -> str:
    text = neutralize(str(error)) or type(error).__name__
    return text[:1].upper() + text[1:]


class BranchesController:
    """The user's branches in the app.

    Args:
        app: The app.
        runtime: The project's runtime.
        panes: The branch pane and the sidebar.
        conversation: Sends messages (to main or a branch).
        workers: Where background work runs.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, panes: PaneController,
                 conversation: ConversationController, workers: Workers) -> None:
        self._app = app
        self._runtime = runtime
        self._store = runtime.store
        self._panes = panes
        self._conversation = conversation
        self._workers = workers
        self._adopting: set[int] = set()
        """Branches whose adoption is under way (summary or editor): a second request waits for it."""

    # ------------------------------------------------------------------ fork
    def _chat_in_focus(self) -> tuple[str, ChatView]:
        """The conversation the user is in and its chat: the pane's branch when the pane has the focus."""
        branch = self._panes.branch_in_focus()
        chat = self._panes.chat_for(branch) if branch else None
        if branch is not None and chat is not None:
            return branch, chat
        return self._app.conversation_id, self._app.chat_view

    def conversation_of_chat(self, chat: ChatView) -> str:
        """The conversation a chat on screen shows."""
        branch = self._panes.branch_conversation
        if branch is not None and self._panes.chat_for(branch) is chat:
            return branch
        return self._app.conversation_id

    def branch_from_selection(self) -> None:
        """Fork from the selected message of the chat in focus, else from that conversation's last message."""
        conversation_id, chat = self._chat_in_focus()
        message_id = chat.focused_message_id
        if message_id is None:
            blocks = [block for block in chat.blocks() if not block.is_streaming]
            message_id = blocks[-1].message_id if blocks else None
        if message_id is None:
            self._app.notify("There is no message to branch from yet: send one first.", severity="warning")
            return
        self.branch_from(conversation_id, message_id)

    def branch_from(self, conversation_id: str, message_id: int) -> None:
        """Fork ``conversation_id`` at ``message_id`` and open the new branch in the pane."""
        self._workers.run_ui(self._fork(conversation_id, message_id), "fork a branch")

    async def _fork(self, conversation_id: str, message_id: int) -> None:
        try:
            branch = await asyncio.to_thread(self._runtime.fork, conversation_id, message_id)
        except BranchError as error:
            self._app.notify(f"Cannot branch here: {neutralize(str(error))}.", severity="warning", timeout=8)
            return
        await self._panes.refresh_sidebar()
        await self._panes.open_branch(branch.id, reveal=True, focus=True)
        how = {"native_fork": "a native fork of the session", "inheritance": "inherited context"}.get(
            branch.context_source or "", "")
        self._app.notify(f"Branch {branch.id} forked from message {message_id}"
                         f"{f' ({how})' if how else ''}. Type in the pane to talk to it.")

    # ------------------------------------------------------------------ the pane
    def cycle(self) -> None:
        """Show the next active branch in the pane (in the sidebar's order)."""
        self._workers.run_ui(self._cycle(), "show the next branch")

    async def _cycle(self) -> None:
        order = await asyncio.to_thread(branch_views.open_order, self._store)
        if not order:
            self._app.notify("There is no active branch: select a message and fork one.", severity="warning")
            return
        current = branch_id_of(self._panes.branch_conversation)
        if len(order) == 1 and current in order and self._app.workspace.mode != "hidden":
            self._app.notify("Only one branch is open, and the pane shows it: fork another from a message.")
            return
        following = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
        await self._panes.open_branch(following, reveal=True, focus=True)

    def open(self, branch_id: int) -> None:
        """Show a branch in the pane (an adopt card's open key)."""
        self._workers.run_ui(self._panes.open_branch(branch_id, reveal=True, focus=True), "open the branch")

    def _target(self, conversation_id: str | None = None) -> int | None:
        """The branch acted on: the one named, else the one in the pane; None (said) without one."""
        branch_id = branch_id_of(conversation_id or self._panes.branch_conversation)
        if branch_id is None:
            self._app.notify("No branch is open in the pane: pick one in the sidebar or fork one.",
                             severity="warning")
        return branch_id

    async def _changed(self, branch_id: int) -> None:
        """A branch's status or label changed: sidebar, and the pane when it shows it."""
        await self._panes.refresh_sidebar()
        await self._panes.branch_changed(branch_id)

    async def _apply(self, what: str, call: object, *args: object) -> BranchRecord | None:
        try:
            result: BranchRecord = await asyncio.to_thread(call, *args)  # type: ignore[arg-type]
        except (BranchError, ValueError) as error:
            self._app.notify(f"Could not {what}: {neutralize(str(error))}.", severity="warning", timeout=8)
            return None
        return result

    # ------------------------------------------------------------------ rename, archive, restore, delete
    def requested(self, conversation_id: str | None, action: str) -> None:
        """A branch key or palette command: ``adopt``, ``rename``, ``archive``, ``restore`` or ``delete``."""
        branch_id = self._target(conversation_id)
        if branch_id is None:
            return
        work = {
            "adopt": self._adopt, "rename": self._rename, "archive": self._archive,
            "restore": self._restore, "delete": self._delete,
        }[action]
        # the summary is agent work (the cancel key stops it); the questions are not
        runner = self._workers.run_agent if action == "adopt" else self._workers.run_ui
        runner(work(branch_id), f"{action} the branch")

    async def _rename(self, branch_id: int) -> None:
        from tunaflow_tui.screens.branch_dialogs import RenameBranchScreen

        branch = self._store.get_branch(branch_id)
        if branch is None:
            return
        label = await self._app.push_screen_wait(RenameBranchScreen(neutralize(branch.label)))
        if label and await self._apply("rename the branch", self._runtime.rename_branch, branch_id, label):
            await self._changed(branch_id)

    async def _archive(self, branch_id: int) -> None:
        if await self._apply("archive the branch", self._runtime.archive_branch, branch_id):
            await self._changed(branch_id)
            self._app.notify(f"Branch {branch_id} is in the Archive: read-only, its messages kept.")

    async def _restore(self, branch_id: int) -> None:
        if await self._apply("restore the branch", self._runtime.restore_branch, branch_id):
            await self._changed(branch_id)
            self._app.notify(f"Branch {branch_id} is active again.")

    async def _delete(self, branch_id: int) -> None:
        from tunaflow_tui.screens.branch_dialogs import ConfirmBranchScreen

        branch = self._store.get_branch(branch_id)
        if branch is None:
            return
        count = await asyncio.to_thread(self._store.count_messages, branch.shadow_conversation_id)
        label = neutralize(branch.label)
        if branch.status == "active":
            text = (f"Delete branch {branch_id} “{label}”? Its {count} message{'s' if count != 1 else ''} "
                    "are deleted with it; this cannot be undone.")
        else:
            text = (f"Delete branch {branch_id} “{label}” ({branch.status})? Its messages are kept for the "
                    "records that cite it, but the branch leaves the sidebar.")
        if not await self._app.push_screen_wait(ConfirmBranchScreen("Delete branch", text, "Delete")):
            return
        if await self._apply("delete the branch", self._runtime.delete_branch, branch_id) is None:
            return
        if self._panes.branch_conversation == f"branch:{branch_id}":
            await self._panes.close_branch()
        await self._panes.refresh_sidebar()
        self._app.notify(f"Deleted branch {branch_id}.")

    # ------------------------------------------------------------------ adopt
    async def _adopt(self, branch_id: int) -> None:
        if branch_id in self._adopting:
            self._app.notify(f"Branch {branch_id} is being adopted already.")
            return
        self._adopting.add(branch_id)
        try:
            handed_over = await self._summarize(branch_id)
        finally:
            if not handed_over:
                self._adopting.discard(branch_id)

    async def _summarize(self, branch_id: int) -> bool:
        """Summarize the branch and open the editor; False when nothing was handed to the editor."""
        from tunaflow_tui.runtime.adoption import AdoptCancelled

        branch = self._store.get_branch(branch_id)
        if branch is None:
            return False
        if branch.status != "active":
            self._app.notify(f"Branch {branch_id} is {branch.status}: restore it before adopting it.",
                             severity="warning")
            return False
        try:
            summary = await self._runtime.summarize_branch(branch_id)
        except AdoptCancelled:
            self._app.notify("The summary was cancelled: nothing was adopted.")
            return False
        except BranchError as error:
            self._app.notify(f"Cannot adopt: {_said(error)}.", severity="warning", timeout=8)
            return False
        self._workers.run_ui(self._edit_and_adopt(branch, summary), "adopt the branch")
        return True

    async def _edit_and_adopt(self, branch: BranchRecord, summary: BranchSummary) -> None:
        branch_id = branch.id
        try:
            await self._confirm_and_adopt(branch, summary)
        finally:
            self._adopting.discard(branch_id)

    async def _confirm_and_adopt(self, branch: BranchRecord, summary: BranchSummary) -> None:
        from tunaflow_tui.runtime.adoption import BranchSummary
        from tunaflow_tui.screens.adopt_editor import AdoptEditorScreen

        branch_id = branch.id
        branch = self._store.get_branch(branch_id) or branch  # renamed while the summary was written: its label now
        parent = self._conversation_name(branch.conversation_id)
        name = self._branch_name(branch)
        origin = {
            "summarizer": f"written by {summary.engine}" if summary.engine else "written by the summarizer",
            "roundtable_brief": "the roundtable's key positions",
            "last_reply_cut": "the branch's last reply, cut",
        }.get(summary.source, "")
        prompt = f"The summary of {name} ({origin}) goes into {parent} as a card. Edit it if you like."
        if summary.note:
            prompt += f"\n{neutralize(summary.note)}"
        text = await self._app.push_screen_wait(
            AdoptEditorScreen(title=f"Adopt “{neutralize(branch.label)}”" if branch.label else "Adopt branch",
                              prompt=prompt, initial=neutralize(summary.text)))
        if text is None:
            self._app.notify("Nothing was adopted: the branch stays as it is.")
            return
        if text.strip() == summary.text.strip():
            chosen = summary  # as written: its source and any fallback note stay on the card
        else:
            note = f"{summary.note} You edited it." if summary.note else ""
            chosen = BranchSummary(text.strip(), "given", summary.engine, note)
        try:
            adoption = await self._runtime.adopt_branch(branch_id, summary=chosen)
        except BranchError as error:
            self._app.notify(f"Cannot adopt: {_said(error)}.", severity="warning", timeout=8)
            return
        await self._changed(branch_id)
        more = f" with {len(adoption.archived)} of its branches" if adoption.archived else ""
        self._app.notify(f"Adopted {name} into {parent}; it moved to the Archive{more}.")

    def _branch_name(self, branch: BranchRecord) -> str:
        """A branch as the user knows it: its label as it is now, and its number."""
        label = neutralize(branch.label)
        return f"branch {branch.id} “{label}”" if label else f"branch {branch.id}"

    def _conversation_name(self, conversation_id: str) -> str:
        """``main``, or the parent branch by its label as it is now."""
        parent_id = branch_id_of(conversation_id)
        if parent_id is None:
            return "main"
        parent = self._store.get_branch(parent_id)
        return self._branch_name(parent) if parent is not None else f"branch {parent_id}"

    # ------------------------------------------------------------------ engine
    def switch_engine(self, branch_id: int) -> None:
        """Pick the engine the branch's next turns run on."""
        from tunaflow_tui.screens.pickers import PickerScreen

        branch = self._store.get_branch(branch_id)
        if branch is None:
            return
        current = branch.engine or self._runtime.settings.roles.architect
        choices = [(name, f"{name} · {config.effective_type}{'  ← now' if name == current else ''}")
                   for name, config in sorted(self._runtime.settings.engines.items())]

        def chosen(name: str | None) -> None:
            if name and name != current:
                self._workers.run_ui(self._set_engine(branch_id, name), "switch the branch's engine")

        self._app.push_screen(PickerScreen("Switch engine", f"Which engine answers in branch {branch_id} from "
                                           "its next turn?", choices, current), chosen)

    async def _set_engine(self, branch_id: int, name: str) -> None:
        def change() -> BranchRecord:
            branch = self._store.get_branch(branch_id)
            if branch is None:
                raise BranchError(f"there is no branch {branch_id}")
            fields: dict[str, object] = {"engine": name}
            if branch.context_source == "native_fork" and not branch.engine_session_id:
                fields["context_source"] = "inheritance"  # another engine cannot fork the parent's session
            return self._store.update_branch(branch_id, **fields)

        if await self._apply("switch the branch's engine", change) is None:
            return
        await self._changed(branch_id)
        self._app.notify(f"Branch {branch_id} now runs on {name}. Its next turn gets the context pack.")
