"""ConversationController: what the user writes, and agents' replies streaming into the chats.

A reply is shown wherever its conversation is on screen: the main chat, or the branch pane when
it shows that branch. Sending is serialised per conversation: a second message waits for the
Architect's answer to the first and says so.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tunaflow_tui.controllers.sources import message_view, recipient_of, seat_label, speaker_label
from tunaflow_tui.core.storage.leases import TurnInProgress
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.branching import BranchError
from tunaflow_tui.runtime.plans_in_flight import plan_pointer
from tunaflow_tui.viewmodels.chat import MessageView
from tunaflow_tui.widgets.decision import arming

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.controllers.sources import MessageSources, StoreMessageSource
    from tunaflow_tui.controllers.workers import Workers
    from tunaflow_tui.runtime.events import MessageActivity, MessageDelta, MessageStarted, ToolActivity
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.widgets.chat_view import ChatView
    from tunaflow_tui.widgets.composer import Composer

TYPING_PAUSE = 1.5
"""Seconds after a key in the composer during which the user counts as typing: a card arriving then
leaves the cursor where it is."""


def pointer_refusal(runtime: WorkflowRuntime, conversation_id: str, text: str) -> str | None:
    """Why a message that starts with ``#N`` cannot be sent (there is no plan N), or None.

    Only in main, where ``#N`` points a message at plan N; in a branch it is plain text.
    """
    number = plan_pointer(text) if conversation_id == "main" else None
    if number is None or runtime.store.get_plan(number) is not None:
        return None
    return (f"Not sent: there is no plan {number} (“#{number}” at the start of a message points it at a plan). "
            "Your message is still in the composer.")


class ConversationController:
    """Sends the user's messages and streams replies into every chat that shows their conversation.

    Args:
        app: The app.
        runtime: The project's runtime.
        sources: The conversations' message sources (shared with the branch pane).
        panes: Which branch the pane shows.
        workers: Where turns run.
    """

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, sources: MessageSources,
                 panes: PaneController, workers: Workers) -> None:
        self._app = app
        self._runtime = runtime
        self._sources = sources
        self._panes = panes
        self._workers = workers
        self._send_locks: dict[str, asyncio.Lock] = {}
        """One per conversation: main and a branch answer at once; a second message in one waits."""
        self._sent_at = 0.0
        self.finished: tuple[str, str] | None = None
        """(conversation, who) of the last reply that finished, until the user is told."""

    # ------------------------------------------------------------------ what the app asks
    def message_source(self, conversation_id: str) -> StoreMessageSource:
        """The messages of a conversation, paged from the store."""
        return self._sources.of(conversation_id)

    def recipient(self, conversation_id: str) -> str:
        """Who receives what is typed in that conversation."""
        return recipient_of(self._runtime, conversation_id)

    def send(self, conversation_id: str, text: str) -> None:
        """Send ``text`` to the Architect in ``conversation_id`` (after any message still being answered)."""
        self._sent_at = arming.now()  # what was typed for this message is done with
        self._workers.run_agent(self._send(conversation_id, text), "send a message")

    def retry(self, conversation_id: str, message_id: int) -> None:
        """Run the turn that produced a failed message again."""
        self._workers.run_agent(self._retry(message_id), "retry the turn")

    async def _send(self, conversation_id: str, text: str) -> None:
        from tunaflow_tui.runtime.runtime import RuntimeError_

        lock = self._send_locks.setdefault(conversation_id, asyncio.Lock())
        if lock.locked():
            where = "" if conversation_id == "main" else " in this branch"
            self._app.notify(f"The Architect is still answering{where}; your message goes next.")
        async with lock:
            try:
                await self._runtime.send_user_message(text, conversation_id)
            except (BranchError, RuntimeError_) as error:  # (a plan deleted since the composer checked)
                self._app.notify(f"Not sent: {neutralize(str(error))}", severity="warning", timeout=8)
            except TurnInProgress as error:  # another process writes a turn here: nothing was stored
                self._app.notify(f"Not sent: still running: {neutralize(str(error))}.", severity="warning",
                                 timeout=8)

    async def _retry(self, message_id: int) -> None:
        record = self._runtime.store.get_message(message_id)
        if record is None:
            self._app.notify("That message no longer exists.", severity="warning")
            return
        await self._runtime.retry_message(record)

    def user_is_typing(self, composer: Composer | None = None) -> bool:
        """True while the composer (main's, unless another is given) holds text or a key reached it
        shortly (and after the last send)."""
        composer = composer or self._app.composer
        if composer.text:
            return True
        typed = composer.input.last_key_at
        return typed is not None and typed > self._sent_at and arming.now() - typed < TYPING_PAUSE

    # ------------------------------------------------------------------ replies as they stream
    def chats(self, conversation_id: str) -> list[ChatView]:
        """Every chat on screen that shows ``conversation_id``."""
        chats = []
        if conversation_id == self._app.conversation_id:
            chats.append(self._app.chat_view)
        pane_chat = self._panes.chat_for(conversation_id)
        if pane_chat is not None:
            chats.append(pane_chat)
        return chats

    async def stream_started(self, event: MessageStarted) -> None:
        """An agent began a reply: a streaming block in each chat showing its conversation."""
        cid = event.conversation_id
        label = speaker_label("assistant", event.role, event.engine, event.model)
        if cid.startswith("branch:"):  # a roundtable seat is headed with its name, engine and role
            record = self._runtime.store.get_message(event.message_id)
            label = (seat_label(record.meta, event.engine) if record is not None else None) or label
        view = MessageView(event.message_id, "assistant", label, "", "streaming")
        if cid.startswith("branch:"):
            await self._panes.branch_started(cid)
        for chat in self.chats(cid):
            if chat.block_for(event.message_id) is None:
                await chat.start_stream(view)

    async def stream_delta(self, event: MessageDelta) -> None:
        """More text of a reply."""
        for chat in self.chats(event.conversation_id):
            block = chat.block_for(event.message_id)
            if block is not None and block.is_streaming:
                await block.append(event.text)

    async def stream_activity(self, event: MessageActivity) -> None:
        """What a reply is writing now, in words (a plan being drafted, a verdict being written)."""
        for chat in self.chats(event.conversation_id):
            block = chat.block_for(event.message_id)
            if block is not None and block.is_streaming:
                await block.show_activity(event.text)

    async def tool_used(self, event: ToolActivity) -> None:
        """The agent used a tool: the reply's tool lines grow (a repeat of the last line is not shown)."""
        tools = self._sources.tools.get(event.message_id, ())
        line = event.tool
        if tools and tools[-1] == line:
            return
        self._sources.tools[event.message_id] = (*tools, line)
        for chat in self.chats(event.conversation_id):
            block = chat.block_for(event.message_id)
            if block is not None:
                await block.show_tools(self._sources.tools[event.message_id])

    async def settled(self, conversation_id: str, message_id: int) -> None:
        """A message reached its final state (or a whole message was stored): show it as stored."""
        record = self._runtime.store.get_message(message_id)
        if record is None:
            return
        view = message_view(record, self._sources.tools.get(message_id, ()))
        if record.role == "assistant" and record.status != "streaming":
            self.finished = (conversation_id, speaker_label("assistant", record.persona, None, None))
        for chat in self.chats(conversation_id):
            block = chat.block_for(message_id)
            if block is not None:
                await block.finish(view)
            else:
                await chat.add_message(view)
