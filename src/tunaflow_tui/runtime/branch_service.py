"""A conversation's branches: fork, answer in, rename, archive, restore, delete, summarise, adopt.

The rules live in :mod:`~tunaflow_tui.runtime.branching` (forks and the lifecycle) and
:mod:`~tunaflow_tui.runtime.adoption` (summary and adopt record); this is the one place the runtime
and its callers reach them through.
"""

from __future__ import annotations

from tunaflow_tui.core.storage.branches import Adoption
from tunaflow_tui.core.storage.records import BranchRecord, MessageRecord
from tunaflow_tui.runtime import adoption, branching, planning
from tunaflow_tui.runtime.agent_turn import TurnResult
from tunaflow_tui.runtime.ports import TurnContext
from tunaflow_tui.runtime.turn_spec import TurnSpec


class BranchService:
    """Branches of the project's conversations, from the fork to the adoption."""

    def __init__(self, host: TurnContext) -> None:
        self._host = host

    def fork(self, conversation_id: str, message_id: int, *, engine: str | None = None,
             label: str | None = None) -> BranchRecord:
        """Fork ``conversation_id`` at its message ``message_id`` (see :func:`.branching.fork`)."""
        return branching.fork(self._host, conversation_id, message_id, engine=engine, label=label)

    async def answer(self, user_message: MessageRecord) -> TurnResult:
        """Let the branch's engine answer a user message stored in a branch (sent, or retried).

        The branch's first turn forks the parent's native session where the branch was forked natively.
        """
        host = self._host
        branch = branching.writable_branch(host, user_message.conversation_id)
        forked_from = branching.fork_session(host, branch)
        result = await host.turns.run(TurnSpec(
            "architect", user_message.conversation_id, user_message.content, plan=planning.active_plan(host),
            exclude_message_id=user_message.id, engine_name=branch.engine, fork_session=forked_from))
        branching.settle_turn(host, branch, forked_from, result)
        return result

    def rename(self, branch_id: int | str, label: str) -> BranchRecord:
        """Give a branch a new label."""
        return branching.rename(self._host, branch_id, label)

    def archive(self, branch_id: int | str) -> BranchRecord:
        """Move an active branch to the archive (read-only, messages kept)."""
        return branching.archive(self._host, branch_id)

    def restore(self, branch_id: int | str) -> BranchRecord:
        """Make an archived or adopted branch active again."""
        return branching.restore(self._host, branch_id)

    def delete(self, branch_id: int | str) -> BranchRecord:
        """Delete a branch (an active one with its messages); the caller has confirmed."""
        return branching.delete(self._host, branch_id)

    async def summarize(self, branch_id: int | str) -> adoption.BranchSummary:
        """A summary of the branch for adopting it (the summarizer's turn, or the cut last reply)."""
        return await adoption.summarize(self._host, branch_id)

    async def adopt(self, branch_id: int | str, *,
                    summary: str | adoption.BranchSummary | None = None) -> Adoption:
        """Adopt a branch into its parent with ``summary`` (None: the summarizer writes one)."""
        return await adoption.adopt(self._host, branch_id, summary=summary)
