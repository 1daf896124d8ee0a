"""Conversation branches (spec §4): fork at any message, continue, rename, archive, restore, delete.

A branch is forked from any message of any conversation — main, a branch, a branch of a branch —
and that message is its **checkpoint**. It knows its parent one of two ways, recorded on the branch
as ``context_source``:

- ``native_fork``: the engine forks its own session (claude ``--resume ID --fork-session``), so the
  branch continues the parent's session at the checkpoint without re-sending history, and the
  parent's session is never touched. Only possible when the checkpoint is where the parent's session
  is now (no later turn of that session), the engine is the one that ran it, and the branch runs in
  the same directory (a session resumes only where it ran);
- ``inheritance``: the ContextPack's thread-inheritance section carries the checkpoint and the
  parent's last turns before it.

Adopted and archived branches are read-only until restored. Adopting lives in :mod:`.adoption`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunaflow_tui.core import gitops
from tunaflow_tui.core.roundtable.brief import plain_text
from tunaflow_tui.core.storage.ids import beyond_any_row
from tunaflow_tui.core.storage.records import BranchRecord, MessageRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.events import NoticeRaised

if TYPE_CHECKING:
    from tunaflow_tui.runtime.agent_turn import TurnResult
    from tunaflow_tui.runtime.ports import ProjectData, RecordingContext, TurnContext

NATIVE_FORK = "native_fork"
INHERITANCE = "inheritance"
LABEL_EXCERPT = 40
_LATER_MESSAGES_CHECKED = 10_000


class BranchError(ValueError):
    """A branch operation that cannot be done; the message says why (and what to do instead)."""


class BranchReadOnly(BranchError):
    """A message was sent to an adopted or archived branch."""


class BranchBusy(BranchError):
    """The branch has a turn in progress (this or another process writes its reply): it cannot change now."""


def refuse_live_turn(rt: ProjectData, branch: BranchRecord) -> None:
    """Raise :class:`BranchBusy` while a live process holds the branch's lease (its answer is being written)."""
    lease = rt.store.live_lease(branch.shadow_conversation_id)
    if lease is not None:
        raise BranchBusy(f"branch {branch.id} has a turn in progress ({lease.describe()}) — wait for it or cancel it")


def parse_ref(ref: str | int) -> str:
    """The conversation id ``ref`` names: ``main``, ``branch:N``, ``N`` or ``#N`` (BranchError otherwise)."""
    text = str(ref).strip()
    if text == "main":
        return "main"
    number = text.removeprefix("branch:").removeprefix("#")
    if not (number.isascii() and number.isdigit()):
        raise BranchError(f"{neutralize(text)!r} is not a conversation: use main, a branch id (3) or branch:3")
    if beyond_any_row(number):
        raise BranchError(f"there is no branch {number[:40]}")
    return f"branch:{int(number)}"


def branch_of(rt: ProjectData, ref: str | int) -> BranchRecord:
    """The branch ``ref`` names; BranchError for ``main`` or an unknown id."""
    conversation_id = parse_ref(ref)
    if conversation_id == "main":
        raise BranchError("main is the project's conversation, not a branch")
    branch = rt.store.get_branch(int(conversation_id.removeprefix("branch:")))
    if branch is None:
        raise BranchError(f"there is no branch {conversation_id.removeprefix('branch:')}")
    return branch


def conversation_of(rt: ProjectData, ref: str | int) -> str:
    """The id of an existing conversation ``ref`` names (``main`` always exists)."""
    conversation_id = parse_ref(ref)
    if conversation_id != "main":
        branch_of(rt, conversation_id)
    return conversation_id


def writable_branch(rt: ProjectData, conversation_id: str) -> BranchRecord:
    """The branch behind ``conversation_id`` if it takes a user's message; BranchError otherwise."""
    branch = branch_of(rt, conversation_id)
    name = f"branch {branch.id} “{neutralize(branch.label)}”"
    if branch.is_read_only:
        raise BranchReadOnly(f"{name} is {branch.status} and read-only; restore it to continue it "
                             f"(tunaflow branch restore {branch.id}).")
    if branch.kind != "general":
        raise BranchError(f"{name} is the {branch.kind} branch of a plan; the workflow drives it. "
                          "Fork it to talk about it.")
    if branch.mode == "roundtable":
        raise BranchError(f"{name} is a roundtable: its seats answer, not the Architect. Write to the seats "
                          "between rounds, or fork it to talk about it.")
    return branch


# ----------------------------------------------------------------------------- fork
def _later_turn_of_session(rt: ProjectData, checkpoint: MessageRecord) -> bool:
    """True when the parent went on in the checkpoint's session after it (that session is later now)."""
    later = rt.store.list_messages(checkpoint.conversation_id, after_id=checkpoint.id, limit=_LATER_MESSAGES_CHECKED)
    return any(m.native_session_id == checkpoint.native_session_id for m in later)


def _native_fork_possible(rt: TurnContext, checkpoint: MessageRecord, engine_name: str,
                          parent: BranchRecord | None) -> bool:
    engine, _config = rt.turns.engine_named(engine_name)
    return (
        engine.supports_native_fork
        and checkpoint.role == "assistant"
        and checkpoint.status == "done"
        and bool(checkpoint.native_session_id)
        and checkpoint.engine == engine.name
        and (parent is None or not parent.worktree_path)  # the fork runs in the project: same directory only
        and not _later_turn_of_session(rt, checkpoint)
    )


def _default_label(checkpoint: MessageRecord) -> str:
    # the label is shown as plain text (sidebar, pane title, `branch list`): no Markdown marks
    lines = (plain_text(line) for line in checkpoint.display_text.splitlines())
    excerpt = next((line for line in lines if line), "")
    if len(excerpt) > LABEL_EXCERPT:
        excerpt = excerpt[: LABEL_EXCERPT - 1] + "…"
    return f"from #{checkpoint.id}: {excerpt}" if excerpt else f"from #{checkpoint.id}"


def clean_label(label: str) -> str:
    """A label as stored: one line, inert, trimmed; BranchError when nothing is left."""
    cleaned = " ".join(neutralize(label).split())
    if not cleaned:
        raise BranchError("a branch label cannot be empty")
    return cleaned


def fork(rt: TurnContext, conversation_id: str, message_id: int, *, engine: str | None = None,
         label: str | None = None) -> BranchRecord:
    """Fork ``conversation_id`` at its message ``message_id`` into a new active branch.

    The branch runs on ``engine`` (an engine name from the settings; default: the Architect's), takes
    its parent's git branch (the parent branch's, else the project's current one) and records whether
    it continues the parent's native session or inherits through the ContextPack.
    """
    conversation_id = conversation_of(rt, conversation_id)
    checkpoint = rt.store.get_message(message_id)
    if checkpoint is None:
        raise BranchError(f"there is no message {message_id}")
    if checkpoint.conversation_id != conversation_id:
        raise BranchError(f"message {message_id} belongs to {checkpoint.conversation_id}, not {conversation_id}")
    if checkpoint.status == "streaming":
        raise BranchError(f"message {message_id} is still being written; fork it when it has finished")
    engine_name = engine or rt.settings.roles.engine_name("architect")
    if engine_name not in rt.settings.engines:
        known = ", ".join(sorted(rt.settings.engines)) or "none"
        raise BranchError(f"there is no engine named {neutralize(engine_name)!r} (configured: {known})")
    parent = rt.store.get_branch(int(conversation_id.split(":", 1)[1])) if conversation_id != "main" else None
    if parent is not None and parent.git_branch:
        git_branch: str | None = parent.git_branch
    else:
        git_branch = gitops.current_branch(rt.project_dir) if rt.is_git else None
    source = NATIVE_FORK if _native_fork_possible(rt, checkpoint, engine_name, parent) else INHERITANCE
    branch = rt.store.create_branch(
        conversation_id=conversation_id, checkpoint_id=checkpoint.id,
        parent_branch_id=parent.id if parent is not None else None, mode="chat", kind="general",
        label=clean_label(label) if label is not None else _default_label(checkpoint),
        git_branch=git_branch, engine=engine_name, context_source=source,
    )
    rt.progress(f"Forked branch {branch.id} at message {checkpoint.id} "
                f"({'continuing the native session' if source == NATIVE_FORK else 'with inherited context'}).")
    return branch


def fork_session(rt: RecordingContext, branch: BranchRecord) -> str | None:
    """The parent's session the branch's next turn forks, or None (already forked, or inheritance).

    A parent that went on in that session since the fork would hand the branch its later turns: the
    branch then switches to inheritance (and says so).
    """
    if branch.context_source != NATIVE_FORK or branch.checkpoint_id is None:
        return None
    conversation = rt.store.get_conversation(branch.shadow_conversation_id)
    if conversation is not None and conversation.native_session_id:
        return None  # forked already: the branch resumes its own session
    checkpoint = rt.store.get_message(branch.checkpoint_id)
    if checkpoint is not None and checkpoint.native_session_id and not _later_turn_of_session(rt, checkpoint):
        return checkpoint.native_session_id
    rt.store.update_branch(branch.id, context_source=INHERITANCE)
    rt.emit(NoticeRaised("The parent conversation went on since this branch was forked: the branch inherits "
                         "its context instead of forking the session.", "info", branch.shadow_conversation_id))
    return None


def settle_turn(rt: ProjectData, branch: BranchRecord, forked_from: str | None, result: TurnResult) -> None:
    """After a branch turn: store the branch's own session id; a fork that made no new session is inheritance."""
    conversation = rt.store.get_conversation(branch.shadow_conversation_id)
    session = conversation.native_session_id if conversation is not None else None
    fields: dict[str, object] = {}
    if session != branch.engine_session_id:
        fields["engine_session_id"] = session
    if forked_from is not None and result.ok and (not session or session == forked_from):
        fields["context_source"] = INHERITANCE  # the engine did not fork; the pack carries the context from now on
    if fields:
        rt.store.update_branch(branch.id, **fields)


def fork_refused(rt: ProjectData, conversation_id: str) -> None:
    """The engine could not resume the parent's session to fork it: the branch inherits instead."""
    conversation = rt.store.get_conversation(conversation_id)
    if conversation is not None and conversation.branch_id is not None:
        rt.store.update_branch(conversation.branch_id, context_source=INHERITANCE)


# ----------------------------------------------------------------------------- lifecycle
def rename(rt: ProjectData, ref: str | int, label: str) -> BranchRecord:
    """Give a branch a new label (any status)."""
    branch = branch_of(rt, ref)
    return rt.store.update_branch(branch.id, label=clean_label(label))


def archive(rt: ProjectData, ref: str | int) -> BranchRecord:
    """Move an active branch to the archive: it keeps its messages and becomes read-only."""
    branch = branch_of(rt, ref)
    if branch.status != "active":
        raise BranchError(f"branch {branch.id} is {branch.status} already: it is in the archive")
    return rt.store.update_branch(branch.id, status="archived")


def restore(rt: ProjectData, ref: str | int) -> BranchRecord:
    """Bring an archived or adopted branch back to active (an adopt record in its parent stays)."""
    branch = branch_of(rt, ref)
    if branch.status == "active":
        raise BranchError(f"branch {branch.id} is active already")
    return rt.store.update_branch(branch.id, status="active")


def delete(rt: ProjectData, ref: str | int) -> BranchRecord:
    """Delete a branch (the caller has confirmed): an active one's messages go with it.

    Adopted and archived branches keep their messages (an adopt record cites them). Refused for
    ``main``, for a branch with branches of its own, for the branch of a plan still in progress, and
    while a turn is being written in the branch (:class:`BranchBusy`; checked in the deleting
    transaction, so no turn can start in between).
    """
    if parse_ref(ref) == "main":
        raise BranchError("the main conversation cannot be deleted")
    with rt.store.transaction():
        return _delete(rt, ref)


def _delete(rt: ProjectData, ref: str | int) -> BranchRecord:
    branch = branch_of(rt, ref)
    refuse_live_turn(rt, branch)
    children = rt.store.child_branches(branch.id)
    if children:
        ids = ", ".join(str(child.id) for child in children)
        raise BranchError(f"branch {branch.id} has branches of its own ({ids}); delete those first")
    for plan in rt.store.list_plans():
        if branch.id in (plan.impl_branch_id, plan.review_branch_id) and plan.phase not in ("done", "abandoned"):
            raise BranchError(f"branch {branch.id} belongs to plan {plan.id}, which is still {plan.phase}")
    rt.store.delete_branch(branch.id)
    return branch
