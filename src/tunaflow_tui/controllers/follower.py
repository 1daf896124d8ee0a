"""Follow what other processes write: `tunaflow run` or `ask` in another terminal, a second app.

Every :data:`POLL_SECONDS` the follower asks SQLite's ``PRAGMA data_version`` (off the event loop),
which changes only when another connection — another process — commits. When it has changed, the
chats on screen whose conversation changed are shown again from the database (a reply another
process is writing grows while it streams and settles when it ends), and the sidebar, the workflow
view and the decision cards follow the plans that moved. A conversation whose turn this process
streams itself is left to the live stream.

A process that dies writes nothing: each look also asks which leases a live process still holds, so a
plan whose Developer or reviewers worked in a process that is gone loses its ● (working) mark, and its
card offers to resume the step, without waiting for a write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tunaflow_tui.core.storage import StorageError
from tunaflow_tui.core.workflow.phases import Phase

if TYPE_CHECKING:
    from tunaflow_tui.controllers.app_port import AppPort
    from tunaflow_tui.controllers.conversation import ConversationController
    from tunaflow_tui.controllers.decision_controller import DecisionController
    from tunaflow_tui.controllers.panes import PaneController
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.viewmodels.chat import MessageView
    from tunaflow_tui.widgets.chat_view import ChatView
    from tunaflow_tui.widgets.message_block import MessageBlock

POLL_SECONDS = 0.3
"""How often the database is asked whether another process wrote to it."""
_TAIL = 4
"""How many of a chat's newest messages tell whether it changed."""

Fingerprint = tuple[tuple[int, str, int], ...]


class ExternalWrites:
    """Polls the database for other processes' commits and brings the screen up to date."""

    def __init__(self, app: AppPort, runtime: WorkflowRuntime, panes: PaneController,
                 conversation: ConversationController, decisions: DecisionController) -> None:
        self._app = app
        self._runtime = runtime
        self._panes = panes
        self._conversation = conversation
        self._decisions = decisions
        self._version: int | None = None
        self._checking = False
        self._plans: dict[int, str] = {}
        self._leased: frozenset[str] = frozenset()
        """The conversations whose lease a live process held at the last look."""
        self._fed: dict[MessageBlock, str] = {}
        """What is on screen of each reply another process writes (its display text so far), by block."""

    async def start(self) -> None:
        """Take the database as it is now as seen, then poll it."""
        self._version = await asyncio.to_thread(self._runtime.store.data_version)
        self._plans = await asyncio.to_thread(self._plan_stamps)
        self._leased = await asyncio.to_thread(self._live_leases)
        await self._fill_visible()
        self._app.set_interval(POLL_SECONDS, self._tick, name="follow other processes")

    def _live_leases(self) -> frozenset[str]:
        return frozenset(lease.conversation_id for lease in self._runtime.store.live_leases())

    def _plan_stamps(self) -> dict[int, str]:
        return {plan.id: str(plan.updated_at) for plan in self._runtime.store.list_plans()}

    async def _tick(self) -> None:
        if self._checking:  # the last look is still busy (a slow disk): never two at once
            return
        self._checking = True
        try:
            version = await asyncio.to_thread(self._runtime.store.data_version)
            if version != self._version:
                await self.catch_up()
                self._version = version  # only once shown: a look that failed half-way is taken again
            else:
                await self._fill_visible()  # a chat opened since (the branch pane) loads live replies empty
                await self._follow_leases()
        except StorageError:
            return  # closing, or busy for a moment: the next look tries again
        except Exception as exc:  # a screen torn down meanwhile (the app closing): following must never crash it
            self._app.log.error(f"following other processes failed: {exc!r}")
        finally:
            self._checking = False

    async def _follow_leases(self) -> None:
        """A process holding a plan's lease died (or another took one) without a write: the plans follow."""
        leased = await asyncio.to_thread(self._live_leases)
        changed, self._leased = leased ^ self._leased, leased
        if not changed:
            return
        for plan in await asyncio.to_thread(self._runtime.store.list_plans):
            own = {f"branch:{b}" for b in (plan.impl_branch_id, plan.review_branch_id) if b is not None}
            if plan.phase in (Phase.CHAT, Phase.DRAFTING):
                own.add("main")  # the Architect's turn on it
            if own & changed:
                await self._decisions.plan_changed(plan)
        await self._panes.plan_changed()

    async def catch_up(self) -> None:
        """Show what other processes wrote: changed chats, moved plans, the sidebar."""
        streaming_here = set(self._runtime.runner.running_conversations)
        for conversation_id, chat in self._visible_chats():
            if conversation_id in streaming_here or chat.has_newer:
                continue  # this process streams it live; or the user reads older messages: leave them be
            tail = await asyncio.to_thread(chat.source.window, None, _TAIL)
            seen = tuple((view.id, view.status, len(view.content)) for view in tail)
            before = _shown(chat)
            if seen == before:
                continue
            if await self._grown_in_place(chat, before, tail):
                continue  # only a reply being written grew, or it ended: no need to draw the chat anew
            await chat.reload()
            await self._fill_live(chat)
        plans = await asyncio.to_thread(self._plan_stamps)
        self._leased = await asyncio.to_thread(self._live_leases)
        moved = [plan_id for plan_id, stamp in plans.items() if self._plans.get(plan_id) != stamp]
        self._plans = plans
        for plan_id in moved:
            plan = self._runtime.store.get_plan(plan_id)
            if plan is not None:
                await self._decisions.plan_changed(plan)
        await self._panes.plan_changed()

    async def _grown_in_place(self, chat: ChatView, before: Fingerprint, tail: Sequence[MessageView]) -> bool:
        """Bring the chat's last messages up to date where they are; False if it must be drawn anew."""
        if [entry[0] for entry in before] != [view.id for view in tail]:
            return False  # a message came or went
        for entry, view in zip(before, tail, strict=True):
            block = chat.block_for(view.id)
            if block is None:
                return False
            if not block.is_streaming:
                if entry != (view.id, view.status, len(view.content)):
                    return False  # a finished message changed: draw it anew
                continue
            fed = self._fed.get(block)
            if view.status != "streaming":
                await block.finish(view)
                self._fed.pop(block, None)
            elif fed is None or not view.content.startswith(fed):
                return False  # not the text shown so far plus more (a marker hidden since): draw it anew
            elif len(view.content) > len(fed):
                await block.append(view.content[len(fed):])
                self._fed[block] = view.content
        return True

    async def _fill_visible(self) -> None:
        streaming_here = set(self._runtime.runner.running_conversations)
        self._fed = {block: text for block, text in self._fed.items() if block.is_attached}
        for conversation_id, chat in self._visible_chats():
            if conversation_id not in streaming_here:
                await self._fill_live(chat)

    async def _fill_live(self, chat: ChatView) -> None:
        """Show what is stored of the replies another process is writing (a chat loads them empty)."""
        for block in chat.blocks():
            if block.is_streaming and block not in self._fed and not block.text:  # not a stream of this process
                record = await asyncio.to_thread(self._runtime.store.get_message, block.message_id)
                text = record.display_text if record is not None else ""
                if text:
                    await block.append(text)
                self._fed[block] = text

    def _visible_chats(self) -> list[tuple[str, ChatView]]:
        shown = dict.fromkeys(cid for cid in (self._app.conversation_id, self._panes.branch_conversation) if cid)
        return [(cid, chat) for cid in shown for chat in self._conversation.chats(cid)]


def _shown(chat: ChatView) -> Fingerprint:
    """The chat's newest messages as it shows them (a reply still being written shows no stored text)."""
    return tuple((block.message_id, block.view.status, len(block.view.content)) for block in chat.blocks()[-_TAIL:])
