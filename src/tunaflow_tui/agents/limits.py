"""How much an engine may send, derived from its ``max_output_bytes``, for every engine type.

``max_output_bytes`` caps the reply. What arrives around the reply is bounded too, so that no
engine can make tunaflow hold or read without end: a single unfinished line (a reply line, an SSE
event, a PTY screen line) may be as long as the reply may be, and the whole stream, framing and
terminal control sequences included, a fixed multiple of it. Both have floors, so a small reply cap
never rejects an ordinary protocol line.
"""

from __future__ import annotations

#: a line may be as long as the reply may be, but never capped below this
MIN_LINE_BYTES = 1024 * 1024
#: the whole stream may carry this many times the reply cap (JSON framing, escape sequences)
WIRE_OVERHEAD = 16
#: … but never less than this
MIN_WIRE_BYTES = 16 * 1024 * 1024


def line_limit(max_output_bytes: int) -> int:
    """The longest unfinished line an engine may send (bytes)."""
    return max(max_output_bytes, MIN_LINE_BYTES)


def wire_limit(max_output_bytes: int) -> int:
    """The most an engine may send in one turn, everything included (bytes)."""
    return max(max_output_bytes * WIRE_OVERHEAD, MIN_WIRE_BYTES)
