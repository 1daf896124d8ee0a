"""Decode one line of an engine's JSON stream without letting a hostile line end the turn.

Engines print one JSON document per line (CLI stream-json, SSE ``data:`` payloads, Ollama NDJSON).
Python's decoder recurses once per nesting level, so a line of a few hundred thousand ``[``
raises :class:`RecursionError`, not :class:`ValueError`, and escapes every ``except ValueError``
that guards a bad line. Every engine decodes its lines here, where both are a ``ValueError``: a
line that is not usable JSON, skipped like any other.
"""

from __future__ import annotations

import json

__all__ = ["decode_json_line"]


def decode_json_line(text: str | bytes) -> object:
    """The JSON value of ``text``; raises ``ValueError`` for anything that is not valid JSON.

    That includes JSON nested too deeply for the decoder (a ``RecursionError`` inside ``json``).
    """
    try:
        value: object = json.loads(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc
    return value
