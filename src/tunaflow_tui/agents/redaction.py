"""Secrets masked in a turn's events before anything shows, prints or stores them.

The reply's text pieces go through one :class:`StreamMasker`, so a secret split across pieces is
masked in the joined text; what it holds back is flushed before a tool call (the end of a text
block) and before the terminal event (the end of the turn, with its trailing-prefix masking).
Every other string an event carries (tool details, notices, error messages, stderr tails, partial
and final texts) is complete, and is masked as a whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from tunaflow_tui.agents.agent_events import TERMINAL_EVENTS, EngineEvent, TextDelta, ToolUse
from tunaflow_tui.core.secret_masking import SecretRegistry, StreamMasker

T = TypeVar("T")


def mask_fields(value: T, registry: SecretRegistry) -> T:
    """A copy of a dataclass value with every string field (nested dataclasses too) masked."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(value):
        current = getattr(value, field.name)
        if isinstance(current, str):
            masked: object = registry.mask(current)
        elif dataclasses.is_dataclass(current) and not isinstance(current, type):
            masked = mask_fields(current, registry)
        else:
            continue
        if masked != current:
            changes[field.name] = masked
    return dataclasses.replace(value, **changes) if changes else value


async def masked_events(events: AsyncIterator[EngineEvent], registry: SecretRegistry) -> AsyncIterator[EngineEvent]:
    """``events`` with secrets masked; the reply's text is masked as one stream."""
    if registry.pattern is None:
        async for event in events:
            yield event
        return
    text = StreamMasker(registry)
    async for event in events:
        if isinstance(event, TextDelta):
            shown = text.feed(event.text)
            if shown:
                yield TextDelta(shown)
            continue
        if isinstance(event, (ToolUse, *TERMINAL_EVENTS)):
            rest = text.flush(final=True)
            if rest:
                yield TextDelta(rest)
        yield mask_fields(event, registry)
    rest = text.flush(final=True)  # a stream that ended without a terminal event
    if rest:
        yield TextDelta(rest)
