"""Make untrusted agent output inert before it reaches the terminal.

Agents are subprocesses whose output may contain terminal control sequences: clearing the
screen, moving the cursor, setting the window title (OSC 0/2), writing the clipboard (OSC 52),
hyperlinks (OSC 8), device control strings. Rendered verbatim they could repaint or hijack the
user's terminal, so every piece of agent text is passed through :func:`neutralize` first.

What is removed:

* ESC sequences: CSI (``ESC [``), OSC (``ESC ]``), DCS / SOS / PM / APC (``ESC P``, ``ESC X``,
  ``ESC ^``, ``ESC _``) including their payload up to the string terminator (BEL or ``ESC \\``),
  and two-character escapes such as ``ESC c`` (full reset) or ``ESC 7``;
* their 8-bit forms (``0x9b`` CSI, ``0x9d`` OSC, ``0x90`` DCS, ...) and every other C1 control;
* C0 controls except newline and tab, and DEL;
* bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which can make text
  read differently from what it is.

A CRLF pair becomes a newline, and so does a lone carriage return, so that progress output that
rewrites one line stays readable instead of overprinting.

Everything runs in time linear in the input and never raises.
"""

from __future__ import annotations

import re

__all__ = ["StreamNeutralizer", "neutralize"]

# String-type sequences run until BEL or ST (ESC \ or 8-bit 0x9c); an unterminated one runs to the
# end of the text.  The payload classes exclude the terminators, so matching never backtracks.
_STRING_PAYLOAD = r"[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
_SEQUENCE = re.compile(
    "|".join(
        (
            # CSI: parameters, intermediates, final byte (optional: a cut-off sequence is still removed)
            r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?",
            # OSC, DCS, SOS, PM, APC with their payload
            r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])" + _STRING_PAYLOAD,
            # any other escape: intermediates then one final character, or a lone ESC
            r"\x1b[ -/]*[0-~]?",
        )
    )
)
# A sequence that is complete (has its final byte or terminator), used by the streaming variant.
_COMPLETE_SEQUENCE = re.compile(
    "|".join(
        (
            r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]",
            r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)",
            # a two-character escape, but not one that introduces a longer sequence
            r"\x1b[ -/]*[0-OQ-WYZ`a-~\\]",
        )
    )
)
_LINE_BREAK = re.compile(r"\r\n?")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_INTRODUCERS = "\x1b\x90\x98\x9b\x9d\x9e\x9f"

# How much of an unfinished escape sequence a stream holds back waiting for the rest.
_MAX_HELD = 512


def neutralize(text: str) -> str:
    """Return ``text`` with every terminal control sequence and control character removed.

    Newlines and tabs are kept; CRLF and lone CR become a newline.  The result never contains
    ESC, BEL, CSI (0x9b) or any other C0/C1 control apart from newline and tab.
    """
    if text.isprintable():  # fast path: no controls at all, the common case
        return text
    text = _SEQUENCE.sub("", text)
    text = _LINE_BREAK.sub("\n", text)
    return _CONTROL.sub("", text)


class StreamNeutralizer:
    """Neutralise text that arrives in chunks, where a sequence may be split between chunks.

    A trailing carriage return or a trailing unfinished escape sequence is held back until the
    next chunk shows how it ends, so ``"\\r"`` + ``"\\n"`` yields one newline and a cut-off
    ``ESC [`` + ``2J`` never leaves ``2J`` on screen.  At most a few hundred characters are ever
    held; :meth:`flush` releases the rest at the end of the stream.
    """

    def __init__(self) -> None:
        """Start with nothing held back."""
        self._held = ""

    def feed(self, chunk: str) -> str:
        """Return the neutralised text that can be shown now for the next ``chunk``."""
        text = self._held + chunk
        self._held = ""
        if not text:
            return ""
        cut = len(text)
        start = max(
            (text.rfind(ch, max(0, len(text) - _MAX_HELD)) for ch in _INTRODUCERS),
            default=-1,
        )
        if start >= 0 and _COMPLETE_SEQUENCE.match(text, start) is None:
            cut = start
        elif text.endswith("\r"):
            cut = len(text) - 1
        self._held = text[cut:]
        return neutralize(text[:cut])

    def flush(self) -> str:
        """Return whatever is still held back, neutralised, and forget it."""
        text, self._held = self._held, ""
        return neutralize(text)
