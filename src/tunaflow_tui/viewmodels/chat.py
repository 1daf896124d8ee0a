"""What the chat displays: frozen message views and the source the chat reads them from.

The database is the truth and the chat view shows a window of it: a :class:`MessageSource` hands
out slices of a conversation, newest last, so a 10,000-message conversation never needs to be
loaded (or mounted) at once.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from tunaflow_tui.core.turns import ToolLine

Role = Literal["user", "assistant", "system"]
Status = Literal["streaming", "done", "interrupted", "error"]


@dataclass(frozen=True, slots=True)
class ErrorView:
    """Why a turn failed: shown as an error card under the message."""

    kind: str
    """Short category, e.g. ``timeout``, ``missing binary``, ``rate limit``, ``crash``."""
    message: str
    stderr_tail: str = ""
    """The last lines the engine wrote to stderr, if any."""
    retryable: bool = True


@dataclass(frozen=True, slots=True)
class MessageView:
    """One message of a conversation as the chat shows it.

    ``content`` is the display text: markers already stripped.  It is still untrusted and is
    neutralised by the widget before it is rendered.
    """

    id: int
    role: str
    """``user``, ``assistant`` or ``system``."""
    label: str
    """Who spoke, e.g. ``Architect · claude · sonnet`` or ``You``."""
    content: str
    status: str = "done"
    """``streaming``, ``done``, ``interrupted`` or ``error``."""
    usage_text: str = ""
    """e.g. ``1,234 in · 210 out · $0.0123`` (tokens only when no price is known)."""
    tools: tuple[ToolLine, ...] = ()
    """The tools the agent used during the turn, in order."""
    error: ErrorView | None = None
    stopped: str = ""
    """Why an interrupted reply stopped ("cancelled by you", "stopped by SIGTERM"); empty when not known."""
    meta: Mapping[str, object] = field(default_factory=dict)
    """A record's structured data (``meta["kind"]`` picks how it shows); empty for an ordinary message."""


class MessageSource(Protocol):
    """A conversation the chat can page through.  Implementations must be cheap to call."""

    def count(self) -> int:
        """Number of messages in the conversation."""
        ...

    def window(self, before_id: int | None, limit: int) -> Sequence[MessageView]:
        """The newest ``limit`` messages older than ``before_id`` (all if None), oldest first."""
        ...

    def after(self, after_id: int, limit: int) -> Sequence[MessageView]:
        """The oldest ``limit`` messages newer than ``after_id``, oldest first."""
        ...

    def first(self, limit: int) -> Sequence[MessageView]:
        """The first ``limit`` messages of the conversation, oldest first."""
        ...


class ListMessageSource:
    """A :class:`MessageSource` over an in-memory list (demo mode and tests); ids ascending."""

    def __init__(self, messages: Sequence[MessageView] = ()) -> None:
        self._messages: list[MessageView] = list(messages)
        self._ids: list[int] = [m.id for m in self._messages]

    def append(self, message: MessageView) -> None:
        """Add a message at the end (its id must be larger than every other id)."""
        self._messages.append(message)
        self._ids.append(message.id)

    def replace(self, message: MessageView) -> None:
        """Replace the stored message that has the same id."""
        index = bisect.bisect_left(self._ids, message.id)
        if index < len(self._ids) and self._ids[index] == message.id:
            self._messages[index] = message

    def next_id(self) -> int:
        """An id larger than every stored id."""
        return (self._ids[-1] + 1) if self._ids else 1

    def count(self) -> int:
        return len(self._messages)

    def window(self, before_id: int | None, limit: int) -> Sequence[MessageView]:
        end = len(self._ids) if before_id is None else bisect.bisect_left(self._ids, before_id)
        return self._messages[max(0, end - limit) : end]

    def after(self, after_id: int, limit: int) -> Sequence[MessageView]:
        start = bisect.bisect_right(self._ids, after_id)
        return self._messages[start : start + limit]

    def first(self, limit: int) -> Sequence[MessageView]:
        return self._messages[:limit]
