"""Compressed memory: topic summaries of the older part of a long conversation.

A conversation past ``[memory] compress_after_tokens`` has its messages before the last
``compress_keep_messages`` cut into spans of about ``summary_span_tokens``, oldest first; each span
gets a summary written by the summarizer role's engine (in the background, never as part of a
turn), or an extractive one when that engine cannot answer. Each summary records the messages it
covers. Spans keep their start as the conversation grows, so earlier summaries stay; the newest
span is re-done once it has grown by a quarter, and a summary whose messages changed is re-done.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.core.markers import scrub_markers
from tunaflow_tui.core.personas import load_persona
from tunaflow_tui.core.storage.records import MessageRecord
from tunaflow_tui.core.storage.summaries import SummaryRecord
from tunaflow_tui.runtime.quiet_turn import quiet_answer
from tunaflow_tui.runtime.tokens import default_counter

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import QuietTurnContext

#: Characters of an extractive summary per message, and in all.
EXTRACT_PER_MESSAGE = 220
EXTRACT_TOTAL = 1_600
#: Characters per token assumed when deciding cheaply whether a conversation is long enough.
CHARS_PER_TOKEN = 4
#: Seconds the summarizer may take for one span.
SUMMARY_TIMEOUT_S = 180.0
_SENTENCE = re.compile(r"(?<=[.!?。])\s+")

PROMPT = """Summarise the following part of a conversation between a developer and coding agents as a
few short topic paragraphs: decisions taken, facts established, open questions. Name files,
functions and numbers exactly. No preamble; at most 200 words.

{transcript}
"""


def _who(message: MessageRecord) -> str:
    return "User" if message.role == "user" else (message.persona or message.role).title()


def transcript(messages: Sequence[MessageRecord]) -> str:
    """The messages as a plain transcript (markers scrubbed)."""
    return "\n\n".join(f"{_who(m)}: {scrub_markers(m.content).strip()}" for m in messages if m.content.strip())


def extractive_summary(messages: Sequence[MessageRecord]) -> str:
    """A summary without a model: the opening sentences of each message, with its author."""
    lines: list[str] = []
    used = 0
    for message in messages:
        text = " ".join(scrub_markers(message.content).split())
        if not text:
            continue
        sentences = _SENTENCE.split(text)
        opening = sentences[0]
        if len(sentences) > 1 and len(opening) + len(sentences[1]) < EXTRACT_PER_MESSAGE:
            opening += " " + sentences[1]
        if len(opening) > EXTRACT_PER_MESSAGE:
            opening = opening[:EXTRACT_PER_MESSAGE - 1].rstrip() + "…"
        line = f"- {_who(message)}: {opening}"
        if used + len(line) > EXTRACT_TOTAL:
            lines.append("- …")
            break
        lines.append(line)
        used += len(line)
    return "\n".join(lines)


def spans(messages: Sequence[MessageRecord], span_tokens: int) -> list[list[MessageRecord]]:
    """``messages`` cut into consecutive spans of about ``span_tokens`` each (the last may be shorter)."""
    counter = default_counter()
    found: list[list[MessageRecord]] = []
    current: list[MessageRecord] = []
    size = 0
    for message in messages:
        current.append(message)
        size += counter.count(message.content[:span_tokens * 8])
        if size >= span_tokens:
            found.append(current)
            current, size = [], 0
    if current:
        found.append(current)
    return found


def _stale(summary: SummaryRecord, span: Sequence[MessageRecord], span_tokens: int, last: bool) -> bool:
    if summary.first_message_id != span[0].id:
        return True
    if any(m.updated_at > summary.created_at for m in span if m.id <= summary.last_message_id):
        return True  # a covered message changed
    if summary.last_message_id == span[-1].id:
        return False
    if not last:
        return True
    grown = [m for m in span if m.id > summary.last_message_id]
    counter = default_counter()
    return sum(counter.count(m.content[:span_tokens * 8]) for m in grown) >= span_tokens // 4


async def summarize(rt: QuietTurnContext, messages: Sequence[MessageRecord]) -> tuple[str, str | None]:
    """(summary, engine name) by the summarizer's engine; the extractive summary and None when it fails."""
    text = transcript(messages)
    try:
        engine, _config = rt.turns.engine_for("summarizer")
        request = TurnRequest(prompt=PROMPT.format(transcript=text), cwd=rt.project_dir,
                              system=load_persona("summarizer", rt.project_dir), role="summarizer",
                              profile=PermissionProfile.READ_ONLY)
        answer = await quiet_answer(rt.store, engine, request, label=f"summarizer agent ({engine.name})",
                                    timeout_s=SUMMARY_TIMEOUT_S, guard=rt.shared_guard) or ""
        answer = scrub_markers(answer).strip()
        if answer:
            return answer, engine.name
    except Exception:  # no engine, a crash or a timeout: the extractive summary still says something
        pass
    return extractive_summary(messages), None


async def compress_conversation(rt: QuietTurnContext, conversation_id: str) -> int:
    """Write or re-do the summaries a long conversation needs; how many were written.

    Only the newest span is cut again as the conversation grows (earlier spans keep their ranges),
    so the work per call stays small however long the conversation is.
    """
    cfg = rt.settings.memory
    store = rt.store
    chars = await asyncio.to_thread(store.conversation_chars, conversation_id)
    if chars < cfg.compress_after_tokens * CHARS_PER_TOKEN:
        return 0
    messages = await asyncio.to_thread(
        lambda: [m for m in store.list_messages(conversation_id, limit=1_000_000) if m.status != "streaming"])
    older = messages[:-cfg.compress_keep_messages]
    if not older:
        return 0
    existing = list(store.list_summaries(conversation_id))
    by_id = {m.id: m for m in older}
    written = 0
    # Earlier summaries keep their ranges; one whose messages changed is re-done over the same range.
    for summary in existing[:-1]:
        covered = [m for m in older if summary.first_message_id <= m.id <= summary.last_message_id]
        if not covered or summary.first_message_id not in by_id:
            store.delete_summaries(conversation_id, [summary.id])
            continue
        if any(m.updated_at > summary.created_at for m in covered):
            text, engine = await summarize(rt, covered)
            store.save_summary(conversation_id, summary.first_message_id, summary.last_message_id, text, engine)
            written += 1
    last = existing[-1] if existing else None
    start_id = last.first_message_id if last is not None and last.first_message_id in by_id else older[0].id
    if last is not None and last.first_message_id not in by_id:
        store.delete_summaries(conversation_id, [last.id])
        last = None
    tail = [m for m in older if m.id >= start_id]
    cut = await asyncio.to_thread(spans, tail, cfg.summary_span_tokens)
    for position, span in enumerate(cut):
        if position == 0 and last is not None and not _stale(last, span, cfg.summary_span_tokens, len(cut) == 1):
            continue
        text, engine = await summarize(rt, span)
        store.save_summary(conversation_id, span[0].id, span[-1].id, text, engine)
        written += 1
    return written
