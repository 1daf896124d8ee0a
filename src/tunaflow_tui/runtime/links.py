"""Cross-session links: a new conversation (a branch, a plan's implementation or review run) is linked
to the earlier conversations whose content is most like its first message.

With the embedding model loaded, "most like" is the best cosine between the first message and any
chunk of the other conversation, at least ``[memory] link_min_similarity``; without it, a
conversation qualifies when one of its messages contains every word of the first message's
meaningful words (the strict full-text tier). At most ``[memory] link_max`` links, best first,
each with a short summary of the linked conversation as its note: the pack's links section
cites them. Links go when the linked conversation is deleted (the foreign key cascades) and are
replaced when a conversation is linked again.

The user can drop a link (from the context pack view): it is kept as a ``dropped`` link, so the
pack leaves it out and linking the conversation again never brings that conversation back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.memory.fts_query import all_words_match
from tunaflow_tui.core.storage.records import MessageRecord, SessionLinkRecord

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import MemoryData, ProjectData

LINK_KIND = "related"
#: A link the user dropped: not cited, and never made again.
DROPPED_KIND = "dropped"
NOTE_CHARS = 240
_CANDIDATE_CHUNKS = 400


def first_message(rt: ProjectData, conversation_id: str) -> MessageRecord | None:
    """The conversation's first finished message with text."""
    for message in rt.store.list_messages(conversation_id, after_id=0, limit=20):
        if message.status != "streaming" and message.content.strip():
            return message
    return None


def conversation_note(rt: ProjectData, conversation_id: str) -> str:
    """A short summary of a conversation: its branch label, then its latest topic summary or first message."""
    store = rt.store
    label = ""
    conversation = store.get_conversation(conversation_id)
    if conversation is not None and conversation.branch_id is not None:
        branch = store.get_branch(conversation.branch_id)
        if branch is not None and branch.label:
            label = f"{branch.label} ({branch.kind}) — "
    summaries = store.list_summaries(conversation_id)
    if summaries:
        text = summaries[-1].content
    else:
        first = first_message(rt, conversation_id)
        text = first.content if first is not None else ""
    flat = " ".join(scrub_markers(text).split())
    if len(flat) > NOTE_CHARS:
        flat = flat[:NOTE_CHARS - 1].rstrip() + "…"
    return label + flat


def _by_vectors(rt: MemoryData, text: str, earlier: set[str]) -> list[str] | None:
    """Conversations by their best chunk's cosine; None when the model is not loaded."""
    search = rt.memory.search_engine
    vector = search.query_vector(text, load=False)
    if vector is None:
        return None
    best: dict[str, float] = {}
    threshold = rt.settings.memory.link_min_similarity
    chunks = search.vector_chunks(vector, _CANDIDATE_CHUNKS, exclude=(), conversations=earlier)
    owners = rt.store.messages_by_id([message_id for _chunk, message_id, _score in chunks])
    for _chunk, message_id, score in chunks:
        owner = owners.get(message_id)
        if owner is None or score < threshold:
            continue
        best[owner.conversation_id] = max(best.get(owner.conversation_id, 0.0), score)
    return sorted(best, key=lambda conversation: -best[conversation])


def _by_words(rt: ProjectData, text: str, earlier: set[str]) -> list[str]:
    expression = all_words_match(text)
    if expression is None:
        return []
    ids = rt.store.fts_message_ids(expression, 50, conversation_ids=sorted(earlier))
    owners = rt.store.messages_by_id(ids)
    ranked: list[str] = []
    for message_id in ids:
        owner = owners.get(message_id)
        if owner is not None and owner.conversation_id not in ranked:
            ranked.append(owner.conversation_id)
    return ranked


def earlier_conversations(rt: ProjectData, conversation_id: str) -> set[str]:
    """Conversations that existed before this one: main and the branches made before it."""
    conversation = rt.store.get_conversation(conversation_id)
    found = {"main"} if conversation_id != "main" else set()
    for branch in rt.store.list_branches():
        other = branch.shadow_conversation_id
        if other != conversation_id and (conversation is None or branch.created_at <= conversation.created_at):
            found.add(other)
    return {c for c in found if rt.store.get_conversation(c) is not None}


def pack_links(rt: ProjectData, conversation_id: str) -> tuple[SessionLinkRecord, ...]:
    """The links a pack for ``conversation_id`` cites: its own, with a note, and not dropped."""
    return tuple(link for link in rt.store.list_session_links(conversation_id)
                 if link.from_conversation_id == conversation_id and link.kind != DROPPED_KIND
                 and scrub_markers(link.note).strip())


def cited_link(rt: ProjectData, link: SessionLinkRecord) -> str:
    """A link as the pack cites it: ``Related branch 3 “spike”: <note>`` (a branch by its label)."""
    target = link.to_conversation_id
    branch_id = target.removeprefix("branch:")
    branch = rt.store.get_branch(int(branch_id)) if branch_id.isdigit() else None
    if branch is not None:
        target = f"branch {branch.id} “{branch.label}”"
    return f"{link.kind.capitalize()} {target}: {scrub_markers(link.note).strip()}"


def drop_link(rt: ProjectData, link_id: int) -> SessionLinkRecord | None:
    """Drop a link the user does not want in the pack; the dropped link, or None when it was gone."""
    return rt.store.set_session_link_kind(link_id, DROPPED_KIND)


def link_new_conversation(rt: MemoryData, conversation_id: str) -> tuple[SessionLinkRecord, ...]:
    """Link a conversation once, when it has its first message and no links of its own yet.

    A conversation whose links the user dropped counts as linked: it is not linked again.
    """
    if any(link.kind in (LINK_KIND, DROPPED_KIND) and link.from_conversation_id == conversation_id
           for link in rt.store.list_session_links(conversation_id)):
        return ()
    return link_similar(rt, conversation_id)


def link_similar(rt: MemoryData, conversation_id: str) -> tuple[SessionLinkRecord, ...]:
    """Link ``conversation_id`` to the earlier conversations most like its first message (worker thread)."""
    first = first_message(rt, conversation_id)
    limit = rt.settings.memory.link_max
    if first is None or limit == 0:
        return ()
    dropped = {link.to_conversation_id for link in rt.store.list_session_links(conversation_id)
               if link.kind == DROPPED_KIND and link.from_conversation_id == conversation_id}
    earlier = earlier_conversations(rt, conversation_id) - dropped
    if not earlier:
        return ()
    text = scrub_markers(first.content)
    ranked = _by_vectors(rt, text, earlier)
    if ranked is None:
        ranked = _by_words(rt, text, earlier)
    rt.store.delete_session_links(conversation_id, LINK_KIND)
    return tuple(rt.store.add_session_link(conversation_id, target, LINK_KIND, conversation_note(rt, target))
                 for target in ranked[:limit])
