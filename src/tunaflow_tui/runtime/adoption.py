"""Adopting a branch (spec §4): its summary goes into the parent conversation, the branch to the archive.

Adopt is not a merge: only a summary travels. A roundtable's summary is its brief's Key Positions;
any other branch's is written by the summarizer role's engine (a turn in the branch, streamed and
cancellable like any other), or given by the caller (the user may edit it first); with no summarizer available it is the branch's last reply cut at
:data:`FALLBACK_CHARS` characters, marked as such. Everything adopting writes — the adopt record in
the parent, the branch's status, its archived descendants, the session link the parent's next
ContextPack cites — is one database transaction.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tunaflow_tui.agents.agent_events import ErrorKind
from tunaflow_tui.core import gitops
from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.storage.branches import Adoption
from tunaflow_tui.core.storage.records import BranchRecord, MessageRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.branching import BranchError, branch_of, refuse_live_turn
from tunaflow_tui.runtime.context_builder import format_turn
from tunaflow_tui.runtime.events import MessageAdded, NoticeRaised
from tunaflow_tui.runtime.tokens import default_counter
from tunaflow_tui.runtime.turn_spec import TurnSpec

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import TurnContext

FALLBACK_CHARS = 300
TRANSCRIPT_TOKENS = 12_000
ADOPT_KIND = "branch_adopt"
"""``meta["kind"]`` of an adopt record."""

SUMMARY_REQUEST = (
    "Summarize this branch of the conversation for the conversation it was forked from: the conclusion "
    "first, then the reasons, decisions and open questions that matter. Write a few short paragraphs or "
    "bullets, no preamble. The branch follows."
)


class AdoptCancelled(BranchError):
    """The summarizer's turn was cancelled: nothing was adopted."""


@dataclass(frozen=True, slots=True)
class BranchSummary:
    """A summary to adopt: its text, where it came from and, for a fallback, why."""

    text: str
    source: str
    """``summarizer`` (an engine wrote it), ``roundtable_brief`` (a roundtable's Key Positions), ``given``
    (the caller's text) or ``last_reply_cut`` (fallback)."""
    engine: str | None = None
    note: str = ""


def _branch_messages(rt: TurnContext, branch: BranchRecord) -> tuple[MessageRecord, ...]:
    """The branch's own messages (not the summaries written for adopting it)."""
    count = rt.store.count_messages(branch.shadow_conversation_id)
    messages = rt.store.list_messages(branch.shadow_conversation_id, limit=max(count, 1))
    return tuple(m for m in messages if m.persona != "summarizer")


def _adoptable(rt: TurnContext, ref: str | int) -> tuple[BranchRecord, tuple[MessageRecord, ...]]:
    branch = branch_of(rt, ref)
    if branch.status == "adopted":
        raise BranchError(f"branch {branch.id} is adopted already")
    if branch.status != "active":
        raise BranchError(f"branch {branch.id} is {branch.status}; restore it before adopting it")
    refuse_live_turn(rt, branch)
    messages = _branch_messages(rt, branch)
    if not messages:
        raise BranchError(f"branch {branch.id} is empty: there is nothing to adopt")
    return branch, messages


def last_reply_cut(messages: tuple[MessageRecord, ...]) -> str | None:
    """The last assistant reply, cut at :data:`FALLBACK_CHARS` characters (None without one)."""
    reply = next((m for m in reversed(messages) if m.role == "assistant" and m.display_text.strip()), None)
    if reply is None:
        return None
    text = scrub_markers(reply.display_text).strip()
    return text if len(text) <= FALLBACK_CHARS else text[:FALLBACK_CHARS].rstrip() + "…"


def _fallback(messages: tuple[MessageRecord, ...], branch: BranchRecord, why: str) -> BranchSummary:
    cut = last_reply_cut(messages)
    if cut is None:
        raise BranchError(f"branch {branch.id} has no reply to adopt and {why}; give a summary instead")
    return BranchSummary(cut, "last_reply_cut", None,
                         f"No summary: {why}. This is the branch's last reply, cut at {FALLBACK_CHARS} characters.")


BRIEF_MEMO_KIND = "roundtable_brief"


def roundtable_brief(rt: TurnContext, branch: BranchRecord) -> str | None:
    """A roundtable branch's latest brief (its Key Positions), if one was written."""
    if branch.mode != "roundtable":
        return None
    briefs = rt.store.list_memos(kind=BRIEF_MEMO_KIND, branch_id=branch.id)
    text = briefs[-1].content.strip() if briefs else ""
    return text or None


async def summarize(rt: TurnContext, ref: str | int) -> BranchSummary:
    """Summarize the whole branch: a roundtable's brief, else the summarizer's turn in the branch.

    The turn streams like any other and can be cancelled (then :class:`AdoptCancelled`). An engine
    that cannot answer (missing, not logged in, failing) gives way to the last reply, cut and marked.
    The branch's own native session is left as it was.
    """
    branch, messages = _adoptable(rt, ref)
    brief = roundtable_brief(rt, branch)
    if brief is not None:
        return BranchSummary(brief, "roundtable_brief")
    try:
        engine, _config = rt.turns.engine_for("summarizer")
    except KeyError:
        return _fallback(messages, branch, "no summarizer engine is configured")
    transcript = "\n\n".join(format_turn(m) for m in messages if m.content.strip())
    transcript = default_counter().truncate(transcript, TRANSCRIPT_TOKENS, keep="tail")
    conversation = rt.store.get_conversation(branch.shadow_conversation_id)
    request = f"{SUMMARY_REQUEST}\n\n{transcript}"
    try:
        result = await rt.turns.run(TurnSpec("summarizer", branch.shadow_conversation_id, request, blind=True))
    finally:
        if conversation is not None:  # the summarizer's session is not the branch's
            rt.store.set_native_session(branch.shadow_conversation_id, conversation.native_engine or "",
                                        conversation.native_session_id)
    if result.error is not None and result.error.kind == ErrorKind.CANCELLED:
        raise AdoptCancelled(f"the summary of branch {branch.id} was cancelled; nothing was adopted")
    text = scrub_markers(result.text).strip()
    if result.ok and text:
        return BranchSummary(text, "summarizer", engine.name)
    why = f"the summarizer ({engine.name}) could not answer"
    if result.error is not None:
        why += f": {result.error.message.splitlines()[0] if result.error.message else result.error.kind}"
    rt.emit(NoticeRaised(f"{why}; adopting the branch's last reply instead.", "warning",
                         branch.shadow_conversation_id))
    return _fallback(messages, branch, why)


def _parent_git_branch(rt: TurnContext, branch: BranchRecord) -> str | None:
    for plan in rt.store.list_plans():
        if branch.id in (plan.impl_branch_id, plan.review_branch_id) and plan.base_branch:
            return plan.base_branch
    if branch.parent_branch_id is not None:
        parent = rt.store.get_branch(branch.parent_branch_id)
        if parent is not None and parent.git_branch:
            return parent.git_branch
    return gitops.current_branch(rt.project_dir) if rt.is_git else None


def branch_diff_stat(rt: TurnContext, branch: BranchRecord) -> str | None:
    """``git diff --stat`` of the branch's own work against where it started, if it has any."""
    if not branch.worktree_path or not rt.is_git:
        return None
    base = _parent_git_branch(rt, branch)
    if not base or base == branch.git_branch:
        return None
    try:
        stat = gitops.diff_stat(Path(branch.worktree_path), base)
    except (gitops.GitError, OSError):
        return None
    return stat.text if stat.files else None


def record_text(branch: BranchRecord, summary: BranchSummary, count: int, diff_stat: str | None) -> str:
    """The adopt record as text (what exports, search and the parent's recent turns read)."""
    lines = [f"Adopted branch {branch.id} “{neutralize(branch.label)}” ({count} messages"
             f"{', ' + branch.engine if branch.engine else ''}):", "", summary.text]
    if summary.note:
        lines += ["", f"({summary.note})"]
    if diff_stat:
        lines += ["", diff_stat]
    return "\n".join(lines)


async def adopt(rt: TurnContext, ref: str | int, *, summary: str | BranchSummary | None = None) -> Adoption:
    """Adopt a branch into its parent conversation with ``summary`` (None: :func:`summarize` writes one).

    A :class:`BranchSummary` (one :func:`summarize` wrote, as the user confirmed it) keeps its source
    and note on the record; a plain text counts as the caller's. Refused (BranchError, nothing
    changed) for an unknown, adopted, archived or empty branch, and for one whose answer is still
    being written (:class:`~.branching.BranchBusy`, checked again in the adopting transaction).
    """
    branch, _messages = _adoptable(rt, ref)
    given = summary if isinstance(summary, BranchSummary) else None
    wanted = summary.text if isinstance(summary, BranchSummary) else summary
    text = wanted.strip() if wanted is not None else ""
    chosen: BranchSummary | None = None
    if text:
        chosen = BranchSummary(text, given.source, given.engine, given.note) if given else BranchSummary(text, "given")
    if chosen is None:
        if wanted is not None:
            raise BranchError("the summary is empty")
        chosen = await summarize(rt, branch.id)
    # git runs outside the transaction, and in a thread: a large diff never freezes the screen
    diff_stat = await asyncio.to_thread(branch_diff_stat, rt, _adoptable(rt, branch.id)[0])
    with rt.store.transaction():  # the check and the record together: no turn starts in between
        adoption = _record(rt, branch.id, chosen, diff_stat)
    rt.emit(MessageAdded(adoption.record.conversation_id, adoption.record.id, "system"))
    rt.progress(f"Adopted branch {branch.id} into {branch.conversation_id}.")
    return adoption


def _record(rt: TurnContext, branch_id: int, chosen: BranchSummary, diff_stat: str | None) -> Adoption:
    branch, messages = _adoptable(rt, branch_id)  # the summary took time: still adoptable?
    meta: dict[str, object] = {
        "kind": ADOPT_KIND,
        "branch_id": branch.id,
        "branch_conversation_id": branch.shadow_conversation_id,
        "branch_label": branch.label,
        "message_count": len(messages),
        "engine": branch.engine,
        "git_branch": branch.git_branch,
        "diff_stat": diff_stat,
        "summary": chosen.text,
        "summary_source": chosen.source,
        "summary_engine": chosen.engine,
        "summary_note": chosen.note,
        "checkpoint_id": branch.checkpoint_id,
    }
    return rt.store.record_adoption(branch.id, content=record_text(branch, chosen, len(messages), diff_stat),
                                    meta=meta, summary=chosen.text)
