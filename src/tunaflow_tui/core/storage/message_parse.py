"""A finished message parsed for markers once, when it finishes, and kept with it in ``messages.parsed``.

The chat shows a finished message without its markers and may list what they said; both come from
this stored parse, so loading a conversation never parses its messages again. A streaming message
has none (its markers are not final), and a system message is shown as written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from peewee import TextField

from tunaflow_tui.core.markers import MarkerSummary, parse_markers, summarize


@dataclass(frozen=True, slots=True)
class StoredParse:
    """What parsing a finished message found: the text to display and its markers, summarised.

    ``display_text`` is None when it is the content itself (no marker changed it), so a message
    without markers is not stored twice.
    """

    display_text: str | None
    markers: tuple[MarkerSummary, ...] = ()


def parse_message(role: str, persona: str | None, content: str) -> StoredParse:
    """Parse a finished message as its writer's role (the persona for an agent, else the role)."""
    if role == "system":
        return StoredParse(None)
    result = parse_markers(content, persona or role)
    display = None if result.display_text == content else result.display_text
    return StoredParse(display, tuple(summarize(marker) for marker in result.markers))


def encode_parse(parse: StoredParse) -> str:
    """The JSON kept in ``messages.parsed`` (keys left out when empty)."""
    data: dict[str, Any] = {}
    if parse.display_text is not None:
        data["display_text"] = parse.display_text
    if parse.markers:
        data["markers"] = [{"kind": m.kind, "accepted": m.accepted, "text": m.text} for m in parse.markers]
    return json.dumps(data, ensure_ascii=False)


def decode_parse(text: str | None) -> StoredParse | None:
    """The stored parse, or None when there is none or it cannot be read (then the message is parsed again)."""
    if text is None:
        return None
    try:
        data = json.loads(text)
        display = data.get("display_text")
        markers = tuple(
            MarkerSummary(item["kind"], bool(item["accepted"]), str(item["text"])) for item in data.get("markers", ())
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return StoredParse(display if isinstance(display, str) else None, markers)


class ParsedField(TextField):
    """``messages.parsed``: a :class:`StoredParse` as JSON; NULL while the message streams."""

    def db_value(self, value: StoredParse | None) -> str | None:
        return None if value is None else encode_parse(value)

    def python_value(self, value: str | None) -> StoredParse | None:
        return decode_parse(value)
