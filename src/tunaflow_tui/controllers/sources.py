"""Stored messages as the chat shows them: a MessageSource over the Store, record → view, who speaks and
who answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.core.turns import ToolLine, Usage
from tunaflow_tui.runtime.roundtable_records import ANSWER_KIND, RANKING_KIND, TOPIC_KIND, USER_KIND
from tunaflow_tui.viewmodels.chat import ErrorView, MessageView

if TYPE_CHECKING:
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

ROLE_TITLES = {
    "architect": "Architect",
    "developer": "Developer",
    "reviewer": "Reviewer",
    "verifier": "Verifier",
    "synthesizer": "Synthesizer",
    "summarizer": "Summarizer",
}


def recipient_of(runtime: WorkflowRuntime, conversation_id: str) -> str:
    """Who answers what is typed in a conversation: ``Architect (claude)``, or nobody and why."""
    architect = runtime.settings.roles.architect
    if conversation_id == "main":
        return f"Architect ({architect})"
    branch_id = conversation_id.removeprefix("branch:")
    branch = runtime.store.get_branch(int(branch_id)) if branch_id.isdigit() else None
    if branch is None:
        return "nobody (this branch no longer exists)"
    if branch.is_read_only:
        return f"nobody (this branch is {branch.status} and read-only)"
    if branch.kind != "general":
        return "nobody (the workflow drives this branch)"
    if branch.mode == "roundtable":
        return "every seat of the roundtable, with the next round"
    return f"Architect ({branch.engine or architect}) in branch {branch.id}"


def speaker_label(role: str, persona: str | None, engine: str | None, model: str | None) -> str:
    """``You``, or ``Architect · claude · sonnet`` (engine and model when known)."""
    if role == "user":
        return "You"
    if role == "system":
        return "tunaflow"
    name = ROLE_TITLES.get(persona or "", (persona or "Agent").title())
    return " · ".join(part for part in (name, engine, model) if part)


def seat_label(meta: Mapping[str, object], engine: str | None) -> str | None:
    """A roundtable seat's heading: ``alice · claude · proposer · round 2``, and whom a sequential answer
    responds to; None for a message that is not a seat's answer. Names are the user's and the engine's,
    the heading is drawn as plain text."""
    kind = meta.get("kind")
    if kind == USER_KIND:
        return "You · to every seat"
    if kind == TOPIC_KIND:
        return "You · topic"
    if kind == RANKING_KIND:
        return neutralize(f"{meta.get('seat') or 'seat'} · {engine or ''} · ranks the others' answers")
    if kind != ANSWER_KIND:
        return None
    role = str(meta.get("role_label") or meta.get("role") or "")
    parts = [str(meta.get("seat") or "seat"), engine or "", role, "blind" if meta.get("blind") else ""]
    label = " · ".join(part for part in parts if part)
    number = meta.get("round")
    if isinstance(number, int) and number > 0:
        label += f" · round {number}"
    responds = meta.get("responds_to")
    if meta.get("mode") == "sequential" and isinstance(responds, (list, tuple)) and responds:
        label += " — responds to " + ", ".join(str(name) for name in responds)
    return neutralize(label)


def usage_text(usage: Usage) -> str:
    """``1,234 in · 210 out · $0.0123``; tokens alone when no price is known; empty when nothing was reported."""
    if not (usage.input_tokens or usage.output_tokens or usage.cost_usd):
        return ""
    text = f"{usage.input_tokens:,} in · {usage.output_tokens:,} out"
    if usage.cost_usd is not None:
        text += f" · ${usage.cost_usd:.4f}"
    return text


def error_view(record: MessageRecord) -> ErrorView | None:
    """The error card of a failed message: the first paragraph is the reason, the rest the stderr tail."""
    if record.status != "error":
        return None
    detail = record.error_message or "the engine failed"
    message, _, tail = detail.partition("\n\n")
    return ErrorView(record.error_kind or "error", message, tail, retryable=record.role == "assistant")


def message_view(record: MessageRecord, tools: tuple[ToolLine, ...] = ()) -> MessageView:
    """How the chat shows a stored message (markers hidden once the message is finished).

    ``tools`` are the tool lines seen live; without them, the ones stored with the message.
    """
    return MessageView(
        id=record.id,
        role=record.role,
        label=seat_label(record.meta, record.engine)
        or speaker_label(record.role, record.persona, record.engine, record.model),
        content=record.display_text,
        status=record.status,
        usage_text=usage_text(record.usage),
        tools=tools or record.tools,
        error=error_view(record),
        stopped=neutralize((record.error_message or "").partition("\n\n")[0].strip())
        if record.status == "interrupted" else "",
        meta=record.meta,
    )


class StoreMessageSource:
    """A conversation in the database, paged for the chat view (the database is the truth).

    Tool lines are stored with each message when its turn ends; ``tools`` holds the ones seen live
    in this session, shown while a turn still runs.
    """

    def __init__(self, store: Store, conversation_id: str,
                 tools: dict[int, tuple[ToolLine, ...]] | None = None) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.tools = tools if tools is not None else {}

    def _views(self, records: Sequence[MessageRecord]) -> list[MessageView]:
        return [message_view(r, self.tools.get(r.id, ())) for r in records]

    def count(self) -> int:
        return self.store.count_messages(self.conversation_id)

    def window(self, before_id: int | None, limit: int) -> Sequence[MessageView]:
        return self._views(self.store.list_messages(self.conversation_id, before_id=before_id, limit=limit))

    def after(self, after_id: int, limit: int) -> Sequence[MessageView]:
        return self._views(self.store.list_messages(self.conversation_id, after_id=after_id, limit=limit))

    def first(self, limit: int) -> Sequence[MessageView]:
        return self._views(self.store.list_messages(self.conversation_id, after_id=0, limit=limit))


class MessageSources:
    """One :class:`StoreMessageSource` per conversation, sharing the tool lines seen live."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.tools: dict[int, tuple[ToolLine, ...]] = {}
        """Tool lines seen live, by message id (shown while a turn still runs)."""
        self._sources: dict[str, StoreMessageSource] = {}

    def of(self, conversation_id: str) -> StoreMessageSource:
        """The source of ``conversation_id`` (created on first use)."""
        source = self._sources.get(conversation_id)
        if source is None:
            source = StoreMessageSource(self._store, conversation_id, self.tools)
            self._sources[conversation_id] = source
        return source
